"""Mirrored methods (#12): plugin overrides whose body copies an upstream method, found by similarity.

Pure functions over the models: text is compared as normalised tokens (comments and layout
dropped), so a re-wrapped line still matches. The counterpart of an override is the member of
the patched target it replaces; when the target has no such member, the best match in OLD among
same-named functions and nearby methods. This module also holds the record both mirrors and forks share (`Copy`: the plugin text with its upstream OLD and NEW texts) and the
upstream-diff analysis the checks and the port both need.
"""

from __future__ import annotations

import builtins
import difflib
import hashlib
import keyword
import re
import textwrap
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property

from ..findings import Location
from ..model.index import CodeIndex
from ..model.resolve import CLASS, FUNCTION, METHOD, MODULE, Resolver, Symbol
from ..model.summary import BindingKind, ClassInfo, FunctionInfo, ModuleSummary
from .model import PluginModel
from .records import Patch, PatchKind
from .similarity import (
    SPEED_WORDS,
    block_ratio,
    code_like,
    code_names,
    debugging_module,
    getattr_guards,
    import_bindings,
    imports_only,
    line_delta,
    line_tokens,
    normalise,
    parameter_defaults,
    prose_words,
    read_names,
    runtime_form,
)

_MIN_TOKENS = 24  # bodies shorter than this (a one-line `return x`) match anything: never mirrors
_SCAN_DECORATORS = 30  # how far above a def to look for its decorators


# -- code spans ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Span:
    """A block of one file: 1-based inclusive lines, decorators included, and its qualified name."""

    module: str
    path: str
    start: int
    end: int
    qualname: str


def source_lines(index: CodeIndex, module: str) -> list[str]:
    """`index.lines(module)` (split once, by the index)."""
    return index.lines(module)


def squashed_lines(index: CodeIndex, module: str) -> list[str]:
    """Every line of a module stripped, runs of whitespace squashed: a cheap layout-blind form for
    aligning whole files (tokenising them all would cost more than the rest of the scan)."""
    lines = index.memo(("squashed", module), lambda: [" ".join(x.split()) for x in source_lines(index, module)])
    return lines


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def function_span(index: CodeIndex, module: str, fn: FunctionInfo, qualname: str) -> Span:
    """The lines of a def with the decorators above it (FunctionInfo.line is the `def` line)."""
    lines = source_lines(index, module)
    start = fn.line
    wanted = len(fn.decorators)
    if wanted and 0 < fn.line <= len(lines):
        # Walk up over exactly as many `@` lines at the def's indentation as the def has decorators;
        # deeper lines in between are the arguments of a multi-line decorator call.
        depth = _indent(lines[fn.line - 1])
        i = fn.line - 1
        while i > 0 and wanted and fn.line - i < _SCAN_DECORATORS:
            above = lines[i - 1]
            text = above.strip()
            if text and _indent(above) < depth:
                break
            if text.startswith("@") and _indent(above) == depth:
                start, wanted = i, wanted - 1
            elif text and _indent(above) == depth and not text.startswith((")", "]", "#")):
                break
            i -= 1
    return Span(module, index.paths.get(module, ""), start, fn.end_line, qualname)


def span_lines(index: CodeIndex, span: Span) -> list[str]:
    return source_lines(index, span.module)[span.start - 1:span.end]


def span_text(index: CodeIndex, span: Span) -> str:
    """The span's source, dedented, with a final newline (what merges and diffs work on)."""
    return textwrap.dedent("\n".join(span_lines(index, span)) + "\n")


def span_indent(index: CodeIndex, span: Span) -> str:
    lines = span_lines(index, span)
    first = next((ln for ln in lines if ln.strip()), "")
    return first[:_indent(first)]


# -- mirrors -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mirror:
    """A plugin function that copies an upstream function: both spans and how alike they are."""

    patch: Patch
    plugin: Span
    upstream: Span  # in OLD
    upstream_path: str  # host dotted path of the copied function
    score: float
    matched_by: str  # "target" (the member the patch replaces) or "best match" (found by similarity)


def replaced_member(resolver: Resolver, patch: Patch) -> Symbol | None:
    """The host member a patch replaces in one version (same rule as the signatures check)."""
    owner = resolver.resolve(patch.owner)
    if owner is None or owner.kind not in (CLASS, MODULE):
        return None
    if owner.kind == CLASS:
        return resolver.class_member(owner, patch.name)
    return resolver.module_attr(owner.module, patch.name)


def _function_symbol(sym: Symbol | None) -> bool:
    return sym is not None and sym.kind in (FUNCTION, METHOD) and isinstance(sym.obj, FunctionInfo) \
        and bool(sym.module)


def _qualname(sym: Symbol) -> str:
    return sym.path[len(sym.module) + 1:] if sym.path.startswith(sym.module + ".") else sym.path


def _candidates(index: CodeIndex, resolver: Resolver, patch: Patch,
                imported: set[str]) -> list[tuple[str, str, FunctionInfo]]:
    """Where a member the target lacks may have been copied from: same-named module functions
    anywhere in the host (from the index's definitions catalog, so no summary is loaded for it),
    the methods of the target class and its bases, and same-named methods of the classes in the
    target's module and in the host modules the plugin file imports."""
    fn = patch.function
    assert fn is not None
    out: list[tuple[str, str, FunctionInfo]] = []
    for name in dict.fromkeys((fn.name, patch.name)):
        for mod, kind in index.definitions.get(name, ()):
            found = index.modules[mod].functions.get(name) if kind is BindingKind.FUNCTION else None
            if found is not None:
                out.append((mod, name, found))
    owner = resolver.resolve(patch.owner)
    if owner is not None and owner.kind == CLASS:
        for cls in resolver.mro(owner):
            if cls.module and isinstance(cls.obj, ClassInfo):
                out.extend((cls.module, f"{_qualname(cls)}.{name}", m) for name, m in cls.obj.methods.items())
        imported = imported | {owner.module}
    for mod in sorted(m for m in imported if m in index.modules):
        for qual, info in index.modules[mod].classes.items():
            if fn.name in info.methods:
                out.append((mod, f"{qual}.{fn.name}", info.methods[fn.name]))
    return out


class _Tokens:
    """A function body's tokens, per line and flat, with their multiset (what similarity needs).

    Decorators and the `def` header are left out: an override shares its signature with the
    member it replaces by construction, and a wrapper would otherwise look like a copy.
    """

    __slots__ = ("bag", "flat", "lines")

    def __init__(self, lines: list[list[str]]) -> None:
        self.lines = _body(lines)
        self.flat = [t for line in self.lines for t in line]
        self.bag = Counter(self.flat)


def _body(lines: list[list[str]]) -> list[list[str]]:
    """Token lines after the def header (the first line ending in `:` at bracket depth 0)."""
    depth = 0
    started = False
    for i, toks in enumerate(lines):
        if not started and toks[:1] in (["def"], ["async"]):
            started = True
        if not started:
            continue
        for t in toks:
            depth += (t in "([{") - (t in ")]}")
        if depth == 0 and toks[-1] == ":":
            return lines[i + 1:]
    return lines


def _span_tokens(index: CodeIndex, span: Span) -> _Tokens:
    return index.memo(("tokens", span.module, span.start, span.end),
                      lambda: _Tokens([x for x in map(line_tokens, span_lines(index, span)) if x]))


def _bag_bound(a: Counter[str], b: Counter[str], na: int, nb: int) -> float:
    """The ratio's upper bound from token multisets alone (difflib's quick_ratio, precomputed bags)."""
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    common = sum(min(n, large.get(t, 0)) for t, n in small.items())
    return 2 * common / (na + nb) if na + nb else 0.0


def similarity(a: _Tokens, b: _Tokens, floor: float = 0.0) -> float:
    """Normalised-token similarity of two spans (0..1); 0.0 early when bounds fall below `floor`."""
    na, nb = len(a.flat), len(b.flat)
    if not na or not nb or 2 * min(na, nb) / (na + nb) < floor:
        return 0.0
    if floor and _bag_bound(a.bag, b.bag, na, nb) < floor:
        return 0.0
    return block_ratio(a.lines, b.lines)


def find_mirrors(plugin: PluginModel, old: CodeIndex, resolver: Resolver, threshold: float, *,
                 skip_paths: frozenset[str] = frozenset()) -> list[Mirror]:
    """Every plugin override whose text matches an upstream function at OLD by at least `threshold`.

    `skip_paths` are plugin files handled as whole forks (their methods are not mirrors on their own).
    """
    best: dict[tuple[str, int], Mirror] = {}
    imports: dict[str, set[str]] = {}
    for imp in plugin.surface.imports:
        mod = imp.path if imp.path in old.modules else imp.path.rpartition(".")[0]
        imports.setdefault(imp.site.path, set()).add(mod)
    for patch in plugin.surface.patches:
        fn = patch.function
        if patch.kind is PatchKind.ALIAS or fn is None or fn.name == "<lambda>":
            continue
        path = plugin.index.paths.get(patch.plugin_module, "")
        if path in skip_paths:
            continue
        ours = function_span(plugin.index, patch.plugin_module, fn, patch.site.unit)
        ours_tokens = _span_tokens(plugin.index, ours)
        if len(ours_tokens.flat) < _MIN_TOKENS:
            continue
        found = _match(old, resolver, patch, ours, ours_tokens, threshold, imports.get(path, set()))
        if found is not None:
            key = (patch.plugin_module, fn.line)
            if key not in best or found.score > best[key].score:
                best[key] = found
    return sorted(best.values(), key=lambda m: (m.plugin.path, m.plugin.start, m.upstream_path))


def _match(old: CodeIndex, resolver: Resolver, patch: Patch, ours: Span, ours_tokens: _Tokens,
           threshold: float, imported: set[str]) -> Mirror | None:
    base = replaced_member(resolver, patch)
    if base is not None:
        if not _function_symbol(base):
            return None  # replaces an attribute, or a function defined outside the host
        assert isinstance(base.obj, FunctionInfo)
        span = function_span(old, base.module, base.obj, _qualname(base))
        tokens = _span_tokens(old, span)
        if len(tokens.flat) < _MIN_TOKENS:
            return None
        score = similarity(tokens, ours_tokens, threshold)
        return Mirror(patch, ours, span, base.path, round(score, 3), "target") if score >= threshold else None
    # No member to replace: the plugin adds it. Look for the upstream function it was copied from.
    scored: list[tuple[float, str, str, FunctionInfo]] = []
    seen: set[tuple[str, int]] = set()
    mine = ours.end - ours.start + 1
    for mod, qual, fn in _candidates(old, resolver, patch, imported):
        if (mod, fn.line) in seen:
            continue
        seen.add((mod, fn.line))
        size = fn.end_line - fn.line + 1
        if 2 * min(size, mine) / (size + mine) < threshold * 0.8:  # lines are a rough proxy for tokens
            continue
        span = function_span(old, mod, fn, qual)
        tokens = _span_tokens(old, span)
        if len(tokens.flat) >= _MIN_TOKENS:
            score = similarity(tokens, ours_tokens, threshold)
            if score >= threshold:
                scored.append((score, mod, qual, fn))
    if not scored:
        return None
    score, mod, qual, fn = max(scored, key=lambda s: (s[0], s[1], s[2]))
    return Mirror(patch, ours, function_span(old, mod, fn, qual), f"{mod}.{qual}", round(score, 3), "best match")


def new_counterpart(mirror: Mirror, new: CodeIndex, resolver: Resolver) -> Span | None:
    """The copied function in NEW: the member the patch replaces, else the same qualified name."""
    if mirror.matched_by == "target":
        sym = replaced_member(resolver, mirror.patch)
        if _function_symbol(sym):
            assert sym is not None and isinstance(sym.obj, FunctionInfo)
            return function_span(new, sym.module, sym.obj, _qualname(sym))
        return None
    summary = new.modules.get(mirror.upstream.module)
    if summary is None:
        return None
    fn = function_by_qualname(summary, mirror.upstream.qualname)
    return function_span(new, mirror.upstream.module, fn, mirror.upstream.qualname) if fn else None


def function_by_qualname(summary: ModuleSummary, qualname: str) -> FunctionInfo | None:
    """The module-level function or (nested) class method `qualname` names in one module summary."""
    head, _, name = qualname.rpartition(".")
    if not head:
        return summary.functions.get(name)
    cls = None
    for part in head.split("."):
        cls = (summary.classes if cls is None else cls.classes).get(part)
        if cls is None:
            return None
    return cls.methods.get(name)


# -- copies of upstream code and their upstream change ---------------------------------------------
@dataclass(frozen=True)
class Copy:
    """Plugin text that copies upstream text (a mirrored method or a forked file), with both upstreams.

    Texts are dedented with a final newline; `indent` puts a proposal back where the copy sits.
    """

    kind: str  # "mirror" or "fork"
    plugin: Span
    old: Span  # the upstream original at OLD
    new: Span | None  # the same upstream code at NEW; None when NEW no longer has it
    subject: str  # host dotted path of the upstream function or module
    score: float
    matched_by: str  # "target", "best match", "similarity" or "declared"
    ours: str
    base: str
    theirs: str | None
    indent: str = ""

    @property
    def unit(self) -> str:
        return self.plugin.qualname

    @cached_property
    def upstream_changed(self) -> bool:
        """Whether NEW changed the upstream code beyond layout and comments."""
        return self.theirs is not None and _substance(self.base) != _substance(self.theirs)


def _substance(text: str) -> list[str]:
    return [n for n in (normalise(x) for x in text.splitlines()) if n]


def mirror_copy(mirror: Mirror, plugin: CodeIndex, old: CodeIndex, new: CodeIndex,
                new_resolver: Resolver) -> Copy:
    """The Copy record of a mirror: its plugin text, the upstream OLD text and the NEW one."""
    new_span = new_counterpart(mirror, new, new_resolver)
    return Copy("mirror", mirror.plugin, mirror.upstream, new_span, mirror.upstream_path, mirror.score,
                mirror.matched_by, span_text(plugin, mirror.plugin), span_text(old, mirror.upstream),
                span_text(new, new_span) if new_span else None, span_indent(plugin, mirror.plugin))


@dataclass(frozen=True)
class Hunk:
    """One hunk of the upstream OLD -> NEW diff, and whether the plugin copy already carries it."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: tuple[str, ...]  # " x", "-x", "+x"
    reflected: bool
    cosmetic: bool = False  # changes nothing that runs (docstrings, annotations, asserts, log text, layout)
    speed_only: bool = False  # changes how fast it runs or what a debug mode checks, never what it computes
    refactor_only: bool = False  # computes the same through a local, or without a getattr guard
    parameters_only: bool = False  # adds or drops parameters, nothing else: what callers pass is the signatures'
    imports_only: bool = False  # changes where names come from, nothing else; the copy binds them its own way
    acknowledged: tuple[str, ...] = ()  # names it brings that the copy's comments or strings name, not its code

    @property
    def to_port(self) -> bool:
        """Upstream changed what running code computes here and the copy does not have the change, nor
        says in its own words that it does without it."""
        return not (self.reflected or self.cosmetic or self.speed_only or self.refactor_only or self.parameters_only
                    or self.imports_only or self.acknowledged)

    @property
    def header(self) -> str:
        return f"@@ -{_range(self.old_start, self.old_count)} +{_range(self.new_start, self.new_count)} @@"


def _range(start: int, count: int) -> str:
    """A unified-diff range as difflib and git write it (an empty range names the line before)."""
    if count == 1:
        return str(start)
    return f"{start - 1 if count == 0 else start},{count}"


_Run = tuple[int, int, int, int]  # a hunk's lines: OLD's i_first:i_last become NEW's j_first:j_last


@dataclass(frozen=True)
class UpstreamChange:
    """The unified upstream diff of a copy's original, split into hunks."""

    old_path: str
    new_path: str
    hunks: tuple[Hunk, ...]

    @property
    def pending(self) -> tuple[Hunk, ...]:
        """The hunks to port: running code upstream changed that the copy lacks."""
        return tuple(h for h in self.hunks if h.to_port)

    def diff_lines(self, *, mark: bool = True) -> tuple[str, ...]:
        """The unified diff, one line each; `mark` notes after each hunk header whether it is ported."""
        out = [f"--- a/{self.old_path}", f"+++ b/{self.new_path}"]
        for h in self.hunks:
            note = (" already in the plugin copy" if h.reflected else " nothing to port (no running code "
                    "changes)" if h.cosmetic else " nothing to port (only speed or debug checks: memory pinning, "
                    "a dropped copy, compile hints, a debug-mode block)" if h.speed_only else " nothing to port "
                    "(a refactor: a local bound to a read, or the read inlined; a getattr guard dropped)"
                    if h.refactor_only else " nothing to port (only parameters added or dropped: the signature "
                    "checks judge what callers pass)" if h.parameters_only else " nothing to port (only imports, "
                    "each for a use upstream has elsewhere; the copy takes none of their names from where upstream "
                    "took them)" if h.imports_only else " not in the plugin copy, on "
                    f"purpose: its comments name {', '.join(f'`{n}`' for n in h.acknowledged)}" if h.acknowledged
                    else " not in the plugin copy") if mark else ""
            out.append(h.header + note)
            out.extend(h.lines)
        return tuple(out)


def upstream_change(copy: Copy, old: CodeIndex, new: CodeIndex, context: int = 3) -> UpstreamChange | None:
    """The OLD -> NEW diff of the copied upstream code in file line numbers; None when NEW lacks it."""
    if copy.new is None:
        return None
    a = span_lines(old, copy.old)
    b = span_lines(new, copy.new)
    ours = set(_substance(copy.ours))
    theirs = set(_substance(copy.theirs or ""))
    debug = debug_names(new, copy.new.module)
    before: dict[tuple[bool, bool], bytes | None] = {}  # the runtime forms of `a`, made for the first hunk needing one

    def form(text: str, **how: object) -> bytes | None:
        """A digest of `runtime_form(text, **how)` (equal forms, equal digests), made once per text on this
        host index: both sides of a scan, and every check reading the change, judge the same hunks; digests
        keep the memo small where a text is a whole forked file."""
        def build() -> bytes | None:
            found = runtime_form(text, **how)  # type: ignore[arg-type]
            return None if found is None else hashlib.blake2b(found.encode(), digest_size=16).digest()
        return old.memo(("runtime-form", _digest(text), *sorted(how.items())), build)

    def defaults(text: str) -> list[dict[str, str]] | None:
        """`parameter_defaults(text)`, once per text on this host index (every hunk of a copy reads its whole span)."""
        return old.memo(("parameter-defaults", _digest(text)), lambda: parameter_defaults(text))

    def applied(runs: list[_Run]) -> list[str]:
        """Upstream's OLD code with only these hunks applied."""
        out, at = [], 0
        for i_first, i_last, j_first, j_last in runs:
            out += a[at:i_first] + b[j_first:j_last]
            at = i_last
        return out + a[at:]

    def same_run(runs: list[_Run], speed: bool, refactor: bool = False) -> bool:
        """Upstream's code with only these hunks applied runs as before them (with `speed`: computes the same;
        with `refactor`: computes the same through other locals, and reads no attribute with a new guard)."""
        if (speed, refactor) not in before:
            before[speed, refactor] = form("\n".join(a), speed=speed, debug=debug, refactor=refactor)
        text = "\n".join(applied(runs))
        if refactor:
            guards, guarded = getattr_guards("\n".join(a)), getattr_guards(text)
            if guards is None or guarded is None or not guarded <= guards:
                return False  # upstream guards a read it did not: the attribute may be missing (a fix)
        return before[speed, refactor] is not None and before[speed, refactor] == form(
            text, speed=speed, debug=debug, refactor=refactor)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    runs: list[_Run] = []
    diffs: list[list[str]] = []
    for group in matcher.get_grouped_opcodes(context):
        lines: list[str] = []
        for op, i1, i2, j1, j2 in group:
            if op == "equal":
                lines.extend(" " + x for x in a[i1:i2])
                continue
            lines.extend("-" + x for x in a[i1:i2])
            lines.extend("+" + x for x in b[j1:j2])
        runs.append((group[0][1], group[-1][2], group[0][3], group[-1][4]))
        diffs.append(lines)
    groups = _sharing_locals(diffs)
    judged: list[tuple[_Run, list[str], bool, bool, bool]] = []
    for run, lines, reflected in zip(runs, diffs, _in_copy(diffs, groups, ours, theirs, copy.ours, a), strict=True):
        cosmetic = not reflected and same_run([run], False)
        speed_only = not reflected and not cosmetic and _speed_only(lines, debug) and same_run([run], True)
        judged.append((run, lines, reflected, cosmetic, speed_only))
    refactors = set()
    for together in groups:
        lines = [x for k in together for x in judged[k][1]]
        if any(not any(judged[k][2:]) for k in together) and _may_refactor(lines) \
                and same_run([judged[k][0] for k in together], _speed_only(lines, debug), True):
            refactors.update(together)
    hunks = []
    said = _CopyNames(copy.ours)
    for k, (run, lines, reflected, cosmetic, speed_only) in enumerate(judged):
        refactor = k in refactors and not (reflected or cosmetic or speed_only)
        settled = reflected or cosmetic or speed_only or refactor
        parameters = not settled and _parameters_only(a, applied([run]), form, defaults)
        imports = not settled and not parameters and said.imports_only(a, applied([run]), b)
        acknowledged = () if settled or parameters or imports else said.names(a, applied([run]))
        hunks.append(Hunk(copy.old.start + run[0], run[1] - run[0], copy.new.start + run[2], run[3] - run[2],
                          tuple(lines), reflected, cosmetic, speed_only, refactor, parameters, imports, acknowledged))
    return UpstreamChange(copy.old.path, copy.new.path, tuple(hunks))


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _changed(before: list[str], after: list[str]) -> list[str]:
    """The lines of `after` that are not in `before` and those of `before` not in `after` (a hunk's changes)."""
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if op != "equal":
            out += before[i1:i2] + after[j1:j2]
    return out


def _parameters_only(before: list[str], after: list[str], form: Callable[..., bytes | None],
                     defaults: Callable[[str], list[dict[str, str]] | None]) -> bool:
    """Whether upstream's code (a hunk not cosmetic) changes only by parameters added or dropped: the code
    runs the same without its parameter lists, and every parameter both keep keeps its kind, default and
    order (a caller that binds to both gets the same values; a None default refused by a leading raise is none).
    Whether callers pass what the copy takes is the signature checks' judgement of the copy itself, made
    on OLD: the hunk has nothing the copy computes."""
    old, new = "\n".join(before), "\n".join(after)
    params, changed = defaults(old), defaults(new)
    if params is None or changed is None or len(params) != len(changed):
        return False
    for p, q in zip(params, changed, strict=True):
        kept = p.keys() & q.keys()
        if any(p[name] != q[name] for name in kept) or [n for n in p if n in kept] != [n for n in q if n in kept]:
            return False  # a default or kind changed, or parameters reordered: calls bind otherwise
    unlisted = form(old, parameters=False)
    return unlisted is not None and unlisted == form(new, parameters=False)


class _CopyNames:
    """What a copy names: in its code, apart from that in its comments and strings, and by its imports."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._code: set[str] | None = None
        self._prose: set[str] | None = None
        self._bindings: set[tuple[str, str]] | None = None

    def imports_only(self, before: list[str], after: list[str], upstream: list[str]) -> bool:
        """Whether a hunk changes only imports (`similarity.imports_only`), each name it binds anew is one
        upstream's code reads (in `upstream`, all hunks applied: not an import for its side effects), and the
        copy binds no name whose sources
        the hunk changes from a source upstream had before it: the copy takes such a name from a module of
        its own, or does not use it (the hunks using a name are judged on their own)."""
        if not any(x.lstrip().startswith(("import ", "from ")) for x in _changed(before, after)):
            return False  # no import line changed: cheaply not (parsing whole files per hunk is not)
        old, new = "\n".join(before), "\n".join(after)
        changes, was, used = imports_only(old, new), import_bindings(old), read_names("\n".join(upstream))
        if changes is None or was is None or used is None:
            return False
        dropped, added = changes
        if self._bindings is None:
            self._bindings = import_bindings(self.text) or set()
        changed = {name for name, _ in dropped | added}
        return all(name in used for name, _ in added) and not any(
            name in changed for name, _ in was & self._bindings)

    def names(self, before: list[str], after: list[str]) -> tuple[str, ...]:
        """The identifiers a hunk brings to upstream's code (`before` -> `after`) that the copy's code lacks
        and its comments or strings name, when every one it brings is in the copy one way or the other and
        those named only in words read as identifiers (`forward_qkv`, not `source`): the copy says it does
        without the change (a patch's stated reason, a comment on the deviation). () otherwise."""
        if self._code is None:
            self._code = code_names(self.text) or set()
            self._prose = prose_words(self.text) - self._code
        assert self._prose is not None
        if not self._prose & _names(_changed(before, after)):
            return ()  # a name it brings is in an added line: none of them is in the copy's words
        old, new = code_names("\n".join(before)), code_names("\n".join(after))
        if old is None or new is None:
            return ()
        fresh = new - old - _NOT_NAMES
        unsaid = fresh - self._code
        if not unsaid or not unsaid <= self._prose or not all(code_like(n) for n in unsaid):
            return ()
        return tuple(sorted(unsaid))


_BOUND = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)")  # a line binding a local name (or a keyword argument)
_READ_BOUND = re.compile(r"^\s*[A-Za-z_]\w*\s*=\s*[A-Za-z_][\w.]*\s*(?:#.*)?$")  # `x = obj.attr`


def _sharing_locals(hunks: list[list[str]]) -> list[list[int]]:
    """The hunks (by position) to judge together, in groups: a hunk whose changed lines bind a local goes
    with every hunk whose changed lines name it (a local upstream added in one hunk and used in another
    is a refactor only if both are)."""
    changed = [[x[1:] for x in lines if x[:1] in "+-"] for lines in hunks]
    group = list(range(len(hunks)))

    def find(k: int) -> int:
        while group[k] != k:
            k = group[k]
        return k
    for k, lines in enumerate(changed):
        for name in {m.group(1) for x in lines if (m := _BOUND.match(x))}:
            word = re.compile(rf"\b{name}\b")
            for other, theirs in enumerate(changed):
                if other != k and any(word.search(x) for x in theirs):
                    group[find(other)] = find(k)
    out: dict[int, list[int]] = {}
    for k in range(len(hunks)):
        out.setdefault(find(k), []).append(k)
    return list(out.values())


_NOT_NAMES = frozenset(keyword.kwlist) | frozenset(dir(builtins))


def _names(lines: Iterable[str]) -> set[str]:
    """The identifiers of some lines, builtins and keywords left out (every text names those)."""
    return {t for x in lines for t in line_tokens(x) if t.isidentifier()} - _NOT_NAMES


def _in_copy(hunks: list[list[str]], groups: list[list[int]], ours: set[str], theirs: set[str], copy_text: str,
             upstream: list[str]) -> list[bool]:
    """Which hunks the copy already has. Verbatim: it has each added line (modulo layout) and no removed
    one. By hand: it has no removed line and names every identifier the hunk's added lines bring to
    upstream's code, in lines of its own (not another hunk's added lines: a name one hunk adds and another
    uses is no evidence the use was ported); a hunk sharing a local with another is ported by hand only when
    that one is in the copy too."""
    added = [{normalise(x[1:]) for x in h if x.startswith("+")} - {""} for h in hunks]
    removed = [{normalise(x[1:]) for x in h if x.startswith("-")} - {""} - added[k] - theirs
               for k, h in enumerate(hunks)]
    verbatim = [added[k] <= ours and not removed[k] & ours for k in range(len(hunks))]
    known = _names(upstream)
    copy_lines = [(n, _names([n])) for n in (normalise(x) for x in copy_text.splitlines()) if n]

    def by_hand(k: int) -> bool:
        if verbatim[k] or removed[k] & ours:
            return False
        fresh = _names(x[1:] for x in hunks[k] if x.startswith("+")) - known
        if not fresh:
            return False
        others = set().union(*(added[i] for i in range(len(hunks)) if i != k))
        return fresh <= set().union(*(names for line, names in copy_lines if line not in others))
    hand = [by_hand(k) for k in range(len(hunks))]
    ported = {k for group in groups if all(verbatim[k] or hand[k] for k in group) for k in group}
    return [verbatim[k] or k in ported for k in range(len(hunks))]


def _may_refactor(lines: list[str]) -> bool:
    """Whether hunks may be a refactor alone: a changed line binds a local to a read or reads by getattr."""
    return any(x[:1] in "+-" and ("getattr(" in x or _READ_BOUND.match(x[1:])) for x in lines)


def _speed_only(lines: list[str], debug: frozenset[str]) -> bool:
    """Whether a hunk may change speed or debug checks alone: it names a speed word or a debug context
    manager, and adds no `.contiguous()` (one upstream added can be a fix: a kernel or a `view` that
    needs dense memory; one it dropped the copy keeps harmlessly)."""
    changed = [x for x in lines if x[:1] in "+-"]
    count = Counter(x[0] for x in changed for _ in range(x.count(".contiguous()")))
    return count["+"] <= count["-"] and any(w in x for x in changed for w in (*SPEED_WORDS, *debug))


def debug_names(index: CodeIndex, module: str) -> frozenset[str]:
    """The names a host module imports from its debugging modules (`debugging_module`), or binds to one."""
    summary = index.modules.get(module)
    if summary is None:
        return frozenset()
    return index.module_memo(module, "debug_names", lambda: frozenset(
        b.name for b in summary.bindings.values()
        if b.kind is BindingKind.IMPORT_FROM and debugging_module(b.target.rpartition(".")[0])
        or b.kind is BindingKind.IMPORT and debugging_module(b.target)))


def span_location(index: CodeIndex, span: Span | None, unit: str) -> Location | None:
    """Evidence for a copied span: its first line (the `def` when there is one) in that tree."""
    if span is None:
        return None
    lines = span_lines(index, span)
    first = next((x.strip() for x in lines if x.strip().startswith(("def ", "async def "))), "")
    return Location(span.path, span.start, 0, unit, first or (lines[0].strip() if lines else ""))


def change_details(copy: Copy, change: UpstreamChange, plugin: CodeIndex, old: CodeIndex) -> tuple[str, ...]:
    """One summary line of what the copy kept, changed and added, then the marked upstream diff."""
    delta = line_delta(span_lines(old, copy.old), span_lines(plugin, copy.plugin), copy.old.start,
                       copy.plugin.start)
    summary = (f"plugin copy (similarity {copy.score:.2f}, {copy.matched_by}): kept {len(delta.kept)}, changed "
               f"{len(delta.changed)}, dropped {len(delta.dropped)} upstream lines; added {len(delta.added)}")
    where = [f"{label} {_ranges(lines)}" for label, lines in (
        (f"upstream lines changed ({copy.old.path}):", delta.changed), ("dropped:", delta.dropped),
        (f"plugin lines added ({copy.plugin.path}):", delta.added)) if lines]
    return (summary, *(("; ".join(where),) if where else ()), *change.diff_lines())


def _ranges(numbers: tuple[int, ...], limit: int = 8) -> str:
    """`3-5, 9, 12-14` for (3, 4, 5, 9, 12, 13, 14), the first `limit` runs then a count."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs[:limit])
    return text + (f" and {len(runs) - limit} more runs" if len(runs) > limit else "")
