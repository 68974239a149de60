"""Idioms of hardware-backend plugins (vllm-ascend's runners and speculators): host attributes set
by a tuple unpacking that mixes `self.x` with other targets, `self.x` reads kept for another host
version behind a version test, and `super()` inside a class defined in a method (its own bases,
not the method's class). Each with its negative twin; whole findings asserted."""

from __future__ import annotations

import pytest

from harness import expect, run_scan
from pinport.checks.call_binding import CallsCheck
from pinport.checks.undefined import UndefinedCheck

# -- `self.a, self.b, _ = init(...)` in the host --------------------------------------------------

SPECULATOR = """
def init_backend(cfg):
    return [], True, None


class Speculator:
    def set_attn(self, cfg):
        self.cfg = cfg
        {assign}
"""
READS_GROUPS = """
from host.spec import Speculator


class Mine(Speculator):
    def backend(self):
        return self.attn_groups
"""


@pytest.mark.parametrize(("assign", "expected"), [
    ("self.attn_groups, self.support, _ = init_backend(cfg)", ["no PP0051"]),
    ("_, self.attn_groups, *rest = init_backend(cfg)", ["no PP0051"]),
    ("(self.attn_groups, support) = init_backend(cfg)", ["no PP0051"]),
    # negative twins: other names unpacked, or `self.attn_groups` only passed as a keyword argument
    ("self.support, groups, _ = init_backend(cfg)", ["PP0051 error latent"]),
    ("print(\n            self.cfg, attn_groups=1)", ["PP0051 error latent"]),
])
def test_a_mixed_tuple_target_sets_the_host_attribute(assign, expected):
    host = {"host/spec.py": SPECULATOR.format(assign=assign)}
    result = run_scan(host, host, {"plug/spec.py": READS_GROUPS}, checks=(UndefinedCheck(),))
    expect(result, expected)
    if expected[0].startswith("PP0051"):
        (finding,) = result.findings
        assert (finding.plugin.path, finding.plugin.line, finding.plugin.unit, finding.subject) == (
            "plug/spec.py", 6, "Mine.backend", "host.spec.Speculator.attn_groups")


# -- `self.x` read only behind a host-version test --------------------------------------------------

SCHEDULER = "class Scheduler:\n    def __init__(self):\n        self.uses_mrope = False\n"
GUARDED = """
from host.sched import Scheduler
from plug.utils import host_version_is


class Mine(Scheduler):
    def schedule(self):
{body}
"""


@pytest.mark.parametrize(("body", "expected", "line"), [
    # code kept for another host release: the member exists there, not on this one
    ("        if host_version_is('0.29.0'):\n            return self.uses_xdrope\n        return self.uses_mrope",
     ["PP0051 warning latent"], 8),
    ("        if host_version_is('0.30.0'):\n            return self.uses_mrope\n        else:\n"
     "            return self.uses_xdrope", ["PP0051 warning latent"], 10),
    # negative twins: an unguarded read of the same member, or a condition that is no version test
    ("        if host_version_is('0.29.0'):\n            return self.uses_xdrope\n        return self.uses_xdrope",
     ["PP0051 error latent"], 9),
    ("        if self.uses_mrope:\n            return self.uses_xdrope\n        return 0", ["PP0051 error latent"], 8),
])
def test_a_member_read_only_behind_a_version_test_is_a_warning(body, expected, line):
    host = {"host/sched.py": SCHEDULER}
    plugin = {"plug/sched.py": GUARDED.format(body=body),
              "plug/utils.py": "def host_version_is(v):\n    return v == '0.29.0'\n"}
    result = run_scan(host, host, plugin, checks=(UndefinedCheck(),))
    expect(result, expected)
    (finding,) = result.findings
    assert (finding.plugin.path, finding.plugin.line, finding.plugin.unit, finding.subject) == (
        "plug/sched.py", line, "Mine.schedule", "host.sched.Scheduler.uses_xdrope")
    warned = finding.level.value == "warning"
    assert finding.details == (("every read runs only behind a version test",) if warned else ())


# -- `super()` in a class defined inside a method ---------------------------------------------------

DECODER = """
class Decoder:
    def forward(self, inputs_embeds, token_type_ids, mask=None):
        return inputs_embeds
"""
NESTED = """
from host.decoder import Decoder
from plug.inner import InnerModel


class Mine(Decoder):
    def build(self):
        class Inner(InnerModel):
            def forward(self, input_ids=None, token_type_ids=None):
                return super().forward(input_ids=input_ids)
        {outer}
        return Inner()
"""


@pytest.mark.parametrize(("outer", "expected"), [
    ("", ["no PP0301"]),  # Inner's super() is InnerModel's forward (a plugin class), not Decoder's
    # negative twin: the method's own `super()` still is the host Decoder's, and misses an argument
    ("super().forward(inputs_embeds=1)", ["PP0301 error latent"]),
])
def test_super_in_a_nested_class_looks_in_its_own_bases(outer, expected):
    host = {"host/decoder.py": DECODER}
    plugin = {"plug/model.py": NESTED.format(outer=outer),
              "plug/inner.py": "class InnerModel:\n    def forward(self, input_ids=None, mask=None):\n        return 0\n"}
    result = run_scan(host, host, plugin, checks=(CallsCheck(),))
    expect(result, expected)
    if expected[0].startswith("PP0301"):
        (finding,) = result.findings
        assert (finding.plugin.path, finding.plugin.line, finding.plugin.unit, finding.args["name"],
                finding.new.path) == ("plug/model.py", 10, "Mine.build", "token_type_ids", "host/decoder.py")


# -- `Cls.__init__ = init` installed by the plugin: later constructor calls land in it --------------

BLOCK = "class Block:\n    def __init__(self, cfg, prefix=''):\n        pass\n"
INSTALLS_INIT = """
from host.moe import Block


def _init(self, cfg, prefix="", is_sp=False):
    pass


def build(cfg):
    return Block(cfg, prefix="x", {keyword}=True)


Block.__init__ = _init
"""
# the same through a local alias inside the function that installs it (vllm-ascend's patch_pp_mtp.py)
ALIASED_INIT = """
from host.moe import Block


def install():
    from host import moe
    cls = moe.{cls}

    def _init(self, *args, is_sp=None, **kwargs):
        pass

    cls.__init__ = _init


def build(cfg):
    return Block(cfg, is_sp=True)
"""


@pytest.mark.parametrize(("plugin", "expected"), [
    (INSTALLS_INIT.format(keyword="is_sp"), ["no PP0702"]),
    (ALIASED_INIT.format(cls="Block"), ["no PP0702"]),
    # negative twins: a keyword the installed __init__ does not take either, or another class patched
    (INSTALLS_INIT.format(keyword="other"), ["PP0702 error latent"]),
    (ALIASED_INIT.format(cls="Other"), ["PP0702 error latent"]),
])
def test_a_constructor_called_after_the_plugin_replaced_init(plugin, expected):
    host = {"host/moe.py": BLOCK + "\n\nclass Other:\n    pass\n"}
    result = run_scan(host, host, {"plug/patch.py": plugin}, checks=(CallsCheck(),))
    expect(result, expected)
    if expected[0].startswith("PP0702"):
        (finding,) = result.findings
        assert (finding.plugin.path, finding.plugin.unit, finding.subject, finding.new.path, finding.new.line) == (
            "plug/patch.py", "build", "host.moe.Block", "host/moe.py", 2)


# -- `self.m(...)` in a plugin class whose plugin subclasses override `m` ---------------------------

PROPOSER = "class Proposer:\n    def first_pass(self, n, mm):\n        pass\n"
SUBCLASSED = """
from host.prop import Proposer


class Base(Proposer):
    def run(self):
        self.first_pass(1)


class Flash(Base):
    def first_pass(self, {params}):
        pass
"""


@pytest.mark.parametrize(("params", "expected"), [
    ("n, slots=None", ["PP0301 warning latent"]),  # Flash's override takes the call: only plain Base instances reject it
    # negative twin: no subclass override takes it either
    ("n, slots, extra", ["PP0301 error latent"]),
])
def test_a_self_call_a_plugin_subclass_override_takes_is_a_warning(params, expected):
    host = {"host/prop.py": PROPOSER}
    result = run_scan(host, host, {"plug/prop.py": SUBCLASSED.format(params=params)}, checks=(CallsCheck(),))
    expect(result, expected)
    (finding,) = result.findings
    assert (finding.plugin.path, finding.plugin.line, finding.plugin.unit, finding.args["name"]) == (
        "plug/prop.py", 6, "Base.run", "mm")
    binds = [d for d in finding.details if "plugin subclass's override" in d]
    assert binds == (["the call binds to the plugin subclass's override `Flash.first_pass`: only an instance of a "
                      "class that does not override it rejects the call"] if expected[0].split()[1] == "warning"
                     else [])


# -- a host class replaced by a factory function where the host only calls it ------------------------

GRAPHS = "class Manager:\n    def __init__(self, n):\n        pass\n"
RUNNER = """
from host.graphs import Manager


class Runner:
    def __init__(self):
        self.manager: Manager | None = None

    def load(self):
        self.manager = Manager(1)
        {extra}
"""
FACTORY = """
from host import runner


def factory(n):
    return object()


def install():
    runner.Manager = factory
"""


@pytest.mark.parametrize(("extra", "expected"), [
    ("", ["no PP0611"]),  # only `Manager(1)` (the annotation is not evaluated): the factory serves
    # negative twin: the host tests instances against the name, which a function cannot serve
    ("return isinstance(self.manager, Manager)", ["PP0611 error latent"]),
])
def test_a_class_replaced_by_a_factory_the_host_only_calls(extra, expected):
    from pinport.checks.host_kinds import HostKindsCheck
    host = {"host/graphs.py": GRAPHS, "host/runner.py": RUNNER.format(extra=extra)}
    result = run_scan(host, host, {"plug/patch.py": FACTORY}, checks=(HostKindsCheck(),))
    expect(result, expected)
    if expected[0].startswith("PP0611"):
        (finding,) = result.findings
        assert (finding.plugin.path, finding.plugin.line, finding.subject) == ("plug/patch.py", 9, "host.runner.Manager")


OWN_CLASS = """
class Encoder:
    def __init__(self, n):
        self.n = n


class Special(Encoder):
    pass


class Model:
    def __init__(self):
        self.tower = Encoder(2)
        {extra}
"""
SWAP = """
from host import model


def _make_tower(n):
    return model.Special(n)


class Mine(model.Model):
    def __init__(self):
        orig = model.Encoder
        model.Encoder = _make_tower
        try:
            super().__init__()
        finally:
            model.Encoder = orig
"""


@pytest.mark.parametrize(("extra", "elsewhere", "expected"), [
    # the class's own module builds it only inside functions (its module-level use as a base ran at import)
    ("", "", ["no PP0611"]),
    # negative twins: the module tests instances against the name, or another module reads `model.Encoder`
    ("assert isinstance(self.tower, Encoder)", "", ["PP0611 error latent"]),
    ("", "from host import model\n\n\ndef kind(x):\n    return issubclass(x, model.Encoder)\n", ["PP0611 error latent"]),
])
def test_a_class_its_own_module_only_builds_swapped_for_a_factory(extra, elsewhere, expected):
    from pinport.checks.host_kinds import HostKindsCheck
    host = {"host/model.py": OWN_CLASS.format(extra=extra), **({"host/other.py": elsewhere} if elsewhere else {})}
    result = run_scan(host, host, {"plug/swap.py": SWAP}, checks=(HostKindsCheck(),))
    expect(result, expected)
    if expected[0].startswith("PP0611"):
        (finding,) = result.findings
        assert (finding.plugin.path, finding.plugin.line, finding.subject) == ("plug/swap.py", 11, "host.model.Encoder")


# -- a confirming host call inside a host method the plugin's subclass overrides -----------------------

UTILS = "def prep(a, b, ctx=None):\n    pass\n"
HOST_RUNNER = "from host import utils\n\n\nclass Runner:\n    def execute(self):\n        utils.prep(1, 2, ctx=3)\n"
REPLACES_PREP = """
from host import utils
from host.runner import Runner


def prep(a, b):
    pass


utils.prep = prep


class NPURunner(Runner):
    def {method}(self):
        utils.prep(1, 2)
"""


@pytest.mark.parametrize(("method", "expected"), [
    ("execute", ["PP0101 warning latent"]),  # NPURunner never runs Runner.execute, the only `ctx=` caller
    ("other", ["PP0101 error latent"]),  # negative twin: Runner.execute still runs on the plugin's runner
])
def test_a_caller_the_plugin_runner_overrides_does_not_confirm(method, expected):
    host = {"host/utils.py": UTILS, "host/runner.py": HOST_RUNNER}
    result = run_scan(host, host, {"plug/patch.py": REPLACES_PREP.format(method=method)},
                      names=("signatures", "callers"))
    expect(result, expected)
    (finding,) = result.findings
    assert (finding.plugin.path, finding.plugin.line, finding.subject, finding.args["param"]) == (
        "plug/patch.py", 9, "host.utils.prep", "ctx")
    overridden = [d for d in finding.details if "overridden by the plugin's" in d]
    assert bool(overridden) is (method == "execute")
