"""Host and plugin shapes real vLLM uses, each with its twin: staticmethods, `__call__` and
`__post_init__` overrides, members a base or `__getattr__` provides, `Generic`/`Protocol` bases,
signature changes that touch defaults only, and calls forwarding their own and foreign `*args`."""

import pytest

from harness import expect, run_scan
from pinport.checks.call_binding import CallsCheck
from pinport.checks.instance_attributes import AttributesCheck
from pinport.checks.override_signature import SignaturesCheck
from pinport.checks.replaced_callers import ReplacedCallersCheck
from pinport.checks.undefined import UndefinedCheck

PATCHING = {"plug/patching.py": "class ArcticPatch:\n    pass\n"}
HEADER = "from plug.patching import ArcticPatch\nfrom host.runner import Runner\n\n\nclass RunnerPatch(ArcticPatch[Runner]):\n"


def patch_scan(old: str, new: str, body: str, *checks):
    plugin = {"plug/patch.py": HEADER + body, **PATCHING}
    return run_scan({"host/runner.py": old}, {"host/runner.py": new}, plugin,
                    checks=checks or (SignaturesCheck(),))


# -- overrides of staticmethods and of the dunders the host calls ------------------------------------------
STATIC = ("class Runner:\n    @staticmethod\n    def get_kv_cache_shape(num_blocks, block_size{extra}):\n        return num_blocks\n"
          "\n\ndef shape_of(runner):\n    return getattr(runner, 'get_kv_cache_shape')\n")  # reached by name: not judged
STATIC_PATCH = "    @staticmethod\n    def get_kv_cache_shape(num_blocks, block_size):\n        return num_blocks\n"
CALLABLE = "class Runner:\n    def __call__(self, x{extra}):\n        return x\n\n    def __repr__(self{extra}):\n        return ''\n"
POST_INIT = ("from dataclasses import dataclass\n\n\n@dataclass\nclass Runner:\n    size: int = 0\n\n"
             "    def __post_init__(self{extra}):\n        pass\n")


@pytest.mark.parametrize(("host", "extra", "body", "expected"), [
    # a staticmethod has no `self` on either side: the added `cache_dtype` is the only difference
    (STATIC, ", cache_dtype", STATIC_PATCH, ["PP0101 warning drift RunnerPatch.get_kv_cache_shape:7"]),
    (STATIC, "", STATIC_PATCH, ["no PP0101", "no PP0102", "no PP0201"]),
    (STATIC, ", cache_dtype='auto'", STATIC_PATCH, ["PP0101 warning drift RunnerPatch.get_kv_cache_shape:7"]),
    # `__call__` and `__post_init__` are called by the host like any method
    (CALLABLE, ", y", "    def __call__(self, x):\n        return x\n", ["PP0101 warning drift RunnerPatch.__call__:6"]),
    (CALLABLE, "", "    def __call__(self, x):\n        return x\n", ["no PP0101"]),
    (POST_INIT, ", extra", "    def __post_init__(self):\n        pass\n",
     ["PP0101 warning drift RunnerPatch.__post_init__:6"]),
    (POST_INIT, "", "    def __post_init__(self):\n        pass\n", ["no PP0101"]),
    # other dunders (`__repr__`) are not judged
    (CALLABLE, ", y=1", "    def __repr__(self):\n        return ''\n", ["no PP0101"]),
])
def test_static_and_dunder_overrides(host, extra, body, expected):
    expect(patch_scan(host.format(extra=""), host.format(extra=extra), body), expected, at=True)


@pytest.mark.parametrize("call", ["Runner.get_kv_cache_shape(1, 16, 'fp8')", "Runner().get_kv_cache_shape(1, 16, 'fp8')"])
def test_a_host_caller_of_a_staticmethod_passes_no_self(call):
    # through the class or an instance, the third argument lands on the replacement's missing parameter
    old = STATIC.format(extra="") + "\n\ndef build():\n    return Runner.get_kv_cache_shape(1, 16)\n"
    new = STATIC.format(extra=", cache_dtype='auto'") + f"\n\ndef build():\n    return {call}\n"
    expect(patch_scan(old, new, STATIC_PATCH, ReplacedCallersCheck()), ["PP0111 error drift"])
    expect(patch_scan(old, old, STATIC_PATCH, ReplacedCallersCheck()), ["no PP0111"])


# -- Generic / Protocol host bases add no members: lookups stay exact ----------------------------------------
GENERIC = "from typing import Generic, TypeVar\n\nT = TypeVar('T')\n\n\n"
PROTOCOL = "from typing import Protocol\n\n\n"
TYPING = "import typing\n\nT = typing.TypeVar('T')\n\n\n"
ATTRS = "class Runner({base}):\n    def __init__(self):\n        self.device = 0\n{more}"
BASES = [(GENERIC, "Generic[T]"), (PROTOCOL, "Protocol"), (TYPING, "typing.Generic[T]"), (TYPING, "typing.Protocol")]


@pytest.mark.parametrize(("head", "base"), BASES)
def test_generic_and_protocol_bases_keep_attribute_lookups_exact(head, base):
    old = head + ATTRS.format(base=base, more="        self.pin_memory = True\n")
    new = head + ATTRS.format(base=base, more="")
    read = "    def step(self):\n        return self.pin_memory\n"
    expect(patch_scan(old, new, read, AttributesCheck()), ["PP0901 error drift RunnerPatch.step:7"], at=True)
    expect(patch_scan(old, old, read, AttributesCheck()), ["no PP0901"])


@pytest.mark.parametrize(("head", "base"), BASES)
def test_generic_and_protocol_bases_keep_signature_lookups_exact(head, base):
    host = head + "def drive(runner):\n    return getattr(runner, 'step')\n\n\n" + (  # by name: no call site judged
        f"class Base({base}):\n    def step(self, a{{extra}}):\n        pass\n\n\nclass Runner(Base):\n    pass\n")
    body = "    def step(self, a):\n        pass\n"
    expect(patch_scan(host.format(extra=""), host.format(extra=", b"), body), ["PP0101 warning drift"])
    # a member the base never had overrides nothing: known, because the base adds nothing unknown
    old = host.format(extra="") + "\n    def gone(self):\n        pass\n"
    expect(patch_scan(old, host.format(extra=""), "    def gone(self):\n        pass\n"), ["PP0203 error drift"])


# -- members provided by a base class or by `__getattr__` ------------------------------------------------------
RUNNER = "class Runner:\n    def __init__(self):\n        self.device = 0\n"
DYNAMIC = RUNNER + "\n    def __getattr__(self, name):\n        return None\n"
READ_MAX = "    def speculate(self):\n        return self.max_depth\n"


@pytest.mark.parametrize(("src", "expected"), [
    ("class Cache:\n" + READ_MAX, ["PP0051 error latent Cache.speculate:3"]),
    # a plugin base provides it: as a class attribute, set in its __init__, or by its __getattr__
    ("class Base:\n    max_depth = 3\n\n\nclass Cache(Base):\n" + READ_MAX, ["no PP0051"]),
    ("class Base:\n    def __init__(self):\n        self.max_depth = 3\n\n\nclass Cache(Base):\n" + READ_MAX,
     ["no PP0051"]),
    ("class Base:\n    def __getattr__(self, name):\n        return 1\n\n\nclass Cache(Base):\n" + READ_MAX,
     ["no PP0051"]),
    ("class Cache:\n    def __getattr__(self, name):\n        return 1\n\n" + READ_MAX, ["no PP0051"]),
    # a host base provides it, or does not
    ("from host.runner import Runner\n\n\nclass Cache(Runner):\n    def speculate(self):\n        return self.device\n",
     ["no PP0051"]),
    ("from host.runner import Runner\n\n\nclass Cache(Runner):\n    def speculate(self):\n        return self.nothing\n",
     ["PP0051 error latent Cache.speculate:6"]),
])
def test_members_a_base_or_getattr_provides(src, expected):
    expect(run_scan({"host/runner.py": RUNNER}, {"host/runner.py": RUNNER}, {"plug/m.py": src},
                    checks=(UndefinedCheck(),)), expected, at=True)


@pytest.mark.parametrize(("old", "new", "expected"), [
    (RUNNER, RUNNER.replace("self.device = 0", "pass"), ["PP0901 error drift Cache.speculate:6"]),
    # the host's __getattr__ may answer any name: nothing can be said to be gone
    (DYNAMIC, DYNAMIC.replace("self.device = 0", "pass"), ["no PP0901"]),
])
def test_host_getattr_makes_members_unknowable(old, new, expected):
    src = "from host.runner import Runner\n\n\nclass Cache(Runner):\n    def speculate(self):\n        return self.device\n"
    expect(run_scan({"host/runner.py": old}, {"host/runner.py": new}, {"plug/m.py": src},
                    checks=(AttributesCheck(), UndefinedCheck())), expected, at=True)


# -- signature changes that touch defaults only ------------------------------------------------------------------
def helper_scan(old_sig: str, new_sig: str, header: str, call: str, *checks):
    old = {"host/helpers.py": f"def helper{old_sig}:\n    pass\n"}
    new = {"host/helpers.py": f"def helper{new_sig}:\n    pass\n"}
    plugin = {**PATCHING, "plug/use.py": f"from host.helpers import helper\n\n\n{header}\n    {call}\n"}
    return run_scan(old, new, plugin, checks=checks or (CallsCheck(),))


@pytest.mark.parametrize(("old", "new", "call", "expected"), [
    # a new default binds every call as before: `*xs` is no less verifiable than it was
    ("(a, b=1)", "(a, b=2)", "helper(*xs)", ["no PP0306"]),
    ("(a, b=1)", "(a, b=2)", "helper(1)", ["no PP0301", "no PP0302"]),
    ("(a, b=1)", "(a, b=None)", "helper(1, b=3)", ["no PP0302"]),
    # a parameter that gained a default is still there for callers that pass it
    ("(a, b)", "(a, b=0)", "helper(1, 2)", ["no PP0303"]),
    # but a parameter that lost its default must now be passed
    ("(a, b=0)", "(a, b)", "helper(1)", ["PP0301 error drift"]),
    ("(a, b=0)", "(a, b)", "helper(*xs)", ["PP0306 info drift"]),
])
def test_defaults_only_changes(old, new, call, expected):
    expect(helper_scan(old, new, "def go(xs=()):", call), expected)


def test_defaults_only_change_of_an_overridden_method():
    host = "class Runner:\n    def step(self, a, b={default}):\n        pass\n"
    body = "    def step(self, a, b=1):\n        pass\n"
    expect(patch_scan(host.format(default=1), host.format(default=2), body), ["PP0105 info drift"])
    expect(patch_scan(host.format(default=1), host.format(default=1), body), ["no PP0105"])


# -- calls forwarding their own and foreign *args together --------------------------------------------------
@pytest.mark.parametrize(("header", "call", "expected"), [
    # only the function's own *args/**kwargs: its own callers answer for them
    ("def go(*args, **kwargs):", "helper(*args, **kwargs)", ["no PP0306"]),
    ("def go(*args):", "helper(1, *args)", ["no PP0306"]),
    # own and foreign together: the foreign part may not fit
    ("def go(*args, xs=()):", "helper(*args, *xs)", ["PP0306 info drift go:5"]),
    ("def go(*args, kw=None):", "helper(*args, **kw)", ["PP0306 info drift go:5"]),
    ("def go(**kwargs):", "helper(*kwargs, **kwargs)", ["no PP0306"]),
    # an inner function's own *other is foreign to the unit that encloses it
    ("def go(*args):\n    def inner(*other):\n        return helper(*args, *other)\n    return inner", "pass",
     ["PP0306 info drift go:6"]),
])
def test_forwarding_own_and_foreign_star_args(header, call, expected):
    expect(helper_scan("(a)", "(a, b)", header, call), expected, at=True)


@pytest.mark.parametrize(("mixin_new", "expected"), [
    ("        self.pin_memory = True\n", ["no PP0901"]),
    ("        pass\n", ["PP0901 error drift RunnerPatch.step:7"]),
])
def test_lookups_go_on_past_an_inert_base_listed_first(mixin_new, expected):
    # `class Runner(ABC, Mixin)`: abc.ABC adds nothing, so the lookup goes on to the Mixin after it
    host = ("from abc import ABC\n\n\nclass Mixin:\n    def __init__(self):\n{mixin}\n\nclass Runner(ABC, Mixin):\n"
            "    def step(self):\n        pass\n")
    old = host.format(mixin="        self.pin_memory = True\n")
    read = "    def step(self):\n        return self.pin_memory\n"
    expect(patch_scan(old, host.format(mixin=mixin_new), read, AttributesCheck()), expected, at=True)
