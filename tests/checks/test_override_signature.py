"""Override signatures (#1, #2): one positive and one negative case per kind."""

import pytest

from harness import expect, only, run_scan
from pinport.checks.override_signature import SignaturesCheck

PATCH = "plug/patch.py"
HEADER = """
from plug.patching import ArcticPatch
from host.runner import Runner
"""
PATCHING = {"plug/patching.py": "class ArcticPatch:\n    pass\n"}


def scan(old_sig: str, new_sig: str, plugin_sig: str, body: str = "pass"):
    old = {"host/runner.py": f"class Runner:\n    def step{old_sig}:\n        pass\n"}
    new = {"host/runner.py": f"class Runner:\n    def step{new_sig}:\n        pass\n"}
    plugin = {PATCH: HEADER + f"\nclass RunnerPatch(ArcticPatch[Runner]):\n    def step{plugin_sig}:\n        {body}\n",
              **PATCHING}
    return run_scan(old, new, plugin, checks=(SignaturesCheck(),))


@pytest.mark.parametrize(("old", "new", "plugin", "expected"), [
    # 1: upstream adds a parameter the override does not take
    ("(self, a)", "(self, a, is_profiling=False)", "(self, a)", ["PP0101 warning drift"]),
    ("(self, a)", "(self, a)", "(self, a)", ["no PP0101"]),
    # a passthrough accepts anything
    ("(self, a)", "(self, a, b=1)", "(self, *args, **kwargs)", ["no PP0101"]),
    # 1: a rename at the same position
    ("(self, a, spec)", "(self, a, metadata)", "(self, a, spec)", ["PP0102 warning drift"]),
    ("(self, a, spec)", "(self, a, spec)", "(self, a, spec)", ["no PP0102"]),
    # positional-only parameters keep their position: still a rename (and a kind difference)
    ("(self, a, spec)", "(self, a, metadata)", "(self, a, spec, /)",
     ["PP0102 warning drift", "PP0104 warning latent", "PP0104 warning fixed"]),
    # a missing and an extra parameter at different positions are no rename
    ("(self, metadata, a)", "(self, metadata, a)", "(self, a, spec)",
     ["PP0101 warning latent", "PP0201 warning latent", "no PP0102"]),
    # 1: reordered positional parameters
    ("(self, a, b)", "(self, b, a)", "(self, a, b)", ["PP0103 warning drift"]),
    ("(self, a, b)", "(self, a, b)", "(self, a, b)", ["no PP0103"]),
    # 1: keyword-only in the override but positional upstream
    ("(self, a, b)", "(self, a, b)", "(self, a, *, b)", ["PP0104 warning latent"]),
    ("(self, a, *, b)", "(self, a, *, b)", "(self, a, *, b)", ["no PP0104"]),
    # 1: default differs (informational)
    ("(self, a=1)", "(self, a=2)", "(self, a=1)", ["PP0105 info drift"]),
    ("(self, a=1)", "(self, a=1)", "(self, a=1)", ["no PP0105"]),
    # 2: the override requires a parameter upstream never passes
    ("(self, a)", "(self, a)", "(self, a, extra)", ["PP0201 warning latent"]),
    ("(self, a)", "(self, a)", "(self, a, extra=None)", ["no PP0201"]),
    # 2: upstream dropped a parameter the override still takes (optional)
    # (an optional parameter cannot break a caller: context only)
    ("(self, a, spec=None)", "(self, a)", "(self, a, spec=None)", ["PP0202 info drift"]),
    ("(self, a, spec=None)", "(self, a, spec=None)", "(self, a, spec=None)", ["no PP0202"]),
    # 1: upstream gives a parameter a default; the override still requires it, so callers that omit it fail
    ("(self, a, b)", "(self, a, b=None)", "(self, a, b)", ["PP0107 warning drift"]),
    ("(self, a, b)", "(self, a, b)", "(self, a, b)", ["no PP0107"]),
    ("(self, a, b=None)", "(self, a, b=None)", "(self, a, b=None)", ["no PP0107", "no PP0105"]),
    # the base's **kwargs carries an extra keyword
    ("(self, a, **kw)", "(self, a, **kw)", "(self, a, extra)", ["no PP0201"]),
])
def test_signature_kinds(old, new, plugin, expected):
    expect(scan(old, new, plugin), expected)


def test_added_parameter_evidence_and_status():
    result = scan("(self, a)", "(self, a, is_profiling=False)", "(self, a)")
    finding = only(result, "PP0101")
    assert finding.status.value == "drift"
    assert finding.plugin.path == PATCH and finding.plugin.unit == "RunnerPatch.step"
    assert finding.new.path == "host/runner.py" and finding.new.line == 2
    assert "is_profiling" in finding.new.snippet and "is_profiling" not in finding.old.snippet
    assert "is_profiling=False" in finding.suggestion


def test_latent_when_already_broken_on_old():
    result = scan("(self, a, b)", "(self, a, b)", "(self, a)")
    assert only(result, "PP0101").status.value == "latent"


def test_dropped_parameter_reports_use():
    result = scan("(self, a, spec=None)", "(self, a)", "(self, a, spec=None)", body="return spec")
    assert only(result, "PP0202").args["usage"] == " and uses it"


def test_inherited_method_is_found_through_mro():
    old = {"host/base.py": "class Base:\n    def step(self, a):\n        pass\n",
           "host/runner.py": "from host.base import Base\n\nclass Runner(Base):\n    pass\n"}
    new = {"host/base.py": "class Base:\n    def step(self, a, b):\n        pass\n",
           "host/runner.py": "from host.base import Base\n\nclass Runner(Base):\n    pass\n"}
    plugin = {PATCH: HEADER + "\nclass RunnerPatch(ArcticPatch[Runner]):\n    def step(self, a):\n        pass\n",
              **PATCHING}
    result = run_scan(old, new, plugin, checks=(SignaturesCheck(),))
    expect(result, ["PP0101 warning drift"])
    assert only(result, "PP0101").new.path == "host/base.py"


@pytest.mark.parametrize(("old_has", "new_has", "expected"), [
    # upstream dropped it: the override overrides nothing (on OLD it overrides, so nothing is fixed)
    (True, False, ["PP0203 error drift"]),
    # upstream added a member of the same name: a collision; on OLD the member was the plugin's own
    (False, True, ["PP0106 warning drift", "PP0002 info fixed"]),
    (False, False, ["PP0002 info latent"]),  # plugin-only member (informational)
    (True, True, ["no PP0203", "no PP0106", "no PP0002"]),
])
def test_member_presence(old_has, new_has, expected):
    member = "    def extra(self):\n        pass\n"
    old = {"host/runner.py": "class Runner:\n    x = 1\n" + (member if old_has else "")}
    new = {"host/runner.py": "class Runner:\n    x = 1\n" + (member if new_has else "")}
    plugin = {PATCH: HEADER + "\nclass RunnerPatch(ArcticPatch[Runner]):\n    def extra(self):\n        pass\n",
              **PATCHING}
    expect(run_scan(old, new, plugin, checks=(SignaturesCheck(),)), expected)


def test_module_function_replacement():
    old = {"host/state.py": "def graph_capture(device):\n    pass\n"}
    new = {"host/state.py": "def graph_capture(device, graph_capture_context=None):\n    pass\n"}
    plugin = {PATCH: "from plug.patching import ArcticPatch\nimport host.state as state\n\n"
                     "class StatePatch(ArcticPatch[state]):\n    def graph_capture(device):\n        pass\n",
              **PATCHING}
    result = run_scan(old, new, plugin, checks=(SignaturesCheck(),))
    assert only(result, "PP0101").args["param"] == "graph_capture_context"


def test_assignment_replacement():
    old = {"host/runner.py": "class Runner:\n    def step(self, a):\n        pass\n"}
    new = {"host/runner.py": "class Runner:\n    def step(self, a, b):\n        pass\n"}
    plugin = {PATCH: "from host.runner import Runner\n\ndef my_step(self, a):\n    pass\n\n"
                     "def apply():\n    Runner.step = my_step\n"}
    result = run_scan(old, new, plugin, checks=(SignaturesCheck(),))
    assert only(result, "PP0101").plugin.line == 7


def test_subclass_override_is_capped_at_warning():
    old = {"host/runner.py": "class Runner:\n    def step(self, a):\n        pass\n"}
    new = {"host/runner.py": "class Runner:\n    def step(self, a, b):\n        pass\n"}
    plugin = {PATCH: "from host.runner import Runner\n\nclass Mine(Runner):\n    def step(self, a):\n        pass\n"}
    result = run_scan(old, new, plugin, checks=(SignaturesCheck(),))
    expect(result, ["PP0101 warning drift"])
    finding = only(result, "PP0101")
    assert finding.level.value == "warning"


def test_abstract_base_defaults_do_not_bind_the_override():
    abstract = "from abc import abstractmethod\n\nclass Runner:\n    @abstractmethod\n    def step(self, a, b=None):\n" \
               "        pass\n"
    old = {"host/runner.py": abstract.replace("b=None", "b")}
    plugin = {PATCH: HEADER + "\nclass RunnerPatch(ArcticPatch[Runner]):\n    def step(self, a, b):\n        pass\n",
              **PATCHING}
    expect(run_scan(old, {"host/runner.py": abstract}, plugin, checks=(SignaturesCheck(),)), ["no PP0107"])


# A fork keeps every class of the upstream file; one the plugin never hands on cannot be called.
_FORK_BASE = "class BackendBase:\n    def shape(self, n):\n        return (n,)\n"
_FORKED = ("from host.base import BackendBase\n\n\nclass Backend(BackendBase):\n    def shape(self, n):\n"
           "        return (2, n)\n\n    def name(self):\n        return 'flash'\n\n\n"
           "class Impl:\n    def forward(self, x):\n        return Backend.name(self) + x\n")


def _fork_scan(**plugin: str):
    old = {"host/base.py": _FORK_BASE, "host/flash.py": _FORKED}
    new = {"host/base.py": _FORK_BASE.replace("(self, n)", "(self, n, spec=None)"), "host/flash.py": _FORKED}
    return run_scan(old, new, {"plug/flash_fork.py": _FORKED, **plugin}, names=("signatures",),
                    forks=(("plug/flash_fork.py", "host/flash.py"),))


def test_overrides_of_a_fork_class_nothing_uses_are_one_info():
    # Backend.name(self) only reads a helper off the class: nothing hands Backend to the host
    result = _fork_scan(**{"plug/attention.py": "from plug.flash_fork import Impl\n\nIMPLS = [Impl]\n"})
    expect(result, ["PP0204 info latent Backend:4"], at=True)
    assert only(result, "PP0204").args["count"] == 2  # shape and name


@pytest.mark.parametrize("use", [
    "from plug.flash_fork import Backend\n\nBACKENDS = [Backend]\n",  # imported and listed
    "import plug.flash_fork as fork\n\n\ndef pick():\n    return fork.Backend\n",  # read off the module
    "BACKEND_PATH = 'plug.flash_fork:Backend'\n",  # a registry by path
])
def test_overrides_of_a_used_fork_class_are_judged(use):
    expect(_fork_scan(**{"plug/register.py": use}), ["PP0101 warning drift", "no PP0204"])


def test_a_fork_nothing_imports_is_judged_whole():
    # no plugin module imports the fork: it is loaded some way the scan cannot see, so nothing is unused
    expect(_fork_scan(), ["PP0101 warning drift", "no PP0204"])


_LAYER = """
from host.runner import Runner


class FastRunner(Runner):
    def step(self, a, extra):
        return a + extra


class Layer:
    def __init__(self):
        self.runner = FastRunner()

    def forward(self, a):
        return self.runner.step(a, extra=2)
"""


@pytest.mark.parametrize(("plugin", "expected"), [
    (_LAYER, ["PP0201 info latent"]),  # only the plugin calls it, and passes `extra`
    (_LAYER.replace("self.runner.step(a, extra=2)", "self.runner.step(a, 2)"), ["PP0201 info latent"]),
    (_LAYER.replace("self.runner.step(a, extra=2)", "self.runner.other(a)"), ["PP0201 warning latent"]),  # twin
])
def test_extra_parameter_only_the_plugin_passes(plugin, expected):
    host = {"host/runner.py": "class Runner:\n    def step(self, a):\n        pass\n"}
    expect(run_scan(host, host, {"plug/layer.py": plugin}, checks=(SignaturesCheck(),)), expected)


def test_assigning_over_the_hosts_class_of_the_same_name_does_not_use_the_forks():
    # `host_module.Backend = Other` writes an attribute named like the fork's class: not a use of it
    install = ("import host.flash as target\nfrom plug.flash_fork import Impl\n\n\n"
               "def apply():\n    target.Backend = Impl\n")
    expect(_fork_scan(**{"plug/attention.py": install}), ["PP0204 info latent"])


# A host passthrough (`forward_oot(self, *args, **kwargs)` handing everything to `forward_native`, a
# docstring or not) stands for the member it forwards to: the plugin's replacement is judged against that.
def _custom_op(doc: str, native: str) -> dict[str, str]:
    return {"host/op.py": f"class CustomOp:\n    def forward_oot(self, *args, **kwargs):\n{doc}"
                          "        return self.forward_native(*args, **kwargs)\n\n\n"
                          f"class Rotary(CustomOp):\n    def forward_native{native}:\n        return query\n"}


ROTARY_PATCH = ("from plug.patching import ArcticPatch\nfrom host.op import Rotary\n\n\n"
                "class RotaryPatch(ArcticPatch[Rotary]):\n    def forward_oot(self, positions, query):\n"
                "        return query\n")


@pytest.mark.parametrize("doc", ["", '        """Out-of-tree platforms."""\n', "        # out of tree\n"])
def test_a_passthrough_base_is_judged_as_the_member_it_forwards_to(doc):
    old = _custom_op(doc, "(self, positions, query)")
    new = _custom_op(doc, "(self, positions, query, key=None)")
    result = run_scan(old, new, {PATCH: ROTARY_PATCH, **PATCHING}, checks=(SignaturesCheck(),))
    expect(result, ["PP0101 warning drift RotaryPatch.forward_oot:6"], at=True)
    assert only(result, "PP0101").args["param"] == "key"
    expect(run_scan(old, old, {PATCH: ROTARY_PATCH, **PATCHING}, checks=(SignaturesCheck(),)), ["no PP0101"])


def test_a_passthrough_that_does_more_is_no_passthrough():
    doc = '        """Out-of-tree platforms."""\n        self.calls = 1\n'
    result = run_scan(_custom_op(doc, "(self, positions, query)"), _custom_op(doc, "(self, positions, query, key=None)"),
                      {PATCH: ROTARY_PATCH, **PATCHING}, checks=(SignaturesCheck(),))
    expect(result, ["no PP0101"])
