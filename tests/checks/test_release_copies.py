"""Per-release copies with none for the host version (PP0810): a positive and a negative case, whole findings
asserted (code, severity, status, the selector's line and unit, the branches, the copies' original)."""

from __future__ import annotations

import pytest

from harness import expect, only, run_scan
from pinport.checks.release_copies import ReleaseCopiesCheck
from pinport.findings import Location

SELECT = """
def select(version_tuple, has_budget):
    release = version_tuple[:2]
    if release == (1, 0) and not has_budget:
        return ".sched_v100"
    if has_budget and release == (1, 5):
        return ".sched_v150"
{more}
    raise RuntimeError("unsupported host")
"""
COPY = "def schedule(self):\n    return {n}\n"
FOR_2 = '    if release == (2, 0):\n        return ".sched_v200"'


def scan(select=SELECT, more="", copies=("100", "150")):
    plugin = {"plug/adapter.py": "import host\n\n" + select.format(more=more)}
    plugin.update({f"plug/sched_v{tag}.py": COPY.format(n=i) for i, tag in enumerate(copies)})
    host = {"host/sched.py": "class Scheduler:\n    def schedule(self):\n        return 0\n"}
    return run_scan(host, host, plugin, checks=(ReleaseCopiesCheck(),))


@pytest.mark.parametrize(("select", "more", "copies", "expected"), [
    (SELECT, "", ("100", "150"), ["PP0810 error drift"]),  # host 2.0: no branch admits it, the selector raises
    (SELECT, FOR_2, ("100", "150", "200"), ["no PP0810"]),  # negative twin: a copy for 2.0 and its branch
    (SELECT.replace("raise RuntimeError", "return None  #"), "", ("100", "150"), ["PP0810 warning drift"]),
    (SELECT.replace("release == (1, 5)", "release >= (1, 5)"), "", ("100", "150"), ["no PP0810"]),  # admits 2.0
    (SELECT.replace("release == (1, 0) and ", ""), "", ("100", "150"), ["no PP0810"]),  # a probe only: unknown
    (SELECT.replace("(1, 0)", "(0, 9)").replace("v100", "v090"), "", ("090", "150"), ["PP0810 error latent"]),  # OLD 1.0 lacks one too
])
def test_no_copy_for_the_host_version(select, more, copies, expected):
    expect(scan(select, more, copies), expected)


def test_the_finding_names_the_selector_and_its_branches():
    finding = only(scan(), "PP0810")
    assert finding.plugin == Location("plug/adapter.py", 11, 0, "select", 'raise RuntimeError("unsupported host")')
    assert (finding.args, finding.subject) == (
        {"function": "select", "stem": "sched", "label": "host 2.0", "count": 2}, "plug.sched")
    assert finding.details == ("no branch is taken on host 2.0: the function then raises (line 11)",
                               "line 6: `release == (1, 0) and (not has_budget)` picks `sched_v100`",
                               "line 8: `has_budget and release == (1, 5)` picks `sched_v150`")
    assert finding.suggestion == ("add a copy for host 2.0 (`sched_v…`: host 2.0's original with the plugin's "
                                  "changes carried over) and a branch picking it in `select`")
