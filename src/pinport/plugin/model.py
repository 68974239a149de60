"""The plugin as checks see it: its index, the modules in scope, and the discovered host surface."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cached_property

from ..config import Settings
from ..errors import ConfigError
from ..model.index import CodeIndex
from .discover import PluginNames, PluginSurface, discover


@dataclass
class PluginModel:
    index: CodeIndex
    package: str
    modules: list[str]  # the modules scanned (settings.skipped removed), sorted
    surface: PluginSurface
    names: PluginNames

    @property
    def label(self) -> str:
        return self.index.label

    @cached_property
    def _functions(self) -> dict[tuple[str, str], ast.FunctionDef | ast.AsyncFunctionDef]:
        out: dict[tuple[str, str], ast.FunctionDef | ast.AsyncFunctionDef] = {}
        for module in self.modules:
            tree = self.index.parsed(module)
            if tree is None:
                continue
            stack: list[tuple[list[ast.stmt], str]] = [(tree.body, "")]
            while stack:
                body, prefix = stack.pop()
                for node in body:
                    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                        qual = f"{prefix}{node.name}"
                        if not isinstance(node, ast.ClassDef):
                            out[(module, qual)] = node
                        stack.append((node.body, qual + "."))
        return out

    def function_node(self, module: str, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The parsed def of a plugin function by module and qualified name ("Cls.meth")."""
        return self._functions.get((module, qualname))


def find_package(index: CodeIndex, settings: Settings) -> str:
    """The plugin's import package: the setting, else the one top-level package in the tree."""
    if settings.plugin_package:
        return settings.plugin_package
    tops = sorted({m.split(".")[0] for m in index.modules if m in index.packages or "." in m})
    tops = [t for t in tops if t not in ("tests", "test", "docs", "benchmarks", "examples", "setup")]
    if len(tops) == 1:
        return tops[0]
    if not tops:
        raise ConfigError(f"{index.label}: no Python package found in the plugin tree")
    raise ConfigError(f"{index.label}: several packages ({', '.join(tops)}); set plugin-package in "
                      "[tool.pinport]")


def load_plugin_model(index: CodeIndex, settings: Settings) -> PluginModel:
    """Select the plugin's modules (minus skipped sub-packages) and discover their host surface."""
    package = find_package(index, settings)
    skipped = tuple(f"{package}.{s}" for s in settings.skipped)
    modules = sorted(m for m in index.modules
                     if (m == package or m.startswith(package + "."))
                     and not any(m == s or m.startswith(s + ".") for s in skipped))
    names = PluginNames(index, settings.host)
    return PluginModel(index, package, modules, discover(index, modules, settings), names)
