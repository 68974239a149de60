"""The fast child-node helpers answer as `ast` does: their field tables skip only fields that hold no node."""

from __future__ import annotations

import ast
from pathlib import Path

import pinport
from pinport.model.nodes import LEAVES, branches, children, inner_children, walk_inner, walk_tree

SNIPPET = '''
from . import a as b
import x.y
global_name: int = 1
def f(p, /, q: "T" = 1, *args, r, s=2, **kw) -> list[int]:
    global g
    def inner():
        nonlocal p
    async def co():
        async for i in aiter():
            await i
        async with ctx() as (m, n):
            pass
    x = [i for i in range(3) if i] + {k: v for k, v in d.items()}
    y = (lambda z=1: z)(not x) or (a if b else c) and x[1:2, ::3]
    f"{x!r:>{width}} {y}"
    try:
        del x.attr, y[0]
    except* (TypeError, ValueError) as err:
        raise RuntimeError from err
    match p:
        case {"k": 1, **rest}:
            pass
        case Point(x=0, y=[1, *others]) | None:
            pass
        case [1, 2] as pair if pair:
            pass
    x += 1; y @= 2; z = -x ** 2 < y <= 3 is not None
    return (yield from gen())
@decorator(arg)
class C(Base, metaclass=Meta):
    attr: int
    def m(self): return super().m(*self.args, **{**self.kw})
'''


def _trees() -> list[ast.AST]:
    files = sorted(Path(pinport.__file__).parent.rglob("*.py"))[:50]
    return [ast.parse(SNIPPET), *(ast.parse(p.read_text()) for p in files)]


def test_children_match_ast_on_every_node() -> None:
    checked = 0
    for tree in _trees():
        for node in ast.walk(tree):
            expected = list(ast.iter_child_nodes(node))
            assert children(node) == expected, ast.dump(node)[:200]
            assert inner_children(node) == [c for c in expected if not isinstance(c, LEAVES)]
            assert branches(node) == [c for c in expected if not isinstance(
                c, ast.expr_context | ast.operator | ast.boolop | ast.unaryop | ast.cmpop)]
            checked += 1
    assert checked > 20_000  # the snippet and 50 of pinport's own modules, every node


def test_walks_keep_ast_walk_order() -> None:
    for tree in _trees()[:20]:
        expected = list(ast.walk(tree))
        assert list(walk_tree(tree)) == expected
        assert list(walk_inner(tree)) == [tree, *(n for n in expected[1:] if not isinstance(n, LEAVES))]


def test_a_node_built_by_hand_with_fields_missing_walks() -> None:
    call = ast.Call(func=ast.Name(id="f", ctx=ast.Load()), args=[ast.Constant(1), None])  # no `keywords`
    assert children(call) == [call.func, call.args[0]]
    assert inner_children(call) == []
