"""Where each copy really came from: the host release whose version of the copied code it matches best.

A mirror or fork is usually compared with its upstream at OLD, but a copy that missed a bump was
made from an older release: merging with OLD as the base then leaves out the upstream changes of
the bumps it skipped. This module compares each copy with its counterpart in every earlier
release the caller has (same host module, same qualified name), best match wins (the newest of
equally good ones), and says which upstream changes between that release and OLD the copy lacks.
Only the counterpart files are indexed (a sub-tree per release), so a history of forty releases
costs well under a second with a warm index cache.
"""

from __future__ import annotations

import builtins
import difflib
import keyword
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..model.index import CodeIndex, IndexCache, load_indexes
from ..sources.tree import SourceTree
from .mirrors import (
    Copy,
    Span,
    UpstreamChange,
    function_by_qualname,
    function_span,
    span_text,
    upstream_change,
)
from .similarity import block_ratio, line_tokens


@dataclass(frozen=True)
class Origin:
    """The release a copy matches best, how well (and how well OLD matches), and what it missed."""

    release: str  # label of the best release ("vllm 0.18.0")
    version: str
    through: str  # the newest release with the same code ("" when only `version` has it)
    score: float
    old_score: float
    span: Span  # the counterpart in that release
    text: str  # its dedented text: the merge base
    changed_in: tuple[str, ...]  # later releases up to OLD in which upstream changed the code
    missed: UpstreamChange | None  # the release -> OLD diff, hunks marked as in the copy or not

    @property
    def lags(self) -> bool:
        """The copy derives from an earlier release and lacks some upstream change made since."""
        return bool(self.changed_in) and self.missed is not None and bool(self.missed.pending)

    def describe(self, old_label: str) -> str:
        """`copied from vllm 0.18.0 (the same code through 0.20.2) and not updated since: upstream
        changed it in 0.21.0, 0.24.0`, or that it matches OLD."""
        same = f" (the same code through {self.through})" if self.through and self.through != self.version else ""
        if not self.changed_in:
            return f"copied from {self.release}{same}, current at {old_label}"
        return (f"copied from {self.release}{same} and not updated since: upstream changed it in "
                f"{', '.join(self.changed_in)}")


def _counterpart(index: CodeIndex, copy: Copy) -> Span | None:
    """The copied code in one release: the same module (a fork), or the same function in it."""
    module = copy.old.module
    summary = index.modules.get(module) if module in index.paths else None
    if summary is None:
        return None
    if copy.kind == "fork":
        lines = index.lines(module)
        return Span(module, index.paths[module], 1, max(1, len(lines)), module)
    fn = function_by_qualname(summary, copy.old.qualname)
    return function_span(index, module, fn, copy.old.qualname) if fn is not None else None


_TIE = 0.01  # origins scoring this close are equally likely by similarity alone (a re-wrap moves it this much)
_NOT_NAMES = frozenset(keyword.kwlist) | frozenset(dir(builtins))


def _names(text: str) -> set[str]:
    return {t for x in text.splitlines() for t in line_tokens(x) if t.isidentifier()} - _NOT_NAMES


def knows_newer_code(ours: str, origin: str, old: str) -> bool:
    """Whether a copy names every identifier upstream brought in after `origin` (OLD has it, `origin` does
    not): it was made from code that new, so a near tie in similarity is no evidence of an older
    origin (a re-wrap or a rewrite moves the scores more than that). Naming only some is a partial
    port, which may still lack the rest."""
    added = _names(old) - _names(origin)
    return bool(added) and added <= _names(ours)


def _tokens(text: str) -> list[list[str]]:
    return [t for t in map(line_tokens, text.splitlines()) if t]


def _squashed(text: str) -> list[str]:
    return [" ".join(x.split()) for x in text.splitlines() if x.strip() and not x.lstrip().startswith("#")]


def _bag_ratio(a: Counter[str], b: Counter[str]) -> float:
    """An upper bound of `_line_ratio` from the lines alone, order ignored."""
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    common = sum(min(n, large.get(x, 0)) for x, n in small.items())
    return 2 * common / ((sum(a.values()) + sum(b.values())) or 1)


def _line_ratio(a: list[str], b: list[str]) -> float:
    """Share of lines two files have in common, in order (whole files: lines, not tokens)."""
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return 2 * sum(m.size for m in matcher.get_matching_blocks()) / ((len(a) + len(b)) or 1)


def history_indexes(copies: Sequence[Copy], history: Sequence[SourceTree],
                    cache: IndexCache | None) -> list[CodeIndex]:
    """An index per earlier release holding only the files the copies were copied from."""
    paths = {c.old.path for c in copies}
    trees = [replace(t, files={p: h for p, h in t.files.items() if p in paths}) for t in history]
    trees = [t for t in trees if t.files and all((t.root / p).is_file() for p in t.files)]
    return load_indexes(trees, cache) if trees else []


def find_origin(copy: Copy, releases: Sequence[CodeIndex], old: CodeIndex) -> Origin | None:
    """The release (of `releases`, oldest first, all older than OLD; then OLD) whose counterpart the
    copy matches best; None when no release but OLD has it."""
    ours = _tokens(copy.ours) if copy.kind == "mirror" else _squashed(copy.ours)
    candidates: list[tuple[str, str, Span, str, CodeIndex]] = []
    known: dict[str, tuple[Span, str] | None] = {}  # file hash -> the counterpart in that file
    for index in releases:
        digest = index.tree.files.get(copy.old.path, "")
        if digest not in known:
            span = _counterpart(index, copy)
            known[digest] = (span, span_text(index, span)) if span is not None else None
        found = known[digest]
        if found is not None:
            candidates.append((index.label, index.tree.version or index.label, found[0], found[1], index))
    candidates.append((old.label, old.tree.version or old.label, copy.old, copy.base, old))
    if len(candidates) == 1:
        return None
    scores: dict[str, float] = {}
    last: dict[str, int] = {}
    for i, c in enumerate(candidates):
        if c[3] not in scores:
            scores[c[3]] = block_ratio(_tokens(c[3]), ours) if copy.kind == "mirror" else _bag_ratio(
                Counter(_squashed(c[3])), Counter(ours))
        last[c[3]] = i
    if copy.kind == "fork":  # whole files: the order-blind bound ranks them, the best few are aligned
        for t in sorted(scores, key=lambda t: -scores[t])[:3] + [copy.base]:
            scores[t] = _line_ratio(_squashed(t), ours) + 1.0  # aligned scores rank above bounds
    text = max(scores, key=lambda t: (round(scores[t], 6), last[t]))  # the newest of equally good
    if (copy.kind == "mirror" and text != copy.base and scores[text] - scores[copy.base] < _TIE
            and knows_newer_code(copy.ours, text, copy.base)):
        text = copy.base  # a near tie, and the copy knows OLD's code: it was made from OLD's
    start = next(i for i, c in enumerate(candidates) if c[3] == text)
    end = start
    while end + 1 < len(candidates) and candidates[end + 1][3] == text:
        end += 1
    first = candidates[start]
    changed_in, previous = [], text
    for c in candidates[end + 1:]:
        if c[3] != previous:
            changed_in.append(c[1])
            previous = c[3]
    missed = None
    if changed_in:
        origin_copy = replace(copy, old=first[2], new=copy.old, base=text, theirs=copy.base)
        missed = upstream_change(origin_copy, first[4], old)
    bonus = 1.0 if copy.kind == "fork" else 0.0
    return Origin(first[0], first[1], candidates[end][1] if end > start else "", round(scores[text] - bonus, 3),
                  round(scores[copy.base] - bonus, 3), first[2], text, tuple(changed_in), missed)


def copy_origins(copies: Sequence[Copy], plugin: CodeIndex, old: CodeIndex, history: Sequence[SourceTree],
                 cache: IndexCache | None) -> dict[tuple[str, int], Origin]:
    """(plugin path, first line) of each copy -> its origin; memoised per plugin index and inputs.

    Each copy's origin is also kept on OLD's index by what it depends on (the copied text and its
    OLD original), so another tree of the same plugin (a merge's verification copy) finds the
    origins of the copies it did not change instead of matching them against the history again."""
    labels = tuple(t.label for t in history)
    key = ("origins", id(old), labels, tuple((c.plugin.path, c.plugin.start) for c in copies))

    def build() -> dict[tuple[str, int], Origin]:
        loaded: dict[str, list[CodeIndex]] = {}  # the history's indexes, made for the first copy not kept

        def find(copy: Copy) -> Origin | None:
            if "releases" not in loaded:
                loaded["releases"] = history_indexes(copies, history, cache)
            return find_origin(copy, loaded["releases"], old)

        out = {}
        for copy in copies:
            origin = old.memo(("origin", labels, copy.kind, copy.ours, copy.old, copy.base),
                              lambda copy=copy: find(copy))
            if origin is not None:
                out[(copy.plugin.path, copy.plugin.start)] = origin
        return out

    return plugin.memo(key, build)
