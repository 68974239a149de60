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


# the host reaches `step` by name, where no call site is judged: each mismatch keeps its level
_DYNAMIC = "\n\ndef drive(runner):\n    return getattr(runner, 'step')\n"


def scan(old_sig: str, new_sig: str, plugin_sig: str, body: str = "pass"):
    old = {"host/runner.py": f"class Runner:\n    def step{old_sig}:\n        pass\n" + _DYNAMIC}
    new = {"host/runner.py": f"class Runner:\n    def step{new_sig}:\n        pass\n" + _DYNAMIC}
    plugin = {PATCH: HEADER + f"\nclass RunnerPatch(ArcticPatch[Runner]):\n    def step{plugin_sig}:\n        {body}\n",
              **PATCHING}
    return run_scan(old, new, plugin, checks=(SignaturesCheck(),))


@pytest.mark.parametrize(("old", "new", "plugin", "expected"), [
    # 1: upstream adds a parameter the override does not take
    ("(self, a)", "(self, a, is_profiling=False)", "(self, a)", ["PP0101 warning drift"]),
    ("(self, a)", "(self, a)", "(self, a)", ["no PP0101"]),
    # a passthrough accepts anything
    ("(self, a)", "(self, a, b=1)", "(self, *args, **kwargs)", ["no PP0101"]),
    # a wrapper's `*args` shares its name with the base's `args` parameter: it forwards, no kind change
    ("(self, args, tasks)", "(self, args, tasks)", "(self, *args, **kwargs)", ["no PP0104", "no PP0101"]),
    # ... but without `**kwargs` a caller passing `args=` by keyword fails: missing, not a kind change
    ("(self, args)", "(self, args)", "(self, *args)", ["PP0101 warning latent", "no PP0104"]),
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
    new = {"host/base.py": "class Base:\n    def step(self, a, b):\n        pass\n" + _DYNAMIC,
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


_SUBCLASS = "from host.runner import Runner\n\nclass Mine(Runner):\n    def step(self, a):\n        pass\n"
_RUNNER = "class Runner:\n    def step(self, a, b=None):\n        pass\n"


@pytest.mark.parametrize(("caller", "expected"), [
    # a host call that passes what the override lacks may reach it: capped at warning (ordinary subclass)
    ("def drive(r: Runner):\n    r.step(1, b=2)\n", ["PP0101 warning drift"]),
    ("def drive(r):\n    r.step(1, 2)\n", ["PP0101 warning drift"]),  # receiver of unknown type
    ("def drive(r):\n    getattr(r, 'step')(1, 2)\n", ["PP0101 warning drift"]),  # named as a string
    ("def drive(r: Runner):\n    fn = r.step\n    fn(1, 2)\n", ["PP0101 warning drift"]),  # a bare reference
    # negative twins: no host call can trip the mismatch
    ("", ["PP0101 info drift"]),  # only the plugin calls it (here: nobody)
    ("def drive(r: Runner):\n    r.step(1)\n", ["PP0101 info drift"]),  # positionally, the same arity
    ("def drive(r):\n    r.step()\n", ["PP0101 info drift"]),  # the host's own `step` cannot take it: another's
    ("def drive(r):\n    return r.step is None\n", ["PP0101 info drift"]),  # compared with None: data, no method
    ("class Other:\n    def step(self, a, b):\n        pass\n\n\n"
     "def drive(o: Other):\n    o.step(1, 2)\n", ["PP0101 info drift"]),  # typed: another class's method
])
def test_subclass_override_warns_only_where_a_host_call_can_reach_the_mismatch(caller, expected):
    old = {"host/runner.py": "class Runner:\n    def step(self, a):\n        pass\n"}
    new = {"host/runner.py": _RUNNER + "\n\n" + caller}
    result = run_scan(old, new, {PATCH: _SUBCLASS}, checks=(SignaturesCheck(),))
    expect(result, expected)
    finding = only(result, "PP0101")
    assert finding.plugin.unit == "Mine.step" and finding.new.path == "host/runner.py" and finding.new.line == 2
    if "info" in expected[0]:
        assert finding.details[-1].startswith("no call in host 2.0 can fail against the override")


@pytest.mark.parametrize(("body", "expected"), [
    # the override only raises NotImplementedError: every call fails there, whatever it passes
    ('raise NotImplementedError("not on this device")', ["PP0101 info drift"]),
    ('"""Unsupported."""\n        raise NotImplementedError', ["PP0101 info drift"]),
    # negative twins: a body that does something, or raises only on some calls, is judged as ever
    ("return a", ["PP0101 warning drift"]),
    ("if a:\n            raise NotImplementedError\n        return a", ["PP0101 warning drift"]),
    ("raise ValueError(a)", ["PP0101 warning drift"]),
])
def test_an_override_that_only_raises_not_implemented_decides_nothing(body, expected):
    old = {"host/runner.py": "class Runner:\n    def step(self, a):\n        pass\n"}
    new = {"host/runner.py": _RUNNER + "\n\ndef drive(r: Runner):\n    r.step(1, b=2)\n"}
    plugin = {PATCH: _SUBCLASS.replace("        pass\n", f"        {body}\n")}
    result = run_scan(old, new, plugin, checks=(SignaturesCheck(),))
    expect(result, expected)
    finding = only(result, "PP0101")
    assert (finding.args["param"], finding.plugin.path, finding.plugin.line, finding.plugin.unit,
            finding.new.path, finding.new.line) == ("b", PATCH, 4, "Mine.step", "host/runner.py", 2)
    refused = "the override only raises NotImplementedError: the plugin does not support this member, " \
              "and a call fails there whatever it passes"
    assert (finding.details[-1] == refused) == ("info" in expected[0])


def test_a_patch_member_that_only_raises_not_implemented_is_no_error():
    # an error-level mismatch of a patch-class member (a replacement every host call lands in) too
    old = {"host/runner.py": "class Runner:\n    def step(self, a):\n        pass\n"}
    new = {"host/runner.py": "class Runner:\n    def step(self, a, b):\n        pass\n\n\n"
                             "def drive(r: Runner):\n    r.step(1, 2)\n"}

    def member(body: str):
        plugin = {PATCH: HEADER + f"\nclass RunnerPatch(ArcticPatch[Runner]):\n    def step(self, a):\n        {body}\n",
                  **PATCHING}
        return run_scan(old, new, plugin, checks=(SignaturesCheck(),))
    stub, real = member("raise NotImplementedError"), member("return a")
    expect(stub, ["PP0101 info drift"])
    expect(real, ["PP0101 error drift"])
    for result in (stub, real):
        finding = only(result, "PP0101")
        assert (finding.args["param"], finding.plugin.unit, finding.new.line) == ("b", "RunnerPatch.step", 2)


def test_implicitly_called_override_is_always_reached():
    # `forward` runs through Module.__call__ (setting called-implicitly): no host text names the call
    old = {"host/runner.py": "class Runner:\n    def forward(self, a):\n        pass\n"}
    new = {"host/runner.py": "class Runner:\n    def forward(self, a, b=None):\n        pass\n"}
    plugin = {PATCH: _SUBCLASS.replace("def step", "def forward")}
    result = run_scan(old, new, plugin, checks=(SignaturesCheck(),), called_implicitly=("forward",))
    expect(result, ["PP0101 warning drift"])
    # the warning names the path it assumes: the host calls the instance, no call site is judged
    assert only(result, "PP0101").details[-1].startswith("reached without a named call: `forward` runs when")
    expect(run_scan(old, new, plugin, checks=(SignaturesCheck(),)), ["PP0101 info drift"])


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
    # NEW's base takes `spec`, and a host call passes it (so an override without it can be reached)
    new = {"host/base.py": _FORK_BASE.replace("(self, n)", "(self, n, spec=None)") +
           "\n\ndef shape_of(b: BackendBase):\n    return b.shape(1, spec=2)\n", "host/flash.py": _FORKED}
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


_HOST_RUNNER = "class Runner:\n    def step(self, a):\n        pass\n"
_HOST_CALLER = "\n\ndef drive(r: Runner):\n    r.step(1)\n"  # a host call of a Runner: it reaches the override


@pytest.mark.parametrize(("plugin", "host", "expected"), [
    (_LAYER, _HOST_RUNNER + _HOST_CALLER, ["PP0201 info latent"]),  # only the plugin passes `extra`
    (_LAYER.replace("self.runner.step(a, extra=2)", "self.runner.step(a, 2)"), _HOST_RUNNER + _HOST_CALLER,
     ["PP0201 info latent"]),
    # twin: the plugin does not pass `extra`, and the host's call reaches the override without it
    (_LAYER.replace("self.runner.step(a, extra=2)", "self.runner.other(a)"), _HOST_RUNNER + _HOST_CALLER,
     ["PP0201 warning latent"]),
    # nobody calls it: no host call can trip it either
    (_LAYER.replace("self.runner.step(a, extra=2)", "self.runner.other(a)"), _HOST_RUNNER, ["PP0201 info latent"]),
])
def test_extra_parameter_only_the_plugin_passes(plugin, host, expected):
    trees = {"host/runner.py": host}
    expect(run_scan(trees, trees, {"plug/layer.py": plugin}, checks=(SignaturesCheck(),)), expected)


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


_DRIVER = "class Runner:\n    def step(self, a, b=None):\n        pass\n\n    def run(self):\n        self.step(1, 2)\n"


@pytest.mark.parametrize(("host", "plugin", "expected"), [
    # `self.step(1, 2)` in Runner.run reaches Mine.step when Mine runs Runner.run
    (_DRIVER, _SUBCLASS, ["PP0101 warning drift"]),
    (_DRIVER, _SUBCLASS + "\n    def run(self):\n        return super().run()\n", ["PP0101 warning drift"]),
    # negative twin: Mine replaces run (no call up to it): the host's call never runs on a Mine
    (_DRIVER, _SUBCLASS + "\n    def run(self):\n        return self.step(1)\n", ["PP0101 info drift"]),
    # a receiver typed as a host subclass Mine does not derive from cannot be a Mine
    (_RUNNER + "\n\nclass GpuRunner(Runner):\n    pass\n\n\ndef drive(r: GpuRunner):\n    r.step(1, 2)\n",
     _SUBCLASS, ["PP0101 info drift"]),
    (_RUNNER + "\n\nclass GpuRunner(Runner):\n    pass\n\n\ndef drive(r: GpuRunner):\n    r.step(1, 2)\n",
     _SUBCLASS.replace("import Runner", "import GpuRunner").replace("(Runner)", "(GpuRunner)"),
     ["PP0101 warning drift"]),
    # names that are no call: the export list, a docstring, a comment, `hasattr`, a bare read off another class
    (_RUNNER + "\n\n__all__ = ['step']\n\n\ndef drive(r):\n    '''calls 'step' as `r.step`'''\n"
     "    # see r.step\n    return hasattr(r, 'step')\n", _SUBCLASS, ["PP0101 info drift"]),
    (_RUNNER + "\n\nclass Other:\n    def step(self, a, b):\n        pass\n\n\ndef drive(o: Other):\n"
     "    return o.step\n", _SUBCLASS, ["PP0101 info drift"]),
    (_RUNNER + "\n\ndef drive(r):\n    return r.step\n", _SUBCLASS, ["PP0101 warning drift"]),
])
def test_a_host_call_reaches_the_override_only_where_its_instances_can_be(host, plugin, expected):
    old = {"host/runner.py": host.replace(", b=None", "")}
    result = run_scan(old, {"host/runner.py": host}, {PATCH: plugin}, checks=(SignaturesCheck(),))
    expect(result, expected)
    finding = only(result, "PP0101")
    assert (finding.plugin.path, finding.plugin.unit, finding.args["param"]) == (PATCH, "Mine.step", "b")
    assert (finding.old.path, finding.old.line, finding.new.path, finding.new.line) == (
        "host/runner.py", 2, "host/runner.py", 2)


_PROPOSER = "class Proposer:\n    def __init__(self, config, runner=None):\n        pass\n\n" \
            "    def propose(self, tokens, step=0):\n        return tokens\n"
_HOST_RUNNER = "from host.proposer import Proposer\n\n\nclass Runner:\n    def __init__(self):\n" \
               "        self.drafter = Proposer(None, self)\n\n    def execute(self, tokens):\n" \
               "        return self.drafter.propose(tokens, step=1)\n"
_MY_PROPOSER = "from host.proposer import Proposer\n\n\nclass MyProposer(Proposer):\n" \
               "    def __init__(self, config):\n        pass\n\n    def propose(self, tokens):\n        return tokens\n"


@pytest.mark.parametrize(("user", "expected"), [
    # only the plugin builds MyProposer, and keeps it in its own runner, which is no host Runner:
    # neither the host's constructor calls nor its `self.drafter.propose(...)` can meet one
    ("from plug.proposer import MyProposer\n\n\nclass MyRunner:\n    def __init__(self):\n"
     "        self.drafter = MyProposer(None)\n",
     ["PP0101 info latent MyProposer.__init__:5", "PP0101 info latent MyProposer.propose:8"]),
    # positive twins: the class handed to the host (a registry call) may be built and called by it
    ("from plug.proposer import MyProposer\nfrom host.registry import register\n\n\nregister(MyProposer)\n",
     ["PP0101 warning latent MyProposer.__init__:5", "PP0101 warning latent MyProposer.propose:8"]),
    # ... or a class-path string names it
    ("PROPOSER = 'plug.proposer.MyProposer'\n",
     ["PP0101 warning latent MyProposer.__init__:5", "PP0101 warning latent MyProposer.propose:8"]),
    # ... or nothing in the plugin builds it (loaded some way the scan cannot see)
    ("", ["PP0101 warning latent MyProposer.__init__:5", "PP0101 warning latent MyProposer.propose:8"]),
    # ... or the holder is a host Runner that runs Runner.execute: the host's call certainly fails
    ("from plug.proposer import MyProposer\nfrom host.runner import Runner\n\n\nclass MyRunner(Runner):\n"
     "    def __init__(self):\n        self.drafter = MyProposer(None)\n",
     ["PP0101 error latent MyProposer.propose:8", "PP0101 info latent MyProposer.__init__:5"]),
    # ... or the instance leaves the plugin's hands (returned): the host may call it anywhere
    ("from plug.proposer import MyProposer\n\n\ndef make():\n    return MyProposer(None)\n",
     ["PP0101 info latent MyProposer.__init__:5", "PP0101 warning latent MyProposer.propose:8"]),
])
def test_only_plugin_built_classes_are_unreached_by_the_host(user, expected):
    host = {"host/proposer.py": _PROPOSER, "host/runner.py": _HOST_RUNNER,
            "host/registry.py": "def register(cls):\n    return cls\n"}
    plugin = {"plug/proposer.py": _MY_PROPOSER, "plug/user.py": user}
    result = run_scan(host, host, plugin, checks=(SignaturesCheck(),))
    expect(result, expected, at=True)
    by_unit = {f.plugin.unit: f for f in result.findings}
    assert by_unit["MyProposer.__init__"].args["param"] == "runner"
    assert by_unit["MyProposer.propose"].args["param"] == "step"
    assert all(f.new.path == "host/proposer.py" and f.old.line == f.new.line for f in result.findings)
    if by_unit["MyProposer.__init__"].level.value == "info":
        assert by_unit["MyProposer.__init__"].details[-1].startswith("only plugin code builds `MyProposer`")


@pytest.mark.parametrize(("construction", "expected"), [
    # the plugin installs MyProposer in place of the host's Proposer: the host builds it where it builds
    # a Proposer, and `Proposer(None, self)` passes `runner`, which MyProposer.__init__ lacks
    ("Proposer(None, self)", "PP0101 warning latent MyProposer.__init__:5"),
    # negative twin: every host construction binds to the plugin's constructor
    ("Proposer(None)", "PP0101 info latent MyProposer.__init__:5"),
    # ... unless the host also hands the class on as a value (a factory may build it any way)
    ("make(Proposer)", "PP0101 warning latent MyProposer.__init__:5"),
])
def test_a_class_installed_in_place_of_a_host_class_is_built_where_the_host_builds_it(construction, expected):
    runner = _HOST_RUNNER.replace("Proposer(None, self)", construction).replace(
        "class Runner:", "def make(cls):\n    return cls(None)\n\n\nclass Runner:")
    host = {"host/proposer.py": _PROPOSER, "host/runner.py": runner}
    plugin = {"plug/proposer.py": _MY_PROPOSER,
              "plug/install.py": "import host.proposer\nfrom plug.proposer import MyProposer\n\n\n"
                                 "def install():\n    host.proposer.Proposer = MyProposer\n"}
    result = run_scan(host, host, plugin, checks=(SignaturesCheck(),))
    # the host builds its drafter as a Proposer, which is now the plugin's: `propose(tokens, step=1)` lands there
    expect(result, [expected, "PP0101 warning latent MyProposer.propose:8"], at=True)
    init = next(f for f in result.findings if f.plugin.unit == "MyProposer.__init__")
    assert (init.args["param"], init.new.path, init.new.line) == ("runner", "host/proposer.py", 2)


_BLOCKS = """import torch


class Block(torch.nn.Module):
    def forward(self, x):
        return x


class Layer(torch.nn.Module):
    def __init__(self):
        self.mlp = Block()

    def forward(self, h):
        return {call}
"""
_RENAMING = "from host.model import Block\n\n\ndef my_forward(self, hidden):\n    return hidden\n\n\n" \
            "def install():\n    Block.forward = my_forward\n"


@pytest.mark.parametrize(("call", "extra", "level"), [
    # the host keeps every Block in `Layer.mlp` and calls it positionally: a rename in place binds
    ("self.mlp(h)", "", "info"),
    # negative twins: a host call through Module.__call__ that the replacement rejects keeps the warning
    ("self.mlp(x=h)", "", "warning"),
    ("self.mlp(h)", "\n\ndef run(layer: Layer):\n    return layer.mlp(x=1)\n", "warning"),  # off a typed holder
    ("self.mlp(h)", "\n\ndef run(layer):\n    return layer.mlp(x=1)\n", "warning"),  # untyped, the holder named
    ("self.mlp(h)", "\n\ndef handed(layer: Layer):\n    return layer.mlp\n", "warning"),  # the instance handed on
    ("self.mlp(h)", "\n\nSPARE = [Block()]\n", "warning"),  # an instance not kept in an attribute
    ("self.mlp(h)", "\n\ndef peek(layer):\n    return getattr(layer, 'mlp')\n", "warning"),  # read by name
])
def test_an_implicitly_called_replacement_is_judged_at_the_hosts_calls_of_its_instances(call, extra, level):
    host = {"host/model.py": _BLOCKS.format(call=call) + extra}
    result = run_scan(host, host, {"plug/patch.py": _RENAMING}, checks=(SignaturesCheck(),),
                      called_implicitly=("forward",))
    expect(result, [f"PP0101 {level} latent install:9", f"PP0201 {level} latent install:9"], at=True)
    assert [(f.args["param"], f.new.path, f.new.line, f.old.path, f.old.line) for f in result.findings] == [
        ("x", "host/model.py", 5, "host/model.py", 5), ("hidden", "host/model.py", 5, "host/model.py", 5)]
    if level == "info":
        assert all(f.details[-1].startswith("no call in host 2.0 can fail against the replacement") for f in result.findings)


def test_calls_of_another_holders_attribute_do_not_reach_the_replacement():
    # `Other.mlp` holds something else: its keyword call cannot meet a Block (the classes are unrelated)
    host = {"host/model.py": _BLOCKS.format(call="self.mlp(h)") + "\n\nclass Other:\n    def __init__(self):\n"
            "        self.mlp = dict\n\n    def go(self):\n        return self.mlp(x=1)\n"}
    result = run_scan(host, host, {"plug/patch.py": _RENAMING}, checks=(SignaturesCheck(),),
                      called_implicitly=("forward",))
    expect(result, ["PP0101 info latent install:9", "PP0201 info latent install:9"], at=True)


_MOVED_HOST = "class Runner:\n    def step(self, a, b=None, c=None):\n        pass\n"


@pytest.mark.parametrize(("caller", "level"), [
    ("def drive(r: Runner):\n    r.step(1, 2)\n", "warning"),  # 2 binds to `c` in the replacement
    ("def drive(r: Runner, args):\n    r.step(*args)\n", "warning"),  # unpacked: any slot
    ("def drive(r: Runner):\n    getattr(r, 'step')(1)\n", "warning"),  # named as a string: not judged
    # negative twins: every host call passes positionally only the slots that agree
    ("def drive(r: Runner):\n    r.step(1, b=2, c=3)\n", "info"),
    ("", "info"),  # only the plugin calls it
])
def test_a_moved_parameter_matters_only_to_host_calls_passing_it_positionally(caller, level):
    new = {"host/runner.py": _MOVED_HOST + "\n\n" + caller}
    member = {PATCH: HEADER + "\nclass RunnerPatch(ArcticPatch[Runner]):\n    def step(self, a, c=None, b=None):\n"
                              "        pass\n", **PATCHING}
    override = {PATCH: "from host.runner import Runner\n\nclass Mine(Runner):\n    def step(self, a, c=None, b=None):\n"
                       "        pass\n"}
    for plugin, unit in ((member, "RunnerPatch.step"), (override, "Mine.step")):
        result = run_scan({"host/runner.py": _MOVED_HOST}, new, plugin, checks=(SignaturesCheck(),))
        expect(result, [f"PP0103 {level} latent"])
        finding = only(result, "PP0103")
        assert (finding.plugin.path, finding.plugin.unit, finding.new.path, finding.new.line, finding.args["order"],
                finding.args["plugin_order"]) == (PATCH, unit, "host/runner.py", 2, "a, b, c", "a, c, b")
        if level == "info" and unit == "RunnerPatch.step":
            assert finding.details[-1].startswith("no call in host 2.0 can fail against the replacement: every host "
                                                  "call of `step` passes positionally only what binds")


_FACTORY = "def build(n, k, hidden, renorm=True):\n    pass\n"
_FACTORY_PLUGIN = ("import host.layer as layer\n\n\ndef my_build(n, k, *args, renorm=True, **kwargs):\n"
                   "    pass\n\n\nlayer.build = my_build\n")


@pytest.mark.parametrize(("caller", "level"), [
    ("from host.layer import build\n\n\ndef make():\n    build(1, 2, 3, False)\n", "warning"),  # `renorm` into *args
    # negative twins: the slots the replacement's *args takes in order, then keywords
    ("from host.layer import build\n\n\ndef make():\n    build(1, 2, 3, renorm=False)\n", "info"),
    ("from host.layer import build\n\n\ndef make():\n    build(n=1, k=2, hidden=3)\n", "info"),
])
def test_a_parameter_made_keyword_only_matters_only_to_host_calls_passing_it_positionally(caller, level):
    host = {"host/layer.py": _FACTORY}
    new = {"host/layer.py": _FACTORY, "host/model.py": caller}
    result = run_scan(host, new, {"plug/moe.py": _FACTORY_PLUGIN}, checks=(SignaturesCheck(),))
    expect(result, [f"PP0104 {level} latent"])
    finding = only(result, "PP0104")
    assert (finding.args["param"], finding.args["base_kind"], finding.args["plugin_kind"], finding.plugin.path,
            finding.plugin.line, finding.new.path, finding.new.line) == (
        "renorm", "positional", "keyword-only", "plug/moe.py", 8, "host/layer.py", 1)


_CONFIG = "def get_config(vllm_config):\n    pass\n"
_CONFIG_PLUGIN = "import host.utils as utils\n\nutils.get_config = lambda _config: None\n"


@pytest.mark.parametrize(("caller", "level"), [
    ("hooks = [get_config]\n", "warning"),  # handed on as a value: called where no site is judged
    ("def make(cfg):\n    return getattr(utils, 'get_config')(cfg)\n", "warning"),  # named as a string
    ("def make(args):\n    return get_config(*args)\n", "warning"),  # unpacked: not judged
    # negative twin: every host call binds, and nothing reaches it another way
    ("def make(cfg):\n    return get_config(cfg)\n", "info"),
])
def test_a_replacement_every_host_call_binds_to_is_info_unless_reached_another_way(caller, level):
    new = {"host/utils.py": _CONFIG,
           "host/model.py": "import host.utils as utils\nfrom host.utils import get_config\n\n\n" + caller}
    result = run_scan({"host/utils.py": _CONFIG}, new, {"plug/cfg.py": _CONFIG_PLUGIN}, checks=(SignaturesCheck(),))
    expect(result, [f"PP0101 {level} latent", f"PP0201 {level} latent"])  # a lambda's parameter renamed
    missing, extra = only(result, "PP0101"), only(result, "PP0201")
    assert (missing.args["param"], extra.args["param"]) == ("vllm_config", "_config")
    for finding in (missing, extra):
        assert (finding.plugin.path, finding.plugin.line, finding.new.path, finding.new.line) == (
            "plug/cfg.py", 3, "host/utils.py", 1)
    if level == "info":
        assert missing.details[-1].startswith("no call in host 2.0 can fail against the replacement: every host "
                                              "call of `get_config` binds to it alike")


def test_a_replacement_whose_failing_host_callers_the_plugin_replaces_stays_a_warning():
    # the host's only caller would fail, but the plugin replaces it: its own copy calls the member
    host = {"host/runner.py": "class Runner:\n    def sync(self, out):\n        pass\n\n"
                              "    def step(self):\n        self.sync(1)\n"}
    plugin = {PATCH: HEADER + "\nclass RunnerPatch(ArcticPatch[Runner]):\n    def sync(self, out, meta):\n"
                              "        pass\n\n    def step(self):\n        self.sync(1, 2)\n", **PATCHING}
    result = run_scan(host, host, plugin, checks=(SignaturesCheck(),))
    expect(result, ["PP0201 warning latent"])
    assert only(result, "PP0201").details[-1].startswith("no reachable call site in host 2.0 fails against the "
                                                         "override: the host callers that would are replaced")


_HOST_CONFIG = """from dataclasses import InitVar, dataclass


@dataclass
class Config:
    size: InitVar[int]
    flag: InitVar[bool]

    def __post_init__(self, size, flag):
        pass


def build():
    return getattr(Config(1, True), "__post_init__")
"""


@pytest.mark.parametrize(("decorator", "fields", "expected"), [
    # a plugin dataclass redeclaring the base's InitVar `size` as a plain field: its generated __init__
    # hands __post_init__ only `flag`, which the override takes
    ("@dataclass(kw_only=True)", "    size: int | None = None\n    flag: InitVar[bool] = False\n", []),
    # negative twins: `size` still an InitVar, or the subclass no dataclass (its annotations are no fields,
    # the base's __init__ passes both): `size` is missing
    ("@dataclass(kw_only=True)", "    size: InitVar[int] = 0\n    flag: InitVar[bool] = False\n",
     ["PP0101 warning latent"]),
    ("", "    size: int | None = None\n", ["PP0101 warning latent"]),
])
def test_a_dataclass_post_init_takes_only_the_init_vars_of_the_class_built(decorator, fields, expected):
    plugin = {PATCH: "from dataclasses import InitVar, dataclass\n\nfrom host.cfg import Config\n\n\n"
              f"{decorator}\nclass MyConfig(Config):\n{fields}\n    def __post_init__(self, flag=False):\n"
              "        pass\n"}
    result = run_scan({"host/cfg.py": _HOST_CONFIG}, {"host/cfg.py": _HOST_CONFIG}, plugin,
                      checks=(SignaturesCheck(),))
    expect(result, expected)
    if expected:
        finding = only(result, "PP0101")
        assert finding.args["param"] == "size" and finding.plugin.unit == "MyConfig.__post_init__"
        assert (finding.new.path, finding.new.line) == ("host/cfg.py", 9)


_HOST_REQUEST = """class Request:
    def __init__(self, request_id, prompt, embeds=None):
        pass


def build(cls):
    return cls("a", "b", None)
"""


@pytest.mark.parametrize(("params", "call", "expected"), [
    # `*args` first and handed on to the base unchanged: a positional `embeds` reaches the base in place
    ("*args, embeds=None, extra=None, **kwargs", "super().__init__(*args, **kwargs)", ["no PP0104"]),
    # negative twins: the positionals are not handed on, or the override names some before `*args`
    ("*args, embeds=None, **kwargs", "super().__init__(**kwargs)", ["PP0104 warning latent"]),
    ("request_id, *args, embeds=None, **kwargs", "super().__init__(request_id, *args, **kwargs)",
     ["PP0104 warning latent"]),
])
def test_keyword_only_beside_args_handed_on_to_the_base_binds_positionally(params, call, expected):
    plugin = {PATCH: "from host.request import Request\n\n\nclass MyRequest(Request):\n"
              f"    def __init__(self, {params}):\n        {call}\n"}
    result = run_scan({"host/request.py": _HOST_REQUEST}, {"host/request.py": _HOST_REQUEST}, plugin,
                      checks=(SignaturesCheck(),))
    expect(result, expected)
    if "no PP0104" not in expected:
        finding = only(result, "PP0104")
        assert finding.args["param"] == "embeds" and finding.plugin.unit == "MyRequest.__init__"
        assert (finding.new.path, finding.new.line) == ("host/request.py", 2)
