"""Mirrored methods (#12): overrides that copy an upstream body go stale when upstream changes it.

For every mirror (found in `plugin/mirrors.py` against OLD) whose upstream function changed
OLD -> NEW, one finding carries the unified upstream diff, each hunk marked as already in the
plugin copy or not; `pinport port` proposes the three-way merge. Members the mirror reads
through `self` that OLD's class defines and NEW's no longer does are errors, with the upstream
rename when the NEW body or class shows one. Upstream changes are introduced by the move, so
this check reports only when judging NEW.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding, Kind, Location, Severity
from ..plugin.mirrors import Copy, span_location, upstream_change
from ..plugin.uses import self_reads
from .base import (
    ScanContext,
    copy_change_finding,
    copy_lag_finding,
    lagging_copies,
    vanished_finding,
)

NAME = "mirrors"

MIRROR_CHANGED = Kind("PP1201", "MirroredMethodChangedUpstream", "`{name}` mirrors `{base}`, which {label} "
                      "changed: {pending} of {hunks} upstream hunks are not in the plugin copy", Severity.WARNING,
                      12, NAME)
MIRROR_MEMBER_GONE = Kind("PP1202", "MirrorUsesRemovedMember", "the mirror of `{base}` uses `self.{name}`, which "
                          "{label} no longer defines{rename}", Severity.ERROR, 12, NAME)
MIRROR_SOURCE_GONE = Kind("PP1203", "MirroredFunctionRemoved", "`{name}` copies `{base}`, which {label} no longer "
                          "defines", Severity.WARNING, 12, NAME)

MIRROR_LAGS = Kind("PP1204", "MirrorLagsUpstream", "`{name}` was {origin}; {pending} of {hunks} upstream hunks "
                   "since are not in the copy", Severity.WARNING, 12, NAME)

KINDS = (MIRROR_CHANGED, MIRROR_MEMBER_GONE, MIRROR_SOURCE_GONE, MIRROR_LAGS)

class MirrorsCheck:
    name = NAME
    cost = 0.5  # relative run time (tenths of a second of a warm scan), to spread checks over two cores
    shares = ("copies",)  # costly shared facts: run beside the checks reading them
    drift = (12,)
    kinds = KINDS
    description = "overrides that copy an upstream method carry the upstream change, and what they call exists"

    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        for copy, origin in lagging_copies(ctx, "mirror"):  # on both sides: latent
            yield copy_lag_finding(MIRROR_LAGS, ctx, copy, origin, {"name": copy.unit, "base": copy.subject})
        if not ctx.judging_new:
            return  # an upstream change is made by the move; OLD has nothing to port
        for copy in ctx.facts.copies.copies:
            if copy.kind == "mirror":
                yield from self._mirror(ctx, copy)

    def _mirror(self, ctx: ScanContext, copy: Copy) -> Iterator[Finding]:
        args = {"name": copy.unit, "base": copy.subject}
        if copy.new is None:
            if copy.matched_by != "target":  # a replaced member that vanished is the signatures check's PP0203
                yield Finding(MIRROR_SOURCE_GONE, {**args, "label": ctx.new.label},
                              self._site(ctx, copy), old=span_location(ctx.old.index, copy.old, copy.subject),
                              subject=copy.subject,
                              suggestion="find where upstream moved this code, or keep the copy deliberately")
        elif copy.upstream_changed:
            change = upstream_change(copy, ctx.old.index, ctx.new.index)
            if change is not None and change.hunks:
                yield copy_change_finding(MIRROR_CHANGED, ctx, copy, change, args,
                                     "port the upstream hunks into the override (`pinport port` proposes a "
                                     "three-way merge)")
        yield from self._members(ctx, copy)

    @staticmethod
    def _site(ctx: ScanContext, copy: Copy) -> Location:
        return ctx.facts.plugin_line(copy.plugin.module, copy.plugin.start, copy.unit)

    def _members(self, ctx: ScanContext, copy: Copy) -> Iterator[Finding]:
        mirror = next((m for m in ctx.facts.copies.mirrors if m.plugin == copy.plugin), None)
        if mirror is None:
            return
        patch = mirror.patch
        node = ctx.plugin.function_node(patch.plugin_module, patch.site.unit)
        if node is None or (patch.function is not None and patch.function.is_staticmethod):
            return
        provided = ctx.facts.plugin_members(patch.owner)
        for name, line, before, rename in ctx.facts.vanished_members(patch.owner, self_reads(node), provided,
                                                            copy.theirs, copy.base):
            yield vanished_finding(MIRROR_MEMBER_GONE, ctx, {"name": name, "base": copy.subject, "label": ctx.new.label},
                                   ctx.facts.plugin_line(patch.plugin_module, line, copy.unit), patch.owner, name, before,
                                   rename, f"use `self.{rename}` as upstream now does" if rename else
                                   "find what upstream uses instead (see the upstream diff of the mirrored method)")
