"""Branches kept for another host version (`if vllm_version_is("X"):`) judged against each side's version."""

import pytest

from harness import expect, run_scan
from pinport.checks.call_binding import CallsCheck
from pinport.plugin.version_guards import _branches, _test, evaluate

PATCHING = {"plug/patching.py": "class ArcticPatch:\n    pass\n"}
OLD = {"host/__init__.py": "__version__ = '1.0'\n", "host/helpers.py": "def helper(a, b):\n    pass\n"}
NEW = {"host/__init__.py": "__version__ = '2.0'\n", "host/helpers.py": "def helper(a):\n    pass\n"}


def scan(guard: str, on_old: str = "helper(1, 2)", on_new: str = "helper(1)"):
    """A plugin calling `helper` as OLD takes it under `guard`, as NEW takes it in the else branch."""
    plugin = {"plug/use.py": "import host\nfrom packaging.version import Version\nfrom host.helpers import helper\n"
                             "from plug.utils import host_version_is\n\n\n"
                             f"def go():\n    if {guard}:\n        {on_old}\n    else:\n        {on_new}\n",
              "plug/utils.py": "import host\n\n\ndef host_version_is(v):\n    return host.__version__ == v\n"}
    return run_scan(OLD, NEW, {**PATCHING, **plugin}, checks=(CallsCheck(),), versions=("1.0", "2.0"))


@pytest.mark.parametrize("guard", ['host_version_is("1.0")', 'not host_version_is("2.0")',
                                   'Version(host.__version__) < Version("2.0")', 'host.__version__ == "1.0"',
                                   'host_version_is("0.9") or host_version_is("1.0")'])
def test_a_branch_for_the_other_version_is_context_on_each_side(guard):
    """Each branch binds on its own version only: the OLD branch's call fails on NEW, the NEW branch's
    on OLD, and neither runs there. Without the versions both are guarded warnings."""
    result = scan(guard)
    expect(result, ["PP0303 info drift", "PP0301 info fixed"])
    (found,) = result.findings
    assert found.details[0].startswith("under `if ") and "false on host 2.0" in found.details[0]
    (fixed,) = result.fixed
    assert fixed.details[0].startswith("in the else branch of `if ") and "false on host 1.0" in fixed.details[0]
    expect(run_scan(OLD, NEW, {**PATCHING, "plug/use.py": "from host.helpers import helper\n\n\ndef go(host_version_is):\n"
                               "    if host_version_is('1.0'):\n        helper(1, 2)\n    else:\n        helper(1)\n"},
                    checks=(CallsCheck(),)), ["PP0303 warning drift", "PP0301 warning fixed"])


def test_a_branch_that_runs_on_the_side_is_still_judged():
    """The branch for NEW calls `helper` as OLD took it: it runs on NEW and fails there."""
    expect(scan('host_version_is("2.0")', on_old="helper(1, 2)", on_new="helper(1, 2)"),
           ["PP0303 warning drift", "PP0303 info drift"])  # the else branch's same call does not run on NEW


@pytest.mark.parametrize("guard", [
    'torch_version_is("1.0")',  # another library's version decides nothing about the host's
    'Version(host.__version__) < limit',  # a variable: not certain
    'host_version_is("1.0") and flag',  # true on OLD only with the flag
])
def test_a_test_the_version_does_not_decide_keeps_the_guarded_warnings(guard):
    expect(scan(guard), ["PP0303 warning drift", "PP0301 warning fixed"] if "flag" not in guard else
           ["PP0303 info drift", "PP0301 warning fixed"])


@pytest.mark.parametrize(("text", "version", "value"), [
    ('vllm_version_is("0.29.0")', "0.30.0", False), ('vllm_version_is("0.29.0")', "0.29.0+cpu", True),
    ('Version(VLLM_VERSION) >= Version("0.10")', "0.9.2", False),
    ('version.parse(vllm.__version__) < version.parse("0.10")', "0.9.2", True),
    ('vllm.__version__ >= "0.10"', "0.9.2", True),  # two strings compare as strings, as Python does
    ('vllm_version_is("0.29.0") and flag', "0.30.0", False), ('vllm_version_is("0.29.0") and flag', "0.29.0", None),
    ('version("vllm") != "0.30.0"', "0.30.0", False),
])
def test_host_version_tests_evaluated(text, version, value):
    import ast
    test = _test(ast.parse(text, mode="eval").body, "vllm", {})
    assert (evaluate(test, version) if test is not None else None) is value
    assert _test(ast.parse('torch.__version__ > "2.0.1"', mode="eval").body, "vllm", {}) is None


def test_a_local_bound_once_to_the_host_version_decides_a_branch():
    import ast
    go = "def go(flag):\n    current = Version(vllm.__version__)\n    if current >= Version('0.10'):\n        a()\n"
    (branch,) = _branches(ast.parse(go), "vllm")
    assert (branch.first, branch.taken_when, evaluate(branch.test, "0.9.2"), evaluate(branch.test, "0.11")) == (
        4, True, False, True)
    # negative twins: a local bound twice, a parameter, a name of another scope decide nothing
    assert _branches(ast.parse(go.replace("    if", "    current = other()\n    if")), "vllm") == ()
    assert _branches(ast.parse(go.replace("current = ", "flag = ").replace("if current", "if flag")), "vllm") == ()
    assert _branches(ast.parse("current = Version(vllm.__version__)\n" + go.replace(
        "    current = Version(vllm.__version__)\n", "")), "vllm") == ()
