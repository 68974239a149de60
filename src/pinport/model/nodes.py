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
