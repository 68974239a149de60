"""Mirrored methods (#12): overrides that copy an upstream body go stale when upstream changes it.

For every mirror (found in `plugin/mirrors.py` against OLD) whose upstream function changed
OLD -> NEW, one finding carries the unified upstream diff, each hunk marked as already in the
plugin copy or not; `pinport port` proposes the three-way merge. Members the mirror reads
through `self` that OLD's class defines and NEW's no longer does are errors, with the upstream
rename when the NEW body or class shows one. Upstream changes are introduced by the move, so
this check reports only when judging NEW.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterator

from ..findings import Finding, Kind, Location, Severity
from ..model.resolve import CLASS, EXTERNAL, Symbol
from ..model.summary import ClassInfo
from ..plugin.facts import plugin_class_info
from ..plugin.forks import Copies, find_copies
from ..plugin.mirrors import Copy, Span, UpstreamChange, span_lines, upstream_change
from ..plugin.model import PluginModel
from ..plugin.origins import Origin, copy_origins
from ..plugin.similarity import line_delta
from .base import HostView, ScanContext

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

_SELF_NAME = re.compile(r"\bself\.([A-Za-z_][A-Za-z0-9_]*)")


def scan_copies(ctx: ScanContext) -> Copies:
    """The forks and mirrors of this scan (OLD is where they were copied from), computed once."""
    return find_copies(ctx.plugin, ctx.old.index, ctx.old.resolver, ctx.new.index, ctx.new.resolver, ctx.settings)


def scan_origins(ctx: ScanContext) -> dict[tuple[str, int], Origin]:
    """Each copy's origin among the host releases before OLD (empty without a release history)."""
    if not ctx.history:
        return {}
    return copy_origins(scan_copies(ctx).copies, ctx.plugin.index, ctx.old.index, ctx.history, ctx.index_cache)


def lag_finding(kind: Kind, ctx: ScanContext, copy: Copy, origin: Origin, args: dict[str, str]) -> Finding:
    """A copy made from a release before OLD that lacks upstream changes made since (latent: it holds
    on OLD already). Evidence: the counterpart at OLD and NEW; the release it matches best and the
    upstream diff from there to OLD, each hunk marked as in the copy or not."""
    assert origin.missed is not None
    site = Location(copy.plugin.path, copy.plugin.start, 0, copy.unit,
                    next((x.strip() for x in span_lines(ctx.plugin.index, copy.plugin) if x.strip()), ""))
    described = origin.describe(ctx.old.label)
    details = (f"{described}; similarity {origin.score:.3f} to {origin.release}, {origin.old_score:.3f} to "
               f"{ctx.old.label}", f"upstream changes from {origin.release} to {ctx.old.label} (the merge base "
               f"`pinport port` uses is {origin.release}):", *origin.missed.diff_lines())
    return Finding(kind, {**args, "origin": described, "pending": str(len(origin.missed.pending)),
                          "hunks": str(len(origin.missed.hunks))}, site,
                   old=span_location(ctx.old, copy.old, copy.subject),
                   new=span_location(ctx.new, copy.new, copy.subject), subject=copy.subject,
                   suggestion=f"port the upstream changes made since {origin.release} (`pinport port` merges "
                              f"from {origin.release}, so they are in its proposal)",
                   details=details,
                   extra={"origin": origin.version, "through": origin.through, "changed_in": list(origin.changed_in),
                          "pending_hunks": [h.header for h in origin.missed.pending], "score": origin.score,
                          "old_score": origin.old_score})


def span_location(view: HostView, span: Span | None, unit: str) -> Location | None:
    """Evidence for a copied span: its first line in that host version."""
    if span is None:
        return None
    lines = span_lines(view.index, span)
    first = next((x.strip() for x in lines if x.strip().startswith(("def ", "async def "))), "")
    return Location(span.path, span.start, 0, unit, first or (lines[0].strip() if lines else ""))


def change_details(copy: Copy, change: UpstreamChange, plugin: PluginModel, old: HostView) -> tuple[str, ...]:
    """One summary line of what the copy kept, changed and added, then the marked upstream diff."""
    delta = line_delta(span_lines(old.index, copy.old), span_lines(plugin.index, copy.plugin), copy.old.start,
                       copy.plugin.start)
    summary = (f"plugin copy (similarity {copy.score:.2f}, {copy.matched_by}): kept {len(delta.kept)}, changed "
               f"{len(delta.changed)}, dropped {len(delta.dropped)} upstream lines; added {len(delta.added)}")
    where = [f"{label} {_ranges(lines)}" for label, lines in (
        (f"upstream lines changed ({copy.old.path}):", delta.changed), ("dropped:", delta.dropped),
        (f"plugin lines added ({copy.plugin.path}):", delta.added)) if lines]
    return (summary, *(("; ".join(where),) if where else ()), *change.diff_lines())


def _ranges(numbers: tuple[int, ...], limit: int = 8) -> str:
    """`3-5, 9, 12-14` for (3, 4, 5, 9, 12, 13, 14), the first `limit` runs then a count."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs[:limit])
    return text + (f" and {len(runs) - limit} more runs" if len(runs) > limit else "")


def change_finding(kind: Kind, ctx: ScanContext, copy: Copy, change: UpstreamChange, args: dict[str, str],
                   suggestion: str) -> Finding:
    """The finding for a copy whose upstream changed: warning while hunks are pending, else info."""
    pending = len(change.pending)
    site = Location(copy.plugin.path, copy.plugin.start, 0, copy.unit,
                    next((x.strip() for x in span_lines(ctx.plugin.index, copy.plugin) if x.strip()), ""))
    return Finding(kind, {**args, "label": ctx.new.label, "pending": str(pending), "hunks": str(len(change.hunks))},
                   site, old=span_location(ctx.old, copy.old, copy.subject),
                   new=span_location(ctx.new, copy.new, copy.subject), subject=copy.subject,
                   suggestion=suggestion if pending else "nothing to port: the plugin copy already has every hunk",
                   details=change_details(copy, change, ctx.plugin, ctx.old),
                   severity=None if pending else Severity.INFO,
                   extra={"pending_hunks": [h.header for h in change.pending], "score": copy.score})


def self_reads(node: ast.AST) -> dict[str, int]:
    """`self.X` read in a function (first line of each), minus what the function assigns itself."""
    args = getattr(node, "args", None)
    first = args.posonlyargs + args.args if isinstance(args, ast.arguments) else []
    me = first[0].arg if first else "self"
    reads: dict[str, int] = {}
    stores: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == me:
            if isinstance(sub.ctx, ast.Load):
                line = getattr(sub, "lineno", 0)
                reads[sub.attr] = min(reads.get(sub.attr, line), line)
            else:
                stores.add(sub.attr)
    return {k: v for k, v in reads.items() if k not in stores}


def plugin_members(plugin: PluginModel, owner: str) -> set[str]:
    """Members the plugin itself gives instances of a host class: patch members, and everything its
    patch classes and subclasses of that class define or assign."""
    out = {p.name for p in plugin.surface.patches if p.owner == owner}
    for target in plugin.surface.targets:
        if target.target != owner:
            continue
        info = plugin_class_info(plugin.index, target.plugin_module, target.plugin_class)
        if info is not None:
            out.update(info.methods, info.attributes, info.instance_attrs, info.classes)
    return out


def _members(view: HostView, cls: Symbol) -> set[str]:
    out: set[str] = set()
    for owner in view.resolver.mro(cls):
        if isinstance(owner.obj, ClassInfo):
            info = owner.obj
            out.update(info.methods, info.attributes, info.instance_attrs, info.classes)
    return out


def vanished_members(ctx: ScanContext, owner: str, reads: dict[str, int], provided: set[str],
                     theirs: str | None = None, base: str | None = None) -> Iterator[tuple[str, int, Symbol, str]]:
    """(name, plugin line, OLD member, NEW rename or "") for each `self.X` read that OLD's class
    `owner` defines and NEW's does not; a rename is taken from the NEW body first, then the class."""
    old_cls, new_cls = ctx.old.resolve(owner), ctx.new.resolve(owner)
    if old_cls is None or new_cls is None or old_cls.kind != CLASS or new_cls.kind != CLASS:
        return
    hints: tuple[list[str], list[str]] | None = None
    for name, line in sorted(reads.items()):
        if name in provided or name.startswith("__"):
            continue
        before = ctx.old.resolver.class_member(old_cls, name, instance=True)
        if before is None or before.kind == EXTERNAL:
            continue
        if ctx.new.resolver.class_member(new_cls, name, instance=True) is not None:
            continue
        if hints is None:  # names NEW's body starts using, then members NEW's class gained
            started = set(_SELF_NAME.findall(theirs or "")) - set(_SELF_NAME.findall(base or ""))
            hints = (sorted(n for n in started if ctx.new.resolver.class_member(new_cls, n, instance=True)),
                     sorted(_members(ctx.new, new_cls) - _members(ctx.old, old_cls)))
        rename = (difflib.get_close_matches(name, hints[0], 1, 0.5)
                  or difflib.get_close_matches(name, hints[1], 1, 0.6) or [""])[0]
        yield name, line, before, rename


def vanished_finding(kind: Kind, ctx: ScanContext, args: dict[str, str], site: Location, owner: str, name: str,
                     before: Symbol, rename: str, suggestion: str) -> Finding:
    """The finding for a `self.X` read that NEW's `owner` no longer defines: OLD's member, NEW's rename."""
    renamed = ctx.new.resolve(f"{owner}.{rename}") if rename else None
    return Finding(kind, {**args, "rename": f" (upstream now uses `{rename}`)" if rename else ""}, site,
                   subject=f"{owner}.{name}", old=ctx.old.location(before), new=ctx.new.location(renamed),
                   suggestion=suggestion)


class MirrorsCheck:
    name = NAME
    cost = 0.2  # relative run time, to spread checks over two cores
    drift = (12,)
    kinds = KINDS
    description = "overrides that copy an upstream method carry the upstream change, and what they call exists"

    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        origins = scan_origins(ctx)
        for copy in scan_copies(ctx).copies:
            origin = origins.get((copy.plugin.path, copy.plugin.start))
            if copy.kind == "mirror" and origin is not None and origin.lags:  # on both sides: latent
                yield lag_finding(MIRROR_LAGS, ctx, copy, origin, {"name": copy.unit, "base": copy.subject})
        if not ctx.judging_new:
            return  # an upstream change is made by the move; OLD has nothing to port
        for copy in scan_copies(ctx).copies:
            if copy.kind == "mirror":
                yield from self._mirror(ctx, copy)

    def _mirror(self, ctx: ScanContext, copy: Copy) -> Iterator[Finding]:
        args = {"name": copy.unit, "base": copy.subject}
        if copy.new is None:
            if copy.matched_by != "target":  # a replaced member that vanished is the signatures check's PP0203
                yield Finding(MIRROR_SOURCE_GONE, {**args, "label": ctx.new.label},
                              self._site(ctx, copy), old=span_location(ctx.old, copy.old, copy.subject),
                              subject=copy.subject,
                              suggestion="find where upstream moved this code, or keep the copy deliberately")
        elif copy.upstream_changed:
            change = upstream_change(copy, ctx.old.index, ctx.new.index)
            if change is not None and change.hunks:
                yield change_finding(MIRROR_CHANGED, ctx, copy, change, args,
                                     "port the upstream hunks into the override (`pinport port` proposes a "
                                     "three-way merge)")
        yield from self._members(ctx, copy)

    @staticmethod
    def _site(ctx: ScanContext, copy: Copy) -> Location:
        return Location(copy.plugin.path, copy.plugin.start, 0, copy.unit,
                        ctx.plugin.index.line_text(copy.plugin.module, copy.plugin.start))

    def _members(self, ctx: ScanContext, copy: Copy) -> Iterator[Finding]:
        mirror = next((m for m in scan_copies(ctx).mirrors if m.plugin == copy.plugin), None)
        if mirror is None:
            return
        patch = mirror.patch
        node = ctx.plugin.function_node(patch.plugin_module, patch.site.unit)
        if node is None or (patch.function is not None and patch.function.is_staticmethod):
            return
        provided = plugin_members(ctx.plugin, patch.owner)
        for name, line, before, rename in vanished_members(ctx, patch.owner, self_reads(node), provided,
                                                            copy.theirs, copy.base):
            text = ctx.plugin.index.line_text(patch.plugin_module, line)
            yield vanished_finding(MIRROR_MEMBER_GONE, ctx, {"name": name, "base": copy.subject, "label": ctx.new.label},
                                   Location(copy.plugin.path, line, 0, copy.unit, text), patch.owner, name, before,
                                   rename, f"use `self.{rename}` as upstream now does" if rename else
                                   "find what upstream uses instead (see the upstream diff of the mirrored method)")
