"""Per-release copies with none for the host version (#8): the selector picking a copy admits no copy for it.

A plugin that keeps one copy of a host function per release (`vendored_scheduler_v026.py`, `_v0261.py`, …)
and picks one by the host version (`plugin.release_copies`) has nothing to run on a release no branch
admits: the copies' original changed after the newest copy was made, and the selector falls through to
its `raise` (an error at run time) or to whatever follows (a warning). The finding sits on the selector,
names the branches' tests and the copies' host original at OLD and NEW.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding, Kind, Location, Severity
from ..plugin.release_copies import Selector, admits
from .base import ScanContext

NAME = "release-copies"

NO_RELEASE_COPY = Kind("PP0810", "NoReleaseCopyForVersion",
                       "`{function}` picks a per-release copy of `{stem}` by the host version, and none of its "
                       "{count} copies is for {label}", Severity.ERROR, 8, NAME)

KINDS = (NO_RELEASE_COPY,)


class ReleaseCopiesCheck:
    name = NAME
    cost = 1  # relative run time (tenths of a second of a warm scan), to spread checks over two cores
    shares = ("copies",)  # the copies' original, read only for a selector that admits nothing
    drift = (8,)
    kinds = KINDS
    description = "a per-release copy picked by the host version exists for the host version judged"

    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        version = ctx.facts.host_version(ctx.host)
        if not version:
            return
        for selector in ctx.facts.release_selectors:
            if all(admits(b.test, version) is False for b in selector.branches):
                yield self._finding(ctx, selector)

    @staticmethod
    def _finding(ctx: ScanContext, selector: Selector) -> Finding:
        paths = {ctx.plugin.index.paths[m] for m in selector.copies if m in ctx.plugin.index.paths}
        copied = next((c for c in ctx.facts.copies.copies if c.plugin.path in paths), None)
        line = selector.fallthrough_line or selector.line
        site = ctx.facts.plugin_line(selector.module, line, selector.qualname)
        stem = selector.stem.rpartition(".")[2]
        branches = tuple(f"line {b.line}: `{b.text}` picks `{b.module.rpartition('.')[2]}`"
                         for b in selector.branches)
        what = (f"no branch is taken on {ctx.host.label}: the function then raises (line {line})" if selector.raises
                else f"no branch is taken on {ctx.host.label}: the function goes on at line {line} without a copy"
                if selector.fallthrough_line else f"no branch is taken on {ctx.host.label}: it returns None")
        details = (what, *branches)
        evidence: dict[str, Location | None] = {"old": None, "new": None}
        original = copied.subject if copied else next(
            (p for p in selector.originals if ctx.host.resolve(p) or ctx.other.resolve(p)), "")
        if original:
            evidence = ctx.evidence(original)
            details += (f"the copies' original: `{original}`" + (
                f" ({'changed' if copied.upstream_changed else 'unchanged'} between {ctx.old.label} and "
                f"{ctx.new.label}; `{copied.plugin.path}` copies it)" if copied else ""),)
        return Finding(NO_RELEASE_COPY, {"function": selector.qualname, "stem": stem, "label": ctx.host.label,
                                         "count": len(selector.copies)}, site,
                       subject=original or selector.stem,
                       severity=None if selector.raises else Severity.WARNING, details=details,
                       suggestion=f"add a copy for {ctx.host.label} (`{stem}_v…`: {ctx.host.label}'s original with "
                                  f"the plugin's changes carried over) and a branch picking it in "
                                  f"`{selector.qualname}`", **evidence)


__all__ = ["KINDS", "ReleaseCopiesCheck"]
