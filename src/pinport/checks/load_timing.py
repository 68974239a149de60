"""Plugin-load timing (#11): patched classes the host builds before its plugins are loaded.

A patch applies when the host loads its plugins (the `plugin-loaders` setting:
`load_general_plugins()` in vLLM). Methods are looked up on the class at call time, so an
instance created before that still sees most patched members later; what it never sees are the
patched members that run *while it is built*: `__new__`, `__init__`, `__post_init__`. Two host shapes create such instances:

* a function that loads the plugins constructs the class before the load line
  (TargetBuiltBeforePluginLoad), and
* the class's own construction is what loads the plugins: its `__init__`/`__post_init__`/
  `__new__` (through the MRO) calls the loader (TargetConstructionLoadsPlugins), so the very
  first instance (the first `EngineArgs(...)` in vLLM) is built by the unpatched members.

Loader callers are found by a text prefilter on the loader's name and an AST check, only in
the host files that mention it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from ..findings import Finding, Kind, Location, Severity
from ..model.binding import CONSTRUCT, INIT_FAMILY
from ..model.callsites import iter_call_sites
from ..model.inference import host_inference
from ..model.resolve import CLASS, Symbol
from ..model.summary import ClassInfo
from ..plugin.reach import backfill_site
from ..plugin.records import PatchKind
from .base import ScanContext

NAME = "load-timing"

BUILT_BEFORE_LOAD = Kind("PP1101", "TargetBuiltBeforePluginLoad", "`{function}` builds `{name}` at line {built} "
                         "before it loads the plugins at line {loaded} ({label}): that instance never runs the "
                         "patched {members}", Severity.WARNING, 11, NAME)
CONSTRUCTION_LOADS = Kind("PP1102", "TargetConstructionLoadsPlugins", "constructing `{name}` loads the plugins "
                          "(`{function}` calls the loader, {label}): the first instance is built before the patched "
                          "{members} exist", Severity.WARNING, 11, NAME)

KINDS = (BUILT_BEFORE_LOAD, CONSTRUCTION_LOADS)
_SITES = 5


class _Loader(NamedTuple):
    """A host unit that calls the plugin loader, and the first line it does so."""

    module: str
    qualname: str
    cls: str
    line: int


class _Target(NamedTuple):
    """A patched class with the construction-time members the plugin patches on it."""

    sym: Symbol
    site: Location  # the first patched construction member in the plugin (where the fix goes)
    members: tuple[str, ...]  # of INIT_FAMILY, in that order
    others: list[tuple[str, str]]  # (plugin module, qualname) of its other patched members


class LoadTimingCheck:
    name = NAME
    cost = 2.3  # relative run time (tenths of a second of a warm scan), to spread checks over two cores
    drift = (11,)
    kinds = KINDS
    description = "no patched class is built (by the host) before the plugins that patch it are loaded"

    def __init__(self, loaders: Sequence[str] = ()) -> None:
        self.loaders = tuple(loaders)  # names of the host functions that load plugins; default: settings

    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        targets = _targets(ctx)
        if not targets:
            return
        loaders = _loaders(ctx, self.loaders or ctx.settings.plugin_loaders)
        for loader in loaders:
            yield from self._built_before(ctx, loader, targets)
        for target in targets:
            yield from self._construction_loads(ctx, target, loaders)

    # -- PP1101 ---------------------------------------------------------------------------------
    def _built_before(self, ctx: ScanContext, loader: _Loader, targets: list[_Target]) -> Iterator[Finding]:
        resolver = ctx.host.resolver
        unit = next((u for u in ctx.host.units(loader.module) if u.qualname == loader.qualname), None)
        if unit is None:
            return
        facts = ctx.host.walk_unit(loader.module, unit)
        early = [c for c in facts.calls if c.lineno < loader.line]
        if not early:
            return
        inf = host_inference(resolver, loader.module, unit, facts)
        reported: set[str] = set()
        for call in early:
            callee = inf.callee(call.func)
            if callee is None or callee.mode != CONSTRUCT:
                continue
            for target in targets:
                members = _inherited(ctx, callee.sym, target)
                if not members or target.sym.path in reported:
                    continue
                reported.add(target.sym.path)
                args = {"name": target.sym.path, "function": f"{loader.module}.{loader.qualname}",
                        "built": call.lineno, "loaded": loader.line, "label": ctx.host.label,
                        "members": _members(members)}
                built = ctx.host.site(loader.module, call.lineno, loader.qualname)
                loads = ctx.host.site(loader.module, loader.line, loader.qualname)
                details = (f"{built.path}:{built.line} ({loader.qualname}): builds "
                           f"`{callee.sym.path.rpartition('.')[2]}`: {built.snippet}",
                           f"{loads.path}:{loads.line} ({loader.qualname}): loads the plugins: {loads.snippet}")
                yield Finding(BUILT_BEFORE_LOAD, args, target.site, subject=target.sym.path,
                              suggestion="make the patched members work for instances built before the patch "
                                         "(or patch at import time of the class)",
                              details=details, sites=(built, loads), **_evidence(ctx, loader, call.lineno))

    # -- PP1102 ---------------------------------------------------------------------------------
    def _construction_loads(self, ctx: ScanContext, target: _Target, loaders: list[_Loader]) -> Iterator[Finding]:
        """`target(...)` runs a construction member (through its MRO) that loads the plugins."""
        resolver = ctx.host.resolver
        by_member = {(f"{ld.module}.{ld.cls}", ld.qualname.rpartition(".")[2]): ld for ld in loaders if ld.cls}
        for name in INIT_FAMILY:
            member = resolver.class_member(target.sym, name)
            if member is None or not member.owner:
                continue
            loader = by_member.get((member.owner, name))
            if loader is None:
                continue
            loads = ctx.host.site(loader.module, loader.line, loader.qualname)
            details = [f"{loads.path}:{loads.line} ({loader.qualname}): loads the plugins: {loads.snippet}",
                       f"the plugin patches {_members(target.members)} of `{target.sym.path}`: they do not run "
                       f"for an instance whose construction loads the plugins"]
            built = _constructions(ctx, target.sym) if ctx.judging_new else ()
            details.extend(f"built at {s.cited()}" for s in built)
            args = {"name": target.sym.path, "function": f"{loader.module}.{loader.qualname}",
                    "label": ctx.host.label, "members": _members(target.members)}
            backfill = backfill_site(ctx.plugin, target.others)
            suggestion = ("make the plugin cope with the first instance (backfill what the patched "
                          "construction members would have set) or apply the patch earlier")
            if backfill is not None:  # the plugin already completes that instance when it is first used
                details.append(f"the plugin backfills on first use: {backfill[1]} (plugin line {backfill[0]})")
                suggestion = "nothing to do: the plugin already backfills the first instance on first use"
            yield Finding(CONSTRUCTION_LOADS, args, target.site, subject=target.sym.path, suggestion=suggestion,
                          severity=Severity.INFO if backfill is not None else None,
                          details=tuple(details), sites=(loads, *built), **_evidence(ctx, loader, loader.line))
            return


# -- helpers ------------------------------------------------------------------------------------
def _targets(ctx: ScanContext) -> list[_Target]:
    """Patch targets whose construction members (`__new__`/`__init__`/`__post_init__`) the plugin patches."""
    members: dict[str, dict[str, Location]] = {}
    others: dict[str, list[tuple[str, str]]] = {}
    syms: dict[str, Symbol] = {}
    for patch in ctx.plugin.surface.patches:
        if patch.kind not in (PatchKind.MEMBER, PatchKind.ASSIGNMENT):
            continue
        if patch.name not in INIT_FAMILY:
            others.setdefault(patch.owner, []).append((patch.plugin_module, patch.site.unit))
            continue
        sym = ctx.host.resolve(patch.owner)
        if sym is None or sym.kind != CLASS:
            continue
        members.setdefault(sym.path, {}).setdefault(patch.name, patch.site)
        syms[sym.path] = sym
    resolved = {owner: ctx.host.resolve(owner) for owner in others}
    out = []
    for path in sorted(members):
        names = tuple(n for n in INIT_FAMILY if n in members[path])
        owners = {o for o, sym in resolved.items() if sym is not None and sym.path == path}
        out.append(_Target(syms[path], members[path][names[0]], names,
                           [m for owner in sorted(owners) for m in others.get(owner, [])]))
    return out


def _inherited(ctx: ScanContext, cls: Symbol, target: _Target) -> tuple[str, ...]:
    """The target's patched construction members that `cls(...)` runs (cls is the target or inherits them)."""
    out = []
    for name in target.members:
        for c in ctx.host.resolver.mro(cls):
            if c.path == target.sym.path:
                out.append(name)
                break
            if isinstance(c.obj, ClassInfo) and name in c.obj.methods:
                break  # a class below the target defines its own: the patch is not what runs
    return tuple(out)


def _loaders(ctx: ScanContext, names: tuple[str, ...]) -> list[_Loader]:
    """Every host unit that calls one of the loader functions (other than the loaders themselves)."""
    out = [_Loader(module, unit.qualname, unit.cls, line) for name in names
           for module, unit, line in ctx.host.units_calling(name) if unit.node is not None
           and unit.node.name not in names]
    return sorted(set(out))


def _constructions(ctx: ScanContext, cls: Symbol) -> tuple[Location, ...]:
    """A few places in the host that construct the class (each may be the first instance)."""
    short = cls.path.rpartition(".")[2]
    sites = iter_call_sites(ctx.host.resolver, short, lambda c: c.mode == CONSTRUCT and c.sym.path == cls.path,
                            limit=_SITES)
    return tuple(ctx.host.site(s.module, s.line, s.unit) for s in sites)


def _members(names: Sequence[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _evidence(ctx: ScanContext, loader: _Loader, line: int) -> dict[str, Location | None]:
    """The loader's line in the judged version; the other version's is not looked up."""
    sites = ctx.pair(ctx.host.site(loader.module, line, f"{loader.module}.{loader.qualname}"), None)
    return {"old": sites.old, "new": sites.new}
