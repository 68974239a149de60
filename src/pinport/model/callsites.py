"""Call sites in host modules, statically: cheap text prefilters first, then the units holding a call.

A module is parsed only when its source mentions the call, and a unit's types are inferred
only when it holds a call of that name; every prefilter is memoised per index.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import NamedTuple

from .binding import Callee, bind_call
from .index import CodeIndex
from .inference import host_inference
from .resolve import Resolver
from .summary import Param
from .units import call_name, module_units, spans, walk_unit
from .words import word


def modules_mentioning(index: CodeIndex, text: str, top: str = "") -> tuple[str, ...]:
    """Modules (sorted) whose source contains `text`: the cheap prefilter before any parse."""
    return index.memo(("grep", top, text), lambda: index.grep(text, top))


_CLASS_HEADER = re.compile(r"class\s+\w+[\s\\]*\(")  # `class` as a word: checked where found (see `words`)


def modules_subclassing(index: CodeIndex, short: str, top: str = "") -> tuple[str, ...]:
    """Modules (sorted) that may define a class with a base spelt `short` or `x.short`: those whose
    text has a `class X(` header naming `short` between its parentheses (a header it cannot cut out
    counts). A superset of the modules whose summaries list such a base, found from text, so a
    search for subclasses reads (and, cold, builds) only their summaries, not those of every
    module mentioning the name."""
    def build() -> tuple[str, ...]:
        whole = word(short)
        out = []
        for module in modules_mentioning(index, short, top):
            text = index.source(module)
            for header in _CLASS_HEADER.finditer(text):
                if header.start() and (text[header.start() - 1].isalnum() or text[header.start() - 1] == "_"):
                    continue  # `subclass X(`: not a class header
                bases = _arguments_at(text, header.end() - 1)
                if bases is None or whole.search(bases):
                    out.append(module)
                    break
        return tuple(out)
    return index.memo(("subclassing", top, short), build)


def _arguments_at(text: str, start: int) -> str | None:
    """The source of a call's argument list from its `(` at `start` to the matching `)`."""
    depth, i, n = 0, start, len(text)
    while i < n:
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
        elif ch == "#":
            i = text.find("\n", i)
            if i < 0:
                return None
        elif ch in "'\"":
            quote = text[i:i + 3] if text[i:i + 3] in ('"""', "'''") else ch
            end = text.find(quote, i + len(quote))
            while end > 0 and text[end - 1] == "\\" and len(quote) == 1:
                end = text.find(quote, end + 1)
            if end < 0:
                return None
            i = end + len(quote) - 1
        i += 1
    return None


def failing_call_lines(index: CodeIndex, module: str, name: str, params: Sequence[Param], *,
                       method: bool) -> tuple[int, ...]:
    """Lines of `name(...)` calls in a module that might not bind to `params`, judged from text.

    Each call's argument list is cut out of the source and parsed on its own (microseconds),
    so only the units holding a call that fails, or cannot be judged, need type inference.
    Any doubt (odd text, `*args`) counts as "might fail". Kept per module (a fact of its text).
    """
    return index.module_memo(module, ("failing-calls", name, tuple(params), method),
                             lambda: _failing_call_lines(index.source(module), name, params, method))


def _failing_call_lines(text: str, name: str, params: Sequence[Param], method: bool) -> tuple[int, ...]:
    needle = f".{name}(" if method else f"{name}("
    lines: list[int] = []
    pos = text.find(needle)
    while pos >= 0:
        before = text[pos - 1] if pos else " "
        if method or not (before.isalnum() or before == "_") and not text.endswith("def ", 0, pos):
            args = _arguments_at(text, pos + len(needle) - 1)
            try:
                call = ast.parse(f"f{args}", mode="eval").body if args else None
            except SyntaxError:
                call = None
            if not isinstance(call, ast.Call) or bind_call(params, call) != []:
                lines.append(text.count("\n", 0, pos) + 1)
        pos = text.find(needle, pos + 1)
    return tuple(lines)


class CallSite(NamedTuple):
    module: str
    line: int
    unit: str
    call: ast.Call
    callee: Callee


def iter_call_sites(resolver: Resolver, name: str, accept: Callable[[Callee], bool], *,
                    text: str | None = None, modules: Sequence[str] | None = None,
                    lines: Mapping[str, Sequence[int]] | None = None,
                    limit: int | None = None) -> Iterator[CallSite]:
    """Host calls named `name` whose resolved callee `accept`s, in module and line order.

    Only `modules` (default: those whose source mentions `text`, itself `name(` by default) are
    parsed; with `lines`, only the units spanning one of a module's lines are looked at; a
    unit's types are inferred only when it holds a call of that name.
    """
    count = 0
    needle = text or f"{name}("
    if modules is None:
        modules = modules_mentioning(resolver.index, needle, resolver.top)
    for module in modules:
        tree = resolver.index.parsed(module)
        if tree is None:
            continue
        wanted = lines.get(module, ()) if lines is not None else text_lines(resolver.index, module, needle)
        found: list[CallSite] = []
        for unit in module_units(resolver.index, module):
            if not any(spans(unit, line) for line in wanted):
                continue
            facts = walk_unit(resolver.index, module, unit)
            calls = [c for c in facts.calls if call_name(c) == name]
            if not calls:
                continue
            inf = host_inference(resolver, module, unit, facts)
            for call in calls:
                callee = inf.callee(call.func)
                if callee is not None and accept(callee):
                    found.append(CallSite(module, call.lineno, unit.qualname, call, callee))
        for site in sorted(found, key=lambda s: (s.line, s.call.col_offset)):
            yield site
            count += 1
            if limit is not None and count >= limit:
                return


def text_lines(index: CodeIndex, module: str, text: str) -> tuple[int, ...]:
    """The 1-based lines of a module on which `text` occurs (a cheap way to skip whole units)."""
    source = index.source(module)
    out: list[int] = []
    pos, line, last = source.find(text), 1, 0
    while pos >= 0:
        line += source.count("\n", last, pos)
        last = pos
        out.append(line)
        pos = source.find(text, pos + 1)
    return tuple(out)
