"""The interface every check implements, and the read-only context a check gets.

A check is run twice per scan: once judging NEW (with OLD as the other side, for evidence)
and once judging OLD. The scan compares the two runs by fingerprint to tell findings the
move introduces (drift) from those already true on the current pin (latent).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from ..config import Settings
from ..findings import Finding, Kind, Location, Severity
from ..model.index import CodeIndex, IndexCache
from ..model.resolve import MODULE, Resolver, Symbol
from ..model.summary import FunctionInfo
from ..plugin.model import PluginModel
from ..plugin.records import Guard
from ..sources.tree import SourceTree

# A guarded use (`if TYPE_CHECKING:`, `try:`, a version test) fails less loudly than a bare one.
_GUARD_SEVERITY = {Guard.TYPE_CHECKING: Severity.INFO, Guard.TRY: Severity.WARNING, Guard.VERSION: Severity.WARNING}


def guard_severity(guard: Guard) -> Severity | None:
    """The severity override for a finding at a guarded plugin site; None keeps the kind's own."""
    return _GUARD_SEVERITY.get(guard)


@dataclass(frozen=True)
class HostView:
    """One host version: its index, a resolver over it, and how to cite a symbol in it."""

    index: CodeIndex
    resolver: Resolver

    @property
    def label(self) -> str:
        return self.index.label

    def resolve(self, path: str) -> Symbol | None:
        return self.resolver.resolve(path)

    def location(self, sym: Symbol | None, snippet: str | None = None) -> Location | None:
        """Evidence for a symbol: its file and line in this tree, with the line's text."""
        if sym is None or not sym.module or sym.module not in self.index.paths:
            return None
        if snippet is None:
            snippet = f"module {sym.path}" if sym.kind == MODULE else self.index.line_text(sym.module, sym.line)
        text = snippet
        return Location(self.index.paths[sym.module], sym.line, 0, sym.path, text)

    def def_location(self, sym: Symbol | None) -> Location | None:
        """`location`, with a function's signature (`def f(a, b=1)`) as the snippet."""
        if sym is None or not isinstance(sym.obj, FunctionInfo):
            return self.location(sym)
        return self.location(sym, snippet=f"def {sym.obj.name}{sym.obj.signature.render()}")


@dataclass(frozen=True)
class ScanContext:
    """What a check may read: the plugin, the host being judged and the other host, the settings."""

    plugin: PluginModel
    host: HostView  # the version being judged
    other: HostView  # the other version
    judging_new: bool
    settings: Settings
    history: tuple[SourceTree, ...] = ()  # host releases before OLD, oldest first (where copies came from)
    index_cache: IndexCache | None = None

    @property
    def old(self) -> HostView:
        return self.other if self.judging_new else self.host

    @property
    def new(self) -> HostView:
        return self.host if self.judging_new else self.other

    def evidence(self, path: str, *, host_sym: Symbol | None = None,
                 other_sym: Symbol | None = None) -> dict[str, Location | None]:
        """`old=`/`new=` keyword arguments for a Finding: where `path` is defined in each version."""
        here = self.host.location(host_sym or self.host.resolve(path))
        there = self.other.location(other_sym or self.other.resolve(path))
        return self.sides(here, there)

    def sides(self, here: Location | None, there: Location | None) -> dict[str, Location | None]:
        """`old=`/`new=` keyword arguments for a Finding from evidence in the judged and the other host."""
        return {"old": there, "new": here} if self.judging_new else {"old": here, "new": there}

    def plugin_site(self, module: str, unit: str, node: ast.AST) -> Location:
        """The plugin location of an AST node in `module`, inside plugin unit `unit`, with its line's text."""
        line = getattr(node, "lineno", 0)
        return Location(self.plugin.index.paths[module], line, getattr(node, "col_offset", 0), unit,
                        self.plugin.index.line_text(module, line))


class Check(Protocol):
    """A check: a name, the drift numbers it covers, its kinds, and a generator of findings.

    `run` reads only the context: no files, no parsing, no printing, no environment. Where it
    cannot decide, it skips (or yields a low-severity "unverified" finding), and it never raises
    on purpose; the scan turns an unexpected exception into an internal-error finding.
    """

    name: str
    drift: tuple[int, ...]
    kinds: tuple[Kind, ...]
    description: str
    # optional `cost`: relative run time (default 1), used to spread checks over the cores

    def run(self, ctx: ScanContext) -> Iterator[Finding]: ...
