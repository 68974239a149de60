"""Units of host code, statically: the functions, methods and loose statements calls live in.

`walk_unit` walks a unit once for its calls, local imports, assignments and guards. Everything
here reads the parsed trees an index hands out (`CodeIndex.parsed`) and memoises per index, so
two checks asking about the same file pay once.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import NamedTuple

from .index import CodeIndex
from .nodes import inner_children, walk_tree
from .parse import resolve_relative


def source_lines(index: CodeIndex, module: str) -> list[str]:
    """A module's lines (split once, by the index)."""
    return index.lines(module)


# -- units --------------------------------------------------------------------------------------
class Unit(NamedTuple):
    """A piece of code calls live in: a top-level function or method, or a module/class body."""

    qualname: str  # "Cls.meth", "func", "<module>", "Cls" (class-body statements)
    cls: str  # qualified name of the enclosing class, "" at module level
    node: ast.FunctionDef | ast.AsyncFunctionDef | None  # None for module and class bodies
    body: tuple[ast.AST, ...]  # statements (and, for loose code, the tests of if/with blocks)


def iter_units(tree: ast.Module) -> Iterator[Unit]:
    """Every function and method (nested defs stay inside their parent), then the loose statements.

    Defs inside module- or class-level `if`/`try`/`with` blocks are units of their own too;
    the blocks' other statements (and their tests) stay with the enclosing body.
    """
    loose: tuple[ast.AST, ...] = ()
    stack: list[tuple[list[ast.stmt], str]] = [(tree.body, "")]
    while stack:
        body, cls = stack.pop()
        stray: list[ast.AST] = []
        pending = list(reversed(body))
        while pending:
            node = pending.pop()
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield Unit(f"{cls}.{node.name}" if cls else node.name, cls, node, (node,))
            elif isinstance(node, ast.ClassDef):
                stack.append((node.body, f"{cls}.{node.name}" if cls else node.name))
                stray.extend((*node.decorator_list, *node.bases, *node.keywords))
            elif isinstance(node, ast.If | ast.Try | ast.With):
                stray.extend([node.test] if isinstance(node, ast.If) else
                             [item.context_expr for item in getattr(node, "items", [])])
                blocks = [node.body, getattr(node, "orelse", []), getattr(node, "finalbody", []),
                          *(h.body for h in getattr(node, "handlers", []))]
                pending.extend(reversed([stmt for block in blocks for stmt in block]))
            else:
                stray.append(node)
        if cls:
            if stray:
                yield Unit(cls, cls, None, tuple(stray))
        else:
            loose = tuple(stray)
    if loose:
        yield Unit("<module>", "", None, loose)


def call_name(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def spans(unit: Unit, line: int) -> bool:
    """Whether a unit's statements cover a line."""
    return any(getattr(n, "lineno", 0) <= line <= (getattr(n, "end_lineno", None) or getattr(n, "lineno", 0))
               for n in unit.body)


# -- one walk over a unit -----------------------------------------------------------------------

class UnitWalk(NamedTuple):
    """What one walk over a unit finds: calls, local imports, assignments, shadowed names, unpackings."""

    calls: tuple[ast.Call, ...]  # in source order
    imports: tuple[ast.Import | ast.ImportFrom, ...]
    assigned: tuple[tuple[int, int, str, ast.AST | None, ast.AST | None], ...]  # line, col, name, value, annotation
    shadowed: frozenset[str]  # nested parameters, except-handler names: never typed
    unpacked: dict[int, int]  # id(call) -> names in `a, b = call(...)`
    guarded: tuple[tuple[int, int, str], ...] = ()  # (first, last line, why): version tests, try/except TypeError
    nested_supers: frozenset[int] = frozenset()  # id() of `super()` calls in a class defined inside the unit
    # (first, last line of the handlers, the calls of the `try:` body) of a try/except TypeError: the handlers
    # run only when a body call fails to bind (a fallback for other host versions)
    fallbacks: tuple[tuple[int, int, tuple[ast.Call, ...]], ...] = ()

    def tried_calls(self, line: int) -> tuple[ast.Call, ...]:
        """The calls of the `try:` body whose TypeError handler holds this line (() outside any)."""
        return next((calls for first, last, calls in self.fallbacks if first <= line <= last), ())

    def guard_at(self, line: int) -> str:
        """Why code at this line may run only on some host versions ('' when nothing guards it)."""
        return next((why for first, last, why in self.guarded if first <= line <= last), "")


def module_units(index: CodeIndex, module: str) -> list[Unit]:
    """The units of a parsed module (kept per module on the index; empty when it does not parse)."""
    def build() -> list[Unit]:
        tree = index.parsed(module)
        return list(iter_units(tree)) if tree is not None else []
    return index.module_memo(module, "units", build)


def walk_unit(index: CodeIndex, module: str, unit: Unit) -> UnitWalk:
    """One walk over a unit (kept on the index): everything inference and call checks need."""
    key = ("unit", unit.qualname, getattr(unit.body[0], "lineno", 0) if unit.body else 0)
    return index.module_memo(module, key, lambda: _walk_unit(unit))


_WALKED = frozenset({ast.Call, ast.Assign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.comprehension, ast.withitem,
                     ast.NamedExpr, ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                     ast.ExceptHandler, ast.If, ast.IfExp, ast.Try, ast.ClassDef})  # the node types `_walk_unit` looks at


def _walk_unit(unit: Unit) -> UnitWalk:
    calls: list[ast.Call] = []
    imports: list[ast.Import | ast.ImportFrom] = []
    assigned: list[tuple[int, int, str, ast.AST | None, ast.AST | None]] = []
    shadowed: set[str] = set()
    unpacked: dict[int, int] = {}
    guarded: list[tuple[int, int, str]] = []
    nested_supers: set[int] = set()
    fallbacks: list[tuple[int, int, tuple[ast.Call, ...]]] = []
    stack: list[ast.AST] = list(unit.body)
    while stack:
        n = stack.pop()
        stack.extend(inner_children(n))  # the leaves (names, constants, operators) are none of the kinds below
        if type(n) not in _WALKED:
            continue
        if isinstance(n, ast.Call):
            calls.append(n)
        elif isinstance(n, ast.Assign):
            for t in n.targets:
                for name in _target_names(t):
                    assigned.append((n.lineno, n.col_offset, name.id, n.value if t is name else None, None))
            target = n.targets[0]
            if len(n.targets) == 1 and isinstance(n.value, ast.Call) and isinstance(target, ast.Tuple | ast.List) \
                    and not any(isinstance(e, ast.Starred) for e in target.elts):
                unpacked[id(n.value)] = len(target.elts)
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            assigned.append((n.lineno, n.col_offset, n.target.id, n.value, n.annotation))
        elif isinstance(n, ast.For | ast.AsyncFor | ast.comprehension | ast.withitem | ast.NamedExpr):
            target = n.optional_vars if isinstance(n, ast.withitem) else n.target
            line = getattr(n, "lineno", 0) or getattr(target, "lineno", 0)
            assigned.extend((line, 0, name.id, None, None) for name in _target_names(target))
        elif isinstance(n, ast.Import | ast.ImportFrom):
            imports.append(n)
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and n is not unit.node:
            shadowed.update(a.arg for a in (*n.args.posonlyargs, *n.args.args, *n.args.kwonlyargs,
                                            n.args.vararg, n.args.kwarg) if a is not None)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            shadowed.add(n.name)
        elif isinstance(n, ast.ClassDef):  # its methods' `super()` looks in its own bases, not the unit's class
            nested_supers.update(id(c) for c in walk_tree(n) if isinstance(c, ast.Call) and isinstance(
                c.func, ast.Name) and c.func.id == "super")
        if isinstance(n, ast.If | ast.IfExp) and _mentions_version(n.test):
            guarded.append((n.lineno, n.end_lineno or n.lineno, "a version test"))
        elif isinstance(n, ast.Try) and n.body and any(_catches_type_error(h) for h in n.handlers):
            guarded.append((n.lineno, n.end_lineno or n.lineno, "try/except TypeError"))  # both forms
            fallbacks.append((n.handlers[0].lineno, n.handlers[-1].end_lineno or n.lineno, tuple(
                c for stmt in n.body for c in walk_tree(stmt) if isinstance(c, ast.Call))))
    calls.sort(key=lambda c: (c.lineno, c.col_offset))
    imports.sort(key=lambda i: i.lineno)
    assigned.sort(key=lambda a: (a[0], a[1]))
    return UnitWalk(tuple(calls), tuple(imports), tuple(assigned), frozenset(shadowed), unpacked,
                     tuple(sorted(guarded)), frozenset(nested_supers), tuple(fallbacks))


def _mentions_version(test: ast.AST) -> bool:
    """Whether a condition looks like a host-version test (`vllm_version_is(...)`, `VERSION >= ...`)."""
    for n in walk_tree(test):
        word = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else ""
        if "version" in word.lower():
            return True
    return False


def _catches_type_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(k is None or decorator_name(k) in ("TypeError", "Exception", "BaseException") for k in kinds)


def local_imports(facts: UnitWalk, module: str, is_package: bool) -> dict[str, str]:
    """Name -> absolute dotted path for every import inside a function body."""
    out: dict[str, str] = {}
    for n in facts.imports:
        if isinstance(n, ast.Import):
            for a in n.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        else:
            base = resolve_relative(module, is_package, n.level, n.module)
            for a in n.names:
                if a.name != "*":
                    out[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
    return out


def decorator_name(node: ast.AST) -> str:
    """The last name of a decorator or exception expression (`a.b(...)` -> "b"); "" for anything else."""
    while isinstance(node, ast.Call):
        node = node.func
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _target_names(target: ast.AST | None) -> Iterator[ast.Name]:
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, ast.Tuple | ast.List):
        for elt in target.elts:
            yield from _target_names(elt.value if isinstance(elt, ast.Starred) else elt)
