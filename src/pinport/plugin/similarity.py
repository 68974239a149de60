"""Layout-blind comparison of source text: line tokens, normalised lines, token ratios, line deltas.

Comments and layout are dropped before anything is compared, so a re-wrapped or re-commented
line still matches; shared by mirrors, forks and the port.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_TOKEN = re.compile(r"""(?P<str>[rRbBuUfF]{0,2}(?:'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"))|(?P<comment>\#.*)"""
                    r"""|(?P<word>[A-Za-z_][A-Za-z0-9_]*)|(?P<num>\d[\w.]*)|(?P<op>\S)""")
_SIMPLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d[\w.]*|\S")


def line_tokens(line: str) -> list[str]:
    """The tokens of one source line, comments dropped (strings kept whole)."""
    if "#" not in line and "'" not in line and '"' not in line:
        return _SIMPLE.findall(line)  # the common case, without the per-token loop
    out = []
    for m in _TOKEN.finditer(line):
        if m.lastgroup == "comment":
            break
        out.append(m.group())
    return out


def normalise(line: str) -> str:
    """A line's tokens joined by one space: equal for lines that differ only in layout or comments."""
    return " ".join(line_tokens(line))


def token_ratio(a: list[str], b: list[str], floor: float = 0.0) -> float:
    """difflib's ratio over token lists; 0.0 as soon as a cheap upper bound falls below `floor`."""
    if not a or not b:
        return 0.0
    if 2 * min(len(a), len(b)) / (len(a) + len(b)) < floor:
        return 0.0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if floor and matcher.quick_ratio() < floor:
        return 0.0
    return matcher.ratio()


def block_ratio(a: list[list[str]], b: list[list[str]]) -> float:
    """Token similarity of two blocks of token lines: lines are aligned first, then tokens only
    inside replaced runs, which is difflib's token ratio at a fraction of its cost."""
    a = [x for x in a if x]
    b = [x for x in b if x]
    total = sum(map(len, a)) + sum(map(len, b))
    if not total:
        return 0.0
    matched = 0
    lines = difflib.SequenceMatcher(None, [" ".join(x) for x in a], [" ".join(x) for x in b], autojunk=False)
    for op, i1, i2, j1, j2 in lines.get_opcodes():
        if op == "equal":
            matched += sum(len(x) for x in a[i1:i2])
        elif op == "replace":
            ta = [t for x in a[i1:i2] for t in x]
            tb = [t for x in b[j1:j2] for t in x]
            matched += sum(m.size for m in difflib.SequenceMatcher(None, ta, tb, autojunk=False)
                           .get_matching_blocks())
    return 2 * matched / total


@dataclass(frozen=True)
class LineDelta:
    """Which upstream lines a copy kept, changed or dropped, and which lines it added (line numbers)."""

    kept: tuple[int, ...]  # upstream lines kept verbatim (modulo layout)
    changed: tuple[int, ...]  # upstream lines the plugin replaced
    dropped: tuple[int, ...]  # upstream lines the plugin removed
    added: tuple[int, ...]  # plugin lines with no upstream counterpart


def line_delta(upstream: list[str], plugin: list[str], upstream_start: int = 1,
               plugin_start: int = 1) -> LineDelta:
    """Compare two blocks line by line on normalised text; blank and comment-only lines are ignored."""
    a = [(i, normalise(x)) for i, x in enumerate(upstream, upstream_start)]
    b = [(i, normalise(x)) for i, x in enumerate(plugin, plugin_start)]
    a = [x for x in a if x[1]]
    b = [x for x in b if x[1]]
    kept: list[int] = []
    changed: list[int] = []
    dropped: list[int] = []
    added: list[int] = []
    matcher = difflib.SequenceMatcher(None, [x[1] for x in a], [x[1] for x in b], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            kept.extend(x[0] for x in a[i1:i2])
        elif op == "replace":
            changed.extend(x[0] for x in a[i1:i2])
            added.extend(x[0] for x in b[j1:j2])
        elif op == "delete":
            dropped.extend(x[0] for x in a[i1:i2])
        else:
            added.extend(x[0] for x in b[j1:j2])
    return LineDelta(tuple(kept), tuple(changed), tuple(dropped), tuple(added))
