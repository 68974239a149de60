"""Source-text patches that stop applying (#8, PP0808/PP0809): a positive and a negative case per kind,
whole findings asserted (code, severity, status, the pair's line, OLD and NEW evidence, the port)."""

from __future__ import annotations

import pytest

from harness import expect, only, run_scan
from pinport.checks.source_patches import SourcePatchesCheck
from pinport.findings import Location

WORKER = """
def init_device(self):
    device = self.device
    if device.type == "cuda":
        return 1
    return 0
"""
RENAMED = WORKER.replace('if device.type == "cuda":', 'if self.device_type == "cuda":')
# the patcher vllm-musa ships, reduced: glob the files, apply a pair only where its text is found
SKIPPING = """
from pathlib import Path

def apply(source, patches):
    files = Path(__file__).parent.glob("*.patch.py")
    for old, new in patches:
        if old in source:
            source = source.replace(old, new)
    return source
"""
RAISING = """
from pathlib import Path

def apply(source, patches):
    files = Path(__file__).parent.glob("*.patch.py")
    for old, new in patches:
        if old not in source:
            raise RuntimeError(old)
        source = source.replace(old, new)
    return source
"""
ONE_PAIR = """
PATCHES = [
    ('if device.type == "cuda":', 'if device.type in ("cuda", "musa"):'),
]
"""
# two alternatives, one per host release (vllm-musa's gpu_worker file: "for 0.10.x", "for 0.13+")
ALTERNATIVES = """
PATCHES = [
    ('if device.type == "cuda":', 'if device.type in ("cuda", "musa"):'),
    ('if self.device_type == "cuda":', 'if self.device_type in ("cuda", "musa"):'),
]
"""
PATCH_FILE = "plug/patches/host__worker.patch.py"


def scan(old_worker, new_worker, patch=ONE_PAIR, patcher=SKIPPING, patch_file=PATCH_FILE, extra=None):
    old = {"host/worker.py": old_worker} if old_worker else {"host/other.py": "X = 1\n"}
    new = {"host/worker.py": new_worker} if new_worker else {"host/other.py": "X = 1\n"}
    new.update(extra or {})
    plugin = {"plug/patches/__init__.py": patcher, patch_file: patch, "plug/platform.py": "import host\n"}
    return run_scan(old, new, plugin, checks=(SourcePatchesCheck(),))


@pytest.mark.parametrize(("old_worker", "new_worker", "patch", "patcher", "expected"), [
    (WORKER, RENAMED, ONE_PAIR, SKIPPING, ["PP0808 warning drift"]),  # the text is gone: silently skipped
    (WORKER, RENAMED, ONE_PAIR, RAISING, ["PP0808 error drift"]),  # the patcher raises on a miss
    (WORKER, WORKER, ONE_PAIR, SKIPPING, ["no PP0808", "no PP0809"]),  # negative twin: the text is still there
    (RENAMED, RENAMED, ONE_PAIR, SKIPPING, ["PP0808 warning latent"]),  # applies on neither: broken on the pin
    # alternatives: the pair for OLD stops, the pair for NEW starts: info on each side, nothing lost
    (WORKER, RENAMED, ALTERNATIVES, SKIPPING, ["PP0808 info drift", "PP0808 info fixed"]),
    (WORKER, None, ONE_PAIR, SKIPPING, ["PP0809 warning drift"]),  # the module is gone from NEW
    (None, None, ONE_PAIR, SKIPPING, ["PP0809 info latent"]),  # in neither: a patch for another release
])
def test_source_patch_kinds(old_worker, new_worker, patch, patcher, expected):
    expect(scan(old_worker, new_worker, patch, patcher), expected)


def test_a_pair_that_stops_applying_names_where_its_text_went():
    finding = only(scan(WORKER, RENAMED), "PP0808")
    assert (finding.plugin, finding.subject, finding.args["old"], finding.args["module"]) == (
        Location(PATCH_FILE, 2, 0, "PATCHES[0]", 'if device.type == "cuda":'), "host.worker",
        'if device.type == "cuda":', "host.worker")
    assert finding.old == Location("host/worker.py", 3, 0, "host.worker", 'if device.type == "cuda":')
    assert finding.new == Location("host/worker.py", 3, 0, "host.worker", 'if self.device_type == "cuda":')
    assert finding.suggestion.startswith("host 1.0's matching line became `if self.device_type == \"cuda\":` "
                                         "(host/worker.py:3) in host 2.0: port the pair to it")
    assert finding.details[0].endswith("skips it silently otherwise (plug/patches/__init__.py:6)")
    assert finding.details[1] == f"pairs of {PATCH_FILE} that apply in host 2.0: none; in host 1.0: PATCHES[0]"


def test_a_strict_patcher_is_cited_as_the_reason_for_the_error():
    finding = only(scan(WORKER, RENAMED, patcher=RAISING), "PP0808")
    assert finding.details[0] == "the patcher raises when a pair's text is missing (plug/patches/__init__.py:6)"


def test_the_ported_pair_applies_on_new():
    """The suggested port passes the check itself: a pair written for the text the finding names."""
    ported = ONE_PAIR.replace('device.type == "cuda"', 'self.device_type == "cuda"')
    expect(scan(RENAMED, RENAMED, ported), ["no PP0808", "no PP0809"])


def test_a_moved_module_names_the_module_holding_the_text():
    moved = {"host/v1/__init__.py": "", "host/v1/worker.py": WORKER}
    finding = only(scan(WORKER, None, extra=moved), "PP0809")
    assert (finding.plugin, finding.args["module"], finding.args["count"], finding.status.value) == (
        Location(PATCH_FILE, 2, 0, "PATCHES", "target host.worker"), "host.worker", 1, "drift")
    assert finding.old == Location("host/worker.py", 1, 0, "host.worker", "module host.worker")
    assert finding.new == Location("host/v1/worker.py", 3, 0, "host.v1.worker", 'if device.type == "cuda":')
    assert finding.suggestion == ("the text is in `host.v1.worker` (host/v1/worker.py:3) in host 2.0: rename the "
                                  "patch file to `host__v1__worker.patch.py`")


def test_a_patch_of_another_package_is_not_judged():
    """Negative twin of the target rule: a file whose name is no host module is not this host's patch."""
    expect(scan(WORKER, RENAMED, patch_file="plug/patches/torch__nn.patch.py"), ["no PP0808", "no PP0809"])
