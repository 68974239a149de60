"""Finer merges where git's line merge conflicts: statement by statement, then token by token.

`git merge-file` conflicts whenever both sides touch the same or neighbouring lines, even when
the plugin changed one statement and upstream the next, or the plugin added `+ 1` at the end of
a call whose arguments upstream changed. This module retries such a merge on the three parsed
versions (never run):

1. each text is cut into statements with `ast` (a compound statement into its header lines and
   its blocks, recursively); statements are aligned by their first line, so a statement either
   side edited is still the same statement;
2. a diff3 over those sequences: edits to different statements merge, an insertion next to an
   edit merges; where both sides changed the same statement, its parts are merged the same way,
   down to single statements;
3. a statement both sides changed is merged by tokens (comments are tokens, layout is not):
   upstream's token edits are spliced into the plugin's text where the plugin left those tokens
   and their neighbours alone.

A side whose version of a statement differs from OLD only in layout or by dropping comments
(the same syntax tree) counts as unchanged there, so the other side's edit (or removal) is taken;
an upstream edit of comments alone never blocks the plugin's. The names of one `from ... import`
merge as a set, and statements both sides added at one place merge when one side's are among the
other's. A region stays a conflict only when both sides changed the same tokens of the same
statement differently. Upstream renames (a name every OLD use of which NEW spells differently) are applied
to the plugin's own lines too. The result says what each level did.
"""

from __future__ import annotations

import ast
import difflib
import io
import keyword
import re
import textwrap
import tokenize
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from .merge import MARKERS

T = TypeVar("T")

_BLOCK_FIELDS = ("body", "orelse", "finalbody")
_DECLARATIONS = frozenset({"Import", "ImportFrom", "FunctionDef", "AsyncFunctionDef", "ClassDef", "AnnAssign"})


# -- statements --------------------------------------------------------------------------------------
@dataclass
class Node:
    """Lines of one statement (or one header/separator line); `children` when it splits further."""

    lines: list[str]
    children: list[Node] | None = None
    kind: str = ""  # the statement's ast class ("Import", "FunctionDef"); "" for a line or a group

    @property
    def declares(self) -> bool:
        """An import, a definition or an annotated field: statements whose order rarely matters."""
        return self.kind in _DECLARATIONS

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def ident(self) -> str:
        """What makes it the same statement on every side: its first substantive line, squashed."""
        first = next((x for x in self.lines if x.strip() and not x.strip().startswith("#")), "")
        return " ".join(first.split())


def _start(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None) or []
    return min([stmt.lineno, *(d.lineno for d in decorators)])


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    out = [getattr(stmt, f) for f in _BLOCK_FIELDS if getattr(stmt, f, None)]
    out += [h.body for h in getattr(stmt, "handlers", ())] + [c.body for c in getattr(stmt, "cases", ())]
    return sorted((b for b in out if isinstance(b, list) and b and isinstance(b[0], ast.stmt)),
                  key=lambda b: b[0].lineno)


def _segment(stmts: list[ast.stmt], lines: list[str], first: int, last: int) -> list[Node]:
    """Nodes for lines first..last (1-based) holding `stmts`: each statement with the comments and
    blank lines above it; lines after the last statement as one trailing node."""
    out: list[Node] = []
    spans: list[tuple[int, int, ast.stmt | None]] = []
    position = first
    for stmt in stmts:
        end = stmt.end_lineno or stmt.lineno
        if spans and _start(stmt) <= spans[-1][1]:  # `a = 1; b = 2`: one node
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]), None)
        else:
            spans.append((position, end, stmt))
        position = max(position, end + 1)
    for a, b, stmt in spans:
        out.append(_node(stmt, lines, a, b))
    if position <= last:
        out.append(Node(lines[position - 1:last]))
    return out


def _node(stmt: ast.stmt | None, lines: list[str], a: int, b: int) -> Node:
    blocks = _blocks(stmt) if stmt is not None else []
    kind = type(stmt).__name__ if stmt is not None else ""
    if not blocks:
        return Node(lines[a - 1:b], None, kind)
    children: list[Node] = []
    position = a
    for block in blocks:
        first = _start(block[0])
        if first < position or first <= _start(stmt):  # `if x: y` on one line
            return Node(lines[a - 1:b], None, kind)
        if first > position:  # the header (decorators, a wrapped signature) or `else:`: one node
            children.append(Node(lines[position - 1:first - 1]))
        last = max(s.end_lineno or s.lineno for s in block)
        children.extend(_segment(block, lines, first, last))
        position = last + 1
    children.extend(Node([x]) for x in lines[position - 1:b])
    return Node(lines[a - 1:b], children, kind)


def statements(text: str) -> list[Node] | None:
    """The top-level statement nodes of a text, or None when it does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return _segment(tree.body, lines, 1, len(lines))


def _parse_fragment(text: str) -> ast.Module | None:
    """A statement, or a compound statement's header (given a body), parsed dedented; None if neither."""
    body = textwrap.dedent(text)
    for wrapped in (body, body.rstrip() + "\n    pass\n"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return ast.parse(wrapped)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return None


def code_key(text: str) -> str:
    """What a statement's text says as code, layout and comments aside: its syntax tree when it
    parses, else its tokens without comments (a header such as `else:`)."""
    tree = _parse_fragment(text)
    if tree is not None:
        return ast.dump(tree)
    toks = tokens(textwrap.dedent(text))
    return " ".join(t.text for t in toks if t.kind != tokenize.COMMENT) if toks is not None else text


def comments(text: str) -> set[str]:
    """The comments of a text, stripped (a `#` inside a string on its line is no comment)."""
    return {part.strip() for line in text.split("\n") for k, part in enumerate(_CODE_SPLIT.split(line))
            if k % 2 and part.startswith("#")}


def _words(text: str) -> list[str]:
    """The words of a text, comments cut off: the same for two texts with one syntax tree (but for
    rare spellings such as implicitly joined strings, which then merely count as different)."""
    out: list[str] = []
    for line in text.split("\n"):
        for k, part in enumerate(_CODE_SPLIT.split(line)):
            if k % 2 == 0 or not part.startswith("#"):
                out.extend(re.findall(r"\w+", part))
    return out


def same_code(a: str, b: str) -> bool:
    """Whether two texts are the same code laid out differently (comments aside)."""
    if a == b:
        return True
    if _words(a) != _words(b):
        return False  # the cheap test first: whole classes are compared here
    return code_key(a) == code_key(b)


def is_reflow(side: str, base: str) -> bool:
    """Whether a side's text says what base says, only laid out differently or with comments
    dropped (none added): a change that carries nothing of that side's own."""
    return same_code(side, base) and comments(side) <= comments(base)


# -- diff3 over any sequence ---------------------------------------------------------------------
@dataclass(frozen=True)
class _Change:
    side: str  # "ours" or "theirs"
    start: int  # base range [start, end)
    end: int
    items: tuple  # the side's items for that range


def _changes(side: str, base: Sequence, other: Sequence, key: Callable, same: Callable,
             like: Callable | None) -> list[_Change]:
    """A side's changes against base: items aligned by `key` (and inside a replaced run, when `like`
    is given, by similarity); an aligned item that is not `same` as its base item is a change of
    that one item."""
    matcher = difflib.SequenceMatcher(None, [key(x) for x in base], [key(x) for x in other], autojunk=False)
    pairs: list[tuple[int, int]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            pairs.extend(zip(range(i1, i2), range(j1, j2), strict=True))
        elif op == "replace" and like is not None:
            pairs.extend(_align(base, i1, i2, other, j1, j2, like))
    out = []
    i = j = 0
    for pi, pj in [*pairs, (len(base), len(other))]:
        if pi > i or pj > j:
            out.append(_Change(side, i, pi, tuple(other[j:pj])))
        if pi < len(base) and not same(base[pi], other[pj]):
            out.append(_Change(side, pi, pi + 1, (other[pj],)))
        i, j = pi + 1, pj + 1
    return out


def _align(base: Sequence, i1: int, i2: int, other: Sequence, j1: int, j2: int,
           like: Callable) -> list[tuple[int, int]]:
    """The in-order pairs of a replaced run that are alike (at least 0.5), most alike overall."""
    if (i2 - i1) * (j2 - j1) > 2500:
        return []
    n, m = i2 - i1, j2 - j1
    score = [[like(base[i1 + a], other[j1 + b]) for b in range(m)] for a in range(n)]
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    for a in range(n - 1, -1, -1):
        for b in range(m - 1, -1, -1):
            take = score[a][b] + best[a + 1][b + 1] if score[a][b] >= 0.5 else 0.0
            best[a][b] = max(take, best[a + 1][b], best[a][b + 1])
    out, a, b = [], 0, 0
    while a < n and b < m:
        if score[a][b] >= 0.5 and best[a][b] == score[a][b] + best[a + 1][b + 1]:
            out.append((i1 + a, j1 + b))
            a, b = a + 1, b + 1
        elif best[a][b] == best[a + 1][b]:
            a += 1
        else:
            b += 1
    return out


def _clash(a: _Change, b: _Change, key: Callable) -> bool:
    """Whether two changes of different sides touch the same base items (adjacent ones do not,
    unless one side inserts next to the other's change an item that change also brings)."""
    if (a.start == a.end or b.start == b.end) and a.start <= b.end and b.start <= a.end \
            and {key(x) for x in a.items} & {key(x) for x in b.items}:
        return True
    if a.start == a.end and b.start == b.end:
        return a.start == b.start
    if a.start == a.end:
        return b.start < a.start < b.end
    if b.start == b.end:
        return a.start < b.start < a.end
    return max(a.start, b.start) < min(a.end, b.end)


@dataclass(frozen=True)
class Chunk:
    """One stretch of a merge: agreed items, or a conflict (the items of each side)."""

    items: tuple = ()
    conflict: bool = False
    ours: tuple = ()
    base: tuple = ()
    theirs: tuple = ()


def diff3(base: Sequence[T], ours: Sequence[T], theirs: Sequence[T], key: Callable = lambda x: x,
          same: Callable = lambda a, b: a == b, like: Callable | None = None) -> list[Chunk]:
    """A three-way merge of sequences: each side's changes against base (items aligned by `key`,
    compared by `same`), merged where they touch different base items; identical changes on both
    sides count once. Unlike git's line merge, edits of neighbouring items do not conflict."""
    mine = _changes("ours", base, ours, key, same, like)
    yours = _changes("theirs", base, theirs, key, same, like)
    changes = sorted(mine + yours, key=lambda c: (c.start, c.end, c.side))
    groups: list[list[_Change]] = []
    for change in changes:
        if groups and any(c.side != change.side and _clash(c, change, key) for c in groups[-1]):
            groups[-1].append(change)
        else:
            groups.append([change])
    out: list[Chunk] = []
    position = 0
    for group in groups:
        start, end = min(c.start for c in group), max(c.end for c in group)
        if start > position:
            out.append(Chunk(tuple(base[position:start])))
        position = max(position, end)
        sides = {s: [c for c in group if c.side == s] for s in ("ours", "theirs")}
        if not sides["ours"] or not sides["theirs"]:
            out.extend(Chunk(c.items) for c in group)
            continue
        o, t = _apply(base, start, end, sides["ours"]), _apply(base, start, end, sides["theirs"])
        if len(o) == len(t) and all(same(a, b) for a, b in zip(o, t, strict=True)):
            out.append(Chunk(tuple(o)))
        else:
            out.append(Chunk(conflict=True, ours=tuple(o), base=tuple(base[start:end]), theirs=tuple(t)))
    if position < len(base):
        out.append(Chunk(tuple(base[position:])))
    return out


def _apply(base: Sequence, start: int, end: int, changes: list[_Change]) -> list:
    out: list = []
    position = start
    for c in sorted(changes, key=lambda c: (c.start, c.end)):
        out.extend(base[position:c.start])
        out.extend(c.items)
        position = c.end
    out.extend(base[position:end])
    return out


# -- tokens ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Token:
    text: str
    start: int  # character offsets in the statement's text
    end: int
    kind: int


def tokens(text: str) -> list[Token] | None:
    """The tokens of a statement's text with their offsets (comments included, layout not)."""
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text + "\n").readline):
            if tok.type in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
                continue
            a = starts[tok.start[0] - 1] + tok.start[1]
            b = starts[tok.end[0] - 1] + tok.end[1]
            out.append(Token(tok.string, a, b, tok.type))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return out


def merge_tokens(base: str, ours: str, theirs: str) -> str | None:
    """Upstream's token edits spliced into the plugin's text, or None where they touch the plugin's.

    Each upstream edit needs its neighbouring tokens, and the tokens it replaces, unchanged in the
    plugin's text; the text between those neighbours is then replaced by upstream's (its layout
    included), everything else stays the plugin's. An upstream edit of comments alone that meets
    the plugin's edit is left out (the plugin's comments stand) rather than blocking the merge.
    """
    b, o, t = tokens(base), tokens(ours), tokens(theirs)
    if b is None or o is None or t is None:
        return None
    bs, os_, ts = [x.text for x in b], [x.text for x in o], [x.text for x in t]
    to_ours: dict[int, int] = {}
    for block in difflib.SequenceMatcher(None, bs, os_, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            to_ours[block.a + k] = block.b + k
    edits: list[tuple[int, int, str]] = []  # ours character span -> replacement
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, bs, ts, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        left, right = i1 - 1, i2  # the unchanged base neighbours
        o_left = to_ours.get(left) if left >= 0 else -1
        o_right = to_ours.get(right) if right < len(b) else len(o)
        blocked = o_left is None or o_right is None or o_right - o_left != right - left \
            or any(to_ours.get(k) is None for k in range(i1, i2))  # the plugin changed this stretch too
        if blocked and all(x.kind == tokenize.COMMENT for x in (*b[i1:i2], *t[j1:j2])):
            continue
        if blocked:
            return None
        assert o_left is not None and o_right is not None
        a = o[o_left].end if o_left >= 0 else 0
        z = o[o_right].start if o_right < len(o) else len(ours)
        ta = t[j1 - 1].end if j1 > 0 else 0
        tz = t[j2].start if j2 < len(t) else len(theirs)
        edits.append((a, z, theirs[ta:tz]))
    out = ours
    for a, z, text in sorted(edits, reverse=True):
        out = out[:a] + text + out[z:]
    return out


# -- renames -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Rename:
    """Upstream spells `old` as `new` everywhere OLD used it (`owner` for `owner.old`, "" for a bare
    name); `old` may be a short expression (`is_invariant()` -> `envs.INVARIANT`)."""

    old: str
    new: str
    owner: str

    def __str__(self) -> str:
        prefix = f"{self.owner}." if self.owner else ""
        return f"{prefix}{self.old} -> {prefix}{self.new}"


def _names(toks: list[Token]) -> set[str]:
    return {x.text for x in toks if x.kind == tokenize.NAME}


def find_renames(base: str, theirs: str) -> list[Rename]:
    """Names upstream renamed: in lines it changed that are otherwise token for token the same,
    a name of OLD's code (not a word of a docstring line) replaced one for one by a name OLD did
    not use, always by the same one, and spelled nowhere in NEW's code any more."""
    a, b = base.split("\n"), theirs.split("\n")
    seen: dict[tuple[str, str], set[str]] = {}
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op != "replace":
            continue
        for x, y in _pairs(a[i1:i2], b[j1:j2]):
            for old, new, owner in _substitutions(x, y):
                seen.setdefault((old, owner), set()).add(new)
    before, after = tokens(base), tokens(theirs)
    if before is None or after is None:
        return []
    was, now = _names(before), _names(after)
    old_code, new_code = _code_text(before), _code_text(after)
    out = []
    for (old, owner), new in seen.items():
        if len(new) != 1:
            continue
        spelled = next(iter(new))
        if old.isidentifier():
            if old in was and old not in now and spelled not in was and spelled in now:
                out.append(Rename(old, spelled, owner))
        elif _spells(old_code, old) and not _spells(new_code, old) and not _spells(old_code, spelled):
            out.append(Rename(old, spelled, owner))  # an expression: gone from NEW, new to it
    return sorted(out, key=lambda r: (r.owner, r.old))


def _code_text(toks: list[Token]) -> str:
    """Tokens of code (no comments, no strings) joined by spaces, padded: for `_spells`."""
    return " " + " ".join(t.text for t in toks if t.kind not in (tokenize.COMMENT, tokenize.STRING)) + " "


def _spells(code: str, expression: str) -> bool:
    return f" {' '.join(_expression_tokens(expression))} " in code


def _expression_tokens(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", text)


def _is_expression(toks: Sequence[Token]) -> bool:
    """A short name-only expression (`f()`, `a.b`, `envs.FLAG`): what a rename of an expression can be."""
    depth = 0
    for t in toks:
        if t.kind == tokenize.NAME:
            if keyword.iskeyword(t.text):
                return False
        elif t.text in "()":
            depth += 1 if t.text == "(" else -1
            if depth < 0:
                return False
        elif t.text != ".":
            return False
    return 2 <= len(toks) <= 6 and depth == 0 and toks[0].kind == tokenize.NAME


def _pairs(old: list[str], new: list[str]) -> list[tuple[list[Token], list[Token]]]:
    """Lines of a replaced run paired with the new line most like them (of nearly the same length)."""
    out = []
    if len(old) * len(new) > 400:  # a long rewrite: pair lines by position only (renames are local edits)
        pairs = [(tokens(a.strip()), tokens(b.strip())) for a, b in zip(old, new, strict=False)]
        return [(a, b) for a, b in pairs if a and b and abs(len(a) - len(b)) <= 4]
    theirs = [t for t in (tokens(x.strip()) for x in new) if t]
    for line in old:
        mine = tokens(line.strip())
        if not mine:
            continue
        near = [t for t in theirs if abs(len(t) - len(mine)) <= 4]
        best = max(near, default=None, key=lambda t: (len(t) == len(mine), difflib.SequenceMatcher(
            None, [x.text for x in mine], [x.text for x in t], autojunk=False).ratio()))
        if best is not None:
            out.append((mine, best))
    return out


def _substitutions(old: list[Token], new: list[Token]) -> list[tuple[str, str, str]]:
    """(old name, new name, owner) for two token lines equal but for some names; [] otherwise.

    A line must keep most of its names for its substitutions to count: `use_x=use_x,` becoming
    `n_y=n_y,` or a lone `name,` in an import list is a different line, not a rename."""
    if len(old) < 3:
        return []
    return (_name_substitutions(old, new) if len(old) == len(new) else []) or _expression_substitution(old, new)


def _expression_substitution(old: list[Token], new: list[Token]) -> list[tuple[str, str, str]]:
    """One short expression replaced by another (`f()` -> `envs.F`) and nothing else changed."""
    names = sum(1 for x in old if x.kind == tokenize.NAME)
    edits = [op for op in difflib.SequenceMatcher(None, [x.text for x in old], [x.text for x in new],
                                                  autojunk=False).get_opcodes() if op[0] != "equal"]
    if len(edits) != 1 or edits[0][0] != "replace" or 2 * (edits[0][2] - edits[0][1]) > names + 2:
        return []
    _, i1, i2, j1, j2 = edits[0]
    before, after = old[i1:i2], new[j1:j2]
    if not _is_expression(before) or not _is_expression(after) or (i1 and old[i1 - 1].text == "."):
        return []
    return [("".join(x.text for x in before), "".join(x.text for x in after), "")]


def _name_substitutions(old: list[Token], new: list[Token]) -> list[tuple[str, str, str]]:
    names = sum(1 for x in old if x.kind == tokenize.NAME)
    changed = sum(1 for x, y in zip(old, new, strict=True) if x.text != y.text)
    if 2 * changed > names:
        return []
    out = []
    for k, (x, y) in enumerate(zip(old, new, strict=True)):
        if x.text == y.text:
            continue
        if x.kind != tokenize.NAME or y.kind != tokenize.NAME or keyword.iskeyword(x.text) \
                or keyword.iskeyword(y.text):
            return []
        owner = old[k - 2].text if k >= 2 and old[k - 1].text == "." and old[k - 2].kind == tokenize.NAME else ""
        out.append((x.text, y.text, owner))
    return out if len(out) < len(old) else []


_CODE_SPLIT = re.compile(r"""(#.*$|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')""")


def apply_renames(line: str, renames: Sequence[Rename]) -> str:
    """A line with each rename applied to its code (not inside strings or comments)."""
    if not renames:
        return line
    parts = _CODE_SPLIT.split(line)
    for i in range(0, len(parts), 2):  # even parts are code
        for r in renames:
            if not r.old.isidentifier():
                pattern = r"\s*".join(re.escape(x) for x in _expression_tokens(r.old))
                parts[i] = re.sub(rf"(?<![\w.]){pattern}(?!\w)", r.new, parts[i])
            elif r.owner:
                parts[i] = re.sub(rf"(?<![\w.]){re.escape(r.owner)}\s*\.\s*{re.escape(r.old)}\b",
                                  f"{r.owner}.{r.new}", parts[i])
            else:
                parts[i] = re.sub(rf"(?<![\w.]){re.escape(r.old)}\b", r.new, parts[i])
    return "".join(parts)


# -- the refined merge ---------------------------------------------------------------------------------
@dataclass
class Refined:
    """A refined merge: its text (conflicts marked as git marks them) and what each level did."""

    text: str
    conflicts: int
    statement_merges: int = 0  # statements both sides changed, merged part by part
    token_merges: int = 0  # statements both sides changed, merged by tokens
    renames: tuple[Rename, ...] = ()
    rewritten: dict[str, str] = field(default_factory=dict)  # plugin line -> the line the merge made of it
    # (plugin text, OLD text) of statements the plugin only re-laid out, where upstream's version was taken
    reflowed: tuple[tuple[str, str], ...] = ()


class _Merger:
    def __init__(self, labels: tuple[str, str, str]) -> None:
        self.labels = labels
        self.statement_merges = 0
        self.token_merges = 0
        self.rewritten: dict[str, str] = {}
        self.reflowed: list[tuple[str, str]] = []

    def nodes(self, base: list[Node], ours: list[Node], theirs: list[Node]) -> list[str]:
        out: list[str] = []
        for chunk in diff3(base, ours, theirs, key=lambda n: n.text, same=lambda a, b: a.text == b.text):
            if not chunk.conflict:
                out.extend(line for n in chunk.items for line in n.lines)
            else:
                out.extend(self._region(list(chunk.base), list(chunk.ours), list(chunk.theirs)))
        return out

    def _region(self, base: list[Node], ours: list[Node], theirs: list[Node]) -> list[str]:
        """A conflicting stretch of statements: aligned by identity, each statement merged on its own."""
        out: list[str] = []
        for chunk in diff3(base, ours, theirs, key=lambda n: n.ident, same=_same, like=_likeness):
            if not chunk.conflict:
                out.extend(line for n in chunk.items for line in n.lines)
                continue
            b, o, t = list(chunk.base), list(chunk.ours), list(chunk.theirs)
            if len(b) == len(o) == len(t) and b:
                for triple in zip(b, o, t, strict=True):
                    out.extend(self._statement(*triple))
            else:
                out.extend(self._aligned(b, o, t))
        return out

    def _aligned(self, base: list[Node], ours: list[Node], theirs: list[Node]) -> list[str]:
        """Statements of a conflicting stretch paired with their most alike base statement on each
        side: pairs merge on their own, a statement one side added stays where it was added, and a
        statement one side removed goes when the other side left it alone."""
        mine = dict(_align(base, 0, len(base), ours, 0, len(ours), _likeness))
        yours = dict(_align(base, 0, len(base), theirs, 0, len(theirs), _likeness))
        # a statement both sides added (each at its own place) is kept once, where the plugin has it
        both = {_squash(n) for k, n in enumerate(ours) if k not in mine.values()} & \
            {_squash(n) for k, n in enumerate(theirs) if k not in yours.values()}
        out: list[str] = []
        o_at = t_at = 0
        for i in range(len(base) + 1):
            o_next = mine.get(i, len(ours)) if i < len(base) else len(ours)
            t_next = yours.get(i, len(theirs)) if i < len(base) else len(theirs)
            if i < len(base) and (i not in mine):
                o_next = o_at
            if i < len(base) and (i not in yours):
                t_next = t_at
            added_o, added_t = ours[o_at:o_next], [n for n in theirs[t_at:t_next] if _squash(n) not in both]
            out.extend(self._added(added_o, added_t))
            o_at, t_at = max(o_at, o_next), max(t_at, t_next)
            if i == len(base):
                break
            b = base[i]
            o = ours[mine[i]] if i in mine else None
            t = theirs[yours[i]] if i in yours else None
            if o is not None and t is not None:
                out.extend(self._statement(b, o, t))
            elif o is None and t is not None and not _same(t, b) and not same_code(t.text, b.text):
                out.extend(self._conflict([], b.lines, t.lines))  # removed here, changed upstream
            elif t is None and o is not None and not _same(o, b):
                if is_reflow(o.text, b.text):  # only re-laid out here: upstream's removal stands
                    self.reflowed.append((o.text, b.text))
                else:
                    out.extend(self._conflict(o.lines, b.lines, []))  # changed here, removed upstream
            if o is not None:
                o_at = mine[i] + 1
            if t is not None:
                t_at = yours[i] + 1
        return out

    def _added(self, ours: list[Node], theirs: list[Node]) -> list[str]:
        """Statements added at one place: one side's, both sides' when the same, else a conflict."""
        mine = [x for n in ours for x in n.lines]
        yours = [x for n in theirs for x in n.lines]
        if not ours or not theirs:
            return mine or yours
        if [x.strip() for x in mine if x.strip()] == [x.strip() for x in yours if x.strip()]:
            return mine
        keys_o, keys_t = [_squash(n) for n in ours], [_squash(n) for n in theirs]
        if _subsequence(keys_t, keys_o):  # upstream's additions are among the plugin's
            self.statement_merges += 1
            return mine
        if _subsequence(keys_o, keys_t):
            self.statement_merges += 1
            return yours
        if all(n.declares for n in (*ours, *theirs)):
            self.statement_merges += 1
            return mine + yours  # both sides added imports, definitions or fields here: keep both
        return self._conflict(mine, [], yours)

    def _statement(self, base: Node, ours: Node, theirs: Node) -> list[str]:
        if _same(ours, theirs):
            return ours.lines
        if _same(ours, base):
            return theirs.lines
        if _same(theirs, base):
            return ours.lines
        if same_code(theirs.text, base.text):  # upstream re-laid it out or edited comments only
            return ours.lines
        if is_reflow(ours.text, base.text):  # the plugin only re-laid it out: upstream's edit stands
            self.reflowed.append((ours.text, base.text))
            return theirs.lines
        if base.children is not None and ours.children is not None and theirs.children is not None:
            saved = (self.statement_merges, self.token_merges, dict(self.rewritten), len(self.reflowed))
            merged = self.nodes(base.children, ours.children, theirs.children)
            if _same_frame(base, ours, theirs) or sound(merged, ours.text, theirs.text):
                self.statement_merges += 1
                return merged
            # merged part by part the statement no longer parses (`else:` then `elif`): undo, go coarser
            self.statement_merges, self.token_merges, self.rewritten = saved[0], saved[1], saved[2]
            del self.reflowed[saved[3]:]
        lines = self._lines(base.lines, ours.lines, theirs.lines)
        if lines is not None:
            return lines
        items = merge_import_names(base.text, ours.text, theirs.text)
        if items is None:
            items = merge_keywords(base.text, ours.text, theirs.text)
            own = {x.strip() for x in ours.lines} - {x.strip() for x in base.lines}
            if items is not None and not own <= {x.strip() for x in items.split("\n")}:
                items = None  # it would drop a line of the plugin's (`f()` where upstream added arguments)
        if items is not None:
            self.statement_merges += 1
            return items.split("\n")
        merged = merge_tokens(base.text, ours.text, theirs.text)
        if merged is not None and _parses(merged, ours.text):
            self.token_merges += 1
            made = merged.split("\n")
            mine = {x.strip() for x in ours.lines} - {x.strip() for x in base.lines}
            for line in ours.lines:
                if line.strip() in mine and line.strip() not in {x.strip() for x in made}:
                    self.rewritten[line.strip()] = next(
                        (m.strip() for m in made if difflib.SequenceMatcher(None, m.strip(), line.strip()).ratio()
                         >= 0.5), "")
            return made
        return self._conflict(ours.lines, base.lines, theirs.lines)

    @staticmethod
    def _lines(base: list[str], ours: list[str], theirs: list[str]) -> list[str] | None:
        """A line-by-line diff3 (edits on neighbouring lines merge), or None on a real overlap."""
        chunks = diff3(base, ours, theirs)
        if any(c.conflict for c in chunks):
            return None
        return [x for c in chunks for x in c.items]

    def _conflict(self, ours: list[str], base: list[str], theirs: list[str]) -> list[str]:
        o, b, t = self.labels
        return [f"{MARKERS[0]}{o}", *ours, f"{MARKERS[1]}{b}", *base, MARKERS[2], *theirs, f"{MARKERS[3]}{t}"]


def _same(a: Node, b: Node) -> bool:
    """The same statement text, blank lines aside (a statement carries the blank lines above it)."""
    return a.text == b.text or [x for x in a.lines if x.strip()] == [x for x in b.lines if x.strip()]


def _likeness(a: Node, b: Node) -> float:
    """Token similarity of two statements (their first lines weigh as much as the rest)."""
    first = difflib.SequenceMatcher(None, a.ident.split(), b.ident.split(), autojunk=False).ratio()
    whole = difflib.SequenceMatcher(None, a.text.split(), b.text.split(), autojunk=False).ratio()
    return (first + whole) / 2


def _same_frame(*nodes: Node) -> bool:
    """Whether the sides share a compound statement's frame (header, `else:`, `finally:` lines):
    then merging its blocks one by one cannot break its structure (the blocks are checked inside)."""
    frames = [[" ".join(x.text.split()) for x in n.children or () if not x.kind and x.children is None]
              for n in nodes]
    return all(f == frames[0] for f in frames)


def resolved(lines: Sequence[str], side: int) -> list[str]:
    """Merged lines with each conflict block replaced by one side of it (0 plugin, 2 upstream)."""
    out, at = [], -1
    for line in lines:
        if line.startswith(MARKERS[0]):
            at = 0
        elif at >= 0 and line.startswith(MARKERS[1]):
            at = 1
        elif at >= 0 and line == MARKERS[2]:
            at = 2
        elif at >= 0 and line.startswith(MARKERS[3]):
            at = -1
        elif at in (-1, side):
            out.append(line)
    return out


def sound(lines: Sequence[str], ours: str, theirs: str) -> bool:
    """Whether a merge keeps the structure of the code: with every conflict resolved to the
    plugin's side it parses (as the plugin's text did), and so with every one resolved to upstream's."""
    return all(_parses("\n".join(resolved(lines, side)), like) for side, like in ((0, ours), (2, theirs)))


def _call_of(text: str) -> tuple[str, ast.Call] | None:
    """A statement that is one call (`x = f(...)`, `f(...)`, `return f(...)`): its dedented text and the call."""
    body = textwrap.dedent(text)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assign | ast.AnnAssign | ast.Expr | ast.Return):
        return None
    call = tree.body[0].value
    if not isinstance(call, ast.Call) or any(k.arg is None for k in call.keywords):
        return None
    return body, call


def merge_keywords(base: str, ours: str, theirs: str) -> str | None:
    """One call all three sides make with the same callee and positional arguments, its keyword
    arguments merged by name: each side's additions, removals and changed values kept; None when
    both changed one argument differently, or a comment of the plugin's would go."""
    calls = [_call_of(x) for x in (base, ours, theirs)]
    if any(c is None for c in calls) or not comments(ours) <= comments(theirs):
        return None
    (b_text, b), (o_text, o), (t_text, t) = calls  # type: ignore[misc]
    if len({ast.dump(c.func) for c in (b, o, t)}) != 1 or len({ast.dump(ast.Tuple(c.args)) for c in (b, o, t)}) != 1:
        return None
    old, mine, yours = ({k.arg: ast.get_source_segment(text, k.value) for k in c.keywords}
                        for text, c in ((b_text, b), (o_text, o), (t_text, t)))
    merged: dict[str, str | None] = {}
    for name in [*yours, *(n for n in mine if n not in yours), *(n for n in old if n not in yours and n not in mine)]:
        a, x, y = old.get(name), mine.get(name), yours.get(name)
        if x == y or x == a:
            merged[name] = y
        elif y == a:
            merged[name] = x
        else:
            return None  # both changed (or one removed what the other changed)
    order = [n for n in yours if merged.get(n) is not None]
    for i, name in enumerate(mine):
        if name not in order and merged.get(name) is not None:
            before = next((m for m in reversed(list(mine)[:i]) if m in order), None)
            order.insert(order.index(before) + 1 if before is not None else len(order), name)
    if [(n, merged[n]) for n in order] == list(yours.items()):
        return theirs
    lines = t_text.split("\n")
    indent = " " * (len(lines[t.lineno - 1]) - len(lines[t.lineno - 1].lstrip()))
    head = ast.get_source_segment(t_text, t.func) or ""
    positional = [ast.get_source_segment(t_text, a) or "" for a in t.args]
    start = _offset(t_text, t.lineno, t.col_offset)
    end = _offset(t_text, t.end_lineno or t.lineno, t.end_col_offset or 0)
    arguments = [*positional, *(f"{n}={merged[n]}" for n in order)]
    call = f"{head}({', '.join(arguments)})"
    if t.lineno != t.end_lineno or "\n" in call or len(indent) + len(call) > 100:  # one per line, as upstream's
        call = "\n".join([f"{head}(", *(f"{indent}    {x}," for x in arguments), f"{indent})"])
    text = t_text[:start] + call + t_text[end:]
    original = theirs.split("\n")
    at = next(i for i, x in enumerate(original) if x.strip())
    common = original[at][:len(original[at]) - len(t_text.split("\n")[at])]  # what dedent took off
    return "\n".join(common + x if x.strip() else x for x in text.split("\n"))


def _offset(text: str, line: int, column: int) -> int:
    """A character offset from an ast (line, UTF-8 column) position."""
    lines = text.split("\n")
    return sum(len(x) + 1 for x in lines[:line - 1]) + len(lines[line - 1].encode()[:column].decode())


def imported_names(text: str) -> set[tuple[str, str]]:
    """(module, name as bound) of every `from ... import` in a text that parses; empty otherwise."""
    tree = _parse_fragment(text)
    if tree is None:
        return set()
    return {("." * n.level + (n.module or ""), a.name + (f" as {a.asname}" if a.asname else ""))
            for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}


def _squash(node: Node) -> str:
    return " ".join(node.text.split())


def _subsequence(small: list[str], large: list[str]) -> bool:
    """Whether `small` is `large` with some items left out (in order)."""
    it = iter(large)
    return all(any(x == y for y in it) for x in small)


def merge_import_names(base: str, ours: str, theirs: str) -> str | None:
    """One `from M import ...` all three sides state, its names merged as a set: each side's
    removals and additions kept (upstream's order, the plugin's additions after the name they
    follow there); None when the three are not the same kind of import or a comment would go."""
    trees = [_parse_fragment(x) for x in (base, ours, theirs)]
    nodes = [t.body[0] if t is not None and len(t.body) == 1 else None for t in trees]
    if not all(isinstance(n, ast.ImportFrom) for n in nodes):
        return None
    b, o, t = (n for n in nodes if isinstance(n, ast.ImportFrom))
    if len({(n.module, n.level) for n in (b, o, t)}) != 1 or any(a.name == "*" for n in (b, o, t) for a in n.names):
        return None
    if not comments(ours) <= comments(theirs):
        return None
    spelled = [[a.name + (f" as {a.asname}" if a.asname else "") for a in n.names] for n in (b, o, t)]
    old, mine, yours = spelled
    merged = [x for x in yours if x in mine or x not in old]
    for i, name in enumerate(mine):
        if name in merged or name in old:
            continue
        before = next((m for m in reversed(mine[:i]) if m in merged), None)
        merged.insert(merged.index(before) + 1 if before is not None else len(merged), name)
    if merged == yours:
        return theirs
    lines = theirs.split("\n")
    at = next(i for i, x in enumerate(lines) if x.strip() and not x.strip().startswith("#"))
    indent = lines[at][:len(lines[at]) - len(lines[at].lstrip())]
    return "\n".join([*lines[:at], f"{indent}from {'.' * b.level}{b.module or ''} import (",
                      *(f"{indent}    {x}," for x in merged), f"{indent})"])


def _parses(text: str, like: str) -> bool:
    """Whether a merged statement parses as well as the plugin's own did (indented bodies are
    checked dedented, inside a function when they are a fragment)."""
    def ok(s: str) -> bool:
        body = textwrap.dedent(s)
        for wrapped in (body, "def _():\n" + textwrap.indent(body, "    ")):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ast.parse(wrapped)
                return True
            except (SyntaxError, ValueError):
                continue
        return False
    return ok(text) or not ok(like)


def refine_merge(ours: str, base: str, theirs: str, labels: tuple[str, str, str]) -> Refined | None:
    """The statement/token-level merge of three texts, or None when one of them does not parse."""
    parsed = [statements(x) for x in (base, ours, theirs)]
    if any(p is None for p in parsed):
        return None
    b, o, t = parsed
    assert b is not None and o is not None and t is not None
    merger = _Merger(labels)
    lines = merger.nodes(b, o, t)
    renames = find_renames(base, theirs)
    used = [r for r in renames if any(apply_renames(x, [r]) != x for x in lines)]
    if used:
        lines = _rename_outside_base(lines, used)
    if not sound(lines, ours, theirs):
        return None
    text = "\n".join(lines) + "\n"
    conflicts = sum(1 for x in lines if x.startswith(MARKERS[0]))
    return Refined(text, conflicts, merger.statement_merges, merger.token_merges, tuple(used), merger.rewritten,
                   tuple(merger.reflowed))


def _rename_outside_base(lines: list[str], renames: list[Rename]) -> list[str]:
    """Apply renames everywhere except the OLD side of conflict blocks (which shows what OLD had)."""
    out = []
    in_base = False
    for line in lines:
        if line.startswith(MARKERS[1]):
            in_base = True
        elif line == MARKERS[2] or line.startswith(MARKERS[3]) or line.startswith(MARKERS[0]):
            in_base = False
        out.append(line if in_base or any(line.startswith(m) for m in MARKERS) else apply_renames(line, renames))
    return out
