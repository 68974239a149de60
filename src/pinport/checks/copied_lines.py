"""Copied lines (#8, the second site): single upstream lines the plugin copied outside its forks
and mirrors, where NEW changed or removed the original.

A layout change upstream (`kv_cache.unbind(0)` -> `unbind(1)`) is ported in the fork and then
crashes in the one other file that copied the same line. Candidate originals are the host files
the plugin touches (its imports, its patch targets, and its forks' and mirrors' originals); a
plugin line matches when it is the same line modulo layout, or nearly (token similarity), and
is not at least as close to NEW's form already. Reported only when judging NEW. A line of a host
module NEW no longer has at all is context (info): there is no counterpart to port, and the
module's own finding (the import, patch target, fork or mirror of it) carries the break.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding, Kind, Location, Severity
from ..model.resolve import MODULE
from ..plugin.counterparts import unit_counterparts
from ..plugin.forks import CopiedLine, Copies, find_copied_lines
from .base import ScanContext, judges_new_only

NAME = "copied-lines"

LINE_CHANGED = Kind("PP0805", "CopiedLineChangedUpstream", "this line copies `{old}` from `{base}`, which {label} "
                    "changed to `{new}`", Severity.WARNING, 8, NAME)
LINE_REMOVED = Kind("PP0806", "CopiedLineRemovedUpstream", "this line copies `{old}` from `{base}`, which {label} "
                    "removed", Severity.WARNING, 8, NAME)

KINDS = (LINE_CHANGED, LINE_REMOVED)


def host_surface(ctx: ScanContext, copies: Copies) -> set[str]:
    """OLD modules the plugin touches: what it imports, what it patches, what it forks and mirrors."""
    old = ctx.old
    out = {f.host_module for f in copies.forks} | {m.upstream.module for m in copies.mirrors}
    paths = {i.path for i in ctx.plugin.surface.imports} | {p.owner for p in ctx.plugin.surface.patches}
    for path in sorted(paths):
        if path in old.index.modules:
            out.add(path)
            continue
        sym = old.resolve(path)
        if sym is not None and sym.module:
            out.add(sym.module)
        elif sym is None or sym.kind != MODULE:
            head = path.rpartition(".")[0]
            if head in old.index.modules:
                out.add(head)
    return out


def find_second_sites(ctx: ScanContext) -> list[CopiedLine]:
    """The copied lines of this scan (outside forks and mirrors)."""
    copies = ctx.facts.copies
    exclude: dict[str, list[tuple[int, int]]] = {}
    for copy in copies.copies:
        exclude.setdefault(copy.plugin.path, []).append((copy.plugin.start, copy.plugin.end))
    def build() -> list[CopiedLine]:
        surface = host_surface(ctx, copies)
        return find_copied_lines(ctx.plugin, ctx.old.index, ctx.new.index, surface, exclude,
                                 unit_counterparts(ctx.plugin, ctx.old, ctx.new, surface))
    return ctx.facts.stored("copied-lines-1", list[CopiedLine], build, ctx.old, ctx.new)  # a fact of the three trees


class CopiedLinesCheck:
    name = NAME
    cost = 5  # relative run time (tenths of a second of a warm scan), to spread checks over two cores
    shares = ("copies",)  # costly shared facts: run beside the checks reading them
    drift = (8,)
    kinds = KINDS
    description = "single lines copied from the host, outside forks and mirrors, follow the upstream change"

    @judges_new_only
    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        for copied in find_second_sites(ctx):
            kind = LINE_CHANGED if copied.new_line else LINE_REMOVED
            module_gone = not copied.new_line and copied.host_module not in ctx.new.index.modules
            args = {"name": copied.text, "old": copied.old_text, "new": copied.new_text,
                    "base": copied.host_module, "label": ctx.new.label}
            new = Location(copied.new_path, copied.new_line, 0, copied.host_module, copied.new_text) \
                if copied.new_line else None
            yield Finding(kind, args, Location(copied.plugin_path, copied.line, 0, copied.unit, copied.text),
                          old=Location(copied.old_path, copied.old_line, 0, copied.host_module, copied.old_text),
                          new=new, subject=copied.host_module,
                          suggestion=(f"port the line as upstream did: `{copied.new_text}`" if copied.new_line
                                      else "find what upstream does instead, or keep the line deliberately"),
                          severity=Severity.INFO if module_gone else None,
                          details=(f"similarity {copied.score:.2f} to {copied.old_path}:{copied.old_line}",) + (
                              (f"{ctx.new.label} has no module `{copied.host_module}` at all: nothing to port "
                               "line by line; its import, patch, fork or mirror finding carries the break",)
                              if module_gone else ()),
                          extra={"score": copied.score})
