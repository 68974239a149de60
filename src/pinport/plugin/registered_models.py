"""Plugin model classes the host builds and calls only in the ways its model loader and runners do.

A plugin registers a model class with the host's model registry (`ModelRegistry.register_model(arch,
Cls)`, `register_model(arch, "pkg.mod:Cls")`, or a loop over a plugin table of (folder, module, class)
entries spelling that string). vLLM builds such a class only by keyword, `model_class(vllm_config=...,
prefix=...)` (model_executor/model_loader/utils.py), and its runners call the model only by keyword
(`self.model(input_ids=..., positions=..., intermediate_tensors=..., inputs_embeds=..., **model_kwargs)`).
Following the registry through the loader and the runners is more dataflow than pinport does, so the host
profile states those calls (settings `model-registrars`, `registered-model-calls`); this module finds the
classes registered and judges whether an override of the member binds the stated call. A positional-order
or kind mismatch of such an override (a parameter made keyword-only, a positional the override moves or
absorbs in `**kwargs`) then trips no host call; a parameter the call does not pass and the override
requires, or a keyword it cannot take, still does. Not told apart: a registered class that serves as a
Medusa draft head, which vLLM's proposer calls positionally (v1/spec_decode/medusa.py:43).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ..model.binding import bind_counts
from ..model.parse import resolve_relative
from ..model.summary import Param, ParamKind, has_var_keyword
from .model import PluginModel
from .reach import Lineage
from .records import Patch, PatchKind

_SIGNATURE = re.compile(r"\s*([\w.]+)\s*\(([^()]*)\)\s*")
MORE = "**"  # in `registered-model-calls`: the host passes further keywords (`**model_kwargs`) besides those named


@dataclass(frozen=True)
class ModelCall:
    """How the host calls one member of a registered model (`forward(input_ids, positions, **)`): only by these
    keywords, and, with `more`, by further keywords the override must take in `**kwargs`."""

    member: str
    keywords: tuple[str, ...]
    more: bool

    @staticmethod
    def parse(text: str) -> ModelCall | None:
        found = _SIGNATURE.fullmatch(text)
        if found is None:
            return None
        names = tuple(n.strip() for n in found.group(2).split(",") if n.strip())
        return ModelCall(found.group(1), tuple(n for n in names if n != MORE), MORE in names)

    def binds(self, params: tuple[Param, ...]) -> bool:
        """Whether the override's parameters (self dropped) take this keyword-only call: every named keyword
        binds, every required parameter is among them, and further keywords land in its `**kwargs`."""
        if self.more and not has_var_keyword(params):
            return False
        if any(p.kind is ParamKind.POSITIONAL_ONLY and p.name in self.keywords for p in params):
            return False
        return not bind_counts(params, 0, self.keywords)


def registrar_parts(text: str) -> tuple[str, str] | None:
    """(function name, parameter naming the class) of a `model-registrars` entry, `register_model(arch, cls)`."""
    found = re.fullmatch(r"\s*([\w.]+)\s*\(\s*\w+\s*,\s*(\w+)\s*\)\s*", text)
    return (found.group(1).rpartition(".")[2], found.group(2)) if found else None


def registrar_arguments(registrars: tuple[str, ...]) -> frozenset[tuple[str, str]]:
    """The (function name, parameter) pairs `construction.type_argument` records for a class handed to a
    registrar: its second argument, or its class parameter by keyword."""
    parts = [p for text in registrars if (p := registrar_parts(text)) is not None]
    return frozenset({(name, "1") for name, _ in parts} | set(parts))


def registered_classes(plugin: PluginModel, registrars: tuple[str, ...]) -> frozenset[str]:
    """Dotted paths of the plugin classes the plugin registers with one of the host's `registrars`."""
    parts = [p for text in registrars if (p := registrar_parts(text)) is not None]
    out: set[str] = set()
    for module in plugin.modules:
        text = plugin.index.source(module)
        if not any(f"{name}(" in text for name, _ in parts):
            continue
        tree = plugin.index.parsed(module)
        if tree is None:
            continue
        loops = {id(n): loop for loop in ast.walk(tree) if isinstance(loop, ast.For) for n in ast.walk(loop)}
        for call in ast.walk(tree):
            if not isinstance(call, ast.Call):
                continue
            func = call.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            for registrar, keyword in parts:
                if name != registrar or not _host_named(plugin, module, func):
                    continue  # another registry's method of that name (a plugin's own model table)
                given = next((k.value for k in call.keywords if k.arg == keyword), None)
                given = given if given is not None else call.args[1] if len(call.args) > 1 else None
                if given is not None:
                    out |= _named(plugin, module, given, loops.get(id(call)))
    return frozenset(out)


def _host_named(plugin: PluginModel, module: str, func: ast.expr) -> bool:
    """Whether a called name is the host's: `ModelRegistry.register_model` with `ModelRegistry` imported from the
    host (at module level or inside the function calling it)."""
    while isinstance(func, ast.Attribute):
        func = func.value
    if not isinstance(func, ast.Name):
        return False
    path = plugin.names.binding_path(module, func.id) or _imported_inside(plugin, module, func.id)
    return path is not None and plugin.names.is_host(plugin.names.follow(path))


def _named(plugin: PluginModel, module: str, node: ast.expr, loop: ast.For | None) -> set[str]:
    """The class paths an argument naming a class stands for: a class name, a `"pkg.mod:Cls"` string, or an
    f-string over the names a loop takes from a plugin table (`for arch, (a, b, c) in TABLE.items()`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value.replace(":", ".")}
    if isinstance(node, ast.Name | ast.Attribute):
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        head = plugin.names.binding_path(module, node.id) if isinstance(node, ast.Name) else None
        return {plugin.names.follow(".".join([head, *reversed(parts)]))} if head else set()
    if isinstance(node, ast.JoinedStr) and loop is not None:
        return {text.replace(":", ".") for text in _table_strings(plugin, module, node, loop)}
    return set()


def _table_strings(plugin: PluginModel, module: str, node: ast.JoinedStr, loop: ast.For) -> set[str]:
    """Each string an f-string spells for the entries of the plugin dict the loop walks (`TABLE.items()`, a
    value a tuple of strings unpacked by the loop's target): empty when any piece does not resolve."""
    it = loop.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "items"
            and isinstance(it.func.value, ast.Name) and isinstance(loop.target, ast.Tuple)
            and len(loop.target.elts) == 2):
        return set()
    key, value = loop.target.elts
    table = _module_dict(plugin, module, it.func.value.id)
    if table is None:
        return set()
    out: set[str] = set()
    for k, v in zip(table.keys, table.values, strict=True):
        bound = _unpack(key, k) or {}
        more = _unpack(value, v)
        if more is None:
            return set()
        bound |= more
        pieces: list[str] = []
        for piece in node.values:
            if isinstance(piece, ast.Constant) and isinstance(piece.value, str):
                pieces.append(piece.value)
            elif isinstance(piece, ast.FormattedValue) and isinstance(piece.value, ast.Name) \
                    and piece.value.id in bound and piece.conversion == -1 and piece.format_spec is None:
                pieces.append(bound[piece.value.id])
            else:
                return set()
        out.add("".join(pieces))
    return out


def _unpack(target: ast.expr, value: ast.expr | None) -> dict[str, str] | None:
    """Loop-target names -> the string literals they take from one table entry; None when one is no literal."""
    if isinstance(target, ast.Name):
        return {target.id: value.value} if isinstance(value, ast.Constant) and isinstance(value.value, str) else None
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
        out: dict[str, str] = {}
        for t, v in zip(target.elts, value.elts, strict=True):
            got = _unpack(t, v)
            if got is None:
                return None
            out |= got
        return out
    return None


def _module_dict(plugin: PluginModel, module: str, name: str) -> ast.Dict | None:
    """The dict literal a plugin module name is bound to at top level (here or in the module it is imported
    from, inside the function too: `from pkg.registry import TABLE`)."""
    path = plugin.names.binding_path(module, name) or _imported_inside(plugin, module, name)
    path = plugin.names.follow(path) if path else f"{module}.{name}"
    home, _, attr = path.rpartition(".")
    tree = plugin.index.parsed(home) if home in plugin.index.modules else None
    if tree is None:
        return None
    found: ast.Dict | None = None
    for stmt in tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(
            stmt, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == attr for t in targets):
            value = stmt.value  # type: ignore[union-attr]
            if found is not None or not isinstance(value, ast.Dict) or None in value.keys:
                return None  # bound twice, or not a plain literal (`**other` merged in)
            found = value
    return found


def _imported_inside(plugin: PluginModel, module: str, name: str) -> str | None:
    """The path a name imported inside a function of the module stands for (`from pkg.registry import TABLE` in
    the registering function); None when no such import, or several naming other things, bind it."""
    tree = plugin.index.parsed(module)
    package = plugin.index.paths.get(module, "").endswith("__init__.py")
    found = {f"{resolve_relative(module, package, node.level, node.module)}.{a.name}"
             for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
             for a in node.names if (a.asname or a.name) == name} if tree is not None else set()
    return found.pop() if len(found) == 1 else None


def registered_call(patch: Patch, registered: frozenset[str], calls: tuple[ModelCall, ...],
                    lineage: Lineage | None, registrations: frozenset[tuple[str, str]]) -> ModelCall | None:
    """The host's call of the member an override replaces (the first, when it calls it several ways), when the override's class is one the plugin registers
    (`registered`), reaches the host no other way the lineage sees (installed in place of a host class, swapped
    in, returned by a hook, decorated by or handed to a host function other than a registrar, `registrations`:
    `registrar_arguments`), and the override takes every such call; None
    otherwise: then the host may still call it some way the check judges."""
    if patch.kind is not PatchKind.OVERRIDE or patch.function is None or not patch.via \
            or f"{patch.plugin_module}.{patch.via}" not in registered:
        return None
    mine = [c for c in calls if c.member == patch.name]  # each way the host calls it (the loader, tensorizer's)
    if not mine or lineage is None or lineage.installed_as or lineage.swapped or lineage.hooks \
            or lineage.decorators or not set(lineage.arguments) <= registrations:
        return None
    params = patch.function.signature.params
    params = params[1:] if params and params[0].kind <= ParamKind.POSITIONAL_OR_KEYWORD else params
    return mine[0] if all(c.binds(params) for c in mine) else None
