"""Forked files (#8): plugin files that copy a whole host file, and single copied lines elsewhere.

Pure functions over the models. Fork detection stays cheap: a plugin file is compared only with
host files of the same name or that define one of its rarer top-level names, ranked first by
the overlap of their identifier sets, and only the best few are aligned line by line. The score
is the share of the host file's lines (non-blank, non-comment, whitespace squashed) the plugin
file carries in order, so a fork that adds a great deal of plugin code still scores as the copy
it is; the matched lines must also be a quarter of the plugin file.
"""

from __future__ import annotations

import ast
import difflib
import keyword
import logging
import re
from collections import Counter
from dataclasses import dataclass
from typing import NamedTuple

from ..config import Settings
from ..model import codec
from ..model.codec import DecodeError
from ..model.index import CodeIndex, IndexCache, module_name
from ..model.resolve import Resolver
from .counterparts import Counterpart, match_in_counterpart
from .mirrors import Copy, Mirror, Span, find_mirrors, mirror_copy, source_lines, squashed_lines
from .model import PluginModel
from .records import Patch
from .similarity import line_tokens, normalise, token_ratio
from .uses import plugin_class_info

log = logging.getLogger(__name__)

_MIN_LINES = 30  # a file with fewer substantive lines is not worth calling a fork
_RARE = 4  # a top-level name defined in more host modules than this says nothing about origin
_TOP = 3  # candidates aligned line by line per plugin file
_PLUGIN_SHARE = 0.25  # the matched lines must also be this share of the plugin file
_WINDOW = 40  # lines searched for an anchor, and for the replacement of a changed line
_LINE_THRESHOLD = 0.75  # token similarity for a near-verbatim copied line
_REPLACED = 0.5  # token similarity for the NEW line that replaced an OLD one
_LINE_MIN_TOKENS = 8  # shorter lines (`return x`, `super().__init__()`) are copied everywhere by nature
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_COMMON = frozenset(keyword.kwlist) | {"self", "cls", "None", "True", "False", "int", "str", "len", "torch",
                                       "list", "dict", "tuple", "bool", "float", "range", "super", "args", "kwargs",
                                       "isinstance", "getattr", "setattr", "hasattr", "print", "logger"}


@dataclass(frozen=True)
class Fork:
    """A plugin file that copies a host file at OLD."""

    plugin_module: str
    plugin_path: str
    host_module: str
    host_path: str
    score: float  # share of the host file's lines found, in order, in the plugin file
    declared: bool  # named in `[tool.pinport] forks`


def _substantive(index: CodeIndex, module: str) -> list[str]:
    return [x for x in squashed_lines(index, module) if x and not x.startswith("#")]


def _alignment(a: list[str], b: list[str]) -> int:
    """Lines of `a` found, in order, in `b`."""
    return sum(m.size for m in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())


def module_of(index: CodeIndex, ref: str) -> str | None:
    """A module by dotted name, or by path relative to the tree root (a `src/` prefix is dropped)."""
    if ref in index.modules:
        return ref
    for path in (ref, ref.removeprefix("src/")):
        named = module_name(path)
        if named and named[0] in index.modules:
            return named[0]
    return None


def _basenames(index: CodeIndex) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for mod, path in index.paths.items():
        out.setdefault(path.rpartition("/")[2], []).append(mod)
    return out


def _candidates(plugin: PluginModel, module: str, old: CodeIndex, basenames: dict[str, list[str]]) -> set[str]:
    base = plugin.index.paths[module].rpartition("/")[2]
    found = set(basenames.get(base, ())) if base != "__init__.py" else set()
    summary = plugin.index.modules[module]
    for name in (*summary.classes, *summary.functions):
        defs = old.definitions.get(name, ())
        if 0 < len(defs) <= _RARE:
            found.update(mod for mod, _ in defs)
    return found


def find_forks(plugin: PluginModel, old: CodeIndex, threshold: float,
               declared: tuple[tuple[str, str], ...] = ()) -> list[Fork]:
    """Plugin files copying a host file at OLD: the declared pairs, then any scoring `threshold`."""
    out: dict[str, Fork] = {}
    for plugin_ref, host_ref in declared:
        mod, host = module_of(plugin.index, plugin_ref), module_of(old, host_ref)
        if mod is None or host is None:
            continue  # the check reports declared pairs that do not exist
        ours, theirs = _substantive(plugin.index, mod), _substantive(old, host)
        score = _alignment(theirs, ours) / len(theirs) if theirs else 0.0
        out[mod] = Fork(mod, plugin.index.paths[mod], host, old.paths[host], round(score, 3), True)
    basenames = _basenames(old)
    words: dict[str, set[str]] = {}  # host module -> its identifiers (a host file is a candidate of many)
    lines: dict[str, Counter[str]] = {}  # host module -> its substantive lines, counted
    for module in plugin.modules:
        if module in out:
            continue
        ours = _substantive(plugin.index, module)
        if len(ours) < _MIN_LINES:
            continue
        candidates = _candidates(plugin, module, old, basenames)
        if not candidates:
            continue
        ids = set(_WORD.findall(plugin.index.source(module))) - _COMMON
        ranked = []
        for host in sorted(candidates):
            if host not in words:
                words[host] = set(_WORD.findall(old.source(host))) - _COMMON
            other = words[host]
            ranked.append((len(ids & other) / (len(ids | other) or 1), host))
        ranked.sort(key=lambda r: (-r[0], r[1]))
        best: Fork | None = None
        counted: Counter[str] | None = None
        for _, host in ranked[:_TOP]:
            theirs = _substantive(old, host)
            if len(theirs) < _MIN_LINES:
                continue
            if host not in lines:
                lines[host] = Counter(theirs)
            counted = counted if counted is not None else Counter(ours)
            bound = sum((lines[host] & counted).values())  # no alignment matches more lines than both hold
            if bound / len(theirs) < threshold or bound < _PLUGIN_SHARE * len(ours) or (
                    best is not None and bound / len(theirs) <= best.score):
                continue
            matched = _alignment(theirs, ours)
            score = matched / len(theirs)
            if score >= threshold and matched >= _PLUGIN_SHARE * len(ours) and (best is None or score > best.score):
                best = Fork(module, plugin.index.paths[module], host, old.paths[host], round(score, 3), False)
        if best is not None:
            out[module] = best
    return sorted(out.values(), key=lambda f: f.plugin_path)


def new_host_module(fork: Fork, old: CodeIndex, new: CodeIndex) -> str | None:
    """The forked host file in NEW: the same module, else the most similar file of the same name."""
    if fork.host_module in new.modules:
        return fork.host_module
    theirs = _substantive(old, fork.host_module)
    base = fork.host_path.rpartition("/")[2]
    best, best_score = None, 0.0
    for mod in sorted(_basenames(new).get(base, ())):
        score = _alignment(theirs, _substantive(new, mod)) / (len(theirs) or 1)
        if score > best_score:
            best, best_score = mod, score
    return best if best_score >= 0.5 else None


def _whole(index: CodeIndex, module: str) -> Span:
    return Span(module, index.paths[module], 1, max(1, len(source_lines(index, module))), module)


def _text(index: CodeIndex, module: str) -> str:
    text = index.source(module)
    return text if text.endswith("\n") or not text else text + "\n"


def fork_copy(fork: Fork, plugin: CodeIndex, old: CodeIndex, new: CodeIndex) -> Copy:
    new_module = new_host_module(fork, old, new)
    return Copy("fork", _whole(plugin, fork.plugin_module), _whole(old, fork.host_module),
                _whole(new, new_module) if new_module else None, fork.host_module, fork.score,
                "declared" if fork.declared else "similarity", _text(plugin, fork.plugin_module),
                _text(old, fork.host_module), _text(new, new_module) if new_module else None)


# -- every copy of one scan, computed once -------------------------------------------------------
@dataclass(frozen=True)
class Copies:
    """The forks and mirrors of one plugin against one OLD/NEW pair."""

    forks: tuple[Fork, ...]
    mirrors: tuple[Mirror, ...]
    copies: tuple[Copy, ...]  # forks first (by plugin path), then mirrors


def find_copy_sources(plugin: PluginModel, old: CodeIndex, old_resolver: Resolver,
                      settings: Settings) -> tuple[tuple[Fork, ...], tuple[Mirror, ...]]:
    """Forks, then mirrors outside them: what the plugin copied from OLD (NEW plays no part, so
    the rebase's stops find them once for every release between OLD and NEW)."""
    forks = find_forks(plugin, old, settings.fork_threshold, settings.forks)
    mirrors = find_mirrors(plugin, old, old_resolver, settings.mirror_threshold,
                           skip_paths=frozenset(f.plugin_path for f in forks))
    return tuple(forks), tuple(mirrors)


class _StoredMirror(NamedTuple):
    patch: int  # the mirror's patch: its position in the plugin surface's patches
    seen: tuple[str, int, str, str]  # that patch's module, line, owner and name (compared on reading)
    plugin: Span
    upstream: Span
    upstream_path: str
    score: float
    matched_by: str


class _StoredSources(NamedTuple):
    forks: list[Fork]
    mirrors: list[_StoredMirror]


def _seen(patch: Patch) -> tuple[str, int, str, str]:
    return patch.plugin_module, patch.site.line, patch.owner, patch.name


def stored_copy_sources(plugin: PluginModel, old: CodeIndex, old_resolver: Resolver, settings: Settings,
                        cache: IndexCache, key: str) -> tuple[tuple[Fork, ...], tuple[Mirror, ...]]:
    """`find_copy_sources`, kept in the index cache under `key` (ScanFacts names the plugin's and
    OLD's contents, the settings and pinport's own code in it): a warm scan of the same pair
    compares no file. A row that does not decode, or names patches the plugin no longer has
    there, is found again; with no key nothing is kept."""
    patches = plugin.surface.patches
    blob = cache.get_many([key]).get(key) if key else None
    if blob is not None:
        try:
            stored = codec.decode(blob, _StoredSources)
            if all(0 <= m.patch < len(patches) and _seen(patches[m.patch]) == tuple(m.seen) for m in stored.mirrors):
                return tuple(stored.forks), tuple(Mirror(patches[m.patch], m.plugin, m.upstream, m.upstream_path,
                                                         m.score, m.matched_by) for m in stored.mirrors)
        except DecodeError:
            pass
        log.debug("copy sources row %s does not decode; found again", key)
    forks, mirrors = find_copy_sources(plugin, old, old_resolver, settings)
    if key:
        position = {id(p): i for i, p in enumerate(patches)}
        if all(id(m.patch) in position for m in mirrors):
            cache.put_many([(key, codec.encode(_StoredSources(list(forks), [
                _StoredMirror(position[id(m.patch)], _seen(m.patch), m.plugin, m.upstream, m.upstream_path, m.score,
                              m.matched_by) for m in mirrors])))])
    return forks, mirrors


def find_copies(plugin: PluginModel, old: CodeIndex, old_resolver: Resolver, new: CodeIndex,
                new_resolver: Resolver, settings: Settings,
                sources: tuple[tuple[Fork, ...], tuple[Mirror, ...]] | None = None) -> Copies:
    """Forks, then mirrors outside them, with their NEW counterparts (ScanFacts keeps them per scan);
    `sources` is `find_copy_sources` of the same plugin and OLD, when already known."""
    forks, mirrors = sources if sources is not None else find_copy_sources(plugin, old, old_resolver, settings)
    copies = [fork_copy(f, plugin.index, old, new) for f in forks]
    copies.extend(mirror_copy(m, plugin.index, old, new, new_resolver) for m in mirrors)
    return Copies(forks, mirrors, tuple(copies))


# -- copied lines (the second site of a layout change) ---------------------------------------------
@dataclass(frozen=True)
class CopiedLine:
    """A plugin line that copies an upstream OLD line which NEW changed or removed."""

    plugin_module: str
    plugin_path: str
    line: int
    unit: str  # the enclosing plugin function ("Cls.meth") or "<module>"
    text: str
    host_module: str
    old_path: str
    old_line: int
    old_text: str
    new_path: str  # "" when NEW no longer has the file
    new_line: int  # 0 when NEW removed the line
    new_text: str
    score: float


_OPEN, _CLOSE = "([{", ")]}"
_SKIP_HEADS = ("import", "from", "def", "async", "class", "@", "return", "raise", "assert", "pass", "else",
               "elif", "except", "finally", "try", "with", "del", "global", "nonlocal", "yield")


def _statement_tokens(text: str) -> list[str] | None:
    """The tokens of a line that is one complete, distinctive statement, else None.

    Fragments of a wrapped call or signature (`dtype=np.int64,`), imports and defs (other checks
    own those), bare keywords and short lines (`super().__init__()`) say nothing about a copy.
    """
    toks = line_tokens(text)
    if len(toks) < _LINE_MIN_TOKENS or toks[0] in _SKIP_HEADS or toks[-1] in (",", "\\", ":") \
            or toks[0] in _CLOSE:
        return None
    if len(_distinctive(toks)) < 2:
        return None  # `super().__init__(**kwargs)`: nothing in it names what was copied
    depth = 0
    for t in toks:
        depth += (t in _OPEN) - (t in _CLOSE)
        if depth < 0:
            return None
    return toks if depth == 0 else None


_NOT_COPIES = (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.Pass, ast.Break, ast.Continue)


def _one_line_statements(index: CodeIndex, module: str) -> list[int]:
    """Lines holding one whole simple statement (the plugin's parse is cached by discovery)."""
    tree = index.parsed(module)
    found: set[int] = set()
    stack: list[list[ast.stmt]] = [tree.body] if tree is not None else []
    while stack:  # statements only: expressions are never entered
        for node in stack.pop():
            blocks = [getattr(node, f, None) for f in ("body", "orelse", "finalbody")]
            blocks += [h.body for h in getattr(node, "handlers", ())] + [c.body for c in getattr(node, "cases", ())]
            blocks = [b for b in blocks if isinstance(b, list)]
            if blocks:
                stack.extend(blocks)
            elif node.lineno == node.end_lineno and not isinstance(node, _NOT_COPIES):
                found.add(node.lineno)
    return sorted(found)


def _plugin_statements(index: CodeIndex, module: str) -> list[tuple[int, str, list[str]]]:
    """(line, stripped text, tokens) of the plugin module's one-line statements that may copy a
    host line: kept per module, as every host release judged reads the same ones."""
    def build() -> list[tuple[int, str, list[str]]]:
        lines = source_lines(index, module)
        out = []
        for number in _one_line_statements(index, module):
            text = lines[number - 1].strip()
            toks = _statement_tokens(text)
            if toks is not None:
                out.append((number, text, toks))
        return out
    return index.module_memo(module, "copy-candidate-lines", build)


def _distinctive(toks: list[str]) -> set[str]:
    return {t for t in toks if (t[:1].isalpha() or t[:1] == "_") and t not in _COMMON and not t.startswith("__")}


def _shape(toks: list[str]) -> str:
    """The line with names masked, except attribute names: `N , N = N . unbind ( 0 )`."""
    out = []
    for i, t in enumerate(toks):
        word = t[:1].isalpha() or t[:1] == "_"
        out.append("N" if word and not keyword.iskeyword(t) and (i == 0 or toks[i - 1] != ".") else t)
    return " ".join(out)


@dataclass
class _Changed:
    """The OLD lines of one host file that NEW changed or removed, keyed by normalised text."""

    module: str
    new_module: str | None
    lines: dict[str, int]  # normalised text -> first OLD line number
    tokens: dict[str, list[str]]
    anchors: dict[int, int] | None = None  # OLD index -> NEW index of lines unique in both


def _changed_lines(old: CodeIndex, new: CodeIndex, module: str, kept: set[str],
                   kept_normal: set[str]) -> _Changed | None:
    """OLD lines of `module` that NEW changed or removed. `kept` holds the stripped lines of every
    NEW surface file and `kept_normal` the normalised ones that differ from every OLD line: a line
    NEW still writes somewhere was not changed, only moved or dropped from one place."""
    path = old.paths[module]
    new_module = module if module in new.modules else None
    if new_module is not None and old.tree.files.get(path) == new.tree.files.get(new.paths[new_module]):
        return None
    changed: dict[str, int] = {}
    tokens: dict[str, list[str]] = {}
    for i, text, toks, norm in _statements(old, module):
        if text in kept:
            continue
        if norm not in kept_normal and norm not in changed:
            changed[norm] = i
            tokens[norm] = toks
    return _Changed(module, new_module, changed, tokens) if changed else None


def _statements(index: CodeIndex, module: str) -> list[tuple[int, str, list[str], str]]:
    """(line, stripped text, tokens, normalised text) of each line of a module that is one
    distinctive statement (`_statement_tokens`): kept per module, so OLD's are tokenised once for
    every release judged against it."""
    def build() -> list[tuple[int, str, list[str], str]]:
        out = []
        for i, text in enumerate(_stripped(index, module), 1):
            toks = _statement_tokens(text)
            if toks is not None:
                out.append((i, text, toks, " ".join(toks)))
        return out
    return index.module_memo(module, "statements", build)


def _stripped(index: CodeIndex, module: str) -> list[str]:
    """A module's lines, stripped (kept per module: OLD's and NEW's are read by every line judged,
    and a release judged after another borrows those of the files both hold)."""
    return index.module_memo(module, "stripped", lambda: [x.strip() for x in source_lines(index, module)])


def _new_form(old: CodeIndex, new: CodeIndex, changed: _Changed, old_line: int) -> tuple[int, str]:
    """(NEW line, text) that replaced an OLD line, or (0, "") when it was removed.

    The replacement is looked for between the nearest lines above and below that occur once in
    OLD and once in NEW (anchors, as patience diff uses them): cheap, and local to the change. A
    NEW line that OLD also writes between the same anchors is that line kept, not a replacement
    (`and p.numel() == 1` above a rewritten `p.copy_(w)` shares more tokens with it than its
    new form `copy_into(p, w)` does).
    """
    if changed.new_module is None:
        return 0, ""
    a = _stripped(old, changed.module)
    b = _stripped(new, changed.new_module)
    if changed.anchors is None:
        count_a, count_b = Counter(a), Counter(b)
        where_b = {x: j for j, x in enumerate(b) if count_b[x] == 1}
        changed.anchors = {i: where_b[x] for i, x in enumerate(a)
                           if count_a[x] == 1 and x in where_b and len(x) > 3}
    anchors = changed.anchors
    i = old_line - 1
    above_at = next((k for k in range(i - 1, max(-1, i - _WINDOW), -1) if k in anchors), None)
    below_at = next((k for k in range(i + 1, min(len(a), i + _WINDOW)) if k in anchors), None)
    above = anchors[above_at] if above_at is not None else None
    below = anchors[below_at] if below_at is not None else None
    low = above + 1 if above is not None else max(0, (below or 0) - _WINDOW)
    high = below if below is not None else min(len(b), low + _WINDOW)
    if low >= high:
        return 0, ""  # the neighbours close up around nothing: the line was removed
    old_kept = set(a[above_at + 1 if above_at is not None else max(0, i - _WINDOW):
                     below_at if below_at is not None else i + _WINDOW])
    mine = line_tokens(a[i])
    scored = [(token_ratio(mine, line_tokens(b[j]), _REPLACED), -j)
              for j in range(low, min(high, low + 4 * _WINDOW))
              if b[j] and not b[j].startswith("#") and b[j] not in old_kept]
    score, neg = max(scored, default=(0.0, 0))
    return (-neg + 1, b[-neg]) if score >= _REPLACED else (0, "")


def _units(plugin: PluginModel, module: str) -> list[tuple[int, int, str]]:
    """(start, end, qualified name) of every function of a plugin module, outermost first."""
    summary = plugin.index.modules[module]
    out = [(fn.line, fn.end_line, name) for name, fn in summary.functions.items()]
    stack = [(c, c.name) for c in summary.classes.values()]
    while stack:
        cls, qual = stack.pop()
        out.extend((fn.line, fn.end_line, f"{qual}.{name}") for name, fn in cls.methods.items())
        stack.extend((inner, f"{qual}.{inner.name}") for inner in cls.classes.values())
    return sorted(out, key=lambda u: (u[0], -u[1]))


def _unit_at(units: list[tuple[int, int, str]], line: int) -> str:
    inside = [u for u in units if u[0] <= line <= u[1]]
    return inside[-1][2] if inside else "<module>"


def find_copied_lines(plugin: PluginModel, old: CodeIndex, new: CodeIndex, host_modules: set[str],
                      exclude: dict[str, list[tuple[int, int]]],
                      counterparts: dict[tuple[str, str], Counterpart] | None = None) -> list[CopiedLine]:
    """Plugin lines outside `exclude` (path -> line ranges) that copy a line of one of `host_modules`
    at OLD which NEW changed or removed: the same statement modulo layout, or (for a changed line)
    the same shape with a few names renamed. A line already at least as close to NEW's form, and
    an upstream change that only renames locals, are not reported. A line inside a unit with an
    upstream counterpart ((module, unit) -> `Counterpart`) is judged against that member alone."""
    counterparts = counterparts or {}
    with_counterparts = {module for module, _ in counterparts}
    surface = sorted(m for m in host_modules if m in old.modules)
    kept = set().union(*(_stripped(new, m) for m in surface if m in new.modules))
    was = old.memo(("stripped-surface", tuple(surface)),  # the same for every release judged against OLD
                   lambda: set().union(*(_stripped(old, m) for m in surface)))
    kept_normal = {normalise(x) for x in kept - was}  # only these can normalise like a vanished line
    changed = [c for c in (_changed_lines(old, new, m, kept, kept_normal) for m in surface) if c]
    exact: dict[str, tuple[_Changed, str]] = {}
    shaped: dict[str, list[tuple[_Changed, str]]] = {}
    for c in changed:
        for norm, toks in c.tokens.items():
            exact.setdefault(norm, (c, norm))
            shaped.setdefault(_shape(toks), []).append((c, norm))
    out: list[CopiedLine] = []
    for module in plugin.modules if exact else ():
        path = plugin.index.paths[module]
        ranges = exclude.get(path, [])
        units: list[tuple[int, int, str]] | None = None
        for number, text, toks in _plugin_statements(plugin.index, module):
            if any(a <= number <= b for a, b in ranges):
                continue
            if module in with_counterparts:
                if units is None:
                    units = _units(plugin, module)
                part = counterparts.get((module, _unit_at(units, number)))
                if part is not None:
                    judged = match_in_counterpart(text, part)
                    if judged is not None:
                        out.append(_counterpart_line(plugin, module, number, _unit_at(units, number), text, part,
                                                     judged))
                    continue
            found = _match_line(old, new, toks, exact, shaped)
            if found is None:
                continue
            c, norm, score, new_line, new_text = found
            if units is None:
                units = _units(plugin, module)
            if _calls_own_method(plugin, module, _unit_at(units, number), toks, new_text):
                continue
            old_line = c.lines[norm]
            out.append(CopiedLine(module, path, number, _unit_at(units, number), text, c.module,
                                  old.paths[c.module], old_line, source_lines(old, c.module)[old_line - 1].strip(),
                                  new.paths[c.new_module] if c.new_module else "", new_line, new_text,
                                  round(score, 3)))
    return out


def _counterpart_line(plugin: PluginModel, module: str, number: int, unit: str, text: str, part: Counterpart,
                      judged: tuple[int, str, int, str, float]) -> CopiedLine:
    old_line, old_text, new_line, new_text, score = judged
    return CopiedLine(module, plugin.index.paths[module], number, unit, text, part.module, part.old_path, old_line,
                      old_text, part.new_path, new_line, new_text, score)


def _calls_own_method(plugin: PluginModel, module: str, unit: str, toks: list[str], new_text: str) -> bool:
    """Whether the line calls `self.m(...)` with `m` the plugin class's own method, and upstream's new
    form still calls its `m`: upstream changed how it calls its own method, which the plugin's
    call never reaches (the plugin's MRO comes first)."""
    owner, _, _ = unit.rpartition(".")
    info = plugin_class_info(plugin.index, module, owner) if owner else None
    if info is None:
        return False
    called = {toks[i + 2] for i in range(len(toks) - 3)
              if toks[i] == "self" and toks[i + 1] == "." and toks[i + 3] == "("}
    return any(m in info.methods and f"self.{m}(" in new_text.replace(" ", "") for m in called)


def _match_line(old: CodeIndex, new: CodeIndex, toks: list[str], exact: dict[str, tuple[_Changed, str]],
                shaped: dict[str, list[tuple[_Changed, str]]]) -> tuple[_Changed, str, float, int, str] | None:
    norm = " ".join(toks)
    if norm in exact:
        candidates = [(1.0, exact[norm])]
    else:  # same shape, some names renamed: it must still share two distinctive names
        mine = _distinctive(toks)
        candidates = [(token_ratio(toks, c.tokens[other], _LINE_THRESHOLD), (c, other))
                      for c, other in shaped.get(_shape(toks), ()) if len(mine & _distinctive(c.tokens[other])) >= 2]
        candidates = [x for x in candidates if x[0] >= _LINE_THRESHOLD]
    for score, (c, other) in sorted(candidates, key=lambda x: (-x[0], x[1][0].module, x[1][1])):
        new_line, new_text = _new_form(old, new, c, c.lines[other])
        if not new_line and score < 1.0:
            continue  # a near copy of a line NEW dropped is too weak a signal
        new_toks = line_tokens(new_text)
        if new_line and _shape(new_toks) == _shape(c.tokens[other]):
            continue  # upstream only renamed its locals: nothing for the plugin's own names to follow
        if new_line and token_ratio(toks, new_toks, score) >= score:
            continue  # the plugin line is at least as close to NEW's form: already ported
        return c, other, score, new_line, new_text
    return None
