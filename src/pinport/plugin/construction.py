"""Which host registries build the plugin classes handed to them: a class the host only files is never built there.

A class decorator of the host hands the class to host code, so the host may build it anywhere
(`plugin.reach.Lineage`). Some only file it: vLLM's `@CustomOp.register(name)` sets attributes
on the class, stores it in a module-level table keyed by name and returns it, and the host
reads that table only to test whether a name is in it. Such a decorator builds nothing, and
the class's constructor is reached only where plugin code builds it. Decided from the host's
sources (parsed, never run): the decorator's body, then every host read of its table.
"""

from __future__ import annotations

import ast

from ..model.host import HostView
from ..model.nodes import walk_tree
from ..model.resolve import FUNCTION, METHOD
from .model import PluginModel

CALLED = "()"  # suffix of a decorator path written as a call (`@Registry.register("name")`): a decorator factory
_TESTS = ("isinstance", "issubclass", "len")  # calls that look at a class or a table and build nothing


def decorator_path(plugin: PluginModel, module: str, node: ast.expr) -> str:
    """The absolute path of what a class decorator in a plugin module calls (`@A.b(...)` -> `pkg.A.b()`, the
    `CALLED` suffix marking a factory's call); '' when it does not resolve through the module's names."""
    called = isinstance(node, ast.Call)
    node = node.func if isinstance(node, ast.Call) else node
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    head = plugin.names.binding_path(module, node.id)
    if head is None:
        return ""
    path = plugin.names.follow(".".join([head, *reversed(attrs)]))
    return path + (CALLED if called else "")


def files_only(view: HostView, decorators: tuple[str, ...]) -> bool:
    """Whether every one of `decorators` (paths from `decorator_path`) is a host registrar that only files
    the class it decorates, in tables the host never takes a class out of (see the module docstring)."""
    return all(view.memo(("files-only", path), lambda p=path: _files_only(view, p)) for path in decorators)


def _files_only(view: HostView, path: str) -> bool:
    called = path.endswith(CALLED)
    sym = view.resolve(path.removesuffix(CALLED)) if path else None
    fn = view.function_node(sym) if sym is not None and sym.kind in (FUNCTION, METHOD) else None
    if fn is None or sym is None or not sym.module:
        return False
    decorators = _returned_decorators(fn) if called else [fn] if sym.kind == FUNCTION else []
    if not decorators:
        return False
    tree = view.index.parsed(sym.module)
    module_names = _module_names(tree) if tree is not None else set()
    tables: set[str] = set()
    for inner in decorators:
        found = _filed_in(inner, module_names)
        if found is None:
            return False
        tables |= found
    return all(view.memo(("table-read-only", sym.module, t), lambda t=t: _never_taken_out(view, t)) for t in tables)


def _returned_decorators(factory: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.FunctionDef]:
    """The functions a decorator factory defines in its body and returns (or returns applied): every
    `return` must hand out one of them, else what the factory gives is not followed (empty)."""
    defs = {n.name: n for n in factory.body if isinstance(n, ast.FunctionDef)}
    out: list[ast.FunctionDef] = []
    for node in _own_nodes(factory):
        if not isinstance(node, ast.Return):
            continue
        value = node.value.func if isinstance(node.value, ast.Call) else node.value
        if not isinstance(value, ast.Name) or value.id not in defs:
            return []
        if defs[value.id] not in out:
            out.append(defs[value.id])
    return out


def _own_nodes(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """The nodes of a function's body outside the functions and classes it defines (their returns are theirs)."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))
    return out


def _module_names(tree: ast.Module) -> set[str]:
    """Names a host module assigns at its top level (its tables)."""
    out: set[str] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return out


def _filed_in(fn: ast.FunctionDef, module_names: set[str]) -> set[str] | None:
    """The module tables a decorator stores its class in (`TABLE[key] = cls`), when it does nothing else with
    the class: sets attributes on it, reads them, tests it, returns it. None when it may build or pass it on."""
    args = fn.args.posonlyargs + fn.args.args
    if len(args) != 1 or fn.args.vararg or fn.args.kwarg:
        return None
    name = args[0].arg
    parent = {id(c): n for n in walk_tree(fn) for c in ast.iter_child_nodes(n)}
    tables: set[str] = set()
    for node in walk_tree(fn):
        if not (isinstance(node, ast.Name) and node.id == name) or node is fn:
            continue
        up = parent.get(id(node))
        if isinstance(up, ast.Attribute) and up.value is node:
            if isinstance(up.ctx, ast.Load) and isinstance(parent.get(id(up)), ast.Call) and \
                    parent[id(up)].func is up:  # type: ignore[attr-defined]
                return None  # `cls.create(...)`: a method of the class may build one
            continue  # `cls.name = name`, `cls.__name__`
        if isinstance(up, ast.Return):
            continue  # handed back to the class statement: the name stays the plugin's class
        if isinstance(up, ast.Call) and node is not up.func and isinstance(up.func, ast.Name) and up.func.id in _TESTS:
            continue
        if isinstance(up, ast.Assign) and up.value is node and len(up.targets) == 1 and isinstance(
                target := up.targets[0], ast.Subscript) and isinstance(target.value, ast.Name) \
                and target.value.id in module_names:
            tables.add(target.value.id)
            continue
        return None  # called, passed, kept elsewhere
    return tables


def _never_taken_out(view: HostView, table: str) -> bool:
    """Whether no host code takes a value out of the module table `table`: every read of a name or
    attribute so spelled tests membership (`k in table`), counts it, lists its keys or stores into it.
    A table bound under another name (`import ... as`) is not followed: it counts as taken out."""
    for module in view.index.grep(table, view.resolver.top):
        tree = view.index.parsed(module)
        if tree is None:
            return False
        parent = view.index.module_memo(module, "construction-parents", lambda t=tree: {
            id(c): n for n in walk_tree(t) for c in ast.iter_child_nodes(n)})
        for node in walk_tree(tree):
            if isinstance(node, ast.ImportFrom | ast.Import) and any(
                    a.name.rpartition(".")[2] == table and a.asname not in (None, table) for a in node.names):
                return False
            named = isinstance(node, ast.Name) and node.id == table or \
                isinstance(node, ast.Attribute) and node.attr == table
            if named and isinstance(node.ctx, ast.Load) and not _only_looked_at(node, parent):  # type: ignore[union-attr]
                return False
    return True


def _only_looked_at(node: ast.expr, parent: dict[int, ast.AST]) -> bool:
    up = parent.get(id(node))
    if isinstance(up, ast.Compare):
        return node in up.comparators and all(isinstance(op, ast.In | ast.NotIn) for op in up.ops)
    if isinstance(up, ast.Subscript) and up.value is node:
        return isinstance(up.ctx, ast.Store | ast.Del)
    if isinstance(up, ast.Call) and node is not up.func:
        return isinstance(up.func, ast.Name) and up.func.id in _TESTS
    if isinstance(up, ast.Attribute) and up.attr == "keys":
        call = parent.get(id(up))
        return isinstance(call, ast.Call) and call.func is up
    return False
