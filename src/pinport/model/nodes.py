"""Small AST helpers shared by the model's and the plugin's walks."""

from __future__ import annotations

import ast


def chain(node: ast.AST | None) -> str:
    """`a.b.c` for a pure Name/Attribute chain, else ''."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    parts.append(node.id)
    return ".".join(reversed(parts))


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
