"""Source-text patches that stop applying (#8): `(old, new)` pairs the plugin writes into a host module's text.

A plugin that rewrites host source at import (vllm-musa's `patches/<module>.patch.py` files, found by
`plugin.source_patches`) depends on each `old` string being in the module's text, exactly: the patcher
applies a pair only where `old in source`. A pair whose text the host changed, or a module the host moved,
is skipped without a word (or raises, when the patcher's code raises on a miss), so the change it made
silently stops happening. Pairs of one file are often alternatives for different releases ("for vLLM
0.10.x", "for 0.13+"): a pair that does not apply is only info while another pair of its file takes its
place, and a finding of the kind's severity when nothing of the file applies any more (or a pair that
applied on the other version stops while its siblings stay as they were).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from ..findings import Finding, Kind, Location, Severity
from ..plugin.source_patches import SUFFIX, Patcher, PatchFile, TextPatch
from .base import ScanContext

NAME = "source-patches"

SOURCE_PATCH_TEXT_MISSING = Kind("PP0808", "SourcePatchTextMissing",
                                 "`{old}` is not in the source of `{module}` in {label}: this source patch of the "
                                 "plugin no longer applies", Severity.WARNING, 8, NAME)
SOURCE_PATCH_MODULE_MISSING = Kind("PP0809", "SourcePatchModuleMissing",
                                   "`{module}`, whose source the plugin's patch file rewrites, is not in {label}: "
                                   "none of its {count} pair(s) applies", Severity.WARNING, 8, NAME)

KINDS = (SOURCE_PATCH_TEXT_MISSING, SOURCE_PATCH_MODULE_MISSING)


def _short(text: str) -> str:
    """The first line of a pair's text, stripped and cut to a readable length (more lines: an ellipsis)."""
    lines = [x.strip() for x in text.splitlines() if x.strip()] or [text]
    first = lines[0] if len(lines[0]) <= 80 else lines[0][:77] + "..."
    return first + (" ..." if len(lines) > 1 else "")


def _severity(patcher: Patcher | None) -> tuple[Severity, str]:
    """The severity of a patch that no longer applies, and why: the patcher's behaviour on a miss."""
    if patcher is None:
        return Severity.WARNING, "no plugin code naming the `.patch.py` files was found: a miss taken as skipped"
    if patcher.strict:
        return Severity.ERROR, f"the patcher raises when a pair's text is missing ({patcher.path}:{patcher.line})"
    return Severity.WARNING, (f"the patcher applies a pair only where its text is found and skips it silently "
                              f"otherwise ({patcher.path}:{patcher.line})")


class SourcePatchesCheck:
    name = NAME
    cost = 1  # relative run time (tenths of a second of a warm scan), to spread checks over two cores
    shares: tuple[str, ...] = ()
    drift = (8,)
    kinds = KINDS
    description = "the host text a plugin's source-text patches replace is still in the module they rewrite"

    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        found = ctx.facts.source_patches
        for patch_file in found.files:
            yield from self._file(ctx, patch_file, found.patcher)

    def _file(self, ctx: ScanContext, pf: PatchFile, patcher: Patcher | None) -> Iterator[Finding]:
        module = pf.target
        judged = [ctx.facts.host_text_line(ctx.host, module, p.old) for p in pf.pairs]
        other = [ctx.facts.host_text_line(ctx.other, module, p.old) for p in pf.pairs]
        severity, why = _severity(patcher)
        if judged[0] is None:
            yield self._module_missing(ctx, pf, other[0] is not None, why)
            return
        applies, applied = {i for i, x in enumerate(judged) if x}, {i for i, x in enumerate(other) if x}
        for i, pair in enumerate(pf.pairs):
            if judged[i]:
                continue
            if other[i]:  # it stopped (or started) applying: info only when a sibling took its place
                quiet = bool(applies - applied)
            else:  # an alternative for another release, unless nothing of the file applies on either version
                quiet = bool(applies or applied)
            finding = self._text_missing(ctx, pf, i, pair, other[i], Severity.INFO if quiet else severity,
                                         (why, self._applying(ctx, pf, applies, applied)))
            if quiet and applies:
                finding = replace(finding, suggestion=f"nothing to port: another pair of the file applies in "
                                                      f"{ctx.host.label} (this one is for another release)")
            yield finding

    @staticmethod
    def _applying(ctx: ScanContext, pf: PatchFile, applies: set[int], applied: set[int]) -> str:
        def names(found: set[int]) -> str:
            return ", ".join(f"PATCHES[{i}]" for i in sorted(found)) or "none"
        return f"pairs of {pf.path} that apply in {ctx.host.label}: {names(applies)}; in {ctx.other.label}: " \
               f"{names(applied)}"

    def _text_missing(self, ctx: ScanContext, pf: PatchFile, index: int, pair: TextPatch, other_line: int | None,
                      severity: Severity, details: tuple[str, ...]) -> Finding:
        module, path = pf.target, ctx.host.index.paths[pf.target]
        other_at = ctx.facts.host_line_location(ctx.other, module, other_line) if other_line else None
        # where the text went: the lines the other version's match became (a line diff of the module),
        # else the block most like it, else another module holding it
        went = ctx.facts.text_counterpart(ctx.host, ctx.other, module, other_line, pair.old.count("\n") + 1) \
            if other_line else None
        near = went or ctx.facts.nearest_host_text(ctx.host, module, pair.old)
        judged_at, suggestion = self._moved(ctx, pf, pair.old)
        if near:
            judged_at = ctx.facts.host_line_location(ctx.host, module, near[0])
            source = f"{ctx.other.label}'s matching line became" if went else "the nearest text is"
            suggestion = (f"{source} `{_short(near[1])}` ({path}:{near[0]}) in {ctx.host.label}: port the pair to "
                          f"it, or drop the pair if that code no longer needs the change")
        suggestion = suggestion or (f"find what replaced `{_short(pair.old)}` in {ctx.host.label}'s `{module}` and "
                                    f"port the pair, or drop it")
        return Finding(SOURCE_PATCH_TEXT_MISSING, {"old": _short(pair.old), "module": module, "label": ctx.host.label},
                       Location(pf.path, pair.line, 0, f"PATCHES[{index}]", _short(pair.old)), subject=module,
                       severity=None if severity == SOURCE_PATCH_TEXT_MISSING.severity else severity,
                       suggestion=suggestion, details=details, **ctx.pair(judged_at, other_at)._asdict())

    def _module_missing(self, ctx: ScanContext, pf: PatchFile, on_other: bool, why: str) -> Finding:
        other_at = Location(ctx.other.index.paths[pf.target], 1, 0, pf.target, f"module {pf.target}") \
            if on_other else None
        judged_at, suggestion = next((m for m in (self._moved(ctx, pf, p.old) for p in pf.pairs) if m[0]),
                                     (None, ""))
        line = pf.target_line or pf.pairs[0].line
        return Finding(SOURCE_PATCH_MODULE_MISSING, {"module": pf.target, "label": ctx.host.label,
                                                     "count": len(pf.pairs)},
                       Location(pf.path, line, 0, "PATCHES", f"target {pf.target}"), subject=pf.target,
                       severity=None if on_other else Severity.INFO,
                       suggestion=suggestion or f"drop the patch file if `{pf.target}` is gone for good, or point "
                                                f"it at the module that took its code",
                       details=(why,) if on_other else (f"no version of the pair holds `{pf.target}`: a patch for "
                                                        f"another release, which the patcher skips",),
                       **ctx.pair(judged_at, other_at)._asdict())

    @staticmethod
    def _moved(ctx: ScanContext, pf: PatchFile, old: str) -> tuple[Location | None, str]:
        """Where the judged host has the text `old` in another module (one of the same name first), and
        the suggestion to retarget the patch there; (None, "") when no other module holds it."""
        holding = [m for m in ctx.facts.modules_holding(ctx.host, old) if m != pf.target]
        if not holding:
            return None, ""
        leaf = pf.target.rpartition(".")[2]
        module = next((m for m in holding if m.rpartition(".")[2] == leaf), holding[0])
        at = ctx.facts.host_line_location(ctx.host, module, ctx.facts.host_text_line(ctx.host, module, old) or 1)
        if pf.target_line:
            change = f"set the file's target to `{module}`"
        else:
            change = f"rename the patch file to `{module.replace('.', '__')}{SUFFIX}`"
        return at, f"the text is in `{module}` ({at.path}:{at.line}) in {ctx.host.label}: {change}"


__all__ = ["KINDS", "SourcePatchesCheck"]
