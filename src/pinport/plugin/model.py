"""The plugin as checks see it: its index, the modules in scope, and the discovered host surface."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cached_property

from ..config import Settings
from ..model.index import CodeIndex
from .discover import discover
from .project import EntryPoint, find_packages, host_entry_points
from .surface import PluginNames, PluginSurface

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass
class PluginModel:
    index: CodeIndex
    package: str  # the first of `packages`
    modules: list[str]  # the modules scanned (settings.skipped removed), sorted
    surface: PluginSurface
    names: PluginNames
    packages: tuple[str, ...] = ()  # every package scanned
    chosen_because: str = ""  # how the packages were found (entry points, host imports …)
    entry_points: tuple[EntryPoint, ...] = ()  # the host's plugin entry points it declares (its bootstrap)

    @property
    def label(self) -> str:
        return self.index.label

    @cached_property
    def _functions(self) -> dict[tuple[str, str], FunctionNode]:
        return {(module, qualname): node for module in self.modules
                for qualname, node in self.functions_in(module)}

    def functions_in(self, module: str, *, nested: bool = True) -> list[tuple[str, FunctionNode]]:
        """The defs of one module with their qualified names ("Cls.meth", "Cls.meth.inner"), in source
        order; `nested=False` leaves out functions defined inside functions. [] where it does not parse."""
        tree = self.index.parsed(module)
        if tree is None:
            return []
        out: list[tuple[str, FunctionNode]] = []

        def walk(body: list[ast.stmt], prefix: str) -> None:
            for node in body:
                if isinstance(node, ast.ClassDef):
                    walk(node.body, f"{prefix}{node.name}.")
                elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    out.append((prefix + node.name, node))
                    if nested:
                        walk(node.body, f"{prefix}{node.name}.")

        walk(tree.body, "")
        return out

    def function_node(self, module: str, qualname: str) -> FunctionNode | None:
        """The parsed def of a plugin function by module and qualified name ("Cls.meth")."""
        return self._functions.get((module, qualname))


def load_plugin_model(index: CodeIndex, settings: Settings) -> PluginModel:
    """Select the plugin's modules (minus skipped sub-packages) and discover their host surface."""
    found = find_packages(index, settings)
    packages = found.packages
    skipped = tuple(f"{p}.{s}" for p in packages for s in settings.skipped)
    modules = sorted(m for m in index.modules
                     if any(m == p or m.startswith(p + ".") for p in packages)
                     and not any(m == s or m.startswith(s + ".") for s in skipped))
    names = PluginNames(index, settings.host)
    project = index.tree.project_root or index.tree.root
    surface = index.stored("surface-1", PluginSurface, lambda: discover(index, modules, settings), repr(settings),
                           *modules)  # a fact of the plugin's content, the modules and the settings
    return PluginModel(index, packages[0], modules, surface, names, packages, found.reason,
                       tuple(host_entry_points(project, settings)))
