"""The interface every check implements, and the read-only context a check gets.

A check is run twice per scan: once judging NEW (with OLD as the other side, for evidence)
and once judging OLD. The scan compares the two runs by fingerprint to tell findings the
move introduces (drift) from those already true on the current pin (latent).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import wraps
from typing import Generic, NamedTuple, Protocol, TypeVar

from ..config import Settings
from ..facts import ScanFacts
from ..findings import Arg, Finding, Kind, Location, Severity
from ..model.host import HostView
from ..model.resolve import Symbol
from ..plugin.mirrors import Copy, UpstreamChange, change_details, span_lines, span_location
from ..plugin.model import PluginModel
from ..plugin.origins import Origin
from ..plugin.records import Guard

T = TypeVar("T")


class Sides(NamedTuple, Generic[T]):
    """Two values of one thing, at OLD and at NEW (always in that order)."""

    old: T
    new: T


# A guarded use (`if TYPE_CHECKING:`, `try:`, a version test) fails less loudly than a bare one; a probe
# (`try:` whose handler carries on with a fallback) is written for hosts where it fails: context.
_GUARD_SEVERITY = {Guard.TYPE_CHECKING: Severity.INFO, Guard.TRY: Severity.WARNING, Guard.VERSION: Severity.WARNING,
                   Guard.FALLBACK: Severity.INFO}


def guard_severity(guard: Guard) -> Severity | None:
    """The severity override for a finding at a guarded plugin site; None keeps the kind's own."""
    return _GUARD_SEVERITY.get(guard)


@dataclass(frozen=True)
class ScanContext:
    """What a check may read: the plugin, the host being judged and the other host, the settings,
    and the scan's shared facts (`facts`: built once per scan, the same object on both sides)."""

    plugin: PluginModel
    host: HostView  # the version being judged
    other: HostView  # the other version
    judging_new: bool
    settings: Settings
    facts: ScanFacts

    @property
    def old(self) -> HostView:
        return self.other if self.judging_new else self.host

    @property
    def new(self) -> HostView:
        return self.host if self.judging_new else self.other

    def pair(self, judged: T, other: T) -> Sides[T]:
        """The same thing about the judged host and the other one, named by version: the one place
        that turns "judged / other" into OLD / NEW (a check names its evidence `.old` and `.new`)."""
        return Sides(other, judged) if self.judging_new else Sides(judged, other)

    def evidence(self, path: str, *, judged: Symbol | None = None,
                 other: Symbol | None = None) -> dict[str, Location | None]:
        """`old=`/`new=` keyword arguments for a Finding: where `path` is defined in each version
        (`judged`/`other`: a symbol a check already found there instead)."""
        syms = self.pair(judged or self.host.resolve(path), other or self.other.resolve(path))
        return {"old": self.old.location(syms.old), "new": self.new.location(syms.new)}

    def plugin_site(self, module: str, unit: str, node: ast.AST) -> Location:
        """The plugin location of an AST node in `module`, inside plugin unit `unit`, with its line's text."""
        return self.facts.plugin_line(module, getattr(node, "lineno", 0), unit, getattr(node, "col_offset", 0))


# -- findings shared by the checks of copies (forks, mirrors) ------------------------------------
C = TypeVar("C")


def judges_new_only(run: Callable[[C, ScanContext], Iterator[Finding]]) -> Callable[[C, ScanContext], Iterator[Finding]]:
    """A check's `run` whose findings exist only against NEW (an upstream change the move brings):
    on the scan's OLD pass it yields nothing, so its findings are drift or fixed, never latent."""
    @wraps(run)
    def on_new(check: C, ctx: ScanContext) -> Iterator[Finding]:
        if ctx.judging_new:
            yield from run(check, ctx)
    return on_new


def copy_change_finding(kind: Kind, ctx: ScanContext, copy: Copy, change: UpstreamChange, args: dict[str, Arg],
                   suggestion: str) -> Finding:
    """The finding for a copy whose upstream changed: warning while hunks are pending, else info."""
    pending = len(change.pending)
    site = Location(copy.plugin.path, copy.plugin.start, 0, copy.unit,
                    next((x.strip() for x in span_lines(ctx.plugin.index, copy.plugin) if x.strip()), ""))
    return Finding(kind, {**args, "label": ctx.new.label, "pending": pending, "hunks": len(change.hunks)},
                   site, old=span_location(ctx.old.index, copy.old, copy.subject),
                   new=span_location(ctx.new.index, copy.new, copy.subject), subject=copy.subject,
                   suggestion=suggestion if pending else "nothing to port: the plugin copy already has every hunk",
                   details=change_details(copy, change, ctx.plugin.index, ctx.old.index),
                   severity=None if pending else Severity.INFO,
                   extra={"pending_hunks": [h.header for h in change.pending], "score": copy.score})


def copy_lag_finding(kind: Kind, ctx: ScanContext, copy: Copy, origin: Origin, args: dict[str, Arg]) -> Finding:
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
    return Finding(kind, {**args, "origin": described, "pending": len(origin.missed.pending),
                          "hunks": len(origin.missed.hunks)}, site,
                   old=span_location(ctx.old.index, copy.old, copy.subject),
                   new=span_location(ctx.new.index, copy.new, copy.subject), subject=copy.subject,
                   suggestion=f"port the upstream changes made since {origin.release} (`pinport port` merges "
                              f"from {origin.release}, so they are in its proposal)",
                   details=details,
                   extra={"origin": origin.version, "through": origin.through, "changed_in": list(origin.changed_in),
                          "pending_hunks": [h.header for h in origin.missed.pending], "score": origin.score,
                          "old_score": origin.old_score})


def lagging_copies(ctx: ScanContext, kind: str) -> Iterator[tuple[Copy, Origin]]:
    """The copies of one kind ("fork", "mirror") made from a release before OLD that miss changes since."""
    for copy in ctx.facts.copies.copies:
        origin = ctx.facts.origins.get((copy.plugin.path, copy.plugin.start))
        if copy.kind == kind and origin is not None and origin.lags:
            yield copy, origin


def vanished_finding(kind: Kind, ctx: ScanContext, args: dict[str, Arg], site: Location, owner: str, name: str,
                     before: Symbol, rename: str, suggestion: str) -> Finding:
    """The finding for a `self.X` read that NEW's `owner` no longer defines: OLD's member, NEW's rename."""
    renamed = ctx.new.resolve(f"{owner}.{rename}") if rename else None
    return Finding(kind, {**args, "rename": f" (upstream now uses `{rename}`)" if rename else ""}, site,
                   subject=f"{owner}.{name}", old=ctx.old.location(before), new=ctx.new.location(renamed),
                   suggestion=suggestion)


class Check(Protocol):
    """A check: a name, the drift numbers it covers, its kinds, and a generator of findings.

    `run` reads only the context: no files, no parsing, no printing, no environment. Where it
    cannot decide, it skips (or yields a low-severity "unverified" finding), and it never raises
    on purpose; the scan turns an unexpected exception into an internal-error finding.
    """

    name: str
    drift: tuple[int, ...]
    kinds: tuple[Kind, ...]
    description: str
    cost: float  # relative run time (1 = typical), used to spread checks over the cores
    # costly shared facts the check reads (ScanFacts' names: "copies", "call_failures", "host_calls");
    # checks sharing one run in the same process, so it is built once (optional, default none)
    shares: tuple[str, ...]

    def run(self, ctx: ScanContext) -> Iterator[Finding]: ...
