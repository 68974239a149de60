"""Config-gated gaps: names and `self.` members defined nowhere, and methods defined twice."""

import pytest

from harness import expect, only, run_scan
from pinport.checks.instance_attributes import AttributesCheck
from pinport.checks.undefined import UndefinedCheck

CHECK = (UndefinedCheck(),)
RUNNER = "class Runner:\n    def __init__(self):\n        self.device = 0\n\n    def capture(self):\n        pass\n"
PATCHING = {"plug/patching.py": "class ArcticPatch:\n    pass\n"}


def names(src: str):
    return (run_scan({"host/runner.py": RUNNER}, {"host/runner.py": RUNNER}, {"plug/m.py": src}, checks=CHECK))


@pytest.mark.parametrize(("src", "expected"), [
    ("def f():\n    return missing\n", ["PP0050 error latent"]),
    ("missing = 1\n\n\ndef f():\n    return missing\n", ["no PP0050"]),
    # module level and class bodies are checked too
    ("x = missing\n", ["PP0050 error latent"]),
    # a class body name is not visible in its methods
    ("class C:\n    size = 1\n\n    def f(self):\n        return size\n", ["PP0050 error latent"]),
    ("class C:\n    size = 1\n    double = size * 2\n", ["no PP0050"]),
    # enclosing function scopes, nonlocal, global declared in a function
    ("def f():\n    x = 1\n\n    def g():\n        nonlocal x\n        return x\n    return g\n", ["no PP0050"]),
    ("def setup():\n    global STATE\n    STATE = 1\n\n\ndef use():\n    return STATE\n", ["no PP0050"]),
    ("def f():\n    def g():\n        return later\n    later = 1\n    return g\n", ["no PP0050"]),
    # parameters of every kind, lambdas, defaults evaluated outside
    ("def f(a, /, b, *c, d, **e):\n    return a, b, c, d, e\n", ["no PP0050"]),
    ("def f():\n    return lambda y, *z: (y, z)\n", ["no PP0050"]),
    # comprehensions, walrus, except-as, with-as, for targets, del, match patterns
    ("def f(xs):\n    return [x for x in xs if (n := x)], n\n", ["no PP0050"]),
    ("def f(xs):\n    return {k: v for k, v in xs}\n", ["no PP0050"]),
    ("def f():\n    try:\n        pass\n    except ValueError as exc:\n        return exc\n", ["no PP0050"]),
    ("def f(p):\n    with open(p) as fh:\n        return fh\n", ["no PP0050"]),
    ("def f(v):\n    match v:\n        case [a, *rest]:\n            return a, rest\n"
     "        case {'k': b, **others}:\n            return b, others\n        case Point(x=c) as whole:\n"
     "            return c, whole\n", ["PP0050 error latent"]),  # Point itself is undefined
    ("def f():\n    del gone\n", ["no PP0050"]),
    # builtins and module dunders
    ("def f():\n    return len(__file__), __name__, print\n", ["no PP0050"]),
    # imports at every level, TYPE_CHECKING imports
    ("def f():\n    import os.path\n    from json import dumps as d\n    return os, d\n", ["no PP0050"]),
    ("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from os import PathLike\n\n\n"
     "def f(p: PathLike) -> PathLike:\n    return p\n", ["no PP0050"]),
    # annotations are not run-time reads
    ("from __future__ import annotations\n\n\ndef f(p: Missing) -> Other:\n    x: Third = p\n    return x\n", ["no PP0050"]),
    # unverifiable modules and guarded reads
    ("from os.path import *\n\n\ndef f():\n    return join\n", ["no PP0050"]),
    ("def f():\n    globals()['made'] = 1\n    return made\n", ["no PP0050"]),
    ("def f():\n    try:\n        return maybe\n    except NameError:\n        return None\n", ["no PP0050"]),
])
def test_undefined_names(src, expected):
    expect(names(src), expected)


def test_undefined_name_site_and_latency():
    result = run_scan({"host/runner.py": RUNNER}, {"host/runner.py": RUNNER},
                      {"plug/m.py": "def f():\n    x = 1\n    return x + compilation_cases_shift\n"}, checks=CHECK)
    expect(result, ["PP0050 error latent f:3"], at=True)  # a gap of the plugin's own: true on both versions
    finding = only(result, "PP0050")
    assert finding.plugin.path == "plug/m.py"
    assert finding.args["name"] == "compilation_cases_shift"


def patch(body: str) -> dict[str, str]:
    return {"plug/patch.py": "from plug.patching import ArcticPatch\nfrom host.runner import Runner\n\n\n"
                             "class RunnerPatch(ArcticPatch[Runner]):\n" + body, **PATCHING}


CALL = "    def capture(self):\n        return self._register_keys()\n"


@pytest.mark.parametrize(("old", "new", "plugin", "expected"), [
    (RUNNER, RUNNER, patch(CALL), ["PP0051 error latent"]),
    # the plugin defines it (in the patch, or anywhere else)
    (RUNNER, RUNNER, patch(CALL + "\n    def _register_keys(self):\n        pass\n"), ["no PP0051"]),
    # the host defines it, through the MRO or in a subclass of the target
    (RUNNER, RUNNER + "\n    def _register_keys(self):\n        pass\n", patch(CALL), ["no PP0051"]),
    (RUNNER, RUNNER + "\n\nclass Special(Runner):\n    def _register_keys(self):\n        pass\n", patch(CALL), ["no PP0051"]),
])
def test_undefined_self_members(old, new, plugin, expected):
    expect(run_scan({"host/runner.py": old}, {"host/runner.py": new}, plugin, checks=CHECK), expected)


def test_dropped_member_is_the_attributes_checks_business():
    old = RUNNER + "\n    def _register_keys(self):\n        pass\n"
    result = run_scan({"host/runner.py": old}, {"host/runner.py": RUNNER}, patch(CALL),
                      checks=(UndefinedCheck(), AttributesCheck()))
    expect(result, ["PP0901 error drift"])


def test_undefined_member_of_a_plugin_class():
    src = ("class Cache:\n    def __init__(self):\n        self._max_tree_depth = 64\n\n"
           "    def speculate(self, n=None):\n        return n or self.max_depth\n")
    result = run_scan({"host/runner.py": RUNNER}, {"host/runner.py": RUNNER}, {"plug/cache.py": src}, checks=CHECK)
    expect(result, ["PP0051 error latent Cache.speculate:6"], at=True)
    finding = only(result, "PP0051")
    assert finding.plugin.line == 6 and finding.args["name"] == "max_depth"
    fixed = src.replace("self._max_tree_depth", "self.max_depth")
    expect(run_scan({"host/runner.py": RUNNER}, {"host/runner.py": RUNNER}, {"plug/cache.py": fixed},
                    checks=CHECK), ["no PP0051"])


COMPUTED_BASES = ("import torch.nn as nn\nfrom host.runner import Runner\n\nBASES = [nn.Module]\nBASES.append(Runner)\n"
                  "BASES = tuple(BASES)\n\n\nclass Model({bases}):\n    def load(self):\n"
                  "        return dict(self.zz_named_parameters())\n")


@pytest.mark.parametrize(("bases", "expected"), [
    ("*BASES", ["no PP0051"]),  # the bases are a sequence built at run time: an outside base may define it
    ("", ["PP0051 error latent Model.load:11"]),  # a class of the plugin's own: nothing defines it
])
def test_a_class_with_bases_unpacked_from_a_sequence_has_unknown_members(bases, expected):
    src = COMPUTED_BASES.format(bases=bases)
    result = run_scan({"host/runner.py": RUNNER}, {"host/runner.py": RUNNER}, {"plug/model.py": src}, checks=CHECK)
    expect(result, expected, at=True)
    if not expected[0].startswith("no "):
        assert only(result, "PP0051").args == {"name": "zz_named_parameters", "cls": "Model", "label": "plugin"}


@pytest.mark.parametrize(("src", "expected"), [
    # NamedTuple and Enum are looked past for members, but give their own few under their names
    ("from typing import NamedTuple\n\n\nclass Row(NamedTuple):\n    m: int\n\n    def dump(self):\n"
     "        return self._asdict()\n", ["no PP0051"]),
    ("import enum\n\n\nclass Mode(enum.Enum):\n    FAST = 1\n\n    def show(self):\n        return self._value_\n",
     ["no PP0051"]),
    # any other name is still missing there
    ("from typing import NamedTuple\n\n\nclass Row(NamedTuple):\n    m: int\n\n    def dump(self):\n"
     "        return self._zz_as_dict()\n", ["PP0051 error latent Row.dump:8"]),
])
def test_members_an_inert_base_supplies(src, expected):
    result = run_scan({"host/runner.py": RUNNER}, {"host/runner.py": RUNNER}, {"plug/row.py": src}, checks=CHECK)
    expect(result, expected, at=True)


TWICE = "    def capture(self):\n        return 1\n\n    def capture(self):\n        return 2\n"
BRANCHES = ("    import sys\n    if sys.version_info >= (3, 12):\n        def capture(self):\n            return 1\n"
            "    else:\n        def capture(self):\n            return 2\n")
SETTER = ("    @property\n    def size(self):\n        return 1\n\n    @size.setter\n    def size(self, v):\n"
          "        pass\n")


@pytest.mark.parametrize(("body", "expected"), [(TWICE, ["PP0052 warning latent"]), (BRANCHES, ["no PP0052"]), (SETTER, ["no PP0052"]),
                                                 ("    def capture(self):\n        return 1\n", ["no PP0052"])])
def test_duplicate_methods(body, expected):
    result = run_scan({"host/runner.py": RUNNER}, {"host/runner.py": RUNNER}, patch(body), checks=CHECK)
    expect(result, expected)
    if not expected[0].startswith("no "):
        finding = only(result, "PP0052")
        assert finding.plugin.line == 6 and finding.args["line"] == 9


def test_a_star_import_however_spaced_makes_the_modules_names_unknowable():
    spaced = "from os.path import  *\n\n\ndef f():\n    return join\n"
    expect(names(spaced), ["no PP0050"])
    expect(names(spaced.replace("from os.path import  *\n", "")), ["PP0050 error latent f:2"], at=True)


READS = ("    def capture(self):\n        return self.device + self.zz_missing\n\n"
         "    def profile(self):\n        self.zz_missing.clear()\n        return self.zz_missing\n")


def test_every_undefined_member_read_is_found_past_defined_ones_at_its_first_read():
    """`self.device` (the host defines it) sorts first: the walk goes on to `zz_missing`, cited where first read."""
    result = run_scan({"host/runner.py": RUNNER}, {"host/runner.py": RUNNER}, patch(READS), checks=CHECK)
    expect(result, ["PP0051 error latent RunnerPatch.capture:7", "PP0051 error latent RunnerPatch.profile:10"],
           at=True)


GONE_PATCH = ("from plug.patching import ArcticPatch\nfrom host.gone import Gone\n\n\n"
              "class GonePatch(ArcticPatch[Gone]):\n    def run(self):\n        return self._extra_state\n\n"
              "    def _extra_state_init(self):\n        self._extra_state = 0\n")


def test_a_patch_of_a_class_the_host_lacks_is_left_to_the_imports_check():
    result = run_scan({"host/runner.py": RUNNER}, {"host/runner.py": RUNNER},
                      {**patch(CALL), "plug/gone.py": GONE_PATCH}, checks=CHECK)
    expect(result, ["PP0051 error latent RunnerPatch.capture:7"], at=True)


PLUGIN_HIERARCHY = ("def helper():\n    return 1\n\n\nclass Base:\n    @staticmethod\n    def make():\n        return Base()\n\n"
                    "    def __init__(self):\n        self.ready = True\n\n\n"
                    "class Child(Base):\n    def run(self):\n        return self.ready and self.steps_done\n")


def test_undefined_member_of_a_plugin_class_with_a_plugin_base():
    """A module-level function and a staticmethod come first, and the base is the plugin's own: the class is
    still judged."""
    result = run_scan({"host/runner.py": RUNNER}, {"host/runner.py": RUNNER}, {"plug/tree.py": PLUGIN_HIERARCHY},
                      checks=CHECK)
    expect(result, ["PP0051 error latent Child.run:16"], at=True)
    assert only(result, "PP0051").args == {"name": "steps_done", "cls": "Child", "label": "plugin"}


def test_a_member_the_plugin_stores_on_the_host_class_is_defined_and_the_walk_goes_on():
    """`aa_cache` is stored by a function the plugin attaches to `Runner`: defined there, not by any plugin class."""
    body = ("    def capture(self):\n        return self.aa_cache + self.zz_missing\n\n\n"
            "def _setup(self):\n    self.aa_cache = {}\n\n\nRunner.setup = _setup\n")
    result = run_scan({"host/runner.py": RUNNER}, {"host/runner.py": RUNNER}, patch(body), checks=CHECK)
    expect(result, ["PP0051 error latent RunnerPatch.capture:7"], at=True)
    assert only(result, "PP0051").args["name"] == "zz_missing"


DBG = ("class Ops:\n    def run(self):\n        return 1\n\n"
       "    def _dbg(x):\n        return (x.shape, x.is_contiguous())\n")


@pytest.mark.parametrize(("plugin", "expected"), [
    # a helper in a class body written without @staticmethod: `x` is no instance of the class
    ({"plug/ops.py": DBG}, ["no PP0051"]),
    # a first parameter named for the instance keeps the read judged
    ({"plug/ops.py": DBG.replace("_dbg(x)", "_dbg(self)").replace("x.", "self.")},
     ["PP0051 error latent Ops._dbg:6", "PP0051 error latent Ops._dbg:6"]),
    ({"plug/ops.py": DBG.replace("_dbg(x)", "_dbg(_self)").replace("x.", "_self.")},
     ["PP0051 error latent Ops._dbg:6", "PP0051 error latent Ops._dbg:6"]),
    # the same in a patch class's body (its members run as the target's)
    (patch("    def _dbg(x):\n        return x.zz_missing\n"), ["no PP0051"]),
    (patch("    def _dbg(self):\n        return self.zz_missing\n"), ["PP0051 error latent RunnerPatch._dbg:7"]),
])
def test_a_class_body_function_whose_first_parameter_is_no_instance_reads_no_members(plugin, expected):
    result = run_scan({"host/runner.py": RUNNER}, {"host/runner.py": RUNNER}, plugin, checks=CHECK)
    expect(result, expected, at=True)
    for f in result.findings:
        assert (f.code, f.level.value, f.status.value, f.old, f.new) == ("PP0051", "error", "latent", None, None)


def test_members_of_a_class_built_inside_a_function_are_defined():
    """A subclass of a host class made in a factory function (`def make(): class Method(Base): ...`, as a
    quantization method built per route is) defines its own methods, properties and class attributes;
    the member it does not define is still an error."""
    host = {"host/__init__.py": "", "host/base.py": "class Base:\n    def run(self):\n        pass\n"}
    plugin = {"plug/patching.py": "class ArcticPatch:\n    pass\n", "plug/m.py": (
        "from host.base import Base\n\n\ndef make(mode):\n    class Method(Base):\n        scale = 2\n\n"
        "        def apply(self, x):\n            self._record(x)\n            self._missing(x)\n"
        "            return self.helper + self.scale\n\n"
        "        def _record(self, x):\n            pass\n\n        @property\n        def helper(self):\n"
        "            return 1\n    return Method\n")}
    result = run_scan(host, host, plugin, checks=(UndefinedCheck(),))
    expect(result, ["PP0051 error latent"])
    found = only(result, "PP0051")
    assert (found.args["name"], found.plugin.path, found.plugin.line, found.plugin.unit) == (
        "_missing", "plug/m.py", 10, "make.Method.apply")
