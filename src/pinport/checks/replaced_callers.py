"""Host callers of members the plugin replaces (#1, seen from the call sites).

When the plugin replaces a host function or method (a patch-class member, `Target.x = fn`, a
function of a module-target patch), every host call of that member now lands in the
plugin's function. This check lists the judged host's call sites that pass arguments the
replacement cannot accept (a new keyword such as `graph_capture_context=`, an extra
positional argument), or that omit one it requires: each is a TypeError at the first call.
Only replacements narrower than the member they replace are searched, and only host files
that mention `name(` are parsed, so the cost stays with the few members that can break.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding, Kind, Location, Severity
from ..model.binding import CONSTRUCT, MISSING, TOO_MANY, TWICE, UNEXPECTED, render_params
from ..model.callsites import CallSite, iter_call_sites, modules_mentioning
from ..model.resolve import CLASS, Symbol
from ..model.summary import FunctionInfo, Param
from ..plugin.callers import CALLED_DUNDERS
from ..plugin.records import Patch, PatchKind
from .base import ScanContext

NAME = "callers"

CALLER_KEYWORD = Kind("PP0110", "CallerPassesUnacceptedKeyword", "{count} call site(s) in {label} pass `{name}=` to "
                      "`{base}`; the plugin's replacement does not accept it", Severity.ERROR, 1, NAME)
CALLER_POSITIONAL = Kind("PP0111", "CallerPassesTooManyPositional", "{count} call site(s) in {label} pass {given} "
                         "positional arguments to `{base}`; the plugin's replacement takes at most {accepted}",
                         Severity.ERROR, 1, NAME)
CALLER_OMITS = Kind("PP0112", "CallerOmitsRequiredArgument", "{count} call site(s) in {label} call `{base}` without "
                    "`{name}`, which the plugin's replacement requires", Severity.ERROR, 1, NAME)
CALLER_TWICE = Kind("PP0113", "CallerBindsArgumentTwice", "{count} call site(s) in {label} pass `{name}` to `{base}` "
                    "in a way the plugin's replacement binds twice", Severity.ERROR, 1, NAME)

KINDS = (CALLER_KEYWORD, CALLER_POSITIONAL, CALLER_OMITS, CALLER_TWICE)

_KINDS = {UNEXPECTED: CALLER_KEYWORD, TOO_MANY: CALLER_POSITIONAL, MISSING: CALLER_OMITS, TWICE: CALLER_TWICE}
_SUGGEST = {UNEXPECTED: "accept `{name}` in the replacement (with the base's default) and honour it",
            TOO_MANY: "accept the base's positional parameters in the replacement",
            MISSING: "give `{name}` a default in the replacement, or stop requiring it",
            TWICE: "take the base's parameters in the base's order"}
_DETAILS = 10
_RARE_BUILDERS = 2  # a class built in at most this many optional modules is itself optional


class ReplacedCallersCheck:
    name = NAME
    cost = 10  # relative run time (tenths of a second of a warm scan), to spread checks over two cores
    shares = ("call_failures",)  # costly shared facts: run beside the checks reading them
    drift = (1,)
    kinds = KINDS
    description = "host call sites of a replaced member pass only what the plugin's replacement accepts"

    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        for patch in ctx.plugin.surface.patches:
            if patch.kind not in (PatchKind.MEMBER, PatchKind.ASSIGNMENT) or patch.function is None:
                continue
            if patch.name.startswith("__") and patch.name.endswith("__") and patch.name not in CALLED_DUNDERS:
                continue
            yield from self._patch(ctx, patch)

    def _patch(self, ctx: ScanContext, patch: Patch) -> Iterator[Finding]:
        found = ctx.facts.call_failures(ctx.host, patch)
        if not found:
            return
        base, repl, failing, _ = found
        for (kind_key, name), sites in sorted(failing.items()):
            yield self._finding(ctx, patch, base, repl, _KINDS[kind_key], kind_key, name, sites)

    def _finding(self, ctx: ScanContext, patch: Patch, base: Symbol, repl: tuple[Param, ...], kind: Kind,
                 kind_key: str, name: str, sites: list[tuple[CallSite, int, int]]) -> Finding:
        where = tuple(ctx.host.site(site.module, site.line, site.unit) for site, _, _ in sites)
        details = [loc.cited() for loc in where[:_DETAILS]]
        if len(sites) > _DETAILS:
            details.append(f"... and {len(sites) - _DETAILS} more call sites")
        assert isinstance(base.obj, FunctionInfo)
        details.append(f"{ctx.host.label}: def {base.obj.name}{base.obj.signature.render()}")
        details.append(f"plugin: def {render_params(patch.name, repl)} (as callers see it)")
        args = {"name": name, "base": patch.target, "label": ctx.host.label, "count": len(sites),
                "given": max(s[1] for s in sites), "accepted": sites[0][2]}
        main = next((loc for (site, _, _), loc in zip(sites, where, strict=True)
                     if not _optional(ctx, site) and not _overridden(ctx, site)), None)
        overriding = sorted({o for site, _, _ in sites if (o := _overridden(ctx, site))})
        if main is not None:
            details.append(f"error: raises on the main path, {main.cited()}")
        elif overriding:
            details.append(f"warning: the host methods calling it are overridden by the plugin's "
                           f"{', '.join(f'`{o}`' for o in overriding)}, whose instances never run them")
        else:
            details.append("warning: only host code for some models or features calls it (setting "
                           "`optional-paths`)")
        return Finding(kind, args, patch.site, subject=patch.target,
                       severity=None if main is not None else Severity.WARNING,
                       suggestion=_SUGGEST[kind_key].format(name=name), details=tuple(details), sites=where,
                       **_evidence(ctx, patch, base))


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _optional(ctx: ScanContext, site: CallSite) -> bool:
    """Whether host code at `site` runs only for some models or features: its module is under an
    optional path, or it is a method of a class the host builds only there."""
    prefixes = ctx.settings.optional_paths
    if _under(site.module, prefixes):
        return True
    owner = site.unit.rpartition(".")[0]
    cls = ctx.host.resolve(f"{site.module}.{owner}") if owner else None
    if cls is None or cls.kind != CLASS:
        return False
    name = owner.rpartition(".")[2]
    mentioning = [m for m in modules_mentioning(ctx.host.index, f"{name}(") if m != site.module]
    if not mentioning or len(mentioning) > _RARE_BUILDERS or not all(_under(m, prefixes) for m in mentioning):
        return False  # built on the main path, or by many models (the text says so without parsing)
    built = list(iter_call_sites(ctx.host.resolver, name, lambda c: c.mode == CONSTRUCT and c.sym.path == cls.path,
                                 modules=mentioning, limit=_RARE_BUILDERS * 2 + 1))
    # built by one or two model- or feature-specific modules only (a class every model builds is main path)
    return 0 < len({b.module for b in built}) <= _RARE_BUILDERS and len(built) <= _RARE_BUILDERS * 2 \
        and all(_under(b.module, prefixes) for b in built)


def _overridden(ctx: ScanContext, site: CallSite) -> str:
    """The plugin subclass ("Cls.method") of the host class holding `site` that overrides the host
    method making the call ('' when none does): the plugin's own instances never run that code."""
    owner, _, method = site.unit.rpartition(".")
    if not owner:
        return ""
    held = f"{site.module}.{owner}"
    for (module, cls), base in sorted(ctx.facts.plugin_typing(ctx.host).subclass_bases.items()):
        if held in {s.path for s in ctx.host.resolver.mro(base)} and ctx.facts.plugin_defines(module, cls, method):
            return f"{cls}.{method}"
    return ""


def _evidence(ctx: ScanContext, patch: Patch, base: Symbol) -> dict[str, Location | None]:
    """The replaced member's definition in each version (the judged one is `base`)."""
    bases = ctx.pair(base, ctx.other.replaced_member(patch.owner, patch.name)[1])
    return {"old": ctx.old.def_location(bases.old), "new": ctx.new.def_location(bases.new)}
