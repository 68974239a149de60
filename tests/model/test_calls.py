"""Binding calls to signatures, return arity, host type inference and call-site search."""

import ast
from pathlib import Path

import pytest

from harness import write_tree
from pinport.model.binding import (
    BOUND,
    CALL,
    CONSTRUCT,
    MISSING,
    TOO_MANY,
    TWICE,
    UNBOUND,
    UNEXPECTED,
    Callee,
    bind_call,
    bind_counts,
    callee_params,
    constructor_params,
)
from pinport.model.callsites import failing_call_lines, iter_call_sites, text_lines
from pinport.model.index import load_index
from pinport.model.inference import annotation_arity, annotation_name, host_inference, return_arity
from pinport.model.resolve import CLASS, METHOD, Resolver
from pinport.model.summary import Param, ParamKind
from pinport.model.units import iter_units, unit_facts
from pinport.sources.tree import SourceTree, scan_files


def resolver(tmp_path: Path, files: dict[str, str]) -> Resolver:
    write_tree(tmp_path, files)
    for rel in files:
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            init = tmp_path.joinpath(*parts[:i], "__init__.py")
            if not init.exists():
                init.write_text("", encoding="utf-8")
    tree = SourceTree(tmp_path, "host 1.0", "host", None, scan_files(tmp_path, ("host",)))
    return Resolver(load_index(tree, workers=1), "host")


def sig(text: str) -> tuple[Param, ...]:
    """Parameters of `def f<text>: pass`, via the model's own parser."""
    from pinport.model.parse import signature_of

    node = ast.parse(f"def f{text}: pass").body[0]
    return signature_of(node.args, None, [f"def f{text}: pass"]).params


def call(text: str) -> ast.Call:
    return ast.parse(text, mode="eval").body


@pytest.mark.parametrize(("params", "source", "expected"), [
    ("(a, b=1)", "f(1)", []),
    ("(a, b=1)", "f()", [(MISSING, "a")]),
    ("(a)", "f(1, 2)", [(TOO_MANY, "")]),
    ("(a, *args)", "f(1, 2, 3)", []),
    ("(a)", "f(a=1, b=2)", [(UNEXPECTED, "b")]),
    ("(a, **kw)", "f(a=1, b=2)", []),
    ("(a, b=1)", "f(1, a=2)", [(TWICE, "a")]),
    ("(a, /, b=1)", "f(a=1)", [(UNEXPECTED, "a"), (MISSING, "a")]),  # positional-only
    ("(*, key)", "f()", [(MISSING, "key")]),
    ("(*, key)", "f(1, key=2)", [(TOO_MANY, "")]),
])
def test_bind_like_python(params, source, expected):
    assert [(p.kind, p.name) for p in bind_call(sig(params), call(source))] == expected


def test_unpacking_at_the_call_site_is_unverifiable():
    assert bind_call(sig("(a)"), call("f(*xs)")) is None
    assert bind_call(sig("(a)"), call("f(**kw)")) is None
    assert bind_counts(sig("(a)"), 2, ())[0].given == 2


@pytest.mark.parametrize(("text", "arity"), [
    ("tuple[int, int]", 2), ("Tuple[a, b, c]", 3), ("tuple[int, ...]", None), ("np.ndarray", 1),
    ("torch.Tensor | None", 1), ("tuple[dict[str, int], list[int]]", 2), ("Foo", None), (None, None),
    ("'tuple[int, int]'", 2),
])
def test_annotation_arity(text, arity):
    assert annotation_arity(text) == arity


@pytest.mark.parametrize(("text", "name"), [
    ("Runner", "Runner"), ("'Runner'", "Runner"), ("Runner | None", "Runner"), ("Optional[a.Runner]", "a.Runner"),
    ("Union[Runner, None]", "Runner"), ("list[Runner]", None), ("A | B", None), ("None", None),
])
def test_annotation_name(text, name):
    assert annotation_name(text) == name


def test_return_arity(tmp_path):
    r = resolver(tmp_path, {"host/m.py": """
        def pair(a):
            return a, a
        def single(a) -> int:
            return a
        def unknown(a):
            return a
        def mixed(a):
            if a:
                return a, a
            return a, a, a
        def gen(a):
            yield a, a
        def nested(a):
            def inner():
                return 1
            return a, a
    """})
    arity = {n: return_arity(r.index, r.resolve(f"host.m.{n}")) for n in
             ("pair", "single", "unknown", "mixed", "gen", "nested")}
    assert arity == {"pair": 2, "single": 1, "unknown": None, "mixed": None, "gen": None, "nested": 2}


def test_constructor_params(tmp_path):
    r = resolver(tmp_path, {"host/m.py": """
        from dataclasses import KW_ONLY, dataclass, field
        from typing import ClassVar
        import torch

        class Plain:
            def __init__(self, a, b=1):
                pass

        class Child(Plain):
            pass

        class New:
            def __new__(cls, x):
                pass

        class Module(torch.nn.Module):
            pass

        @dataclass
        class Base:
            a: int
            b: int = 0
            c: ClassVar[int] = 1
            d: list = field(init=False)

        @dataclass
        class Derived(Base):
            e: str = ""
            _: KW_ONLY
            f: int = 2

        @dataclass(kw_only=True)
        class Keywords:
            g: int
    """})

    def names(cls: str):
        params = constructor_params(r, r.resolve(f"host.m.{cls}"))
        return None if params is None else [(p.name, p.kind.name[:3], p.default) for p in params]

    assert names("Child") == [("a", "POS", None), ("b", "POS", "1")]
    assert names("New") == [("x", "POS", None)]
    assert names("Module") is None  # an outside base may define the constructor
    assert names("Derived") == [("a", "POS", None), ("b", "POS", "0"), ("e", "POS", '""'), ("f", "KEY", "2")]
    assert names("Keywords") == [("g", "KEY", None)]


def test_callee_params_by_mode(tmp_path):
    r = resolver(tmp_path, {"host/m.py": """
        class C:
            def m(self, a):
                pass
            @staticmethod
            def s(a):
                pass
            @classmethod
            def c(cls, a):
                pass
    """})
    cls = r.resolve("host.m.C")

    def names(member: str, mode: str):
        return [p.name for p in callee_params(r, Callee(r.class_member(cls, member), mode, "", cls))]
    assert names("m", BOUND) == ["a"] and names("m", UNBOUND) == ["self", "a"]
    assert names("s", CALL) == ["a"] and names("c", BOUND) == ["a"]


def test_inference_follows_annotations_constructors_and_attributes(tmp_path):
    r = resolver(tmp_path, {
        "host/runner.py": """
            class Runner:
                def step(self, a):
                    pass
            def make() -> "Runner":
                return Runner()
        """,
        "host/worker.py": """
            from host.runner import Runner, make
            class Worker:
                def __init__(self):
                    self.runner: Runner = make()
                    self.other = Runner()
                def go(self, r: Runner | None):
                    from host.runner import make as build
                    x = build()
                    self.runner.step(1)
                    self.other.step(1)
                    r.step(1)
                    x.step(1)
                    make().step(1)
        """})
    tree = r.index.parsed("host.worker")
    unit = next(u for u in iter_units(tree) if u.qualname == "Worker.go")
    facts = unit_facts(r.index, "host.worker", unit)
    inf = host_inference(r, "host.worker", unit, facts)
    callees = [inf.callee(c.func) for c in facts.calls if isinstance(c.func, ast.Attribute)]
    assert [(c.sym.path, c.mode) for c in callees] == [("host.runner.Runner.step", BOUND)] * 5


def test_super_and_construct(tmp_path):
    r = resolver(tmp_path, {"host/m.py": """
        class Base:
            def __init__(self, a):
                pass
        class Sub(Base):
            def __init__(self):
                super().__init__(1)
                Base(2)
    """})
    unit = next(u for u in iter_units(r.index.parsed("host.m")) if u.qualname == "Sub.__init__")
    facts = unit_facts(r.index, "host.m", unit)
    inf = host_inference(r, "host.m", unit, facts)
    first, second = (inf.callee(c.func) for c in facts.calls if c.func is not None and not (
        isinstance(c.func, ast.Name) and c.func.id == "super"))
    assert (first.sym.path, first.sym.kind, first.mode) == ("host.m.Base.__init__", METHOD, BOUND)
    assert (second.sym.path, second.sym.kind, second.mode) == ("host.m.Base", CLASS, CONSTRUCT)


def test_call_sites_text_prefilter_and_order(tmp_path):
    r = resolver(tmp_path, {
        "host/a.py": "def helper(x):\n    pass\n\n\ndef two():\n    helper(2)\n    helper(1)\n",
        "host/b.py": "from host.a import helper\n\n\ndef one():\n    helper(x=1)\n",
        "host/c.py": "def helper(x):\n    pass\n\n\ndef other():\n    helper(3)\n",  # another function
    })
    sites = list(iter_call_sites(r, "helper", lambda c: c.sym.path == "host.a.helper"))
    assert [(s.module, s.line, s.unit) for s in sites] == [("host.a", 6, "two"), ("host.a", 7, "two"),
                                                           ("host.b", 5, "one")]
    assert len(list(iter_call_sites(r, "helper", lambda c: True, limit=2))) == 2
    assert text_lines(r.index, "host.a", "helper(") == (1, 6, 7)


def test_failing_call_lines_read_arguments_from_text(tmp_path):
    r = resolver(tmp_path, {"host/a.py": """
        def run(obj):
            obj.capture(1)
            obj.capture(1, ctx=")")  # a parenthesis in a string
            obj.capture(
                1,
                2,
            )
            obj.capture(*args)
    """})
    assert failing_call_lines(r.index, "host.a", "capture", sig("(a)"), method=True) == (3, 4, 8)
    assert failing_call_lines(r.index, "host.a", "capture", sig("(a, b=0, ctx=None)"), method=True) == (8,)


def test_param_kinds_survive_rendering():
    assert [p.kind for p in sig("(a, /, b, *c, d, **e)")] == [
        ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.VAR_POSITIONAL,
        ParamKind.KEYWORD_ONLY, ParamKind.VAR_KEYWORD]


def test_units_include_defs_inside_module_level_blocks():
    tree = ast.parse("try:\n    def f(cfg):\n        cfg.x()\nexcept ImportError:\n    pass\n"
                     "if TYPE_CHECKING:\n    import a\nelse:\n    def g():\n        pass\nwith ctx():\n    h()\n"
                     "class C:\n    if flag:\n        def m(self):\n            pass\n")
    units = {u.qualname: u for u in iter_units(tree)}
    assert set(units) == {"f", "g", "C.m", "C", "<module>"}
    module_calls = [n for stmt in units["<module>"].body for n in ast.walk(stmt) if isinstance(n, ast.Call)]
    assert sorted(ast.unparse(c.func) for c in module_calls) == ["ctx", "h"]
