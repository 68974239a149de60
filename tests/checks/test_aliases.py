"""Aliases (`_orig_*`) and patch targets resolve in NEW, through inheritance."""

import pytest

from harness import expect, only, run_scan
from pinport.checks.aliases import AliasesCheck

PATCHING = {"plug/patching.py": "class ArcticPatch:\n    pass\n"}


def scan(old: dict, new: dict, body: str, target: str = "Runner"):
    src = (f"from plug.patching import ArcticPatch\nfrom host.runner import {target}\n\n"
           f"class RunnerPatch(ArcticPatch[{target}]):\n{body}")
    return run_scan(old, new, {"plug/patch.py": src, **PATCHING}, checks=(AliasesCheck(),))


RUNNER = "class Runner:\n    def load_model(self):\n        pass\n"


def test_alias_to_dropped_member_is_an_error_with_old_evidence():
    new = {"host/runner.py": "class Runner:\n    def load_weights(self):\n        pass\n"}
    result = scan({"host/runner.py": RUNNER}, new, "    _orig_load = Runner.load_model\n")
    expect(result, ["PP0001 error drift RunnerPatch:5"], at=True)
    finding = only(result, "PP0001")
    assert finding.args["alias"] == "_orig_load"
    assert finding.old.path == "host/runner.py" and finding.old.line == 2 and finding.new is None
    assert finding.plugin.line == 5


def test_alias_to_inherited_member_resolves():
    tree = {"host/base.py": RUNNER.replace("Runner", "Base"),
            "host/runner.py": "from host.base import Base\n\nclass Runner(Base):\n    pass\n"}
    expect(scan(tree, tree, "    _orig_load = Runner.load_model\n"), ["no PP0001"])


def test_unchanged_alias_not_flagged():
    tree = {"host/runner.py": RUNNER}
    expect(scan(tree, tree, "    _orig_load = Runner.load_model\n"), ["no PP0001"])


def test_patch_target_missing():
    old = {"host/runner.py": RUNNER, "host/other.py": "class Other:\n    pass\n"}
    new = {"host/runner.py": "class Runner:\n    pass\n"}
    result = run_scan(old, new, {"plug/p.py": "from plug.patching import ArcticPatch\nimport host.other as o\n\n"
                                              "class P(ArcticPatch[o.Other]):\n    pass\n", **PATCHING},
                      checks=(AliasesCheck(),))
    expect(result, ["PP0003 error drift"])
    assert only(result, "PP0003").subject == "host.other.Other"
    twin = run_scan(old, old, {"plug/p.py": "from plug.patching import ArcticPatch\nimport host.other as o\n\n"
                                            "class P(ArcticPatch[o.Other]):\n    pass\n", **PATCHING},
                    checks=(AliasesCheck(),))
    expect(twin, ["no PP0003"])


def test_patch_target_became_a_factory():
    old = {"host/runner.py": RUNNER}
    new = {"host/runner.py": "def Runner(*args):\n    return object()\n"}
    expect(scan(old, new, "    x = 1\n"), ["PP0004 error drift"])
    expect(scan(old, old, "    x = 1\n"), ["no PP0004"])


def test_custom_patch_helper_name():
    old = {"host/runner.py": RUNNER}
    new = {"host/runner.py": "class Runner:\n    pass\n"}
    src = "from host.runner import Runner\nfrom plug.h import Helper\n\nclass P(Helper[Runner]):\n    _o = Runner.load_model\n"
    plugin = {"plug/p.py": src, "plug/h.py": "class Helper:\n    pass\n"}
    expect(run_scan(old, new, plugin, checks=(AliasesCheck(),), patch_helpers=("Helper",)), ["PP0001 error drift"])


@pytest.mark.parametrize(("method", "listed"), [("loader", True), ("load", False)])  # ratio 0.625 / 0.571
def test_alias_look_alike_cutoff(method, listed):
    new = {"host/runner.py": f"class Runner:\n    def {method}(self):\n        pass\n"}
    result = scan({"host/runner.py": RUNNER}, new, "    _orig_load = Runner.load_model\n")
    expect(result, ["PP0001 error drift"])
    assert (only(result, "PP0001").suggestion == f"host 2.0 `Runner` has: {method}") is listed
