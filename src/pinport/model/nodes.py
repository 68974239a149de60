"""Small AST helpers shared by the model's and the plugin's walks."""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator

from .parse import dotted


def chain(node: ast.AST | None) -> str:
    """`a.b.c` for a pure Name/Attribute chain, else '' (`parse.dotted` without its subscript and
    call bases: `x[0]` and `f()` name nothing here)."""
    return "" if isinstance(node, ast.Subscript | ast.Call) else dotted(node)


def children(node: ast.AST) -> list[ast.AST]:
    """Child nodes in field order; several times faster than ast.iter_child_nodes."""
    out: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if type(value) is list:
            out.extend(v for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under `node` (itself first) in `ast.walk`'s order, with the faster `children`."""
    todo = deque([node])
    while todo:
        node = todo.popleft()
        todo.extend(children(node))
        yield node


# nodes with no child but leaves (a name's context): skipped by `walk_inner`
LEAVES = (ast.Name, ast.Constant, ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)


def walk_inner(node: ast.AST) -> Iterator[ast.AST]:
    """`walk` without the `LEAVES` (for walks that look at none of them): the other nodes in the same order."""
    todo = deque([node])
    while todo:
        node = todo.popleft()
        todo.extend(child for child in children(node) if not isinstance(child, LEAVES))
        yield node


def statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of a body and of the bodies nested in it, nested defs' and classes' too (not
    the expressions: an assignment or an `if` is never inside one), depth first."""
    for stmt in body:
        yield stmt
        for field in ("body", "orelse", "finalbody"):
            nested = getattr(stmt, field, None)
            if type(nested) is list:
                yield from statements(nested)
        for part in (*getattr(stmt, "handlers", ()), *getattr(stmt, "cases", ())):
            yield from statements(part.body)
