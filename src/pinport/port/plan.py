"""Merge proposals: for each mirror and fork, the three-way merge of the upstream change into the
plugin copy, and what the plugin's files would look like with every proposal in place.

A mirror is merged as its dedented method text (decorators included) and re-indented to where
it sits; a fork is merged as the whole file. Conflict markers stay at column 0, where editors
and `git diff --check` find them.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass

from ..model.index import CodeIndex, IndexCache
from ..plugin.mirrors import Copy, span_lines
from ..plugin.origins import Origin
from ..plugin.similarity import LineDelta, line_delta
from .merge import MergeResult, conflict_lines, is_marker, merge3
from .refine import (
    Refined,
    Rename,
    apply_renames,
    find_renames,
    imported_names,
    is_reflow,
    refine_merge,
    resolved,
)

UNCHANGED, CLEAN, CONFLICT, GONE = "unchanged", "clean", "conflict", "gone"
UNVERIFIED = "unverified"
_REFINE_LINES = 12_000  # the finer merges are for methods and files of ordinary size; beyond, git's result stands  # merged without conflicts, but the proposal failed verification


@dataclass(frozen=True)
class PortItem:
    """One copy and its proposal: status, the merged text and the lines that replace the copy."""

    copy: Copy
    status: str  # UNCHANGED (upstream did not change it), CLEAN, CONFLICT, GONE (NEW lacks it), UNVERIFIED
    delta: LineDelta  # what the copy kept, changed and added relative to upstream OLD
    merge: MergeResult | None = None
    proposal: tuple[str, ...] = ()  # the replacement lines, indented as in the plugin file
    line_conflicts: int = 0  # conflict blocks git's line merge left, before the finer merges
    refined: Refined | None = None  # the statement/token-level retry, when the line merge conflicted
    renames: tuple[Rename, ...] = ()  # upstream renames applied to the plugin's own lines
    refused: tuple[str, ...] = ()  # plugin lines a finer merge would have lost (so it was not used)
    origin: Origin | None = None  # the release the copy matches best (the merge base when it lags OLD)
    verified: bool = False  # a clean proposal that parses and re-scans without new findings (port.verify)
    verification: str = ""  # why an UNVERIFIED proposal failed

    @property
    def base_label(self) -> str:
        """The release merged from: the copy's origin when it lags OLD, else OLD."""
        return self.origin.release if self.origin is not None and self.origin.lags else ""

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


def plan_item(copy: Copy, plugin: CodeIndex, old: CodeIndex, labels: tuple[str, str, str],
              origin: Origin | None = None, cache: IndexCache | None = None) -> PortItem:
    """Merge one copy (a real three-way merge) unless upstream left it alone or NEW lacks it.

    A copy made from an earlier release than OLD (`origin.lags`) is merged with that release as
    the base, so the upstream changes of the bumps it skipped are in the proposal too. With a
    `cache`, the merge is kept there across runs (`stored_merge`).
    """
    delta = line_delta(span_lines(old, copy.old), span_lines(plugin, copy.plugin), copy.old.start,
                       copy.plugin.start)
    lagging = origin if origin is not None and origin.lags else None
    if copy.theirs is None:
        return PortItem(copy, GONE, delta, origin=origin)
    if not copy.upstream_changed and lagging is None:
        return PortItem(copy, UNCHANGED, delta, origin=origin)
    base = lagging.text if lagging is not None else copy.base
    if lagging is not None:
        labels = (labels[0], lagging.release, labels[2])
    merged, line_conflicts, refined, renames, refused = stored_merge(copy.ours, base, copy.theirs, labels, cache)
    return PortItem(copy, CLEAN if merged.clean else CONFLICT, delta, merged, reindent(merged.text, copy.indent),
                    line_conflicts, refined, renames, refused, origin)


Merged = tuple[MergeResult, int, Refined | None, tuple[Rename, ...], tuple[str, ...]]  # see `merge_copy`


def stored_merge(ours: str, base: str, theirs: str, labels: tuple[str, str, str],
                 cache: IndexCache | None) -> Merged:
    """`merge_copy`, kept in the index cache from one run to the next under the three texts, the
    labels and pinport's code (all it depends on): the statement and token merges are most of
    planning a port, and a rebase plans the same merges on every run. A row that does not read is
    merged again; without a cache, merged every time."""
    if cache is None:
        return merge_copy(ours, base, theirs, labels)
    digest = hashlib.blake2b("\0".join((ours, base, theirs, *labels)).encode("utf-8", "surrogatepass"),
                             digest_size=16).hexdigest()
    return cache.stored(f"merge-1:{digest}:{cache.code_version}", Merged,
                        lambda: merge_copy(ours, base, theirs, labels))


def merge_copy(ours: str, base: str, theirs: str, labels: tuple[str, str, str]) -> Merged:
    """git's line merge; where it conflicts, the statement/token-level retry, kept only when it
    leaves fewer (or smaller) conflicts and loses none of the plugin's own lines; upstream renames applied to
    the plugin's lines. (result, line-merge conflicts, the retry, renames applied, lines refused)."""
    line = merge3(ours, base, theirs, labels=labels)
    small = sum(x.count("\n") for x in (ours, base, theirs)) <= _REFINE_LINES
    refined = refine_merge(ours, base, theirs, labels) if line.conflicts and small else None
    refused: tuple[str, ...] = ()
    if refined is not None and (refined.conflicts, _marked_lines(refined.text)) < (line.conflicts,
                                                                                   _marked_lines(line.text)):
        lost = lost_plugin_lines(ours, base, refined.text, refined.renames, refined.rewritten, refined.reflowed)
        if not lost:
            return MergeResult(refined.text, conflict_lines(refined.text)), line.conflicts, refined, \
                refined.renames, ()
        refused = lost
    renames = tuple(r for r in find_renames(base, theirs)
                    if any(apply_renames(x, [r]) != x for x in _outside_base(line.text)))
    text = line.text
    if renames:
        text = "\n".join(x if m else apply_renames(x, renames) for x, m in _marked(text)) + "\n"
    return MergeResult(text, conflict_lines(text)), line.conflicts, refined, renames, refused


def _marked(text: str) -> list[tuple[str, bool]]:
    """Each line, and whether it is a conflict marker or on the OLD side of a conflict (left as is)."""
    out, in_base = [], False
    for line in text.splitlines():
        marker = is_marker(line)
        if line.startswith("||||||| "):
            in_base = True
        elif marker:
            in_base = False
        out.append((line, marker or in_base))
    return out


def _marked_lines(text: str) -> int:
    """Lines inside conflict blocks: a finer merge with as many blocks but smaller ones is better."""
    inside, count = False, 0
    for line in text.splitlines():
        if line.startswith("<<<<<<< "):
            inside = True
        elif line.startswith(">>>>>>> "):
            inside = False
        elif inside:
            count += 1
    return count


def _outside_base(text: str) -> list[str]:
    return [x for x, kept in _marked(text) if not kept]


def lost_plugin_lines(ours: str, base: str, merged: str, renames: tuple[Rename, ...] = (),
                      rewritten: dict[str, str] | None = None,
                      reflowed: tuple[tuple[str, str], ...] = ()) -> tuple[str, ...]:
    """The plugin's own lines (not in the base) that a merged text no longer holds, even renamed
    or rewritten by a token merge: what a proposal must never lose. Lines of a statement the plugin
    only re-laid out carry nothing of its own; each such claim is checked again here (the same
    syntax tree as OLD's statement, no comment OLD lacks) and must be a stretch of the copy."""
    theirs_base = {x.strip() for x in base.splitlines()}
    result = {x.strip() for x in merged.splitlines()}
    rewritten = rewritten or {}
    layout_only = {x.strip() for mine, old in reflowed if mine in ours and is_reflow(mine, old)
                   for x in mine.splitlines()}
    imports: set[tuple[str, str]] | None = None
    lost = []
    for line in dict.fromkeys(x.strip() for x in ours.splitlines()):
        if not line or line in theirs_base or line in result or line in layout_only:
            continue
        names = imported_names(line)
        if names:  # a plugin's import kept when the merge still imports each of its names from there
            if imports is None:
                imports = imported_names("\n".join(resolved(merged.splitlines(), 0)))
            if names <= imports:
                continue
        if apply_renames(line, renames) in result or rewritten.get(line) in result:
            continue
        lost.append(line)
    return tuple(lost)


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
