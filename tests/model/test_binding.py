"""Binding calls to signatures like Python does, and the parameters a callee or constructor takes."""

import ast

import pytest

from harness import load_inline_resolver, signature
from pinport.model.binding import (
    BOUND,
    CALL,
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
    assert [(p.kind, p.name) for p in bind_call(signature(params), call(source))] == expected


def test_unpacking_at_the_call_site_is_unverifiable():
    assert bind_call(signature("(a)"), call("f(*xs)")) is None
    assert bind_call(signature("(a)"), call("f(**kw)")) is None
    assert bind_counts(signature("(a)"), 2, ())[0].given == 2


def test_constructor_params(tmp_path):
    r = load_inline_resolver(tmp_path, {"host/m.py": """
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
    r = load_inline_resolver(tmp_path, {"host/m.py": """
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
