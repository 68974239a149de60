"""parse.summarize: signatures, decorators, classes, instance attributes, bindings, exports."""

import textwrap

import pytest

from harness import signature
from pinport.model import parse
from pinport.model.parse import dotted, parse_module, resolve_relative, summarize
from pinport.model.summary import BindingKind, ParamKind


def summ(source: str, module: str = "pkg.mod", is_package: bool = False):
    return summarize(textwrap.dedent(source).lstrip("\n"), module, is_package)


def params(source: str, name: str = "f"):
    return summ(source).functions[name].signature.params


# -- signatures ----------------------------------------------------------------------------------

def test_signature_kinds_defaults_and_annotations():
    (a, b, c, args, d, e, kw) = params("def f(a, /, b: int = 1, c=2, *args: str, d, e: 'X' = None, **kw): pass")
    assert [p.kind for p in (a, b, c, args, d, e, kw)] == [
        ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.POSITIONAL_OR_KEYWORD,
        ParamKind.VAR_POSITIONAL, ParamKind.KEYWORD_ONLY, ParamKind.KEYWORD_ONLY, ParamKind.VAR_KEYWORD]
    assert (a.default, b.default, c.default) == (None, "1", "2")
    assert (d.default, e.default) == (None, "None")
    assert (b.annotation, args.annotation, e.annotation) == ("int", "str", "'X'")
    assert a.required and d.required and not b.required and not args.required and not kw.required


def test_defaults_align_to_the_last_positional_parameters():
    sig = params("def f(a, b, /, c, d=3, e=4): pass")
    assert [(p.name, p.default) for p in sig] == [("a", None), ("b", None), ("c", None),
                                                  ("d", "3"), ("e", "4")]
    posonly = params("def f(a, b=1, /, c=2): pass")
    assert [(p.name, p.kind, p.default) for p in posonly] == [
        ("a", ParamKind.POSITIONAL_ONLY, None), ("b", ParamKind.POSITIONAL_ONLY, "1"),
        ("c", ParamKind.POSITIONAL_OR_KEYWORD, "2")]


def test_bare_star_keyword_only_and_return_annotation():
    fn = summ("def f(self, *, x, y=None) -> dict[str, int]: pass").functions["f"]
    assert [(p.name, p.kind) for p in fn.signature.params] == [
        ("self", ParamKind.POSITIONAL_OR_KEYWORD), ("x", ParamKind.KEYWORD_ONLY),
        ("y", ParamKind.KEYWORD_ONLY)]
    assert fn.signature.returns == "dict[str, int]"
    assert fn.signature.render() == "(self, *, x, y=None) -> dict[str, int]"
    assert [p.name for p in fn.bound_params()] == ["x", "y"]


def test_non_ascii_text_before_a_default_keeps_columns():
    sig = params('def f(name="é", b=2, c: "Ä" = 3): pass')
    assert [(p.default, p.annotation) for p in sig] == [('"é"', None), ("2", None), ("3", '"Ä"')]


def test_async_function_and_line_range():
    fn = summ("async def f():\n    return 1\n").functions["f"]
    assert fn.is_async and (fn.line, fn.end_line) == (1, 2)


def test_param_kinds_survive_rendering():
    assert [p.kind for p in signature("(a, /, b, *c, d, **e)")] == [
        ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.VAR_POSITIONAL,
        ParamKind.KEYWORD_ONLY, ParamKind.VAR_KEYWORD]


# -- decorators ----------------------------------------------------------------------------------

def test_decorators_recorded_as_dotted_names():
    cls = summ("""
        import functools
        class C:
            @staticmethod
            def s(a): pass
            @classmethod
            def c(cls, a): pass
            @property
            def p(self): return 1
            @p.setter
            def p(self, v): pass
            @functools.lru_cache(maxsize=None)
            def cached(self): pass
    """).classes["C"]
    m = cls.methods
    assert m["s"].is_staticmethod and [p.name for p in m["s"].bound_params()] == ["a"]
    assert m["c"].is_classmethod and [p.name for p in m["c"].bound_params()] == ["a"]
    assert m["p"].is_property and m["p"].decorators == ("property",)  # the getter is kept
    assert m["cached"].decorators == ("functools.lru_cache",)
    assert cls.duplicate_methods == ()  # a setter is not a redefinition


def test_dotted():
    import ast
    expr = lambda s: ast.parse(s, mode="eval").body  # noqa: E731
    assert dotted(expr("a.b.c")) == "a.b.c"
    assert dotted(expr("Generic[T]")) == "Generic"
    assert dotted(expr("mod.Helper[Target]")) == "mod.Helper"
    assert dotted(expr("functools.lru_cache(maxsize=None)")) == "functools.lru_cache"
    # a member of a call result or of a subscript is not a name chain
    assert dotted(expr("get_logger().info")) == ""
    assert dotted(expr("a[0].b")) == ""
    assert dotted(expr("1 + 2")) == ""


# -- classes -------------------------------------------------------------------------------------

def test_class_bases_keywords_and_decorators():
    s = summ("""
        from typing import Generic, TypeVar
        import dataclasses
        T = TypeVar("T")
        class Helper(Generic[T]): pass
        @dataclasses.dataclass(frozen=True)
        class P(Helper[Target], mod.Base, metaclass=Meta): pass
    """)
    assert s.classes["Helper"].bases == ("Generic",)
    p = s.classes["P"]
    assert p.bases == ("Helper", "mod.Base")
    assert p.keywords == (("metaclass", "Meta"),)
    assert p.decorators == ("dataclasses.dataclass",)


def test_class_attributes_plain_annotated_and_slots():
    cls = summ("""
        class Config:
            __slots__ = ("a", "b")
            name: str
            size: int = 4
            flag = False
            if X:
                extra = 1
            T.y, z = 1, 2
    """).classes["Config"]
    attrs = cls.attributes
    assert attrs["name"].annotation == "str" and attrs["name"].value == ""
    assert (attrs["size"].annotation, attrs["size"].value, attrs["size"].line) == ("int", "4", 4)
    assert attrs["flag"].annotation is None and attrs["flag"].value == "False"
    assert "extra" in attrs and "z" in attrs
    assert "T" not in attrs  # `T.y = ...` assigns to T, it does not bind T in the class
    assert cls.slots == ("a", "b") and cls.has_member("a")


def test_duplicate_methods_recorded():
    cls = summ("""
        class C:
            def step(self): pass
            def other(self): pass
            def step(self, x): pass
    """).classes["C"]
    assert cls.duplicate_methods == (("step", 2),)
    assert cls.methods["step"].line == 4


def test_overloads_are_not_duplicates():
    cls = summ("""
        from typing import overload
        class C:
            @overload
            def f(self, x: int) -> int: ...
            def f(self, x): return x
    """).classes["C"]
    assert cls.duplicate_methods == ()


def test_nested_class():
    outer = summ("""
        class Outer:
            class Inner:
                def __init__(self):
                    self.inner_attr = 1
            def __init__(self):
                self.outer_attr = 2
    """).classes["Outer"]
    inner = outer.classes["Inner"]
    assert set(inner.instance_attrs) == {"inner_attr"}
    assert set(outer.instance_attrs) == {"outer_attr"}


# -- instance attributes -------------------------------------------------------------------------

INSTANCE = """
class Runner:
    def __init__(self, cfg):
        self.cfg = cfg
        self.size: int = 4
        self.a, self.b = cfg.split()
        self.c = self.d = None
        if self.cfg == 1:
            pass
        self.count += 1
        foo(self.cfg)
        myself.bogus = 1
        other.self_thing = 1

    def load(self):
        self.model = load(
            self.cfg)

    @property
    def value(self):
        return self._value

    @value.setter
    def value(self, v):
        self._value = v
"""


def test_instance_attrs_found_and_attributed():
    attrs = summ(INSTANCE).classes["Runner"].instance_attrs
    assert set(attrs) == {"cfg", "size", "a", "b", "c", "d", "model", "_value"}
    assert [(a.line, a.method, a.expr) for a in attrs["cfg"]] == [(3, "__init__", "cfg")]
    assert attrs["size"][0].expr == "4"
    assert [(a.line, a.method) for a in attrs["b"]] == [(5, "__init__")]  # once, not twice
    assert attrs["model"][0].method == "load" and attrs["model"][0].expr == "load("
    assert attrs["_value"][0].method == "value"  # assigned only in the setter


@pytest.mark.parametrize("line", [
    "if self.x == y: pass",
    "self.x += 1",
    "foo(self.x)",
    "myself.x = 1",
    "obj.self.x = 1",
    "buf[self.x:n] = data",
    "d = {self.x: f(a=1)}",
    'print(f"{self.x:>3}", end="")',
    'print(f"{self.x=}, {self.x=!r}, {self.x=:>4}")',
    "y = self.x",
    "self.x: int",
])
def test_not_instance_assignments(line):
    cls = summ(f"class C:\n    def m(self):\n        {line}\n").classes["C"]
    assert "x" not in cls.instance_attrs


def test_instance_attrs_outside_methods_are_ignored():
    s = summ("""
        def helper(self):
            self.free = 1
        class C:
            pass
    """)
    assert s.classes["C"].instance_attrs == {}


# -- module bindings -----------------------------------------------------------------------------

def test_import_bindings():
    b = summ("""
        import a.b
        import a.b.c as c
        import os, sys as system
        from x.y import z, w as v
    """).bindings
    assert (b["a"].kind, b["a"].target) == (BindingKind.IMPORT, "a")
    assert b["c"].target == "a.b.c"
    assert b["os"].target == "os" and b["system"].target == "sys"
    assert (b["z"].kind, b["z"].target) == (BindingKind.IMPORT_FROM, "x.y.z")
    assert b["v"].target == "x.y.w" and "w" not in b


@pytest.mark.parametrize(("module", "is_package", "stmt", "name", "target"), [
    ("pkg.sub", True, "from . import mod", "mod", "pkg.sub.mod"),
    ("pkg.sub.mod", False, "from . import other", "other", "pkg.sub.other"),
    ("pkg.sub.mod", False, "from .other import X", "X", "pkg.sub.other.X"),
    ("pkg.sub.mod", False, "from ..top import X", "X", "pkg.top.X"),
    ("pkg.sub", True, "from ..top import X", "X", "pkg.top.X"),
    ("pkg", True, "from .a.b import X", "X", "pkg.a.b.X"),
])
def test_relative_imports(module, is_package, stmt, name, target):
    assert summ(stmt, module, is_package).bindings[name].target == target


def test_resolve_relative_beyond_top():
    assert resolve_relative("pkg.mod", False, 3, "x") == "x"
    assert resolve_relative("pkg.mod", False, 0, "abs.mod") == "abs.mod"


def test_star_imports():
    s = summ("""
        from .sibling import *
        from other import *
        from .sibling import *
        if TYPE_CHECKING:
            from typed import *
    """, "pkg.mod")
    assert s.star_imports == ("pkg.sibling", "other")


def test_type_checking_and_conditional_imports():
    b = summ("""
        from typing import TYPE_CHECKING
        import typing
        if TYPE_CHECKING:
            from a import OnlyTyped
            from a import Both
        if typing.TYPE_CHECKING:
            from a import Typed2
        else:
            Typed2 = None
        from b import Both
        try:
            from fast import Impl
        except ImportError:
            Impl = None
        X = 1
    """).bindings
    assert b["OnlyTyped"].type_checking and b["OnlyTyped"].conditional
    assert not b["Both"].type_checking and b["Both"].target == "b.Both"  # the runtime import wins
    assert not b["Typed2"].type_checking  # the else branch is real
    assert b["Impl"].conditional and not b["Impl"].type_checking
    assert not b["X"].conditional


def test_type_checking_binding_never_shadows_a_runtime_one():
    b = summ("""
        from b import Name
        if TYPE_CHECKING:
            from a import Name
    """).bindings
    assert b["Name"].target == "b.Name" and not b["Name"].type_checking


def test_assignment_bindings():
    b = summ("""
        A = 1
        B: int = compute(
            2)
        C, (D, *E) = 1, (2, 3)
        obj.attr, F = 1, 2
        for G in range(3):
            pass
        def fn(): pass
        class K: pass
    """).bindings
    assert (b["A"].kind, b["A"].value) == (BindingKind.ASSIGN, "1")
    assert b["B"].value == "compute("
    assert {"C", "D", "E", "F"} <= set(b)
    assert "obj" not in b  # `obj.attr = ...` does not bind obj
    assert b["G"].conditional
    assert b["fn"].kind is BindingKind.FUNCTION and b["K"].kind is BindingKind.CLASS


def test_global_names_assigned_in_functions():
    s = summ("""
        _GROUP = None
        def init():
            global _WORLD, _PP
            _WORLD = 1
        def other():
            global _GROUP
            _GROUP = 2
    """)
    assert s.bindings["_WORLD"].kind is BindingKind.GLOBAL and s.bindings["_WORLD"].line == 3
    assert s.bindings["_PP"].kind is BindingKind.GLOBAL
    assert s.bindings["_GROUP"].kind is BindingKind.ASSIGN  # a real module-level binding wins


# -- exports -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("source", "expected"), [
    ("__all__ = ['a', 'b']", ("a", "b")),
    ("__all__ = ('a',)", ("a",)),
    ("__all__ = ['a']\n__all__ += ['b', 'c']", ("a", "b", "c")),
    ("__all__ = ['a', name]", None),  # not static
    ("x = 1", None),
])
def test_all_names(source, expected):
    assert summ(source).all_names == expected


def test_lazy_exports_module_attrs_table():
    s = summ("""
        from typing import TYPE_CHECKING
        MODULE_ATTRS = {
            "LLM": ".entrypoints.llm:LLM",
            "EngineArgs": ".engine.arg_utils:EngineArgs",
            "bare": ".mod",
            "pair": ("pkg.tuple_mod", "Thing"),
        }
        if TYPE_CHECKING:
            from .entrypoints.llm import LLM
        def __getattr__(name):
            if name in MODULE_ATTRS:
                module_name, attr = MODULE_ATTRS[name].split(":")
                return getattr(importlib.import_module(module_name, __package__), attr)
            raise AttributeError(name)
    """, "pkg", True)
    assert s.has_getattr
    assert s.lazy_exports == {
        "LLM": "pkg.entrypoints.llm.LLM",
        "EngineArgs": "pkg.engine.arg_utils.EngineArgs",
        "bare": "pkg.mod.bare",
        "pair": "pkg.tuple_mod.Thing",
    }
    assert s.defines("EngineArgs") and s.bindings["LLM"].type_checking


def test_lazy_exports_compare_shims_and_all():
    s = summ("""
        __all__ = ["kept", "Served"]
        kept = 1
        def __getattr__(name):
            if name == "OldName":
                warnings.warn("moved")
                return NewName
            if name in ("A", "B"):
                return 1
            raise AttributeError(name)
    """)
    assert s.lazy_exports == {"OldName": "", "A": "", "B": "", "Served": ""}


def test_lazy_exports_envs_style():
    s = summ("""
        environment_variables: dict[str, Callable[[], Any]] = {
            "VLLM_HOST_IP": lambda: os.getenv("VLLM_HOST_IP", ""),
            "VLLM_USE_V1": lambda: bool(int(os.getenv("VLLM_USE_V1", "1"))),
        }
        def __getattr__(name: str):
            if name in environment_variables:
                return environment_variables[name]()
            raise AttributeError(name)
    """, "pkg.envs")
    assert s.lazy_exports == {"VLLM_HOST_IP": "", "VLLM_USE_V1": ""}


def test_no_getattr_no_lazy_exports():
    s = summ("TABLE = {'a': 'x:y'}\n")
    assert not s.has_getattr and s.lazy_exports == {}


# -- bad input -----------------------------------------------------------------------------------

def test_syntax_error_yields_a_summary():
    s = summ("x = 1\ndef broken(:\n    pass\n")
    assert s.syntax_error.startswith("line 2: ")
    assert s.bindings == {} and s.classes == {}


def test_bytes_with_bad_encoding_still_parse():
    s = summarize(b"X = '\xff'\nclass C: pass\n", "m", False)
    assert s.syntax_error == "" and "C" in s.classes and s.line_count == 2


def test_a_tree_just_summarised_is_handed_to_the_next_parse_of_that_text_once():
    """A check asking for the whole tree of a module whose summary was just built gets that tree,
    not a second parse; the next request parses again (the first caller keeps its tree)."""
    text = "class K:\n    def f(self):\n        return 1\n"
    recent = parse.RecentTrees()
    summarize(text, "m", False, recent)
    first = parse_module(text, recent)
    assert first is not None and parse_module(text, recent) is not first
    assert [n.name for n in first.body] == ["K"]
    summarize(text, "m", False)  # without a keeper nothing is kept
    assert parse_module(text, recent) is not first and recent.take(text) is None


def test_only_the_last_few_summarised_trees_are_kept():
    recent = parse.RecentTrees(limit=4)
    texts = [f"x{i} = {i}\n" for i in range(9)]
    for i, text in enumerate(texts):
        summarize(text, f"m{i}", False, recent)
    assert [recent.take(t) is not None for t in texts] == [False] * 5 + [True] * 4
    assert parse_module("def broken(:\n", recent) is None
