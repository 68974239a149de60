"""Which plugin classes host code can build: the host may get a class and still never build it.

`plugin.reach.Lineage` counts a class as handed to the host wherever plugin code names it as a
value; a constructor mismatch then counts as reachable. These rules read, in the host's sources
(parsed, never run) or the plugin's, what is done with the class where it goes:

- a host class decorator that only files it: vLLM's `@CustomOp.register(name)` sets attributes on
  the class, stores it in a module table and returns it, and the host only tests names against
  that table; `@support_torch_compile` hands it to a helper that wraps its `__init__` and returns
  it. Neither builds one (`files_only`, judged per host version).
- a host function that only tests against it: `items.get_items("image", (P, Q))` uses the tuple
  as isinstance's type (`only_tested_against`, over every host `def` of that name).
- a local factory: `cls = P if c else Q` or `table = {"a": P}; cls = table[k]`, only called in
  that function (`built_where_bound`); a plugin base's constructor that only calls the class handed
  to it by keyword (`super().__init__(layer_type=P)`, `built_by_callee`). The plugin builds it there.
"""

from __future__ import annotations

import ast

from ..model.host import HostView
from ..model.nodes import walk_tree
from ..model.resolve import FUNCTION, METHOD
from .model import PluginModel

CALLED = "()"  # suffix of a decorator path written as a call (`@Registry.register("name")`): a decorator factory
_LOOKS = ("isinstance", "issubclass", "len")  # calls that look at a class or a table, whatever the argument's place
_TESTS = (*_LOOKS, "hasattr", "setattr")  # and those that only do so for their first argument


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
    tree = view.index.parsed(sym.module) if fn is not None and sym is not None and sym.module else None
    if fn is None or tree is None:
        return False
    decorators = _returned_decorators(fn) if called else [fn] if sym.kind == FUNCTION else []
    if not decorators:
        return False
    scope = _Scope(tree, view.index.module_memo(sym.module, "construction-parents", lambda: _parents(tree)))
    tables: set[str] = set()
    for inner in decorators:
        found = _filed_in(scope, inner, 0, 0)
        if found is None:
            return False
        tables |= found
    return all(view.memo(("table-read-only", sym.module, t), lambda t=t: _never_taken_out(view, t)) for t in tables)


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    return {id(c): n for n in walk_tree(tree) for c in ast.iter_child_nodes(n)}


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


class _Scope:
    """A host module's tree as a decorator's body is read in it: its tables (top-level names), its loggers
    (top-level names bound to `init_logger(...)`, `logging.getLogger(...)`) and where each node sits."""

    def __init__(self, tree: ast.Module, parent: dict[int, ast.AST]) -> None:
        self.tree, self.parent = tree, parent
        self.names: set[str] = set()
        self.loggers: set[str] = set()
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, ast.AnnAssign) else []
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            self.names |= names
            value = getattr(node, "value", None)
            func = value.func if isinstance(value, ast.Call) else None
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if called.lower().endswith("logger"):
                self.loggers |= names

    def function(self, at: ast.AST, name: str) -> ast.FunctionDef | None:
        """The function `name` a call at `at` calls: defined in an enclosing function's body, or at top level."""
        up = self.parent.get(id(at))
        while up is not None:
            body = up.body if isinstance(up, ast.FunctionDef | ast.AsyncFunctionDef | ast.Module) else []
            found = next((n for n in body if isinstance(n, ast.FunctionDef) and n.name == name), None)
            if found is not None:
                return found
            up = self.parent.get(id(up))
        return None


_LOGGING = ("debug", "info", "warning", "error", "exception", "critical", "log", "debug_once", "info_once",
            "warning_once")
_FILING_DEPTH = 3  # host functions a decorator hands the class on to, followed


def _filed_in(scope: _Scope, fn: ast.FunctionDef, position: int, depth: int) -> set[str] | None:
    """The module tables a decorator (or a host function it hands the class to, the class its `position`-th
    parameter) stores the class in (`TABLE[key] = cls`), when it does nothing else with it than set and read
    attributes, test it, log it, return it, or hand it to such a function. None when it may build or keep it."""
    args = fn.args.posonlyargs + fn.args.args
    if depth > _FILING_DEPTH or position >= len(args):
        return None
    name = args[position].arg
    parent = scope.parent
    tables: set[str] = set()
    for node in walk_tree(fn):
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        if not isinstance(node.ctx, ast.Load):
            return None  # rebound: the name no longer stands for the class
        up = parent.get(id(node))
        if isinstance(up, ast.Attribute) and up.value is node:
            if isinstance(up.ctx, ast.Load) and isinstance(call := parent.get(id(up)), ast.Call) and call.func is up:
                return None  # `cls.create(...)`: a method of the class may build one
            continue  # `cls.name = name`, `cls.__bases__`, `old_init = cls.__init__`
        if isinstance(up, ast.Return | ast.FormattedValue | ast.Assert) or isinstance(up, ast.Compare) and all(
                isinstance(op, ast.Is | ast.IsNot) for op in up.ops):
            continue  # handed back to the class statement, formatted, compared by identity
        if isinstance(up, ast.Call) and node is not up.func and node in up.args:
            func = up.func
            if isinstance(func, ast.Name) and func.id in _TESTS and (func.id in _LOOKS or up.args[0] is node):
                continue  # `setattr(cls, k, v)` sets an attribute; `setattr(obj, k, cls)` would keep the class
            if isinstance(func, ast.Attribute) and func.attr in _LOGGING and isinstance(func.value, ast.Name) \
                    and func.value.id in scope.loggers:
                continue  # `logger.debug("...", cls)`: formatted into a message
            callee = scope.function(up, func.id) if isinstance(func, ast.Name) else None
            found = _filed_in(scope, callee, up.args.index(node), depth + 1) if callee is not None \
                and not any(isinstance(a, ast.Starred) for a in up.args) else None
            if found is None:
                return None
            tables |= found
            continue
        if isinstance(up, ast.Assign) and up.value is node and len(up.targets) == 1 and isinstance(
                target := up.targets[0], ast.Subscript) and isinstance(target.value, ast.Name) \
                and target.value.id in scope.names:
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
        parent = view.index.module_memo(module, "construction-parents", lambda t=tree: _parents(t))
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


_LOCAL_DEPTH = 2  # local names a class passes through (`table = {...}`, `cls = table[key]`) before it is built


def built_where_bound(parent: dict[int, ast.AST], node: ast.AST) -> bool:
    """Whether a plugin class named as a value is only built by the function that names it: bound to a local
    name (alone, as a branch of `a if c else b`, `a or b`, or a value of a dict, list or tuple), and every use of
    that name calls it (`cls(...)`) or, for a collection, calls what it takes out (`table[key](...)`,
    `table.get(key)(...)`, or through one more local name). Such a local factory table hands no class to the
    host: the function builds it there (where the instance goes is the construction's business)."""
    collection = False
    up = parent.get(id(node))
    while isinstance(up, ast.IfExp | ast.BoolOp | ast.Dict | ast.List | ast.Tuple):
        if isinstance(up, ast.IfExp) and node is up.test or isinstance(up, ast.Dict) and node not in up.values:
            return False  # a condition, or a key: not the value bound
        collection |= isinstance(up, ast.Dict | ast.List | ast.Tuple)
        node, up = up, parent.get(id(up))
    if not (isinstance(up, ast.Assign) and up.value is node and len(up.targets) == 1
            and isinstance(up.targets[0], ast.Name)):
        return False
    fn = up
    while fn is not None and not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        fn = parent.get(id(fn))
    return fn is not None and _only_built(fn, parent, up.targets[0].id, collection, 0)


def _only_built(fn: ast.FunctionDef | ast.AsyncFunctionDef, parent: dict[int, ast.AST], name: str,
                collection: bool, depth: int) -> bool:
    """Whether a local name of `fn`, bound once, is only called (a collection: only indexed and what it gives called)."""
    if depth > _LOCAL_DEPTH:
        return False
    uses = [n for n in walk_tree(fn) if isinstance(n, ast.Name) and n.id == name]
    if sum(not isinstance(n.ctx, ast.Load) for n in uses) != 1 or any(
            isinstance(n, ast.Global | ast.Nonlocal) and name in n.names for n in walk_tree(fn)):
        return False  # bound again, deleted, or shared beyond the function
    for use in uses:
        if not isinstance(use.ctx, ast.Load):
            continue
        taken: ast.AST = use
        if collection:
            up = parent.get(id(use))
            if isinstance(up, ast.Subscript) and up.value is use and isinstance(up.ctx, ast.Load):
                taken = up
            elif isinstance(up, ast.Attribute) and up.attr == "get" and isinstance(
                    call := parent.get(id(up)), ast.Call) and call.func is up:
                taken = call
            else:
                return False  # iterated, passed, returned: its classes may go anywhere
        up = parent.get(id(taken))
        if isinstance(up, ast.Call) and up.func is taken:
            continue
        if collection and isinstance(up, ast.Assign) and up.value is taken and len(up.targets) == 1 and isinstance(
                up.targets[0], ast.Name) and _only_built(fn, parent, up.targets[0].id, False, depth + 1):
            continue
        return False
    return True


_BUILTIN_MEMBERS = frozenset(name for kind in (object, list, dict, set, tuple, str, bytes, type) for name in dir(kind))


def type_argument(parent: dict[int, ast.AST], node: ast.AST) -> tuple[str, str] | None:
    """(function name, parameter: its position or keyword) when a plugin class is an argument, alone or in a
    tuple of classes, of a call `x.name(...)` or `name(...)` (`mm_items.get_items("image", (P, Q))`); None
    otherwise, or for a member name a builtin type has (`pool.append(P)`: the list keeps it)."""
    up = parent.get(id(node))
    while isinstance(up, ast.Tuple) and isinstance(up.ctx, ast.Load):
        node, up = up, parent.get(id(up))
    keyword = up.arg if isinstance(up, ast.keyword) else None
    if keyword is not None:
        up = parent.get(id(up))
    if not isinstance(up, ast.Call) or node is up.func or any(isinstance(a, ast.Starred) for a in up.args):
        return None
    func = up.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if not name or name in _BUILTIN_MEMBERS:
        return None
    if keyword is not None:
        return name, keyword
    return (name, str(up.args.index(node))) if node in up.args else None


def only_tested_against(view: HostView, arguments: tuple[tuple[str, str], ...]) -> bool:
    """Whether every host function of each name in `arguments` (see `type_argument`) only tests against what its
    parameter there receives (`isinstance(x, typ)`, formatted into a message): it builds no class handed to it.
    Judged over every host `def` of that name, the receiver's type aside (a name the host never defines: False)."""
    return all(view.memo(("only-tested", name, where), lambda n=name, w=where: _only_tested(view, n, w))
               for name, where in arguments)


def _only_tested(view: HostView, name: str, where: str) -> bool:
    defs = 0
    for module in view.index.grep(f"def {name}(", view.resolver.top):
        tree = view.index.parsed(module)
        if tree is None:
            return False
        parent = view.index.module_memo(module, "construction-parents", lambda t=tree: _parents(t))
        for fn in (n for n in walk_tree(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name):
            defs += 1
            method = isinstance(parent.get(id(fn)), ast.ClassDef) and not any(
                isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)
            params = fn.args.posonlyargs + fn.args.args
            if where.isdigit():
                at = int(where) + (1 if method else 0)
                param = params[at].arg if at < len(params) else None
            else:
                param = where if where in {a.arg for a in (*params, *fn.args.kwonlyargs)} else None
            if param is None or not _tests_only(fn, parent, param):
                return False
    return defs > 0


def _tests_only(fn: ast.AST, parent: dict[int, ast.AST], param: str) -> bool:
    """Whether a function's parameter is only the type of `isinstance`/`issubclass` tests or formatted."""
    for node in walk_tree(fn):
        if not (isinstance(node, ast.Name) and node.id == param):
            continue
        if not isinstance(node.ctx, ast.Load):
            return False
        up = parent.get(id(node))
        if isinstance(up, ast.FormattedValue):
            continue
        if isinstance(up, ast.Call) and isinstance(up.func, ast.Name) and up.func.id in ("isinstance", "issubclass") \
                and len(up.args) == 2 and up.args[1] is node:
            continue
        return False
    return True


def built_by_callee(plugin: PluginModel, module: str, parent: dict[int, ast.AST], node: ast.AST) -> bool:
    """Whether a plugin class handed by keyword to the constructor of a plugin base (`super().__init__(...,
    layer_type=P)`) is only built there: that `__init__`'s parameter is only called (`layer_type(...)`, in the
    method or a closure of it), tested against None, or defaulted (`layer_type = layer_type or Default`)."""
    keyword = parent.get(id(node))
    call = parent.get(id(keyword)) if isinstance(keyword, ast.keyword) and keyword.arg else None
    if not isinstance(call, ast.Call) or not (isinstance(f := call.func, ast.Attribute) and f.attr == "__init__"
                                              and isinstance(f.value, ast.Call) and isinstance(f.value.func, ast.Name)
                                              and f.value.func.id == "super" and not f.value.args):
        return False
    cls = parent.get(id(call))
    while cls is not None and not isinstance(cls, ast.ClassDef):
        cls = parent.get(id(cls))
    if cls is None or not cls.bases or not isinstance(cls.bases[0], ast.Name) \
            or parent.get(id(cls)) is not None and not isinstance(parent.get(id(cls)), ast.Module):
        return False
    base = plugin.names.binding_path(module, cls.bases[0].id)
    base = plugin.names.follow(base) if base else ""
    home, _, qual = base.rpartition(".")
    fn = plugin.function_node(home, f"{qual}.__init__") if home in plugin.index.modules else None
    tree = plugin.index.parsed(home) if fn is not None else None
    if fn is None or tree is None or keyword.arg not in {a.arg for a in (*fn.args.args, *fn.args.kwonlyargs)}:
        return False
    return _only_called(fn, plugin.index.module_memo(home, "construction-parents", lambda: _parents(tree)),
                        keyword.arg)


def _only_called(fn: ast.AST, parent: dict[int, ast.AST], name: str) -> bool:
    for node in walk_tree(fn):
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        up = parent.get(id(node))
        if not isinstance(node.ctx, ast.Load):
            # `name = name or Default`: still the class handed in (or the default)
            if not (isinstance(up, ast.Assign) and len(up.targets) == 1 and isinstance(up.value, ast.BoolOp)
                    and isinstance(up.value.op, ast.Or) and isinstance(first := up.value.values[0], ast.Name)
                    and first.id == name):
                return False
            continue
        if isinstance(up, ast.BoolOp) and up.values[0] is node:
            stmt = parent.get(id(up))
            if isinstance(stmt, ast.Assign) and stmt.value is up and len(stmt.targets) == 1 and isinstance(
                    target := stmt.targets[0], ast.Name) and target.id == name:
                continue  # the default taken in place
            return False
        if isinstance(up, ast.Call) and up.func is node or isinstance(up, ast.Compare) and all(
                isinstance(op, ast.Is | ast.IsNot) for op in up.ops):
            continue
        return False
    return True
