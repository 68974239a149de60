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


def test_every_alias_is_judged_past_members_and_resolving_aliases():
    # a method, an alias that resolves, then the alias that does not: only the last is reported
    new = {"host/runner.py": "class Runner:\n    def step(self):\n        pass\n"}
    old = {"host/runner.py": "class Runner:\n    def step(self):\n        pass\n\n    def load_model(self):\n        pass\n"}
    body = ("    def capture(self):\n        pass\n\n    _orig_step = Runner.step\n"
            "    _orig_load = Runner.load_model\n")
    expect(scan(old, new, body), ["PP0001 error drift RunnerPatch:9"], at=True)
    assert only(scan(old, new, body), "PP0001").args["alias"] == "_orig_load"


def test_look_alikes_are_at_most_three():
    methods = "".join(f"    def load_model_{i}(self):\n        pass\n" for i in range(4))
    result = scan({"host/runner.py": RUNNER}, {"host/runner.py": "class Runner:\n" + methods},
                  "    _orig_load = Runner.load_model\n")
    expect(result, ["PP0001 error drift"])
    listed = only(result, "PP0001").suggestion.removeprefix("host 2.0 `Runner` has: ").split(", ")
    assert len(listed) == 3 and set(listed) < {f"load_model_{i}" for i in range(4)}


@pytest.mark.parametrize(("module", "expected"), [
    # a class the host re-exports from outside (torch's): not the host's to judge
    ("from torch.nn import Module as Runner\n", ["no PP0003", "no PP0004"]),
    # a lazy export whose target lies outside the tree: unknown, not missing
    ("_LAZY = {'Runner': 'elsewhere.impl:Runner'}\n\ndef __getattr__(name):\n    return _LAZY[name]\n",
     ["no PP0003", "no PP0004"]),
    # a value a factory returned is no class to patch
    ("from host.maker import make\n\nRunner = make()\n", ["PP0004 error latent"]),
])
def test_targets_the_host_does_not_define_as_a_class(module, expected):
    tree = {"host/ext.py": module, "host/maker.py": "def make():\n    pass\n"}
    src = ("from plug.patching import ArcticPatch\nfrom host.ext import Runner\n\n"
           "class RunnerPatch(ArcticPatch[Runner]):\n    x = 1\n")
    expect(run_scan(tree, tree, {"plug/patch.py": src, **PATCHING}, checks=(AliasesCheck(),)), expected)
