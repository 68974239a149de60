"""Find the plugin's host surface: each plugin module is walked once (`walker.SurfaceWalker`),
primed with what its statements refer to before they appear (its helper functions, module
constants, type-checking bases); then the classes class-path settings mix into a host class are
adopted as members of that class.

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

from ..config import Settings
from ..model.index import CodeIndex
from ..model.parse import function_info
from .helper_functions import OOT, oot_helper, plugin_imports, probe_guarded, stand_in_helpers
from .registries import checking_bases
from .surface import PluginNames, PluginSurface
from .walker import SurfaceWalker


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
            settings: Settings, out: PluginSurface) -> SurfaceWalker:
    """A walker over one plugin module, primed with what its statements refer to before they appear."""
    walker = SurfaceWalker(module, index.paths[module], names, settings, out, index.lines(module))
    walker.probe_guarded = probe_guarded(tree)
    walker.checking_bases = checking_bases(tree, module, index.is_package(module))
    walker.tops = {m.split(".")[0] for m in modules}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            walker.name_reads.setdefault(node.id, []).append(node.lineno)
    walker.constants = {t.id: stmt.value.value for stmt in tree.body if isinstance(stmt, ast.Assign)
                        and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
                        for t in stmt.targets if isinstance(t, ast.Name)}
    for module_name in (module, *{i.module for i in plugin_imports(tree, module, index)}):
        walker.stand_in_helpers.update(stand_in_helpers(index, module_name))
    # Module-level functions first, so `Target.x = fn` can find `fn` defined later in the file.
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            walker.functions[stmt.name] = function_info(stmt, walker.lines)
            if OOT in walker.lines[stmt.lineno - 1] or any(OOT in line for line in walker.lines[
                    stmt.lineno - 1:stmt.end_lineno or stmt.lineno]):
                if (positions := oot_helper(stmt)) is not None:
                    walker.oot_helpers[stmt.name] = positions
    return walker
