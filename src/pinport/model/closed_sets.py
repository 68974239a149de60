"""Closed sets of strings a host accepts: `Literal[...]` types (through aliases), Enum members, and the
tuples/lists/sets/dicts of names a host function checks a parameter against.

A plugin that passes, assigns or compares a string the host's set no longer holds breaks quietly: a
pydantic config rejects it, a `raise` fires, or a comparison can never be true again. These are
host-only facts, read from the parsed trees and memoised on the `HostView` (both runs of a check,
and every check, share them). Anything not certainly closed (a union with `str`, a computed set)
yields None, never a guess.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from .binding import DATACLASS_DECORATORS
from .host import HostView
from .inference import function_node
from .nodes import walk_tree
from .resolve import ATTRIBUTE, CLASS, METHOD, Symbol
from .summary import ClassAttr, ClassInfo, FunctionInfo

_PLAIN_DATACLASS = {"dataclass", "dataclasses.dataclass"}  # no validation of Literal fields
_DEPTH = 8  # aliases followed (`A = Literal[B, "x"]`, B another alias): a cycle guard


def literal_values(view: HostView, module: str, text: str | None) -> frozenset[str] | None:
    """The strings a type annotation written in `module` admits, when it is a closed set: `Literal[...]`,
    aliases of it, unions of those (and None); None for anything open (`str`, `Literal[...] | str`)."""
    if not text:
        return None
    return view.memo(("literal", module, text), lambda: _literal_text(view, module, text, 0))


def _literal_text(view: HostView, module: str, text: str, depth: int) -> frozenset[str] | None:
    try:
        node = ast.parse(text.strip().strip("'\"") if text.strip()[:1] in "'\"" else text, mode="eval").body
    except SyntaxError:
        return None
    return _literal_node(view, module, node, depth)


def _literal_node(view: HostView, module: str, node: ast.AST, depth: int) -> frozenset[str] | None:
    if depth > _DEPTH:
        return None
    if isinstance(node, ast.Constant):
        if node.value is None:
            return frozenset()
        return frozenset({node.value}) if isinstance(node.value, str) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _literal_node(view, module, node.left, depth), _literal_node(view, module, node.right, depth)
        return left | right if left is not None and right is not None else None
    if isinstance(node, ast.Subscript):
        head = _last_name(node.value)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head == "Literal":
            return _union(view, module, items, depth, literal=True)
        if head in ("Optional", "Union"):
            return _union(view, module, items, depth, literal=False)
        return None
    if isinstance(node, ast.Name | ast.Attribute):
        if _last_name(node) == "None":
            return frozenset()
        sym = view.resolver.resolve_in(module, ast.unparse(node))
        value = _alias_value(view, sym) if sym is not None else None
        return _literal_node(view, sym.module, value, depth + 1) if value is not None and sym is not None else None
    return None


def _union(view: HostView, module: str, items: list[ast.expr], depth: int, *, literal: bool) -> frozenset[str] | None:
    out: set[str] = set()
    for item in items:
        if literal and isinstance(item, ast.Constant) and not isinstance(item.value, str):
            continue  # Literal[1, "a"]: only the strings matter here
        found = _literal_node(view, module, item, depth)
        if found is None:
            return None
        out |= found
    return frozenset(out)


def _last_name(node: ast.AST) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _alias_value(view: HostView, sym: Symbol) -> ast.expr | None:
    """The value of a module-level `X = ...` / `X: TypeAlias = ...` / `type X = ...` a symbol names."""
    if sym.kind != ATTRIBUTE or not sym.module:
        return None
    stmt = _module_statements(view, sym.module).get(sym.line)
    if isinstance(stmt, ast.Assign | ast.AnnAssign):
        return stmt.value
    if isinstance(stmt, ast.TypeAlias):
        return stmt.value
    return None


def _module_statements(view: HostView, module: str) -> dict[int, ast.stmt]:
    """Module-level statements by first line (module body and its if/try blocks)."""
    def build() -> dict[int, ast.stmt]:
        tree = view.index.parsed(module)
        out: dict[int, ast.stmt] = {}
        stack: list[ast.stmt] = list(tree.body) if tree is not None else []
        while stack:
            node = stack.pop()
            out[node.lineno] = node
            if isinstance(node, ast.If | ast.Try):
                stack.extend((*node.body, *node.orelse, *getattr(node, "finalbody", ())))
                for handler in getattr(node, "handlers", ()):
                    stack.extend(handler.body)
        return out
    return view.memo(("statements", module), build)


# -- members and parameters ------------------------------------------------------------------------
def member_values(view: HostView, member: Symbol) -> frozenset[str] | None:
    """The closed set a class attribute or dataclass field is annotated with (`method: Method | None`)."""
    if not isinstance(member.obj, ClassAttr):
        return None
    return literal_values(view, member.module, member.obj.annotation)


class Accepted(NamedTuple):
    """The closed set a parameter accepts, and whether a call outside it raises (a function body that
    checks it, a validated config) rather than only contradicting an annotation."""

    values: frozenset[str]
    enforced: bool


def parameter_values(view: HostView, callee: Symbol, name: str) -> Accepted | None:
    """The closed set a host callable accepts for parameter `name`: for a class, the dataclass field a
    constructor synthesises (enforced when a pydantic-style decorator validates it) or its `__init__`'s;
    for a function, its annotation, else the names its body checks it against (`if name not in NAMES:
    raise`, `assert name in (...)`, `NAMES[name]`: enforced)."""
    if callee.kind == CLASS:
        for owner in view.resolver.mro(callee):
            info = owner.obj
            if not isinstance(info, ClassInfo):
                continue
            if name in info.attributes:
                values = literal_values(view, owner.module, info.attributes[name].annotation)
                return Accepted(values, _validated(view, callee)) if values is not None else None
            if "__init__" in info.methods:
                init = Symbol(METHOD, f"{owner.path}.__init__", owner.module, info.methods["__init__"].line,
                              info.methods["__init__"], owner.path)
                return parameter_values(view, init, name)
        return None
    fn = callee.obj
    if not isinstance(fn, FunctionInfo) or not callee.module:
        return None
    param = fn.signature.get(name)
    if param is None:
        return None
    annotated = literal_values(view, callee.module, param.annotation)
    if annotated is not None:
        return Accepted(annotated, False)
    checked = view.memo(("checked", callee.path, name), lambda: _checked_values(view, callee, name))
    return Accepted(checked, True) if checked is not None else None


def _validated(view: HostView, cls: Symbol) -> bool:
    """Whether constructing the class validates its fields (a pydantic dataclass or config, not a plain one)."""
    return any(isinstance(owner.obj, ClassInfo) and any(d in DATACLASS_DECORATORS and d not in _PLAIN_DATACLASS
                                                        for d in owner.obj.decorators)
               for owner in view.resolver.mro(cls))


def _checked_values(view: HostView, callee: Symbol, name: str) -> frozenset[str] | None:
    """The names a function body checks parameter `name` against, where a miss raises."""
    assert isinstance(callee.obj, FunctionInfo)
    node = function_node(view.index, callee.module, callee.obj.line)
    if node is None:
        return None
    for n in walk_tree(node):
        test = n.test if isinstance(n, ast.If | ast.Assert) else None
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name) \
                and test.left.id == name and isinstance(test.ops[0], ast.In | ast.NotIn):
            raises = isinstance(n, ast.Assert) or (
                isinstance(test.ops[0], ast.NotIn) and any(isinstance(s, ast.Raise) for s in n.body))
            if raises:
                return _string_collection(view, callee.module, test.comparators[0])
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Name) and n.slice.id == name \
                and isinstance(n.ctx, ast.Load):
            found = _string_collection(view, callee.module, n.value, keys_only=True)
            if found is not None:
                return found
    return None


def _string_collection(view: HostView, module: str, node: ast.AST, keys_only: bool = False) -> frozenset[str] | None:
    """The strings a literal tuple/list/set/dict (its keys), or a module constant holding one, contains."""
    if isinstance(node, ast.Name | ast.Attribute):
        sym = view.resolver.resolve_in(module, ast.unparse(node))
        value = _alias_value(view, sym) if sym is not None else None
        return _string_collection(view, sym.module, value, keys_only) if value is not None and sym else None
    if isinstance(node, ast.Call) and _last_name(node.func) in ("frozenset", "set", "tuple") and len(node.args) == 1:
        return _string_collection(view, module, node.args[0], keys_only)
    if isinstance(node, ast.Dict):
        items = node.keys
    elif isinstance(node, ast.Tuple | ast.List | ast.Set) and not keys_only:
        items = node.elts
    else:
        return None
    if not items or not all(isinstance(i, ast.Constant) and isinstance(i.value, str) for i in items):
        return None
    return frozenset(i.value for i in items)  # type: ignore[union-attr]


def enum_members(view: HostView, cls: Symbol) -> tuple[frozenset[str], frozenset[str]] | None:
    """(member names, string values) of a host Enum class; None when `cls` is not one."""
    info = cls.obj
    if cls.kind != CLASS or not isinstance(info, ClassInfo):
        return None
    if not any(b.rpartition(".")[2] in ("Enum", "StrEnum", "IntEnum") for b in info.bases):
        return None
    names, values = set(), set()
    for attr in info.attributes.values():
        if attr.name.startswith("_") or attr.annotation:
            continue
        names.add(attr.name)
        try:
            value = ast.literal_eval(attr.value) if attr.value else None
        except (ValueError, SyntaxError):
            value = None
        if isinstance(value, str):
            values.add(value)
    return frozenset(names), frozenset(values)
