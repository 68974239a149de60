"""One pass over one plugin module collecting its host surface: imports (function-local ones too),
patch classes and subclasses, `Target.x = fn` / `setattr` / `del Target.x`, `_orig_x = Target.x`
aliases, string-target registries, out-of-tree replacements, `sys.modules` stand-ins, class-path
strings, environment-table entries and host reads, each under the guard it sits in.
"""

from __future__ import annotations

import ast

from ..config import Settings
from ..findings import Location
from ..model.nodes import inner_children, walk_tree
from ..model.parse import dotted, function_info, resolve_relative, signature_of
from ..model.summary import FunctionInfo
from .helper_functions import OOT
from .records import (
    ClassPath,
    Deletion,
    EnvEntry,
    Guard,
    HostImport,
    HostUse,
    Patch,
    PatchKind,
    PatchTarget,
    Replacement,
    StandIn,
)
from .registries import declared_target, is_declaration, is_type_checking, string_target
from .surface import PluginNames, PluginSurface

_GUARD_EXCEPTIONS = {"ImportError", "ModuleNotFoundError", "AttributeError", "Exception", "BaseException"}
_WRAPPERS = ("staticmethod", "classmethod")
# settings and arguments whose string value is a class the host imports by path
_CLASS_PATH_NAMES = frozenset({"worker_cls", "worker_extension_cls", "scheduler_cls", "class_path",
                               "model_runner_cls", "executor_cls", "platform_cls"})


class SurfaceWalker(ast.NodeVisitor):
    """One pass over one plugin module, with a scope stack for function-local imports."""

    def __init__(self, module: str, rel: str, names: PluginNames, settings: Settings,
                 out: PluginSurface, lines: list[str]) -> None:
        self.module = module
        self.rel = rel
        self.names = names
        self.settings = settings
        self.out = out
        self.lines = lines
        self.units: list[str] = []
        self.kinds: list[str] = []  # "class" or "function", parallel to units
        self.scopes: list[dict[str, str | None]] = []  # function scopes: name -> path (None = local value)
        self.aliases: set[tuple[int, str]] = set()  # (id(scope), name): a local `cls = mod.Host`, for patches only
        self.guards: list[Guard] = []
        self.functions: dict[str, FunctionInfo] = {}  # plugin functions by qualified name
        self.oot_helpers: dict[str, tuple[int, int]] = {}  # helper -> (host param, plugin param) positions
        self.probe_guarded: set[str] = set()  # functions every call of which is under a host probe
        self.constants: dict[str, str] = {}  # module-level NAME = "string"
        self.tops: set[str] = set()  # the plugin's top-level packages: class paths into them are checked
        self.stand_in_helpers: dict[str, int] = {}  # def f(name, mod): sys.modules[name] = mod -> position
        self.checking_bases: dict[str, str | ast.expr] = {}  # base names bound to a host class for type checkers
        self.tables: dict[str, list[tuple[str, ast.expr, ast.AST]]] = {}  # NAME = {"k": Cls}: (key, value, statement)
        self.name_reads: dict[str, list[int]] = {}  # plain name -> the lines reading it, anywhere in the module
        self.handled: list[tuple[str, ...]] = []  # per enclosing `except ImportError:` handler: its try's imports

    # -- helpers -------------------------------------------------------------------------------
    def generic_visit(self, node: ast.AST) -> None:
        """`ast.NodeVisitor`'s, in the same order, with the faster `children` and without the leaves."""
        for child in inner_children(node):
            self.visit(child)

    def loc(self, node: ast.AST) -> Location:
        line = getattr(node, "lineno", 0)
        text = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
        return Location(self.rel, line, getattr(node, "col_offset", 0), ".".join(self.units) or "<module>",
                        text)

    @property
    def guard(self) -> Guard:
        for g in reversed(self.guards):
            if g is not Guard.NONE:
                return g
        return Guard.NONE

    def name_path(self, name: str, aliases: bool = False) -> str | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name] if aliases or (id(scope), name) not in self.aliases else None
        return self.names.binding_path(self.module, name)

    def host_path(self, node: ast.AST, aliases: bool = False) -> str | None:
        """The host dotted path an expression denotes, when it is a name chain rooted in the host (with
        `aliases`, also through a local alias: `cls = mod.Host; cls.x = fn` patches `Host.x`)."""
        expr = dotted(node)
        if not expr or isinstance(node, ast.Call | ast.Subscript):
            return None
        head, _, rest = expr.partition(".")
        base = self.name_path(head, aliases)
        if base is None or not self.names.is_host(base):
            return None
        return f"{base}.{rest}" if rest else base

    # -- imports -------------------------------------------------------------------------------
    def _bind(self, name: str, path: str) -> None:
        if self.scopes:
            self.scopes[-1][name] = path

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if self.names.is_host(alias.name):
                self.out.imports.append(HostImport(self.loc(node), alias.name, True, self._import_guard(),
                                                   self._instead()))
            self._bind(alias.asname or alias.name.split(".")[0], alias.name if alias.asname else alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        is_pkg = self.names.index.is_package(self.module)
        base = resolve_relative(self.module, is_pkg, node.level, node.module)
        for alias in node.names:
            if alias.name == "*":
                continue
            path = self.names.follow(f"{base}.{alias.name}")
            if self.names.is_host(base):
                self.out.imports.append(HostImport(self.loc(node), f"{base}.{alias.name}", False,
                                                   self._import_guard(), self._instead()))
            self._bind(alias.asname or alias.name, path)

    def _instead(self) -> tuple[str, ...]:
        return self.handled[-1] if self.handled else ()

    def _tried_imports(self, body: list[ast.stmt]) -> tuple[str, ...]:
        """The host paths the statements of a `try:` body import (at any depth but not in a nested def)."""
        paths: list[str] = []
        stack: list[ast.AST] = list(body)
        is_pkg = self.names.index.is_package(self.module)
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Import):
                paths += [a.name for a in node.names if self.names.is_host(a.name)]
            elif isinstance(node, ast.ImportFrom):
                base = resolve_relative(self.module, is_pkg, node.level, node.module)
                if self.names.is_host(base):
                    paths += [f"{base}.{a.name}" for a in node.names if a.name != "*"]
            elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
                stack.extend(inner_children(node))
        return tuple(paths)

    def _import_guard(self) -> Guard:
        return self.guard if self.guard is not Guard.NONE else (Guard.FUNCTION if self.scopes else Guard.NONE)

    # -- guards --------------------------------------------------------------------------------
    def visit_Try(self, node: ast.Try) -> None:
        caught = set()
        for handler in node.handlers:
            if handler.type is None:
                caught.add("BaseException")
            for t in handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]:
                if t is not None:
                    caught.add(dotted(t).rpartition(".")[2])
        guarded = bool(caught & _GUARD_EXCEPTIONS)
        self.guards.append(Guard.FALLBACK if guarded and _falls_back(node, _GUARD_EXCEPTIONS, self.name_reads) else
                           Guard.TRY if guarded else Guard.NONE)
        for stmt in node.body:
            self.visit(stmt)
        self.guards.pop()
        # an `except ImportError:` handler is the fallback for another host version: guarded too
        self.guards.append(Guard.TRY if caught & {"ImportError", "ModuleNotFoundError"} else Guard.NONE)
        only_import_errors = bool(caught) and caught <= {"ImportError", "ModuleNotFoundError"}
        self.handled.append(self._tried_imports(node.body) if only_import_errors else ())
        for handler in node.handlers:
            self.visit(handler)
        self.handled.pop()
        self.guards.pop()
        for part in (*node.orelse, *node.finalbody):
            self.visit(part)

    visit_TryStar = visit_Try

    def visit_If(self, node: ast.If) -> None:
        if dotted(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            guard = Guard.TYPE_CHECKING
        elif any("version" in (n.id if isinstance(n, ast.Name) else n.attr).lower()
                 for n in walk_tree(node.test) if isinstance(n, ast.Name | ast.Attribute)):
            guard = Guard.VERSION
        else:
            guard = Guard.NONE
        self.visit(node.test)
        self.guards.append(guard)
        for stmt in node.body:
            self.visit(stmt)
        self.guards.pop()
        self.guards.append(Guard.VERSION if guard is Guard.VERSION else Guard.NONE)
        for stmt in node.orelse:
            self.visit(stmt)
        self.guards.pop()

    # -- definitions ---------------------------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        probed = node.name in self.probe_guarded
        if probed:  # only ever called where the plugin probes the host (find_spec, hasattr, getattr)
            self.guards.append(Guard.VERSION)
        self._function(node)
        if probed:
            self.guards.pop()

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for dec in node.decorator_list:
            self.visit(dec)
        self._bind(node.name, None)  # type: ignore[arg-type]
        info = function_info(node, self.lines)
        self.functions[".".join([*self.units, node.name])] = info
        self._registered(node, node.decorator_list, info)
        self.units.append(node.name)
        self.kinds.append("function")
        args = node.args
        self.scopes.append({a.arg: None for a in (*args.posonlyargs, *args.args, *args.kwonlyargs,
                                                   *filter(None, (args.vararg, args.kwarg)))})
        for stmt in node.body:
            self.visit(stmt)
        closed = id(self.scopes.pop())
        if self.aliases:
            self.aliases = {a for a in self.aliases if a[0] != closed}
        self.units.pop()
        self.kinds.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        qual = ".".join([*self.units, node.name])
        target: str | None = None
        is_patch = False
        for base in node.bases:
            if isinstance(base, ast.Subscript) and dotted(base.value).rpartition(".")[2] in self.settings.patch_helpers:
                target, is_patch = self.host_path(base.slice), True
                break
        bases: list[str] = []
        if not is_patch:
            bases = [p for p in (self._base_path(b) for b in node.bases) if p]
        for dec in node.decorator_list:
            self.visit(dec)
            self._oot_decorator(dec, qual, node)
        self._registered(node, node.decorator_list, None)
        if target is None and not bases and (declared := declared_target(node, self.names.is_host)):
            target, is_patch = declared, True
        owners = [target] if target else bases
        for owner in owners:
            self.out.targets.append(PatchTarget(self.loc(node), qual, self.module, owner, is_patch, self.guard))
        self.units.append(node.name)
        self.kinds.append("class")
        for stmt in node.body:
            if owners:
                self.class_statement(stmt, owners, is_patch, qual)
            self.visit(stmt)
        self.units.pop()
        self.kinds.pop()

    def _base_path(self, base: ast.expr) -> str | None:
        """The host class a base denotes, also when it is one only for type checkers."""
        if isinstance(base, ast.IfExp) and is_type_checking(base.test):
            return self.host_path(base.body)
        bound = self.checking_bases.get(base.id) if isinstance(base, ast.Name) else None
        if isinstance(bound, str):
            path = self.names.follow(bound)
            return path if self.names.is_host(path) else None
        return self.host_path(bound if bound is not None else base)

    def adopt(self, node: ast.ClassDef, owner: str) -> None:
        """A class the host mixes into its class `owner` (named by a class-path setting such as
        `worker_extension_cls`): judged like a subclass of `owner`."""
        self.out.targets.append(PatchTarget(self.loc(node), node.name, self.module, owner, False, self.guard))
        self.units.append(node.name)
        self.kinds.append("class")
        for stmt in node.body:
            self.class_statement(stmt, [owner], False, node.name)
        self.units.pop()
        self.kinds.pop()

    def class_statement(self, stmt: ast.stmt, owners: list[str], is_patch: bool, qual: str) -> None:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            kind = PatchKind.MEMBER if is_patch else PatchKind.OVERRIDE
            fn = function_info(stmt, self.lines)
            self.units.append(stmt.name)
            site = self.loc(stmt)
            self.units.pop()
            for owner in owners:
                self.out.patches.append(Patch(kind, site, owner, stmt.name, fn, self.module, qual,
                                              guard=self.guard))
        elif isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            kept = self.host_path(stmt.value) if isinstance(stmt.value, ast.Attribute) else None
            for name in names:
                if kept:
                    owner, _, member = kept.rpartition(".")
                    self.out.patches.append(Patch(PatchKind.ALIAS, self.loc(stmt), owner, member, None,
                                                  self.module, qual, alias_of=kept, local_name=name,
                                                  guard=self.guard))
                elif is_patch and not is_declaration(name):
                    self.out.patches.append(Patch(PatchKind.MEMBER, self.loc(stmt), owners[0], name, None,
                                                  self.module, qual, guard=self.guard))

    # -- assignments and setattr ---------------------------------------------------------------
    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._table_entries(target, node.value, node)
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if name in _CLASS_PATH_NAMES:
                self._class_path(node, node.value, name)
            if isinstance(target, ast.Subscript) and dotted(target.value) == "sys.modules":
                self._stand_in(node, target.slice)
            if isinstance(target, ast.Subscript):
                self._env_entry(node, target.value, [target.slice])
            if isinstance(target, ast.Attribute) and not self._in_class_body():
                owner = self.host_path(target.value, aliases=True)
                if owner:
                    self._assignment(node, owner, target.attr, node.value)
            elif isinstance(target, ast.Name):
                if self.scopes:  # a local alias of a host object (`cls = mod.Host`) names it for patches only
                    scope = self.scopes[-1]
                    path = self.host_path(node.value, aliases=True) if isinstance(
                        node.value, ast.Attribute | ast.Name) and len(node.targets) == 1 else None
                    scope[target.id] = path
                    if path:
                        self.aliases.add((id(scope), target.id))
                    else:
                        self.aliases.discard((id(scope), target.id))
                elif isinstance(node.value, ast.Attribute) and not self.units:
                    kept = self.host_path(node.value)
                    if kept:
                        owner, _, member = kept.rpartition(".")
                        self.out.patches.append(Patch(PatchKind.ALIAS, self.loc(node), owner, member, None,
                                                      self.module, alias_of=kept, local_name=target.id,
                                                      guard=self.guard))
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        """`del Host.member` outside a class body: the host class loses that member of its own."""
        for target in node.targets:
            owner = self.host_path(target.value) if isinstance(target, ast.Attribute) else None
            if owner and not self._in_class_body():
                self.out.deletions.append(Deletion(self.loc(node), owner, target.attr, self.guard))  # type: ignore[union-attr]
        self.generic_visit(node)

    def _env_entry(self, node: ast.AST, table: ast.expr, keys: list[ast.expr | None]) -> None:
        """`envs.environment_variables["X"] = ...` (or `.update({"X": ...})`): a flag the plugin adds."""
        path = self.host_path(table)
        if path and path.endswith(".environment_variables"):
            module = path.rpartition(".")[0]
            for key in keys:
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    self.out.env_entries.append(EnvEntry(self.loc(node), module, key.value))

    def _in_class_body(self) -> bool:
        return bool(self.kinds) and self.kinds[-1] == "class"

    def _assignment(self, node: ast.AST, owner: str, name: str, value: ast.AST, by_string: bool = False) -> None:
        wrapper = ""
        if isinstance(value, ast.Call) and dotted(value.func) in _WRAPPERS and value.args:
            wrapper, value = dotted(value.func), value.args[0]
        fn = None
        if isinstance(value, ast.Name):
            for qual in (".".join([*self.units, value.id]), value.id):
                fn = fn or self.functions.get(qual)
        elif isinstance(value, ast.Lambda):
            fn = FunctionInfo("<lambda>", value.lineno, value.lineno, signature_of(value.args, None, self.lines))
        self.out.patches.append(Patch(PatchKind.ASSIGNMENT, self.loc(node), owner, name, fn, self.module,
                                      wrapper=wrapper, guard=self.guard, by_string=by_string))

    # -- registries naming their target by string ------------------------------------------------
    def _registered(self, node: ast.AST, decorators: list[ast.expr], fn: FunctionInfo | None) -> None:
        """`@register_patch(target="host.mod.Cls.meth")` / `@patch("host.mod", "Cls.meth")` on a def or
        class: the object is installed at that host path, so it is an assignment patch there (with
        `build=True` the function only builds what is installed: its signature is not the patch's)."""
        for dec in decorators:
            path = string_target(dec, self.names.is_host) if isinstance(dec, ast.Call) else None
            if path and "." in path:
                owner, _, name = path.rpartition(".")
                built = any(kw.arg == "build" and not (isinstance(kw.value, ast.Constant) and not kw.value.value)
                            for kw in dec.keywords)  # type: ignore[union-attr]
                self.out.patches.append(Patch(PatchKind.ASSIGNMENT, self.loc(node), owner, name,
                                              None if built else fn, self.module, guard=self.guard, by_string=True))

    def _registered_call(self, node: ast.Call) -> None:
        """`register_patch(target="host.mod.X")(obj)`: the decorator factory applied by hand."""
        if isinstance(node.func, ast.Call) and len(node.args) == 1 and isinstance(node.args[0], ast.Name):
            path = string_target(node.func, self.names.is_host)
            if path and "." in path:
                owner, _, name = path.rpartition(".")
                self._assignment(node, owner, name, node.args[0], by_string=True)

    # -- out-of-tree replacements -----------------------------------------------------------------
    def _oot_decorator(self, dec: ast.expr, qual: str, node: ast.ClassDef) -> None:
        func = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(func, ast.Attribute) and func.attr == OOT:
            host = self.host_path(func.value)
            if host:
                self.out.replacements.append(Replacement(self.loc(node), host, self.module, qual, OOT))

    def _oot_call(self, node: ast.Call) -> None:
        """`Host.register_oot(Plugin)`, or `helper(Host, Plugin)` for a helper that does it; with
        `name="X"` the class replaced is the host class named X (the registry is keyed by class name)."""
        func = node.func
        pair: tuple[ast.expr, ast.expr] | None = None
        how = OOT
        if isinstance(func, ast.Attribute) and func.attr == OOT and (registered := _oot_class(node)) is not None:
            plugin = self.plugin_class(registered)
            name = next((k.value for k in node.keywords if k.arg == "name"), None)
            if plugin and isinstance(name, ast.Constant) and isinstance(name.value, str):
                host = self._named_host_base(*plugin, name.value)
                if host:
                    self.out.replacements.append(Replacement(self.loc(node), host, plugin[0], plugin[1], OOT))
                return
            pair = (func.value, registered)
        elif isinstance(func, ast.Name) and func.id in self.oot_helpers:
            i, j = self.oot_helpers[func.id]
            if len(node.args) > max(i, j):
                pair, how = (node.args[i], node.args[j]), f"{OOT} via {func.id}()"
        if pair is None:
            return
        host = self.host_path(pair[0])
        plugin = self.plugin_class(pair[1])
        if host and plugin:
            self.out.replacements.append(Replacement(self.loc(node), host, plugin[0], plugin[1], how))

    def _named_host_base(self, module: str, cls: str, name: str, depth: int = 0) -> str | None:
        """The host class named `name` that the plugin class `module.cls` derives from (through plugin
        bases); None when it derives from none of that name."""
        info = self.names.index.modules[module].classes.get(cls) if module in self.names.index.modules else None
        for base in info.bases if info is not None and depth < 8 else ():
            head, _, rest = base.partition(".")
            bound = self.names.binding_path(module, head)
            path = f"{bound}.{rest}" if bound and rest else bound
            if path is None:
                continue
            if self.names.is_host(path):
                if path.rpartition(".")[2] == name:
                    return path
                continue
            owner, _, short = path.rpartition(".")
            found = self._named_host_base(owner, short, name, depth + 1) if owner in self.names.index.modules else None
            if found:
                return found
        return None

    def _table_entries(self, target: ast.expr, value: ast.expr, stmt: ast.AST) -> None:
        """Record `NAME = {"k": Cls, ...}`, `NAME["k"] = Cls` and `NAME.update({...})`: a table a loop may register."""
        if isinstance(target, ast.Name) and isinstance(value, ast.Dict):
            self.tables[target.id] = [(k.value, v, stmt) for k, v in zip(value.keys, value.values, strict=True)
                                      if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and isinstance(
                target.slice, ast.Constant) and isinstance(target.slice.value, str):
            self.tables.setdefault(target.value.id, []).append((target.slice.value, value, stmt))

    def visit_For(self, node: ast.For) -> None:
        """`for name, cls in TABLE.items(): Host.register_oot(cls, name=name)`: each entry of the table
        replaces the host class of its name (recorded at the statement that puts it in the table)."""
        it, target = node.iter, node.target
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "items" and isinstance(
                it.func.value, ast.Name) and it.func.value.id in self.tables and isinstance(target, ast.Tuple) \
                and len(target.elts) == 2 and all(isinstance(e, ast.Name) for e in target.elts):
            key, value = (e.id for e in target.elts)  # type: ignore[attr-defined]
            if any(_registers_by_name(n, key, value) for stmt in node.body for n in walk_tree(stmt)):
                for name, cls, stmt in self.tables[it.func.value.id]:
                    plugin = self.plugin_class(cls)
                    host = self._named_host_base(*plugin, name) if plugin else None
                    if plugin and host:
                        self.out.replacements.append(Replacement(self.loc(stmt), host, plugin[0], plugin[1],
                                                                 f"{OOT} over {it.func.value.id}"))
        self.generic_visit(node)

    def plugin_class(self, node: ast.expr) -> tuple[str, str] | None:
        """(module, class) of a plugin class named in this module (defined or imported here)."""
        if not isinstance(node, ast.Name):
            return None
        path = self.name_path(node.id)
        if path is None:
            return None
        module, _, name = path.rpartition(".")
        if self.names.is_host(path) or module not in self.names.index.modules:
            return None
        return module, name

    # -- sys.modules stand-ins ----------------------------------------------------------------------
    def _stand_in(self, node: ast.AST, key: ast.expr) -> None:
        name = self.constants.get(key.id) if isinstance(key, ast.Name) else (
            key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None)
        if name and self.names.is_host(name):
            self.out.stand_ins.append(StandIn(self.loc(node), name, self.module))

    # -- class-path strings ----------------------------------------------------------------------
    def _class_path(self, node: ast.AST, value: ast.expr, how: str) -> None:
        text = self.constants.get(value.id) if isinstance(value, ast.Name) else (
            value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None)
        if not text or " " in text or not (":" in text or "." in text):
            return
        path = text.replace(":", ".")
        top = path.split(".")[0]
        if top in self.tops and all(p.isidentifier() for p in path.split(".")):
            self.out.class_paths.append(ClassPath(self.loc(node), path, how))

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg in _CLASS_PATH_NAMES:
            self._class_path(node.value, node.value, node.arg)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute) and node.func.attr == "register_model" and len(node.args) >= 2:
            self._class_path(node, node.args[1], "register_model")
        self._oot_call(node)
        self._registered_call(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "update" and node.args and isinstance(
                node.args[0], ast.Dict):
            self._env_entry(node, node.func.value, node.args[0].keys)
            if isinstance(node.func.value, ast.Name) and node.func.value.id in self.tables:
                kept = self.tables[node.func.value.id]
                self._table_entries(node.func.value, node.args[0], node)
                self.tables[node.func.value.id] = kept + self.tables[node.func.value.id]
        func = dotted(node.func)
        if func == "sys.modules.setdefault" and node.args:
            self._stand_in(node, node.args[0])
        elif isinstance(node.func, ast.Name) and node.func.id in self.stand_in_helpers and node.args:
            self._stand_in(node, node.args[self.stand_in_helpers[node.func.id]])
        if (dotted(node.func) == "setattr" and len(node.args) == 3 and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)):
            owner = self.host_path(node.args[0])
            if owner:
                self._assignment(node, owner, node.args[1].value, node.args[2])
        self.generic_visit(node)

    # -- host reads ----------------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.ctx, ast.Load):
            path = self.host_path(node)
            if path:
                base = self.host_path(node.value) or ""
                self.out.uses.append(HostUse(self.loc(node), path, base, self.guard))
                return  # the longest chain only; its prefixes are implied
        self.generic_visit(node)


def _oot_class(call: ast.Call) -> ast.expr | None:
    """The class a `register_oot(...)` call registers: its first argument, or its one keyword but `name`."""
    if call.args:
        return call.args[0]
    others = [k.value for k in call.keywords if k.arg not in ("name", None)]
    return others[0] if len(others) == 1 else None


def _registers_by_name(node: ast.AST, key: str, value: str) -> bool:
    """`X.register_oot(value, name=key)` (the class and its registry name both from a loop's variables)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == OOT):
        return False
    registered = _oot_class(node)
    name = next((k.value for k in node.keywords if k.arg == "name"), node.args[1] if len(node.args) > 1 else None)
    return isinstance(registered, ast.Name) and registered.id == value and isinstance(name, ast.Name) and name.id == key


def _falls_back(node: ast.Try, kinds: set[str], reads: dict[str, list[int]]) -> bool:
    """Whether a `try:` is a probe with a fallback: every handler catching one of `kinds` carries on
    without raising; a name the body binds is bound again only by an import from elsewhere, or, left
    unbound, is read nowhere else in the module (`except ImportError: f = None`, a stand-in class or
    `pass` before a later use keep the name for code where a missing host name still fails)."""
    handlers = [h for h in node.handlers if h.type is None or {dotted(t).rpartition(".")[2] for t in (
        h.type.elts if isinstance(h.type, ast.Tuple) else [h.type])} & kinds]
    if not handlers or any(isinstance(n, ast.Raise) for h in handlers for n in ast.walk(h)):
        return False
    bound = {n for stmt in node.body for n in _bound_names(stmt)}
    flags = _constant_names(node.body)
    first, last = node.lineno, node.end_lineno or node.lineno
    for h in handlers:
        imported, others = _imported_and_other_names(h.body)
        others -= flags & _constant_names(h.body)  # `AVAILABLE = True` / `AVAILABLE = False`: a flag, no stand-in
        if bound & others or any(not first <= line <= last for n in bound - imported for line in reads.get(n, ())):
            return False
    return True


def _imported_and_other_names(stmts: list[ast.stmt]) -> tuple[set[str], set[str]]:
    """(names the statements bind by importing, names they bind otherwise), at any depth of `try:`,
    `if` and `with` (a handler's own `try: from a import X / except ImportError: from b import X` is
    a chain of fallbacks: every X it binds is an import)."""
    imported: set[str] = set()
    others: set[str] = set()
    for stmt in stmts:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            imported.update(_bound_names(stmt))
        elif isinstance(stmt, ast.Try | ast.TryStar | ast.If | ast.With):
            nested = [*stmt.body, *getattr(stmt, "orelse", ()), *getattr(stmt, "finalbody", ()),
                      *(s for h in getattr(stmt, "handlers", ()) for s in h.body)]
            inner_imported, inner_others = _imported_and_other_names(nested)
            imported |= inner_imported
            others |= inner_others
            if isinstance(stmt, ast.With):
                others.update(n.id for item in stmt.items if item.optional_vars is not None
                              for n in ast.walk(item.optional_vars) if isinstance(n, ast.Name))
        else:
            others.update(_bound_names(stmt))
    return imported, others - imported


def _constant_names(stmts: list[ast.stmt]) -> set[str]:
    """The plain names the statements bind only by assigning a literal (`HAS_EXT = True`): flags."""
    constant: set[str] = set()
    targets: set[int] = set()
    stores: list[ast.Name] = []
    for stmt in stmts:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant):
                for t in n.targets:
                    if isinstance(t, ast.Name):
                        constant.add(t.id)
                        targets.add(id(t))
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                stores.append(n)
    return constant - {n.id for n in stores if id(n) not in targets}


def _bound_names(stmt: ast.stmt) -> list[str]:
    """The plain names a statement (and the statements inside it) binds."""
    out = []
    for n in ast.walk(stmt):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.append(n.id)
        elif isinstance(n, ast.Import | ast.ImportFrom):
            out.extend((a.asname or a.name).partition(".")[0] for a in n.names)
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.append(n.name)
    return out
