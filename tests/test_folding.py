"""One root cause, one finding: the folds of the whole scan (all checks), each with its twin."""

import pytest

from harness import expect, only, run_scan

PATCHING = {"plug/patching.py": "class ArcticPatch:\n    pass\n"}


def test_one_call_with_several_rejected_arguments_is_one_finding():
    old = {"host/loader.py": "class Loader:\n    def __init__(self, module, *, skip=None, keep=None):\n        pass\n"}
    new = {"host/loader.py": "class Loader:\n    def __init__(self, module, *, ignore=None):\n        pass\n"}
    plugin = {"plug/load.py": "from host.loader import Loader\n\n\ndef load(m):\n    return Loader(m, skip=1, keep=2)\n"}
    result = run_scan(old, new, plugin, names=("calls",))
    expect(result, ["PP0702 error drift load:5"], at=True)
    finding = only(result, "PP0702")
    assert any(d.startswith("the same call also: PP0702") for d in finding.details)
    # twin: two calls are two findings
    two = plugin["plug/load.py"].replace("return Loader(m, skip=1, keep=2)", "Loader(m, skip=1)\n    Loader(m, keep=2)")
    expect(run_scan(old, new, {"plug/load.py": two}, names=("calls",)),
           ["PP0702 error drift load:5", "PP0702 error drift load:6"], at=True)


@pytest.mark.parametrize(("new", "expected"), [
    # the module is gone: its patch target goes with it, one finding
    ({"host/other.py": "X = 1\n"}, ["PP0401 error drift"]),
    # twin: the module stays and only the class is gone: the patch target is a finding of its own
    ({"host/cfg.py": "X = 1\n"}, ["PP0003 error drift", "PP0601 error drift"]),
])
def test_missing_module_takes_its_patch_target_with_it(new, expected):
    old = {"host/cfg.py": "class Config:\n    def size(self):\n        return 1\n"}
    plugin = {**PATCHING, "plug/cfg.py": "from plug.patching import ArcticPatch\nfrom host.cfg import Config\n\n\n"
                                         "class ConfigPatch(ArcticPatch[Config]):\n    def size(self):\n"
                                         "        return 2\n"}
    result = run_scan(old, new, plugin, names=("imports", "aliases"))
    expect(result, expected)
    if expected == ["PP0401 error drift"]:
        assert any(d.startswith("the same missing module: PP0003") for d in only(result, "PP0401").details)


def test_call_sites_passing_too_many_positionals_fold_into_the_signature_finding():
    old = {"host/logits.py": "class Logits:\n    def get(self, h, head):\n        return h\n\n"
                             "    def forward(self, h, head):\n        return self.get(h, head)\n"}
    new = {"host/logits.py": "class Logits:\n    def get(self, h, head, skip=False):\n        return h\n\n"
                             "    def forward(self, h, head):\n        return self.get(h, head, True)\n"}
    plugin = {**PATCHING, "plug/logits.py": "from plug.patching import ArcticPatch\nfrom host.logits import Logits\n\n\n"
                                            "class LogitsPatch(ArcticPatch[Logits]):\n    def get(self, h, head):\n"
                                            "        return h\n"}
    result = run_scan(old, new, plugin, names=("signatures", "callers"))
    expect(result, ["PP0101 error drift", "no PP0111"])  # the warning is raised to error by its call site
    finding = only(result, "PP0101")
    assert [s.cited() for s in finding.sites] == ["host/logits.py:6 (Logits.forward): return self.get(h, head, True)"]
    assert any(d.startswith("error: raises on the main path, host/logits.py:6") for d in finding.details)
