"""Merge proposals: for each mirror and fork, the three-way merge of the upstream change into the
plugin copy, and what the plugin's files would look like with every proposal in place.

A mirror is merged as its dedented method text (decorators included) and re-indented to where
it sits; a fork is merged as the whole file. Conflict markers stay at column 0, where editors
and `git diff --check` find them.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from ..model.index import CodeIndex
from ..plugin.mirrors import Copy, span_lines
from ..plugin.similarity import LineDelta, line_delta
from .merge import MergeResult, is_marker, merge3

UNCHANGED, CLEAN, CONFLICT, GONE = "unchanged", "clean", "conflict", "gone"


@dataclass(frozen=True)
class PortItem:
    """One copy and its proposal: status, the merged text and the lines that replace the copy."""

    copy: Copy
    status: str  # UNCHANGED (upstream did not change it), CLEAN, CONFLICT, GONE (NEW lacks it)
    delta: LineDelta  # what the copy kept, changed and added relative to upstream OLD
    merge: MergeResult | None = None
    proposal: tuple[str, ...] = ()  # the replacement lines, indented as in the plugin file

    @property
    def conflicts(self) -> int:
        return self.merge.conflicts if self.merge else 0

    @property
    def changes(self) -> bool:
        """Whether the proposal differs from the plugin copy (a clean merge may change nothing)."""
        return self.merge is not None and self.merge.text != self.copy.ours


def reindent(text: str, indent: str) -> tuple[str, ...]:
    """Lines of a dedented block put back at `indent`; blank lines and conflict markers stay bare."""
    return tuple(line if not line.strip() or is_marker(line) else indent + line for line in text.splitlines())


def plan_item(copy: Copy, plugin: CodeIndex, old: CodeIndex, labels: tuple[str, str, str]) -> PortItem:
    """Merge one copy (a real three-way merge) unless upstream left it alone or NEW lacks it."""
    delta = line_delta(span_lines(old, copy.old), span_lines(plugin, copy.plugin), copy.old.start,
                       copy.plugin.start)
    if copy.theirs is None:
        return PortItem(copy, GONE, delta)
    if not copy.upstream_changed:
        return PortItem(copy, UNCHANGED, delta)
    merged = merge3(copy.ours, copy.base, copy.theirs, labels=labels)
    return PortItem(copy, CLEAN if merged.clean else CONFLICT, delta, merged, reindent(merged.text, copy.indent))


@dataclass(frozen=True)
class FileProposal:
    """One plugin file with every proposal for it in place."""

    path: str
    module: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    items: tuple[PortItem, ...]

    def diff(self, context: int = 3) -> list[str]:
        """`git apply`-able unified diff of the file, before -> after."""
        return list(difflib.unified_diff([x + "\n" for x in self.before], [x + "\n" for x in self.after],
                                         f"a/{self.path}", f"b/{self.path}", n=context))


def file_proposals(items: tuple[PortItem, ...], plugin: CodeIndex) -> list[FileProposal]:
    """Per plugin file, its lines with each changing proposal replacing the copy's lines."""
    by_path: dict[str, list[PortItem]] = {}
    for item in items:
        if item.changes:
            by_path.setdefault(item.copy.plugin.path, []).append(item)
    out = []
    for path, group in sorted(by_path.items()):
        module = group[0].copy.plugin.module
        before = tuple(plugin.lines(module))
        after = list(before)
        for item in sorted(group, key=lambda i: -i.copy.plugin.start):  # bottom-up keeps spans valid
            span = item.copy.plugin
            after[span.start - 1:span.end] = item.proposal
        group.sort(key=lambda i: i.copy.plugin.start)
        out.append(FileProposal(path, module, before, tuple(after), tuple(group)))
    return out
