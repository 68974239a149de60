"""Every conflict left, explained side by side (#15 part 3).

For each conflict block of a proposal: the plugin's lines, upstream's change of the same region
(base -> NEW, as a diff), and, when one side's change is a pure rename, an added argument or
added statements, a suggested resolution (the other side's lines with that change carried over).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from .merge import MARKERS
from .plan import PortItem
from .refine import apply_renames, find_renames, tokens


@dataclass(frozen=True)
class Explanation:
    """One conflict block: where, the three sides, upstream's change, and what to do."""

    path: str
    unit: str
    line: int  # the `<<<<<<<` line in the proposed file
    base_label: str
    plugin: tuple[str, ...]
    base: tuple[str, ...]
    upstream: tuple[str, ...]
    upstream_change: tuple[str, ...]  # unified diff base -> NEW of the region
    kind: str  # "rename", "added argument", "added statements", "removed upstream", "removed here", ""
    suggestion: str
    resolution: tuple[str, ...] = ()  # suggested lines for the block, when one side's change carries over

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "unit": self.unit, "line": self.line, "base": self.base_label,
                "plugin_lines": list(self.plugin), "base_lines": list(self.base), "upstream_lines": list(self.upstream),
                "upstream_change": list(self.upstream_change), "kind": self.kind, "suggestion": self.suggestion,
                "resolution": list(self.resolution)}


def _blocks(lines: tuple[str, ...]) -> list[tuple[int, list[str], list[str], list[str]]]:
    """(index of the `<<<<<<<` line, plugin, base, upstream lines) of each conflict block."""
    out = []
    i = 0
    while i < len(lines):
        if lines[i].startswith(MARKERS[0]):
            start, sides, side = i, ([], [], []), 0
            i += 1
            while i < len(lines) and not lines[i].startswith(MARKERS[3]):
                if lines[i].startswith(MARKERS[1]):
                    side = 1
                elif lines[i] == MARKERS[2]:
                    side = 2
                else:
                    sides[side].append(lines[i])
                i += 1
            out.append((start, *sides))
        i += 1
    return out


def _stripped(lines: list[str]) -> list[str]:
    return [x.strip() for x in lines if x.strip()]


def _added_only(base: list[str], side: list[str]) -> list[tuple[int, list[str]]] | None:
    """Where `side` only adds lines to `base`: (base position, lines added there); None otherwise."""
    matcher = difflib.SequenceMatcher(None, [x.strip() for x in base], [x.strip() for x in side], autojunk=False)
    out = []
    for op, i1, _, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        if op != "insert":
            return None
        out.append((i1, side[j1:j2]))
    return out or None


def _insert(into: list[str], base: list[str], added: list[tuple[int, list[str]]]) -> list[str] | None:
    """`added` (base positions -> lines) put into `into` after the line matching the base line before."""
    out = list(into)
    for position, lines in sorted(added, reverse=True):
        if position == 0:
            out[0:0] = lines
            continue
        anchor = base[position - 1].strip()
        found = [k for k, x in enumerate(out) if x.strip() == anchor]
        if len(found) != 1:
            return None
        out[found[0] + 1:found[0] + 1] = lines
    return out


def _added_argument(base: str, theirs: str) -> str:
    """The inserted text when upstream only inserted `, arg` / `arg,` tokens; "" otherwise."""
    a, b = tokens(base), tokens(theirs)
    if a is None or b is None:
        return ""
    matcher = difflib.SequenceMatcher(None, [x.text for x in a], [x.text for x in b], autojunk=False)
    inserted = []
    for op, _, _, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        run = [x.text for x in b[j1:j2]]
        if op != "insert" or not (run[0] == "," or run[-1] == ","):
            return ""
        inserted.append(" ".join(run).strip(", "))
    return "; ".join(inserted)


def explain(item: PortItem) -> list[Explanation]:
    """The explanation of each conflict block in one proposal."""
    base_label = item.base_label or "OLD"
    out = []
    offset = item.copy.plugin.start
    for start, plugin, base, upstream in _blocks(item.proposal):
        diff = tuple(x.rstrip("\n") for x in difflib.unified_diff(
            [x + "\n" for x in base], [x + "\n" for x in upstream], base_label, "NEW", n=1))[2:]
        kind, suggestion, resolution = _suggest(plugin, base, upstream)
        out.append(Explanation(item.copy.plugin.path, item.copy.unit, offset + start, base_label, tuple(plugin),
                               tuple(base), tuple(upstream), diff, kind, suggestion, tuple(resolution)))
    return out


def _suggest(plugin: list[str], base: list[str], upstream: list[str]) -> tuple[str, str, list[str]]:
    b, o, t = ("\n".join(x) for x in (base, plugin, upstream))
    if not _stripped(upstream) and _stripped(base):
        return ("removed upstream", "upstream removed (or moved) this code, which the plugin changed: find where "
                "it went before keeping the plugin's lines", [])
    if not _stripped(plugin) and _stripped(base):
        return ("removed here", "the plugin removed this code, which upstream changed: keep it removed unless "
                "upstream's change is needed", [])
    renames = find_renames(b, t)
    if renames and [apply_renames(x, renames) for x in base] == upstream:
        names = ", ".join(str(r) for r in renames)
        return "rename", f"upstream only renamed {names}: take the plugin's lines renamed", \
            [apply_renames(x, renames) for x in plugin]
    argument = _added_argument(b, t)
    if argument:
        return ("added argument", f"upstream only added `{argument}`: add it to the plugin's call", [])
    # one side only added statements: the other side's lines with them inserted (upstream's side first)
    for adder, other, advice in ((upstream, plugin, "upstream only added {} line(s): keep the plugin's lines and "
                                  "add upstream's"),
                                 (plugin, upstream, "the plugin only added {} line(s): take upstream's lines and "
                                  "add the plugin's")):
        added = _added_only(base, adder)
        if added is not None:
            lines = sum(len(x) for _, x in added)
            return "added statements", advice.format(lines), _insert(other, base, added) or []
    return "", "both sides changed these lines: merge by hand (upstream's change is shown as a diff)", []


def explain_conflicts(items: tuple[PortItem, ...]) -> list[Explanation]:
    """Every conflict block of every proposal, explained."""
    return [e for item in items if item.conflicts for e in explain(item)]
