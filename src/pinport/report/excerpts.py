"""The source an HTML report shows beside each finding, taken from the scan's already-loaded models.

The renderers only see a ScanResult; the HTML report also shows code around each plugin, OLD and
NEW location and, for mirrors and forks, the upstream OLD -> NEW change and the three-way merge
proposal (`pinport.port`). This module gathers that once, as plain data, from the models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..config import Settings
from ..findings import Location, ScanResult
from ..model.index import CodeIndex
from ..scan import Models, repository_prefix

if TYPE_CHECKING:
    from ..port import PortItem

BEFORE, AFTER = 3, 6  # lines of context shown around a location


@dataclass(frozen=True)
class Excerpt:
    """Lines `start`.. of one file, with the line a finding points at."""

    path: str
    start: int
    lines: tuple[str, ...]
    focus: int


@dataclass(frozen=True)
class PortView:
    """One mirrored method or forked file: upstream OLD and NEW, the plugin copy and the merge proposal."""

    kind: str  # "mirror" or "fork"
    path: str  # plugin path, repository-relative
    unit: str
    subject: str  # the upstream function or module
    status: str  # pinport.port's status: clean, conflict, unchanged, gone
    base: str  # upstream at OLD
    theirs: str  # upstream at NEW ("" when NEW lacks it)
    ours: str  # the plugin's copy
    merged: str  # the proposal with diff3 conflict markers ("" when nothing was merged)
    conflicts: int
    base_label: str = ""  # the release merged from when the copy lags OLD ("" = OLD)
    explanations: tuple = ()  # pinport.port.Explanation per conflict block: plugin | upstream change | resolution


@dataclass(frozen=True)
class HtmlContext:
    """Excerpts keyed by (side, path, line), side in plugin/old/new; port views by (path, unit)."""

    excerpts: dict[tuple[str, str, int], Excerpt] = field(default_factory=dict)
    ports: dict[tuple[str, str], PortView] = field(default_factory=dict)


def _excerpt(index: CodeIndex, path: str, line: int, modules: dict[str, str]) -> Excerpt | None:
    module = modules.get(path)
    if module is None or line < 1:
        return None
    lines = index.lines(module)
    start = max(1, line - BEFORE)
    return Excerpt(path, start, tuple(lines[start - 1:line + AFTER]), line)


def build_html_context(models: Models, settings: Settings, result: ScanResult, *, ports: bool = True,
                       port_items: tuple[PortItem, ...] | None = None) -> HtmlContext:
    """Excerpts for every location of `result`'s findings and, unless `ports` is off, the port
    proposals (`port_items` when the caller planned them already, as the rebase does)."""
    prefix = repository_prefix(models.plugin.index.tree)
    sides = {
        "plugin": (models.plugin.index, {prefix + p: m for m, p in models.plugin.index.paths.items()}),
        "old": (models.old.index, {p: m for m, p in models.old.index.paths.items()}),
        "new": (models.new.index, {p: m for m, p in models.new.index.paths.items()}),
    }
    excerpts: dict[tuple[str, str, int], Excerpt] = {}
    for f in (*result.findings, *result.fixed):
        for side, loc in (("plugin", f.plugin), ("old", f.old), ("new", f.new)):
            if isinstance(loc, Location) and (side, loc.path, loc.line) not in excerpts:
                index, modules = sides[side]
                if (found := _excerpt(index, loc.path, loc.line, modules)) is not None:
                    excerpts[(side, loc.path, loc.line)] = found
    views: dict[tuple[str, str], PortView] = {}
    if ports:
        # the port machinery only when a report asks for it
        from ..port import explain_conflicts, plan_port

        if port_items is None:
            port_items = plan_port(models, settings)
        for item in port_items:
            copy = item.copy
            path = prefix + copy.plugin.path
            views[(path, copy.unit)] = PortView(
                kind=copy.kind, path=path, unit=copy.unit, subject=copy.subject, status=item.status,
                base=copy.base, theirs=copy.theirs or "", ours=copy.ours,
                merged=item.merge.text if item.merge else "", conflicts=item.conflicts,
                base_label=item.base_label, explanations=tuple(explain_conflicts((item,))))
    return HtmlContext(excerpts, views)
