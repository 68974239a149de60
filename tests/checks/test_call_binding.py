"""Calls into the host (#3, #7): one positive and one unchanged twin per kind, and the ways a callee is found."""

import pytest

from harness import expect, only, run_scan
from pinport.checks.call_binding import CallsCheck

PATCHING = {"plug/patching.py": "class ArcticPatch:\n    pass\n"}
USE = "plug/use.py"


def scan(old: dict[str, str], new: dict[str, str], plugin: dict[str, str]):
    return run_scan(old, new, {**PATCHING, **plugin}, checks=(CallsCheck(),))


def helper_scan(old_sig: str, new_sig: str, call: str, old_body: str = "pass", new_body: str = "pass",
                header: str = "def go(xs=(), kw=None):"):
    old = {"host/helpers.py": f"def helper{old_sig}:\n    {old_body}\n"}
    new = {"host/helpers.py": f"def helper{new_sig}:\n    {new_body}\n"}
    plugin = {USE: f"from host.helpers import helper\n\n{header}\n    {call}\n"}
    return scan(old, new, plugin)


@pytest.mark.parametrize(("old", "new", "call", "expected"), [
    # 3: a required argument appears (`_get_cumsum_and_arange` now needs `arange_out`)
    ("(a)", "(a, arange_out)", "helper(1)", ["PP0301 error drift"]),
    ("(a)", "(a)", "helper(1)", ["no PP0301"]),
    # 3: a keyword the host no longer takes
    ("(a, b=1)", "(a)", "helper(1, b=2)", ["PP0302 error drift"]),
    ("(a, b=1)", "(a, b=1)", "helper(1, b=2)", ["no PP0302"]),
    # 3: more positional arguments than the new signature has
    ("(a, b)", "(a, *, b=0)", "helper(1, 2)", ["PP0303 error drift"]),
    ("(a, b)", "(a, b)", "helper(1, 2)", ["no PP0303"]),
    # 3: a parameter now gets a value twice (positionally and by keyword)
    ("(x, a=1)", "(a, x=1)", "helper(1, a=2)", ["PP0304 error drift"]),
    ("(x, a=1)", "(x, a=1)", "helper(1, a=2)", ["no PP0304"]),
    # 3: `*`/`**` make the call unverifiable: informational, and only when the signature changed
    ("(a)", "(a, b)", "helper(*xs)", ["PP0306 info drift"]),
    ("(a)", "(a)", "helper(*xs)", ["no PP0306"]),
    # the host's **kwargs absorbs any keyword
    ("(a, **kw)", "(a, **kw)", "helper(1, z=2)", ["no PP0302"]),
])
def test_function_call_kinds(old, new, call, expected):
    expect(helper_scan(old, new, call), expected)


def test_forwarding_own_arguments_is_not_reported():
    result = helper_scan("(a)", "(a, b)", "helper(*args, **kwargs)", header="def go(*args, **kwargs):")
    expect(result, ["no PP0306"])


def test_missing_argument_evidence_and_upstream_call_sites():
    old = {"host/helpers.py": "def helper(a):\n    pass\n"}
    new = {"host/helpers.py": "def helper(a, out):\n    pass\n",
           "host/runner.py": "from host.helpers import helper\n\n\ndef step():\n    helper(1, out=2)\n"}
    plugin = {USE: "from host.helpers import helper\n\n\ndef go():\n    helper(1)\n"}
    result = scan(old, new, plugin)
    expect(result, ["PP0301 error drift go:5"], at=True)
    finding = only(result, "PP0301")
    assert finding.args["name"] == "out" and finding.subject == "host.helpers.helper"
    assert (finding.plugin.path, finding.plugin.line, finding.plugin.unit) == (USE, 5, "go")
    assert (finding.new.path, finding.new.line) == ("host/helpers.py", 1) and "out" in finding.new.snippet
    assert (finding.old.path, finding.old.line) == ("host/helpers.py", 1) and "out" not in finding.old.snippet
    assert any("host/runner.py:5" in d for d in finding.details)  # where upstream now calls it
    assert finding.status.value == "drift"


def test_latent_when_the_call_already_fails_on_old():
    expect(helper_scan("(a, b)", "(a, b)", "helper(1)"), ["PP0301 error latent"])


@pytest.mark.parametrize(("old_ret", "new_ret", "expected"), [
    # 3: returned (cumsum, arange), now returns cumsum alone
    ("return a, a", "return a", ["no PP0305"]),  # a bare name without an annotation: unknown, not reported
    ("return a, a", "return (a, a, a)", ["PP0305 error drift"]),
    ("return a, a", "return a, a", ["no PP0305"]),
    ("return a, a", "return 1", ["PP0305 error drift"]),
])
def test_unpacking_arity(old_ret, new_ret, expected):
    expect(helper_scan("(a)", "(a)", "x, y = helper(1)", old_ret, new_ret), expected)


def test_unpacking_uses_the_return_annotation_for_names():
    old = {"host/helpers.py": "def helper(a) -> tuple[int, int]:\n    return a, a\n"}
    new = {"host/helpers.py": "def helper(a) -> int:\n    return a\n"}
    plugin = {USE: "from host.helpers import helper\n\n\ndef go():\n    x, y = helper(1)\n"}
    result = scan(old, new, plugin)
    expect(result, ["PP0305 error drift"])
    finding = only(result, "PP0305")
    assert finding.args["count"] == 2 and finding.args["returns"] == "a single value"


def test_unpacking_with_disagreeing_returns_is_not_judged():
    new_body = "if a:\n        return a, a\n    return a, a, a"
    expect(helper_scan("(a)", "(a)", "x, y = helper(1)", "return a, a", new_body), ["no PP0305"])


RUNNER_OLD = {"host/runner.py": "class Runner:\n    def _helper(self, a):\n        pass\n"}
RUNNER_NEW = {"host/runner.py": "class Runner:\n    def _helper(self, a, out):\n        pass\n"}
IMPORTS = "from plug.patching import ArcticPatch\nfrom host.runner import Runner\n\n\n"


@pytest.mark.parametrize(("plugin", "expected"), [
    # a patch class's methods run as methods of the target: `self` is a Runner
    ("class RunnerPatch(ArcticPatch[Runner]):\n    def step(self):\n        self._helper(1)\n", ["PP0301 error drift"]),
    # ... unless the plugin itself provides the member
    ("class RunnerPatch(ArcticPatch[Runner]):\n    def step(self):\n        self._helper(1)\n\n"
     "    def _helper(self, a):\n        pass\n", ["no PP0301"]),
    # an ordinary subclass inherits it
    ("class Mine(Runner):\n    def step(self):\n        self._helper(1)\n", ["PP0301 error drift"]),
    ("class Mine(Runner):\n    def step(self):\n        self._helper(1)\n\n    def _helper(self, a):\n        pass\n", ["no PP0301"]),
    # an `_orig_` alias calls the upstream member
    ("class RunnerPatch(ArcticPatch[Runner]):\n    _orig_helper = Runner._helper\n\n"
     "    def _helper(self, a):\n        return self._orig_helper(a)\n", ["PP0301 error drift"]),
    # a parameter annotated with the host class
    ("def go(r: Runner):\n    r._helper(1)\n", ["PP0301 error drift"]),
    ("def go(r: 'Runner | None'):\n    r._helper(1)\n", ["PP0301 error drift"]),
    # a local built by the constructor
    ("def go():\n    r = Runner()\n    r._helper(1)\n", ["PP0301 error drift"]),
    # assignments that disagree leave the type unknown
    ("def go(other):\n    r = Runner()\n    r = other\n    r._helper(1)\n", ["no PP0301"]),
    # through the class: self is passed explicitly
    ("def go(r):\n    Runner._helper(r, 1)\n", ["PP0301 error drift"]),
])
def test_method_calls_are_resolved(plugin, expected):
    expect(scan(RUNNER_OLD, RUNNER_NEW, {USE: IMPORTS + plugin}), expected)


def test_method_through_a_host_return_annotation():
    old = {"host/runner.py": RUNNER_OLD["host/runner.py"] + "\n\ndef make() -> Runner:\n    return Runner()\n"}
    new = {"host/runner.py": RUNNER_NEW["host/runner.py"] + "\n\ndef make() -> Runner:\n    return Runner()\n"}
    plugin = {USE: "from host.runner import make\n\n\ndef go():\n    make()._helper(1)\n"}
    result = scan(old, new, plugin)
    expect(result, ["PP0301 error drift"])
    assert only(result, "PP0301").subject == "host.runner.Runner._helper"


def test_method_through_an_annotated_attribute():
    worker = "from host.runner import Runner\n\n\nclass Worker:\n    def __init__(self):\n" \
             "        self.runner: Runner = make_runner()\n"
    old = {**RUNNER_OLD, "host/worker.py": worker}
    new = {**RUNNER_NEW, "host/worker.py": worker}
    plugin = {USE: "from plug.patching import ArcticPatch\nfrom host.worker import Worker\n\n\n"
                   "class WorkerPatch(ArcticPatch[Worker]):\n    def go(self):\n        self.runner._helper(1)\n"}
    expect(scan(old, new, plugin), ["PP0301 error drift"])


CTOR = "from host.moe import Method\n\n\ndef go(cfg):\n    return {call}\n"


@pytest.mark.parametrize(("old", "new", "call", "expected"), [
    # 7: `Fp8MoEMethod(self)` -> `Fp8MoEMethod(self, layer)`
    ("(self, cfg)", "(self, cfg, layer)", "Method(cfg)", ["PP0701 error drift"]),
    ("(self, cfg, layer)", "(self, cfg, layer)", "Method(cfg, 1)", ["no PP0701", "no PP0702", "no PP0703", "no PP0704", "no PP0705"]),
    ("(self, cfg, name=None)", "(self, cfg)", "Method(cfg, name='x')", ["PP0702 error drift"]),
    ("(self, cfg, layer=None)", "(self, cfg)", "Method(cfg, 1)", ["PP0703 error drift"]),
    ("(self, cfg, layer=None)", "(self, layer, cfg=None)", "Method(1, layer=2)", ["PP0704 error drift"]),
    ("(self, cfg)", "(self, cfg, layer)", "Method(*cfg)", ["PP0705 info drift"]),
])
def test_constructor_kinds(old, new, call, expected):
    def host(sig: str) -> dict[str, str]:
        return {"host/moe.py": f"class Method:\n    def __init__{sig}:\n        pass\n"}
    expect(scan(host(old), host(new), {USE: CTOR.format(call=call)}), expected)


def test_constructor_through_the_mro_and_super_init():
    base = "class Base:\n    def __init__(self, cfg{extra}):\n        pass\n\n\nclass Method(Base):\n    pass\n"
    old = {"host/moe.py": base.format(extra="")}
    new = {"host/moe.py": base.format(extra=", layer")}
    built = scan(old, new, {USE: CTOR.format(call="Method(cfg)")})
    expect(built, ["PP0701 error drift"])
    assert only(built, "PP0701").new.line == 2  # the inherited `def __init__`
    subclass = {USE: "from host.moe import Base\n\n\nclass Mine(Base):\n    def __init__(self):\n"
                     "        super().__init__(1)\n"}
    expect(scan(old, new, subclass), ["PP0701 error drift"])


DATACLASS = "from dataclasses import dataclass, field\n\n\n@dataclass\nclass Cfg:\n{fields}"


@pytest.mark.parametrize(("old", "new", "call", "expected"), [
    ("    a: int\n    b: int = 0\n", "    a: int\n    b: int = 0\n    c: int\n", "Cfg(a=1)", ["PP0701 error drift"]),
    ("    a: int\n    b: int = 0\n", "    a: int\n    b: int = 0\n", "Cfg(a=1)", ["no PP0701"]),
    ("    a: int\n    b: int = 0\n", "    a: int\n", "Cfg(a=1, b=2)", ["PP0702 error drift"]),
    ("    a: int\n    b: int = 0\n", "    a: int\n    b: int = 0\n", "Cfg(1, 2)", ["no PP0702"]),
    # fields that are not parameters, and defaults written over several lines
    ("    a: int\n", "    a: int\n    n: ClassVar[int] = 1\n    m: list = field(init=False)\n"
     "    k: list = field(\n        default_factory=list)\n", "Cfg(a=1)", ["no PP0701"]),
])
def test_dataclass_fields_are_parameters(old, new, call, expected):
    host = {"host/cfg.py": DATACLASS.format(fields=old)}
    host_new = {"host/cfg.py": DATACLASS.format(fields=new)}
    plugin = {USE: f"from host.cfg import Cfg\n\n\ndef go():\n    return {call}\n"}
    expect(scan(host, host_new, plugin), expected)


def test_pydantic_style_config_fields():
    cfg = "from host.utils import config\nfrom pydantic import Field\n\n\n@config\nclass Cfg:\n" \
          "    a: int = Field(default_factory=int)\n    b: int = Field(\n        default_factory=int,\n    )\n" \
          "    c: int = Field(0, ge=0)\n{extra}"
    old = {"host/cfg.py": cfg.format(extra=""), "host/utils.py": "def config(cls):\n    return cls\n"}
    new = {"host/cfg.py": cfg.format(extra="    d: int = Field(...)\n"),
           "host/utils.py": "def config(cls):\n    return cls\n"}
    plugin = {USE: "from host.cfg import Cfg\n\n\ndef go():\n    return Cfg(a=1)\n"}
    result = scan(old, new, plugin)
    expect(result, ["PP0701 error drift"])
    assert only(result, "PP0701").args["name"] == "d"


def test_unknown_class_decorator_is_not_judged():
    host = "from host.deco import wrap\n\n\n@wrap\nclass Model:\n    def __init__(self, a{extra}):\n        pass\n"
    old = {"host/model.py": host.format(extra=""), "host/deco.py": "def wrap(c):\n    return c\n"}
    new = {"host/model.py": host.format(extra=", b"), "host/deco.py": "def wrap(c):\n    return c\n"}
    plugin = {USE: "from host.model import Model\n\n\ndef go():\n    return Model(1)\n"}
    expect(scan(old, new, plugin), ["no PP0301"])


def test_calls_outside_functions_and_through_a_module_alias():
    old = {"host/helpers.py": "def helper(a):\n    pass\n"}
    new = {"host/helpers.py": "def helper(a, b):\n    pass\n"}
    plugin = {USE: "import host.helpers as h\n\nVALUE = h.helper(1)\n"}
    expect(scan(old, new, plugin), ["PP0301 error drift <module>:3"], at=True)


def test_guarded_calls_are_warnings():
    guarded = "if vllm_version_is('2.0'):\n        helper(1)\n    else:\n        helper(1, 2)"
    result = helper_scan("(a, b)", "(a)", guarded, header="def go(vllm_version_is=None):")
    # each branch binds on one version only: OLD's failing call is the one the move fixes
    expect(result, ["PP0303 warning drift", "PP0301 warning fixed"])
    finding = only(result, "PP0303")
    assert finding.level.value == "warning" and finding.details[0].startswith("the call is guarded by")


@pytest.mark.parametrize("tried, expected", [
    # the try's call binds on NEW (also through `**` of a dict literal): the fallback does not run there
    ("helper(1)", ["PP0303 info drift", "PP0301 warning fixed"]),
    ("kw = {'a': 1}\n        helper(**kw)", ["PP0303 info drift", "PP0306 info drift"]),
    # the try's call fails on NEW as well: the fallback runs, and fails
    ("helper(1, 2, 3)", ["PP0303 warning latent", "PP0303 warning latent"]),
])
def test_a_call_in_the_type_error_fallback_of_a_binding_call_does_not_run(tried, expected):
    guarded = f"try:\n        {tried}\n    except TypeError:\n        helper(1, 2)"
    result = helper_scan("(a, b)", "(a)", guarded, header="def go():")
    expect(result, expected)
    fallback = max((f for f in result.findings if f.code == "PP0303"), key=lambda f: f.plugin.line)
    assert ("does not run" in fallback.details[0]) == ("info" in expected[0])


def test_a_module_function_the_plugin_replaces_is_not_judged_against_the_host():
    old = {"host/state.py": "def capture(device):\n    pass\n"}
    new = {"host/state.py": "def capture(device, ctx):\n    pass\n"}
    plugin = {USE: "from plug.patching import ArcticPatch\nimport host.state as state\n\n\n"
                   "class StatePatch(ArcticPatch[state]):\n    def capture(device):\n        pass\n\n\n"
                   "def go():\n    state.capture(1)\n"}
    expect(scan(old, new, plugin), ["no PP0301"])


def test_cls_in_a_classmethod_may_be_a_subclass():
    old = {"host/cfg.py": "class Cfg:\n    def __init__(self, a):\n        pass\n"}
    new = {"host/cfg.py": "class Cfg:\n    def __init__(self, a, b):\n        pass\n"}
    plugin = {USE: "from plug.patching import ArcticPatch\nfrom host.cfg import Cfg\n\n\n"
                   "class CfgPatch(ArcticPatch[Cfg]):\n    @classmethod\n    def make(cls):\n        return cls(1)\n\n"
                   "    def copy(self):\n        return Cfg(1)\n"}
    expect(scan(old, new, plugin), ["PP0701 error drift CfgPatch.copy:11"], at=True)


# Plugin MRO first: a call on `self` of a plugin class that defines the method itself binds to the
# plugin's method, whatever upstream's same-named method now takes.
_HELPER_OLD = {"host/runner.py": "class Runner:\n    def _helper(self, a):\n        return a\n"}
_HELPER_NEW = {"host/runner.py": "class Runner:\n    def _helper(self, a, b):\n        return a\n"}
_OWN = "    def _helper(self, a):\n        return a\n\n"


@pytest.mark.parametrize(("plugin", "expected"), [
    ("class Fast(Runner):\n" + _OWN + "    def run(self):\n        return self._helper(1)\n", ["no PP0301"]),
    ("class Fast:\n" + _OWN + "    def run(self, r: Runner):\n        return self._helper(1)\n", ["no PP0301"]),
    ("class Fast(Runner):\n    def run(self):\n        return self._helper(1)\n", ["PP0301 error drift"]),  # twin
])
def test_plugin_method_comes_first_in_its_own_class(plugin, expected):
    source = "from host.runner import Runner\n\n\n" + plugin
    expect(run_scan(_HELPER_OLD, _HELPER_NEW, {"plug/fast.py": source}, names=("calls",)), expected)


PROPOSER_OLD = {"host/proposer.py": "class Proposer:\n    def propose(self, a):\n        pass\n",
                "host/owner.py": "from host.proposer import Proposer\n\n\nclass Owner:\n    def __init__(self):\n"
                                 "        self.drafter = Proposer()\n"}
PROPOSER_NEW = {**PROPOSER_OLD, "host/proposer.py": "class Proposer:\n    def propose(self, a, b):\n        pass\n"}


@pytest.mark.parametrize(("plugin", "expected"), [
    # the host's own assignment: the call binds to the host's Proposer.propose
    ("class OwnerPatch(ArcticPatch[Owner]):\n    def step(self):\n        self.drafter.propose(1)\n",
     ["PP0301 error drift OwnerPatch.step:8"]),
    # the plugin assigns its own proposer (another patch class of the same target): not the host's method
    ("class Mine:\n    def propose(self, a):\n        pass\n\n\nclass InitPatch(ArcticPatch[Owner]):\n"
     "    def __init__(self):\n        self.drafter = Mine()\n\n\nclass OwnerPatch(ArcticPatch[Owner]):\n"
     "    def step(self):\n        self.drafter.propose(1)\n", ["no PP0301"]),
    # a plugin subclass that overrides the method: its own signature
    ("class Mine(Proposer):\n    def propose(self, a):\n        pass\n\n\nclass OwnerPatch(ArcticPatch[Owner]):\n"
     "    def __init__(self):\n        self.drafter = Mine()\n\n    def step(self):\n        self.drafter.propose(1)\n",
     ["no PP0301"]),
    # a plugin subclass that inherits it: the host's method, judged against NEW
    ("class Mine(Proposer):\n    pass\n\n\nclass OwnerPatch(ArcticPatch[Owner]):\n"
     "    def __init__(self):\n        self.drafter = Mine()\n\n    def step(self):\n        self.drafter.propose(1)\n",
     ["PP0301 error drift OwnerPatch.step:15"]),
])
def test_attributes_the_plugin_assigns_have_the_plugins_type(plugin, expected):
    imports = "from plug.patching import ArcticPatch\nfrom host.owner import Owner\nfrom host.proposer import Proposer\n\n\n"
    expect(scan(PROPOSER_OLD, PROPOSER_NEW, {USE: imports + plugin}), expected, at=True)


SHAPES = "class Runner:\n    def _helper(self, a) -> {ann}:\n        {body}\n"


@pytest.mark.parametrize(("old_body", "new_body", "ann", "call", "expected"), [
    # through `self` in a patch class: the host's `_helper` now returns three values
    ("return a, a", "return a, a, a", "tuple", "x, y = self._helper(1)", ["PP0305 error drift RunnerPatch.step:7"]),
    ("return a, a", "return a, a", "tuple", "x, y = self._helper(1)", ["no PP0305"]),
    # a local holding the tuple
    ("out = (a, a)\n        return out", "out = (a, a, a)\n        return out", "tuple", "x, y = self._helper(1)",
     ["PP0305 error drift RunnerPatch.step:7"]),
    ("out = (a, a)\n        return out", "out = (a, a)\n        if a:\n            out = (a, a, a)\n"
     "        return out", "tuple", "x, y = self._helper(1)", ["no PP0305"]),  # disagreeing assignments: unknown
    # an interface method: its annotation is the contract
    ("raise NotImplementedError", "...", "tuple[int, int]", "x, y = self._helper(1)", ["no PP0305"]),
    ("raise NotImplementedError", "...", "int", "x, y = self._helper(1)", ["PP0305 error drift RunnerPatch.step:7"]),
    # a call forwarding `*args` is not bound, but its unpacking is still judged
    ("return a, a", "return a, a, a", "tuple", "x, y = self._helper(*args)",
     ["PP0305 error drift RunnerPatch.step:7"]),
])
def test_return_shapes_through_self(old_body, new_body, ann, call, expected):
    old = {"host/runner.py": SHAPES.format(ann="tuple", body=old_body)}
    new = {"host/runner.py": SHAPES.format(ann=ann, body=new_body)}
    plugin = IMPORTS + f"class RunnerPatch(ArcticPatch[Runner]):\n    def step(self, *args):\n        {call}\n"
    expect(scan(old, new, {USE: plugin}), expected, at=True)


@pytest.mark.parametrize(("plugin", "expected"), [
    # a module-level function installed as a method: its first parameter is a Runner
    ("def step(self):\n    self._helper(1)\n\n\nRunner.step = step\n", ["PP0301 error drift"]),
    ("def step(self):\n    self._helper(1)\n\n\ndef install():\n    setattr(Runner, 'step', step)\n",
     ["PP0301 error drift"]),
    # negative twins: a function installed nowhere, or the plugin also installs its own `_helper`
    ("def step(self):\n    self._helper(1)\n", ["no PP0301"]),
    ("def step(self):\n    self._helper(1)\n\n\ndef helper(self, a):\n    pass\n\n\n"
     "Runner.step = step\nRunner._helper = helper\n", ["no PP0301"]),
])
def test_a_function_installed_on_a_host_class_sees_self_as_it(plugin, expected):
    result = scan(RUNNER_OLD, RUNNER_NEW, {USE: IMPORTS + plugin})
    expect(result, expected)
    if "error" in expected[0]:
        finding = only(result, "PP0301")
        assert (finding.plugin.path, finding.plugin.line, finding.plugin.unit, finding.args["name"]) == (
            USE, 6, "step", "out")
        assert (finding.old.path, finding.old.line, finding.new.path, finding.new.line) == (
            "host/runner.py", 2, "host/runner.py", 2)
