"""Host attributes the plugin fills with instances of its own classes.

A plugin subclass or patch of a host class that sets `self.drafter = PluginProposer(...)` makes
every host call through that attribute (`self.drafter.propose(...)` in the host class) land in
the plugin's class. Those host call sites are the evidence that an override of a method the
host calls there really runs: a call that cannot bind to it is a certain TypeError.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..model.nodes import statements
from .model import PluginModel
from .uses import HostMethod, self_name


@dataclass(frozen=True)
class AssignedAttribute:
    """`self.<attr> = <plugin class>(...)` in a plugin method run on instances of host class `owner`."""

    owner: str  # host class path, as the plugin wrote it
    attr: str
    plugin_class: str  # absolute dotted path of the plugin class built
    module: str  # the plugin module of the assignment
    line: int
    holder: str = ""  # the plugin class (qualified name in `module`) whose method assigns it; '' for a function


def find_assigned_attributes(plugin: PluginModel, methods: list[HostMethod]) -> list[AssignedAttribute]:
    """Every host attribute a plugin host method sets to a newly built plugin-class instance (its
    statements are read, not its expressions: an assignment is a statement)."""
    out: list[AssignedAttribute] = []
    for method in methods:
        me = self_name(method.node)
        if not me or not method.instance:
            continue
        for node in statements(method.node.body):
            if not (isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Call)):
                continue
            built = _plugin_class(plugin, method.module, node.value.func)
            if built is None:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me:
                    out.extend(AssignedAttribute(owner, target.attr, built, method.module, node.lineno,
                                                 method.plugin_class) for owner in method.owners)
    return out


def _plugin_class(plugin: PluginModel, module: str, func: ast.expr) -> str | None:
    """The absolute path of the plugin class a call builds (`PluginCls(...)`, `mod.PluginCls(...)`)."""
    if isinstance(func, ast.Name):
        path = plugin.names.binding_path(module, func.id)
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        head = plugin.names.binding_path(module, func.value.id)
        path = plugin.names.follow(f"{head}.{func.attr}") if head else None
    else:
        return None
    if path is None or plugin.names.is_host(path):
        return None
    owner, _, name = path.rpartition(".")
    summary = plugin.index.modules.get(owner)
    return path if summary is not None and name in summary.classes else None
