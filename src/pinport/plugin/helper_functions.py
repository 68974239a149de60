"""Plugin functions that change how their callers read, found before a module is walked.

A call `reg(Host, Mine)` installs an out-of-tree replacement when `reg` calls `base.register_oot(cls)`
on its parameters; `install(name, mod)` is a `sys.modules` stand-in when it stores its argument
there; `install(handler)` replaces methods on the object it is handed when it assigns `handler.m = fn`; a function every call of which sits under a host-feature probe (`find_spec`, `hasattr`,
`getattr(..., None)`) only runs on the host versions that have what it uses.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..model.index import CodeIndex
from ..model.nodes import inner_children, statements, walk_tree
from ..model.parse import dotted, resolve_relative

OOT = "register_oot"


def oot_helper(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int] | None:
    """For `def reg(base, cls): ... base.register_oot(cls)`: the positions of base and cls."""
    params = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
    for sub in walk_tree(node):
        if (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == OOT
                and isinstance(sub.func.value, ast.Name) and sub.args and isinstance(sub.args[0], ast.Name)
                and sub.func.value.id in params and sub.args[0].id in params):
            return params.index(sub.func.value.id), params.index(sub.args[0].id)
    return None


def stand_in_helpers(index: CodeIndex, module: str) -> dict[str, int]:
    """Functions of a plugin module that install their argument into sys.modules: name -> position
    (kept per module: every module importing from it asks)."""
    return index.module_memo(module, "stand-in-helpers", lambda: _stand_in_helpers(index, module))


def _stand_in_helpers(index: CodeIndex, module: str) -> dict[str, int]:
    tree = index.parsed(module) if module in index.modules else None
    out: dict[str, int] = {}
    for stmt in tree.body if tree is not None and "sys.modules" in index.source(module) else ():
        if not isinstance(stmt, ast.FunctionDef):
            continue
        params = [a.arg for a in stmt.args.args]
        for sub in walk_tree(stmt):
            key = None
            if isinstance(sub, ast.Call) and dotted(sub.func) in ("sys.modules.setdefault",) and sub.args:
                key = sub.args[0]
            elif isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Store) and dotted(sub.value) == "sys.modules":
                key = sub.slice
            if isinstance(key, ast.Name) and key.id in params:
                out[stmt.name] = params.index(key.id)
                break
    return out


@dataclass(frozen=True)
class _Imported:
    module: str


def plugin_imports(tree: ast.Module, module: str, index: CodeIndex) -> list[_Imported]:
    """Plugin modules a module imports names from (`from pkg.loader import helper`)."""
    out = []
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom):
            base = resolve_relative(module, index.is_package(module), stmt.level, stmt.module)
            if base in index.modules:
                out.append(_Imported(base))
    return out


_PROBES = ("find_spec", "hasattr", "getattr")


def probe_guarded(tree: ast.Module) -> set[str]:
    """Names of functions that the module calls (`f(...)`, `self.f(...)`) only inside the body of an
    `if` whose test probes for a host feature (`find_spec(...)`, `hasattr(...)`, `getattr(..., None)`):
    the plugin already handles the host versions that lack what the function uses."""
    if not any(_probes(stmt.test) for stmt in statements(tree.body) if isinstance(stmt, ast.If)):
        return set()  # nothing is guarded: the call sites need not be walked
    sites: dict[str, list[bool]] = {}

    def walk(node: ast.AST, probed: bool) -> None:
        if isinstance(node, ast.If):
            test_probes = _probes(node.test)
            walk(node.test, probed)
            for stmt in node.body:
                walk(stmt, probed or test_probes)
            for stmt in node.orelse:
                walk(stmt, probed)
            return
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else (
                func.attr if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.value.id in ("self", "cls") else "")
            if name:
                sites.setdefault(name, []).append(probed)
        for child in inner_children(node):
            walk(child, probed)

    walk(tree, False)
    return {name for name, guarded in sites.items() if guarded and all(guarded)}


def _probes(test: ast.expr) -> bool:
    return any(isinstance(n, ast.Call) and dotted(n.func).rpartition(".")[2] in _PROBES for n in walk_tree(test))



FnNode = ast.FunctionDef | ast.AsyncFunctionDef


def instance_method_setters(node: FnNode) -> dict[int, dict[str, FnNode | ast.Lambda]]:
    """For `def install(obj, ...): ... obj.meth = fn` (fn a def nested in it, or a lambda): the position
    of `obj` -> {meth: the function installed}. `obj.meth(...)` then calls that function, unbound."""
    params = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
    nested = {s.name: s for s in statements(node.body) if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)}
    out: dict[int, dict[str, FnNode | ast.Lambda]] = {}
    for stmt in statements(node.body):
        if not isinstance(stmt, ast.Assign):
            continue
        value = stmt.value
        fn = value if isinstance(value, ast.Lambda) else nested.get(value.id) if isinstance(value, ast.Name) else None
        for target in stmt.targets if fn is not None else ():
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id in params:
                out.setdefault(params.index(target.value.id), {})[target.attr] = fn
    return out
