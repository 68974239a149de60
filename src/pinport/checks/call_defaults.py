"""Defaults the plugin relies on (#7): a host callable called without parameter P, whose default moved.

A call that binds on both versions can still change meaning: the plugin leaves P to its default,
and NEW's default is another value (`enforce_eager=False` -> `True`, a field's `default=` in a
dataclass config). Such a change flips a code path silently, so it is a warning with both
defaults, judged on NEW only (a change OLD -> NEW is never latent). One call, one finding: every
default of that call that moved is listed. Calls whose arguments `*`/`**` hide are not judged, nor
calls that do not bind (the calls check reports those).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding, Kind, Severity
from ..model.binding import (
    CONSTRUCT,
    bind_call,
    bound_names,
    callee_location,
    callee_params,
    callee_subject,
    other_callee,
    same_default,
)
from ..plugin.typed import HostCall
from .base import ScanContext, judges_new_only

NAME = "defaults"

DEFAULT_CHANGED = Kind("PP0706", "DefaultChanged", "`{callee}` is called without `{name}`, whose default changed from "
                       "`{old_default}` to `{new_default}` in {label}", Severity.WARNING, 7, NAME)

KINDS = (DEFAULT_CHANGED,)


class DefaultsCheck:
    name = NAME
    cost = 1.5  # relative run time (tenths of a second of a warm scan), to spread checks over two cores
    shares = ("host_calls",)  # costly shared facts: run beside the checks reading them
    drift = (7,)
    kinds = KINDS
    description = "defaults the plugin's host calls rely on keep their value"

    @judges_new_only
    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        for hc in ctx.facts.host_calls(ctx.host):
            finding = self._call(ctx, hc)
            if finding is not None:
                yield finding

    def _call(self, ctx: ScanContext, hc: HostCall) -> Finding | None:
        params = callee_params(ctx.host.resolver, hc.callee)
        if params is None or bind_call(params, hc.call):
            return None  # unknown, or it does not bind: the calls check's business
        bound = bound_names(params, hc.call)
        other, before = other_callee(ctx.other, hc.callee)
        if bound is None or before is None:
            return None
        old_defaults = {p.name: p.default for p in before if p.default is not None}
        moved = [(p.name, old_defaults[p.name], p.default) for p in params
                 if p.name not in bound and p.default is not None and p.name in old_defaults
                 and same_default(old_defaults[p.name], p.default) is False]
        if not moved:
            return None
        name, old_default, new_default = moved[0]
        subject = callee_subject(hc.callee)
        short = "`, `".join(m[0] for m in moved)
        details = tuple(f"`{n}`: {ctx.old.label} `{o}` -> {ctx.new.label} `{v}`" for n, o, v in moved)
        construct = hc.callee.mode == CONSTRUCT or hc.callee.sym.path.endswith(".__init__")
        return Finding(DEFAULT_CHANGED, {"callee": subject + ("(...)" if construct else ""), "name": short,
                                         "old_default": old_default, "new_default": new_default,
                                         "label": ctx.new.label},
                       ctx.plugin_site(hc.module, hc.unit.qualname, hc.call), subject=subject,
                       severity=Severity.INFO if hc.guard else None, details=details,
                       suggestion=f"pass `{name}` explicitly if the plugin relies on the old value "
                                  f"(`{name}={old_default}`), or confirm the new default suits it",
                       **ctx.pair(callee_location(ctx.host, hc.callee.sym, params),
                                   callee_location(ctx.other, other, before))._asdict())


__all__ = ["KINDS", "DefaultsCheck"]
