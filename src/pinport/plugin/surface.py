"""What discovery yields: the plugin's host surface (`PluginSurface`), and how names in plugin
modules map to host paths through the plugin's own re-exports (`PluginNames`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model.index import CodeIndex
from ..model.summary import BindingKind
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
