"""What discovery yields: the plugin's host surface (`PluginSurface`), and how names in plugin
modules map to host paths through the plugin's own re-exports (`PluginNames`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ..model.index import CodeIndex
from ..model.nodes import walk_tree
from ..model.parse import resolve_relative
from ..model.resolve import Resolver, Symbol
from ..model.summary import Binding, BindingKind
from .records import (
    ClassPath,
    Deletion,
    EnvEntry,
    HostImport,
    HostUse,
    Patch,
    PatchKind,
    PatchTarget,
    Replacement,
    StandIn,
)


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
        self._bound: dict[tuple[str, str], str | None] = {}  # (module, name) -> `binding_path` from the top

    def is_host(self, path: str) -> bool:
        return path == self.host or path.startswith(self.host + ".")

    def binding_path(self, module: str, name: str, seen: frozenset[str] = frozenset()) -> str | None:
        """The absolute dotted path a module-level name of a plugin module stands for."""
        if not seen:  # asked from the top (not inside a chain of re-exports): the same answer every time
            if (module, name) not in self._bound:
                self._bound[module, name] = self._binding_path(module, name, seen)
            return self._bound[module, name]
        return self._binding_path(module, name, seen)

    def _binding_path(self, module: str, name: str, seen: frozenset[str]) -> str | None:
        key = f"{module}.{name}"
        if key in seen:
            return None
        summary = self.index.modules.get(module)
        if summary is None:
            return None
        b = self.import_fallbacks(module).get(name) or summary.bindings.get(name)
        if b is None:
            if key in self.index.modules:
                return key
            return None
        if b.kind in (BindingKind.IMPORT, BindingKind.IMPORT_FROM):
            return self.follow(b.target, seen | {key})
        return key  # defined in the plugin itself

    def import_fallbacks(self, module: str) -> dict[str, Binding]:
        """Names a module imports from the host in a `try` body and defines again in the body of its
        `except ImportError` (a stand-in for running without the host: `class Platform: pass`). With
        the host installed, the import is what runs: name -> that import's binding."""
        return self.index.module_memo(module, "import-fallbacks", lambda: _import_fallbacks(self, module))

    def follow(self, path: str, seen: frozenset[str] = frozenset()) -> str:
        """Follow a path through plugin modules until it leaves the plugin (or stops in it)."""
        if self.is_host(path) or path in self.index.modules:
            return path
        head, _, last = path.rpartition(".")
        if head in self.index.modules:
            inner = self.binding_path(head, last, seen)
            return inner if inner is not None else path
        return path


_IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError", "Exception", "BaseException")


def _import_fallbacks(names: PluginNames, module: str) -> dict[str, Binding]:
    index = names.index
    text = index.source(module) if module in index.modules else ""
    tree = index.parsed(module) if "ImportError" in text or "ModuleNotFoundError" in text else None
    out: dict[str, Binding] = {}
    todo = list(tree.body) if tree is not None else []
    while todo:  # module-level statements, through `if` and `try` blocks (never into defs or classes)
        stmt = todo.pop()
        if isinstance(stmt, ast.If):
            todo.extend((*stmt.body, *stmt.orelse))
        elif isinstance(stmt, ast.Try | ast.TryStar):
            todo.extend((*stmt.body, *stmt.orelse, *stmt.finalbody, *(s for h in stmt.handlers for s in h.body)))
            imported = _host_imports(names, module, stmt.body)
            for handler in stmt.handlers:
                caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                if handler.type is None or any(isinstance(c, ast.Name | ast.Attribute) and
                                               (c.attr if isinstance(c, ast.Attribute) else c.id) in _IMPORT_ERRORS
                                               for c in caught):
                    for name in _bound_names(handler.body) & imported.keys():
                        out[name] = imported[name]
    return out


def _host_imports(names: PluginNames, module: str, body: list[ast.stmt]) -> dict[str, Binding]:
    """The host names a block imports (its own statements): name -> the import's binding."""
    out: dict[str, Binding] = {}
    for stmt in body:
        if isinstance(stmt, ast.ImportFrom):
            base = resolve_relative(module, names.index.is_package(module), stmt.level, stmt.module)
            for alias in stmt.names:
                if alias.name != "*" and names.is_host(base):
                    out[alias.asname or alias.name] = Binding(alias.asname or alias.name, BindingKind.IMPORT_FROM,
                                                              stmt.lineno, f"{base}.{alias.name}", conditional=True)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname and names.is_host(alias.name):
                    out[alias.asname] = Binding(alias.asname, BindingKind.IMPORT, stmt.lineno, alias.name,
                                                conditional=True)
    return out


def _bound_names(body: list[ast.stmt]) -> set[str]:
    """Names a block's statements (and their nested blocks, not defs' bodies) bind."""
    out: set[str] = set()
    todo = list(body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            out.add(stmt.name)
        elif isinstance(stmt, ast.Assign | ast.AnnAssign):
            for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                out.update(n.id for n in walk_tree(target) if isinstance(n, ast.Name))
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            out.update(a.asname or a.name.split(".")[0] for a in stmt.names)
        else:
            todo.extend(s for f in ("body", "orelse", "finalbody") for s in getattr(stmt, f, ()) if isinstance(s, ast.stmt))
    return out


class PluginResolver(Resolver):
    """A resolver over the plugin's tree that reads a name imported from the host with a fallback
    definition for running without it (`PluginNames.import_fallbacks`) as the import."""

    def __init__(self, names: PluginNames, top: str | tuple[str, ...]) -> None:
        super().__init__(names.index, top)
        self.names = names

    def module_attr(self, mod: str, name: str, seen: frozenset[str] = frozenset()) -> Symbol | None:
        fallback = self.names.import_fallbacks(mod).get(name) if mod in self.index.modules else None
        if fallback is not None:
            return self._binding(mod, fallback, seen)
        return super().module_attr(mod, name, seen)
