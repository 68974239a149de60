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


# fields that never hold a node, by class (Python 3.11-3.13 grammars): skipped without a look.
# A field not listed is looked at (a class new to a later Python is walked in full).
_SCALARS: dict[type, frozenset[str]] = {
    cls: frozenset(fields) for cls, fields in (
        (ast.Name, ("id",)), (ast.Attribute, ("attr",)), (ast.Constant, ("value", "kind")),
        (ast.FunctionDef, ("name", "type_comment")), (ast.AsyncFunctionDef, ("name", "type_comment")),
        (ast.ClassDef, ("name",)), (ast.ImportFrom, ("module", "level")), (ast.alias, ("name", "asname")),
        (ast.arg, ("arg", "type_comment")), (ast.keyword, ("arg",)), (ast.Global, ("names",)),
        (ast.Nonlocal, ("names",)), (ast.FormattedValue, ("conversion",)), (ast.ExceptHandler, ("name",)),
        (ast.MatchAs, ("name",)), (ast.MatchStar, ("name",)), (ast.MatchMapping, ("rest",)),
        (ast.MatchClass, ("kwd_attrs",)), (ast.MatchSingleton, ("value",)), (ast.comprehension, ("is_async",)),
        (ast.AnnAssign, ("simple",)), (ast.Assign, ("type_comment",)), (ast.For, ("type_comment",)),
        (ast.AsyncFor, ("type_comment",)), (ast.With, ("type_comment",)), (ast.AsyncWith, ("type_comment",)),
        (ast.TypeIgnore, ("lineno", "tag")))}
_LEAF_FIELDS = frozenset({"ctx", "op", "ops"})  # an expression's context, an operator: only `LEAVES` in them
_NODE_FIELDS: dict[type, tuple[str, ...]] = {}  # class -> the fields that may hold a node, in field order
_INNER_FIELDS: dict[type, tuple[str, ...]] = {}  # the same without `_LEAF_FIELDS`


def _fields(cls: type, table: dict[type, tuple[str, ...]]) -> tuple[str, ...]:
    found = table.get(cls)
    if found is None:
        skipped = _SCALARS.get(cls, frozenset()) | (_LEAF_FIELDS if table is _INNER_FIELDS else frozenset())
        found = table[cls] = tuple(f for f in getattr(cls, "_fields", ()) if f not in skipped)
    return found


def _children(node: ast.AST, table: dict[type, tuple[str, ...]]) -> list[ast.AST]:
    out: list[ast.AST] = []
    for name in table.get(type(node)) or _fields(type(node), table):
        value = getattr(node, name, None)
        if type(value) is list:
            out.extend([v for v in value if isinstance(v, ast.AST)])
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


def children(node: ast.AST) -> list[ast.AST]:
    """Child nodes in field order; several times faster than ast.iter_child_nodes."""
    return _children(node, _NODE_FIELDS)


def branches(node: ast.AST) -> list[ast.AST]:
    """`children` without expression contexts and operators (for visitors that look at neither)."""
    return _children(node, _INNER_FIELDS)


def walk_tree(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under `node` (itself first), as `ast.walk` yields them, several times faster (`children`)."""
    todo = deque([node])
    while todo:
        node = todo.popleft()
        todo.extend(children(node))
        yield node


# nodes with no child but leaves (a name's context): skipped by `walk_inner`
LEAVES = (ast.Name, ast.Constant, ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
_LEAF_TYPES = frozenset(sub for base in LEAVES for sub in (base, *base.__subclasses__()))  # concrete classes


def inner_children(node: ast.AST) -> list[ast.AST]:
    """`children` without the `LEAVES`, in the same order."""
    out: list[ast.AST] = []
    leaves = _LEAF_TYPES
    for name in _INNER_FIELDS.get(type(node)) or _fields(type(node), _INNER_FIELDS):
        value = getattr(node, name, None)
        if type(value) is list:
            out.extend([v for v in value if type(v) not in leaves and isinstance(v, ast.AST)])
        elif type(value) not in leaves and isinstance(value, ast.AST):
            out.append(value)
    return out


def walk_inner(node: ast.AST) -> Iterator[ast.AST]:
    """`walk_tree` without the `LEAVES` (for walks that look at none of them): the other nodes in the same order."""
    todo = deque([node])
    pop, extend = todo.popleft, todo.extend
    while todo:
        node = pop()
        extend(inner_children(node))
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
