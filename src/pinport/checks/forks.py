"""Forked files (#8): a plugin file that copies a host file must carry the upstream changes.

Forks are found in `plugin/forks.py` against OLD (or declared in `[tool.pinport] forks`). For
each fork whose original changed OLD -> NEW, one finding carries the unified upstream diff with
every hunk marked as already in the fork or not; `pinport port` proposes the three-way merge.
Members the fork's classes read through `self` and inherit from host classes are checked like a
mirror's. The copied single lines elsewhere (the second site) are `copied_lines.py`'s business.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..findings import Finding, Kind, Location, Severity
from ..model.index import CodeIndex
from ..plugin.forks import module_of
from ..plugin.mirrors import Copy, Hunk, UpstreamChange, span_location, upstream_change
from ..plugin.uses import self_reads
from .base import (
    ScanContext,
    copy_change_finding,
    copy_lag_finding,
    lagging_copies,
    vanished_finding,
)

NAME = "forks"

FORK_CHANGED = Kind("PP0801", "ForkedFileChangedUpstream", "this file forks `{base}`, which {label} changed: "
                    "{pending} of {hunks} upstream hunks{where} are not in the fork", Severity.WARNING, 8, NAME)
FORK_MEMBER_GONE = Kind("PP0802", "ForkUsesRemovedMember", "`{unit}` uses `self.{name}`, inherited from "
                        "`{base}`, which {label} no longer defines{rename}", Severity.ERROR, 8, NAME)
FORK_SOURCE_GONE = Kind("PP0803", "ForkedFileRemovedUpstream", "this file forks `{base}`, which {label} no longer "
                        "has (and no file of the same name matches it)", Severity.WARNING, 8, NAME)
DECLARED_MISSING = Kind("PP0804", "DeclaredForkNotFound", "the declared fork `{name}` of `{base}` is not in "
                        "{label}", Severity.WARNING, 8, NAME)

FORK_LAGS = Kind("PP0807", "ForkLagsUpstream", "this file forks `{base}` and was {origin}; {pending} of {hunks} "
                 "upstream hunks since are not in the fork", Severity.WARNING, 8, NAME)

KINDS = (FORK_CHANGED, FORK_MEMBER_GONE, FORK_SOURCE_GONE, DECLARED_MISSING, FORK_LAGS)

_DEFINES = re.compile(r"^\+\s*(async\s+)?(def|class)\s")  # an added line that starts a new unit


class ForksCheck:
    name = NAME
    cost = 10  # relative run time (tenths of a second of a warm scan), to spread checks over two cores
    shares = ("copies",)  # costly shared facts: run beside the checks reading them
    drift = (8,)
    kinds = KINDS
    description = "files copied from the host carry the upstream changes, and what they inherit exists"

    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        for copy, origin in lagging_copies(ctx, "fork"):  # on both sides: latent
            yield copy_lag_finding(FORK_LAGS, ctx, copy, origin, {"name": copy.plugin.path, "base": copy.subject})
        if not ctx.judging_new:
            return  # an upstream change is made by the move; OLD has nothing to port
        yield from self._declared(ctx)
        for copy in ctx.facts.copies.copies:
            if copy.kind == "fork":
                yield from self._fork(ctx, copy)

    def _declared(self, ctx: ScanContext) -> Iterator[Finding]:
        for plugin_file, host_file in ctx.settings.forks:
            missing = [(ref, index) for ref, index in ((plugin_file, ctx.plugin.index), (host_file, ctx.old.index))
                       if not _exists(index, ref)]
            for _, index in missing[:1]:
                yield Finding(DECLARED_MISSING, {"name": plugin_file, "base": host_file, "label": index.label},
                              Location(plugin_file, 0), subject=host_file,
                              suggestion="fix the pair in `[tool.pinport] forks` (paths relative to each tree)")

    def _fork(self, ctx: ScanContext, copy: Copy) -> Iterator[Finding]:
        args = {"name": copy.plugin.path, "base": copy.subject}
        if copy.new is None:
            yield Finding(FORK_SOURCE_GONE, {**args, "label": ctx.new.label}, Location(copy.plugin.path, 1, 0,
                          "<module>"), old=span_location(ctx.old.index, copy.old, copy.subject), subject=copy.subject,
                          suggestion="find where upstream moved this code; declare the new pair in "
                                     "`[tool.pinport] forks` to keep tracking it")
            return
        if copy.upstream_changed:
            change = upstream_change(copy, ctx.old.index, ctx.new.index)
            if change is not None and change.hunks and not change.pending:
                yield copy_change_finding(FORK_CHANGED, ctx, copy, change, {**args, "where": ""},
                                          "nothing to port")
            elif change is not None:
                yield from self._pending_by_unit(ctx, copy, change, args)
        yield from self._members(ctx, copy)

    def _pending_by_unit(self, ctx: ScanContext, copy: Copy, change: UpstreamChange,
                         args: dict[str, str]) -> Iterator[Finding]:
        """One finding per fork unit (method, class body, module code) holding upstream hunks not yet
        ported: the place the port goes. Units of a fork class nothing uses are left out."""
        fork_units = _units(ctx.plugin.index, copy.plugin.module)
        host_units = _units(ctx.old.index, copy.old.module)
        new_units = _units(ctx.new.index, copy.new.module) if copy.new is not None else {}
        unused = {name for module, name in ctx.facts.unused_fork_classes if module == copy.plugin.module}
        by_unit: dict[str, list[Hunk]] = {}
        for hunk in change.hunks:
            unit = _unit_at(host_units, _first_changed(hunk))
            while unit != "<module>" and unit not in fork_units:
                unit = unit.rpartition(".")[0] or "<module>"  # new upstream code: the enclosing unit the fork has
            if unit.partition(".")[0] not in unused:
                by_unit.setdefault(unit, []).append(hunk)
        for unit, hunks in sorted(by_unit.items(), key=lambda kv: fork_units.get(kv[0], (1, 1))[0]):
            pending = [h for h in hunks if h.to_port]
            if not pending:
                continue
            line = fork_units.get(unit, (1, 1))[0]
            part = UpstreamChange(change.old_path, change.new_path, tuple(hunks))
            site = ctx.facts.plugin_line(copy.plugin.module, line, unit)
            # upstream deleted the whole unit (adding nothing in its place) and the fork keeps its own
            dropped = unit != "<module>" and unit not in new_units and not any(
                _DEFINES.match(x) for h in pending for x in h.lines)
            suggestion = (f"nothing to port: upstream removed `{unit}`; keep the fork's copy only while the "
                          "fork uses it" if dropped else
                          f"port the upstream hunks into `{unit}` (`pinport port` proposes a three-way merge of "
                          "the whole file)")
            yield Finding(FORK_CHANGED, {**args, "label": ctx.new.label, "pending": len(pending),
                                         "hunks": len(hunks), "unit": unit,
                                         "where": "" if unit == "<module>" else f" to `{unit}`"},
                          site, old=span_location(ctx.old.index, copy.old, copy.subject),
                          new=span_location(ctx.new.index, copy.new, copy.subject), subject=copy.subject,
                          suggestion=suggestion, severity=Severity.INFO if dropped else None,
                          details=part.diff_lines(), extra={"pending_hunks": [h.header for h in pending],
                                                            "score": copy.score})

    def _members(self, ctx: ScanContext, copy: Copy) -> Iterator[Finding]:
        """`self.X` reads in the fork's subclasses of host classes that NEW's base no longer defines."""
        module = copy.plugin.module
        for target in ctx.plugin.surface.targets:
            if target.plugin_module != module or target.is_patch:
                continue
            provided = ctx.facts.plugin_members(target.target)
            prefix = target.plugin_class + "."
            units = sorted(p.site.unit for p in ctx.plugin.surface.patches
                           if p.plugin_module == module and p.via == target.plugin_class and p.function)
            for unit in dict.fromkeys(units):
                node = ctx.plugin.function_node(module, unit)
                if node is None or not unit.startswith(prefix):
                    continue
                for name, line, before, rename in ctx.facts.vanished_members(target.target, self_reads(node), provided):
                    args = {"name": name, "unit": unit, "base": target.target, "label": ctx.new.label}
                    site = ctx.facts.plugin_line(module, line, unit)
                    yield vanished_finding(FORK_MEMBER_GONE, ctx, args, site, target.target, name, before, rename,
                                           f"use `self.{rename}`" if rename else "find what the upstream original "
                                           "uses instead (see the fork's upstream diff)")


def _units(index: CodeIndex, module: str) -> dict[str, tuple[int, int]]:
    """Qualified name -> (first, last line) of every function, class and method of a module."""
    summary = index.modules[module]
    out = {name: (fn.line, fn.end_line) for name, fn in summary.functions.items()}
    stack = [(c, c.name) for c in summary.classes.values()]
    while stack:
        cls, qual = stack.pop()
        out[qual] = (cls.line, cls.end_line)
        out.update({f"{qual}.{name}": (fn.line, fn.end_line) for name, fn in cls.methods.items()})
        stack.extend((inner, f"{qual}.{inner.name}") for inner in cls.classes.values())
    return out


def _unit_at(units: dict[str, tuple[int, int]], line: int) -> str:
    inside = [(b - a, name) for name, (a, b) in units.items() if a <= line <= b]
    return min(inside)[1] if inside else "<module>"


def _first_changed(hunk: Hunk) -> int:
    """The OLD line of a hunk's first removed line (or where its first addition goes)."""
    line = hunk.old_start
    for text in hunk.lines:
        if text[:1] in "-+":
            return line
        line += 1
    return hunk.old_start


def _exists(index: CodeIndex, ref: str) -> bool:
    return module_of(index, ref) is not None
