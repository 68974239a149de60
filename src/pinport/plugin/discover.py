"""Find the plugin's host surface by walking its parsed modules once: imports, patches, host reads.

Recognised idioms: patch classes `class P(Helper[Target])` (helper names from the settings),
out-of-tree replacements (`Host.register_oot(Plugin)`, `@Host.register_oot`, also through a plugin
helper `def reg(base, cls): base.register_oot(cls)`),
ordinary subclasses of host classes, `Target.attr = fn` (also through a module alias or a
fully-qualified path, and wrapped in staticmethod/classmethod), `setattr(Target, "attr", fn)`,
`_orig_x = Target.x` aliases in class bodies and at module level, and every host import,
including function-local ones.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ..config import Settings
from ..findings import Location
from ..model.index import CodeIndex
from ..model.parse import dotted, function_info, resolve_relative, signature_of
from ..model.summary import BindingKind, FunctionInfo
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
from .registries import (
    checking_bases,
    declared_target,
    is_declaration,
    is_type_checking,
    string_target,
)

_GUARD_EXCEPTIONS = {"ImportError", "ModuleNotFoundError", "AttributeError", "Exception", "BaseException"}
_WRAPPERS = ("staticmethod", "classmethod")
_OOT = "register_oot"
# settings and arguments whose string value is a class the host imports by path
_CLASS_PATH_NAMES = frozenset({"worker_cls", "worker_extension_cls", "scheduler_cls", "class_path",
                               "model_runner_cls", "executor_cls", "platform_cls"})


def oot_helper(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int] | None:
    """For `def reg(base, cls): ... base.register_oot(cls)`: the positions of base and cls."""
    params = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
    for sub in ast.walk(node):
        if (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == _OOT
                and isinstance(sub.func.value, ast.Name) and sub.args and isinstance(sub.args[0], ast.Name)
                and sub.func.value.id in params and sub.args[0].id in params):
            return params.index(sub.func.value.id), params.index(sub.args[0].id)
    return None


@dataclass
class PluginSurface:
    """Everything discovery found, in plugin file order."""

    imports: list[HostImport] = field(default_factory=list)
    targets: list[PatchTarget] = field(default_factory=list)
    patches: list[Patch] = field(default_factory=list)
    uses: list[HostUse] = field(default_factory=list)
    replacements: list[Replacement] = field(default_factory=list)
    stand_ins: list[StandIn] = field(default_factory=list)
    class_paths: list[ClassPath] = field(default_factory=list)
    deletions: list[Deletion] = field(default_factory=list)
    env_entries: list[EnvEntry] = field(default_factory=list)

    def stands_in(self, path: str) -> bool:
        """Whether a host path lies in a module the plugin itself installs under that name."""
        return any(path == s.host_module or path.startswith(s.host_module + ".") for s in self.stand_ins)

    def provided(self) -> set[str]:
        """Host paths the plugin itself creates (patch members, assignments): they exist once patched."""
        return {p.target for p in self.patches if p.kind in (PatchKind.MEMBER, PatchKind.ASSIGNMENT)}


class PluginNames:
    """Maps names in plugin modules to host dotted paths, following the plugin's own re-exports."""

    def __init__(self, index: CodeIndex, host: str) -> None:
        self.index = index
        self.host = host

    def is_host(self, path: str) -> bool:
        return path == self.host or path.startswith(self.host + ".")

    def binding_path(self, module: str, name: str, seen: frozenset[str] = frozenset()) -> str | None:
        """The absolute dotted path a module-level name of a plugin module stands for."""
        key = f"{module}.{name}"
        if key in seen:
            return None
        summary = self.index.modules.get(module)
        if summary is None:
            return None
        b = summary.bindings.get(name)
        if b is None:
            if key in self.index.modules:
                return key
            return None
        if b.kind in (BindingKind.IMPORT, BindingKind.IMPORT_FROM):
            return self.follow(b.target, seen | {key})
        return key  # defined in the plugin itself

    def follow(self, path: str, seen: frozenset[str] = frozenset()) -> str:
        """Follow a path through plugin modules until it leaves the plugin (or stops in it)."""
        if self.is_host(path) or path in self.index.modules:
            return path
        head, _, last = path.rpartition(".")
        if head in self.index.modules:
            inner = self.binding_path(head, last, seen)
            return inner if inner is not None else path
        return path


class _Walker(ast.NodeVisitor):
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
        self.guards: list[Guard] = []
        self.functions: dict[str, FunctionInfo] = {}  # plugin functions by qualified name
        self.oot_helpers: dict[str, tuple[int, int]] = {}  # helper -> (host param, plugin param) positions
        self.probe_guarded: set[str] = set()  # functions every call of which is under a host probe
        self.constants: dict[str, str] = {}  # module-level NAME = "string"
        self.tops: set[str] = set()  # the plugin's top-level packages: class paths into them are checked
        self.stand_in_helpers: dict[str, int] = {}  # def f(name, mod): sys.modules[name] = mod -> position
        self.checking_bases: dict[str, str | ast.expr] = {}  # base names bound to a host class for type checkers

    # -- helpers -------------------------------------------------------------------------------
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

    def name_path(self, name: str) -> str | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return self.names.binding_path(self.module, name)

    def host_path(self, node: ast.AST) -> str | None:
        """The host dotted path an expression denotes, when it is a name chain rooted in the host."""
        expr = dotted(node)
        if not expr or isinstance(node, ast.Call | ast.Subscript):
            return None
        head, _, rest = expr.partition(".")
        base = self.name_path(head)
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
                self.out.imports.append(HostImport(self.loc(node), alias.name, True, self._import_guard()))
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
                                                   self._import_guard()))
            self._bind(alias.asname or alias.name, path)

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
        self.guards.append(Guard.TRY if caught & _GUARD_EXCEPTIONS else Guard.NONE)
        for stmt in node.body:
            self.visit(stmt)
        self.guards.pop()
        # an `except ImportError:` handler is the fallback for another host version: guarded too
        self.guards.append(Guard.TRY if caught & {"ImportError", "ModuleNotFoundError"} else Guard.NONE)
        for handler in node.handlers:
            self.visit(handler)
        self.guards.pop()
        for part in (*node.orelse, *node.finalbody):
            self.visit(part)

    visit_TryStar = visit_Try

    def visit_If(self, node: ast.If) -> None:
        if dotted(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            guard = Guard.TYPE_CHECKING
        elif any("version" in (n.id if isinstance(n, ast.Name) else n.attr).lower()
                 for n in ast.walk(node.test) if isinstance(n, ast.Name | ast.Attribute)):
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
        self.scopes.pop()
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
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if name in _CLASS_PATH_NAMES:
                self._class_path(node, node.value, name)
            if isinstance(target, ast.Subscript) and dotted(target.value) == "sys.modules":
                self._stand_in(node, target.slice)
            if isinstance(target, ast.Subscript):
                self._env_entry(node, target.value, [target.slice])
            if isinstance(target, ast.Attribute) and not self._in_class_body():
                owner = self.host_path(target.value)
                if owner:
                    self._assignment(node, owner, target.attr, node.value)
            elif isinstance(target, ast.Name):
                if self.scopes:
                    self.scopes[-1][target.id] = None
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
        if isinstance(func, ast.Attribute) and func.attr == _OOT:
            host = self.host_path(func.value)
            if host:
                self.out.replacements.append(Replacement(self.loc(node), host, self.module, qual, _OOT))

    def _oot_call(self, node: ast.Call) -> None:
        """`Host.register_oot(Plugin)`, or `helper(Host, Plugin)` for a helper that does it."""
        func = node.func
        pair: tuple[ast.expr, ast.expr] | None = None
        how = _OOT
        if isinstance(func, ast.Attribute) and func.attr == _OOT and node.args:
            pair = (func.value, node.args[0])
        elif isinstance(func, ast.Name) and func.id in self.oot_helpers:
            i, j = self.oot_helpers[func.id]
            if len(node.args) > max(i, j):
                pair, how = (node.args[i], node.args[j]), f"{_OOT} via {func.id}()"
        if pair is None:
            return
        host = self.host_path(pair[0])
        plugin = self.plugin_class(pair[1])
        if host and plugin:
            self.out.replacements.append(Replacement(self.loc(node), host, plugin[0], plugin[1], how))

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


def _stand_in_helpers(index: CodeIndex, module: str) -> dict[str, int]:
    """Functions of a plugin module that install their argument into sys.modules: name -> position."""
    tree = index.parsed(module) if module in index.modules else None
    out: dict[str, int] = {}
    for stmt in tree.body if tree is not None and "sys.modules" in index.source(module) else ():
        if not isinstance(stmt, ast.FunctionDef):
            continue
        params = [a.arg for a in stmt.args.args]
        for sub in ast.walk(stmt):
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


def _plugin_imports(tree: ast.Module, module: str, index: CodeIndex) -> list[_Imported]:
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
    sites: dict[str, list[bool]] = {}

    def walk(node: ast.AST, probed: bool) -> None:
        if isinstance(node, ast.If):
            test_probes = any(isinstance(n, ast.Call) and dotted(n.func).rpartition(".")[2] in _PROBES
                              for n in ast.walk(node.test))
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
        for child in ast.iter_child_nodes(node):
            walk(child, probed)

    walk(tree, False)
    return {name for name, guarded in sites.items() if guarded and all(guarded)}


def discover(index: CodeIndex, modules: list[str], settings: Settings) -> PluginSurface:
    """Walk each plugin module (in name order) and collect its host surface."""
    names = PluginNames(index, settings.host)
    out = PluginSurface()
    for module in modules:
        tree = index.parsed(module)
        if tree is None:
            continue
        walker = _walker(index, module, tree, modules, names, settings, out)
        for stmt in tree.body:
            walker.visit(stmt)
    _adopt_mixins(index, modules, names, settings, out)
    return out


def _adopt_mixins(index: CodeIndex, modules: list[str], names: PluginNames, settings: Settings,
                  out: PluginSurface) -> None:
    """Plugin classes named by a class-path setting the host mixes into a class of its own
    (`settings.class_path_hosts`) and not already related to a host class: judged as its members."""
    hosts = dict(settings.class_path_hosts)
    related = {(t.plugin_module, t.plugin_class) for t in out.targets}
    for cp in list(out.class_paths):
        module, _, name = cp.path.rpartition(".")
        host = hosts.get(cp.how)
        tree = index.parsed(module) if host and module in modules else None
        node = next((s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == name), None) if tree else None
        if node is None or (module, name) in related:
            continue
        related.add((module, name))
        _walker(index, module, tree, modules, names, settings, out).adopt(node, host)  # type: ignore[arg-type]


def _walker(index: CodeIndex, module: str, tree: ast.Module, modules: list[str], names: PluginNames,
            settings: Settings, out: PluginSurface) -> _Walker:
    """A walker over one plugin module, primed with what its statements refer to before they appear."""
    walker = _Walker(module, index.paths[module], names, settings, out, index.lines(module))
    walker.probe_guarded = probe_guarded(tree)
    walker.checking_bases = checking_bases(tree, module, index.is_package(module))
    walker.tops = {m.split(".")[0] for m in modules}
    walker.constants = {t.id: stmt.value.value for stmt in tree.body if isinstance(stmt, ast.Assign)
                        and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
                        for t in stmt.targets if isinstance(t, ast.Name)}
    for module_name in (module, *{i.module for i in _plugin_imports(tree, module, index)}):
        walker.stand_in_helpers.update(_stand_in_helpers(index, module_name))
    # Module-level functions first, so `Target.x = fn` can find `fn` defined later in the file.
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            walker.functions[stmt.name] = function_info(stmt, walker.lines)
            if _OOT in walker.lines[stmt.lineno - 1] or any(_OOT in line for line in walker.lines[
                    stmt.lineno - 1:stmt.end_lineno or stmt.lineno]):
                if (positions := oot_helper(stmt)) is not None:
                    walker.oot_helpers[stmt.name] = positions
    return walker
