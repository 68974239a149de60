"""Automatic probes: the plugin's patch surface at the newest pin, tracked across every pin.

Derived at the newest column, so a surface nobody wrote a probe for is tracked anyway:
- `auto.sig.<unit>`: the parameter list of every override and module-function replacement;
- `auto.alias.<class>.<name>`: the target expression of every `_orig_*` alias;
- `auto.import.<name>`: the module every host name is imported from.
Signature probes also name their upstream counterpart (the base member's def at the newest
pin) when host sources are at hand, which feeds the host cross-check (HOST_CHANGED).

The regexes are built line by line, never with an open-ended `.*?`: an anchor line per
enclosing class or function (at its indentation), then only lines that belong to its body,
then the def with a bracket-balanced parameter list. That keeps them linear on big files and
stops them from wandering into another class when a member is gone from an older snapshot.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import NamedTuple

from ..config import Settings
from ..model.host import HostView
from ..model.index import CodeIndex, IndexCache, load_index
from ..model.resolve import CLASS, FUNCTION, METHOD, Resolver
from ..model.summary import FunctionInfo
from ..pins import ReadFile
from ..plugin.forks import find_forks
from ..plugin.mirrors import find_mirrors
from ..plugin.model import PluginModel, load_plugin_model
from ..plugin.records import Patch, PatchKind
from ..sources.directory import discover_packages, load_directory
from ..sources.git import CONFIG_FILES
from .git import GitRepo
from .history import Column, ColumnKind
from .host import HostSources
from .probes import AUTO, Probe

__all__ = [
    "ALIAS",
    "IMPORT",
    "SIG",
    "HostSide",
    "Scope",
    "SurfaceProbes",
    "alias_regex",
    "derive_probes",
    "import_regex",
    "module_import_regex",
    "sig_regex",
]

SIG, ALIAS, IMPORT, FORK, MIRROR = "auto.sig", "auto.alias", "auto.import", "auto.fork", "auto.mirror"
_ORDER = {SIG: 0, ALIAS: 1, IMPORT: 2, FORK: 3, MIRROR: 4}
_WHOLE_FILE = r"\A(.*)\Z"
_FUNCTION_KINDS = (PatchKind.MEMBER, PatchKind.OVERRIDE, PatchKind.ASSIGNMENT)

# A parameter list in its parentheses: anything but parentheses, or balanced pairs four deep.
_PARAMS = r"(\((?:[^()]|\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\))*\))"


class Scope(NamedTuple):
    """One enclosing `class` or `def`: what it is, its name, and its indentation."""

    kind: str  # "class" or "def"
    name: str
    indent: int


class _Scopes(NamedTuple):
    chains: dict[str, tuple[Scope, ...]]  # qualified name -> its scopes, outermost first
    defs: dict[int, str]  # line of a `def` -> its qualified name


def _scopes(tree: ast.Module) -> _Scopes:
    """Every class and function of a module with its chain of enclosing scopes."""
    chains: dict[str, tuple[Scope, ...]] = {}
    defs: dict[int, str] = {}
    stack: list[tuple[ast.AST, tuple[Scope, ...]]] = [(tree, ())]
    while stack:
        node, chain = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                kind = "class" if isinstance(child, ast.ClassDef) else "def"
                inner = (*chain, Scope(kind, child.name, child.col_offset))
                qual = ".".join(s.name for s in inner)
                chains.setdefault(qual, inner)
                if kind == "def":
                    defs.setdefault(child.lineno, qual)
                stack.append((child, inner))
            elif isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
                stack.append((child, chain))  # if/try/with bodies keep the qualified name
    return _Scopes(chains, defs)


def _indent(width: int) -> str:
    return rf"[ \t]{{{width}}}" if width else ""


def _anchor(chain: Iterable[Scope]) -> str:
    """Each scope's header line, then any lines of its body: deeper, blank, comment, or a bracket closing the header."""
    out = []
    for scope in chain:
        keyword = "class" if scope.kind == "class" else r"(?:async[ \t]+)?def"
        at = _indent(scope.indent)
        out.append(rf"^{at}{keyword}[ \t]+{re.escape(scope.name)}\b[^\n]*\n")
        # mutually exclusive line shapes, so a failed search backtracks linearly
        out.append(
            rf"(?:(?:{at}[ \t][^\n]*|[ \t]{{0,{scope.indent}}}(?:#[^\n]*)?|{at}[)\]][^\n]*)\n)*?"
        )
    return "".join(out)


def sig_regex(chain: tuple[Scope, ...]) -> str:
    """The parameter list of the innermost def of `chain`, anchored on the scopes around it."""
    *outer, own = chain
    return (
        _anchor(outer)
        + rf"^{_indent(own.indent)}(?:async[ \t]+)?def[ \t]+{re.escape(own.name)}[ \t]*"
        + r"(?:\[[^\]\n]*\][ \t]*)?"  # PEP 695 type parameters
        + _PARAMS
    )


def body_regex(chain: tuple[Scope, ...]) -> str:
    """The whole innermost def of `chain` (header and every deeper or blank line after it)."""
    *outer, own = chain
    at = _indent(own.indent)
    return (
        _anchor(outer)
        + rf"^({at}(?:async[ \t]+)?def[ \t]+{re.escape(own.name)}\b[^\n]*\n"
        + rf"(?:(?:{at}[ \t][^\n]*|[ \t]*|{at}[)\]][^\n]*)\n)*)"
    )


def alias_regex(chain: tuple[Scope, ...], name: str, indent: int) -> str:
    """The expression assigned to `name` in the body of the innermost scope of `chain` (or at module level)."""
    return (
        _anchor(chain)
        + rf"^{_indent(indent)}{re.escape(name)}[ \t]*(?::[^=\n]*)?=(?!=)[ \t]*"
        + r"([^\n]*?)[ \t]*(?:#[^\n]*)?$"
    )


def import_regex(name: str) -> str:
    """The module `name` is imported from: `from m import a, name` or `from m import (\\n a,\\n name)`."""
    return (
        r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]*"
        r"(?:\([^)]*?|(?:[^\n;#(\\]|\\\n)*?)"  # inside the brackets, or on the (continued) line
        rf"(?<=[\s,(])(?<!\sas\s){re.escape(name)}\b"
    )


def module_import_regex(path: str) -> str:
    """`import a.b.c` (alone, aliased or in a list): the module path itself."""
    return (
        r"^[ \t]*import[ \t]+(?:[\w.]+(?:[ \t]+as[ \t]+\w+)?[ \t]*,[ \t]*)*"
        rf"({re.escape(path)})(?![\w.])"
    )


class _Draft(NamedTuple):
    kind: str
    name: str  # label after the kind
    module: str  # plugin module, to tell apart equal names of different files
    file: str
    regex: str
    multiline: bool
    host_file: str = ""
    host_regex: str = ""
    check: tuple[str, ...] = ()  # words the value must hold at the newest pin
    digest: bool = False


def _relative(module: str, package: str) -> str:
    return module[len(package) + 1 :] if module.startswith(package + ".") else module


Locate = Callable[[str], str | None]  # index path -> plugin-relative path (None: outside it)
ScopesOf = Callable[[CodeIndex, str], _Scopes]


def _signatures(
    plugin: PluginModel, locate: Locate, scopes: ScopesOf, host: HostSide | None
) -> list[_Draft]:
    drafts: dict[tuple[str, str], _Draft] = {}
    for patch in plugin.surface.patches:
        fn = patch.function
        if patch.kind not in _FUNCTION_KINDS or fn is None or fn.name == "<lambda>":
            continue
        module = patch.plugin_module
        qual = scopes(plugin.index, module).defs.get(fn.line)
        file = locate(plugin.index.paths[module])
        if qual is None or file is None or (module, qual) in drafts:
            continue
        chain = scopes(plugin.index, module).chains[qual]
        host_file, host_regex = host.counterpart(patch) if host else ("", "")
        drafts[(module, qual)] = _Draft(
            SIG,
            qual,
            module,
            file,
            sig_regex(chain),
            True,
            host_file,
            host_regex,
            tuple(p.name for p in fn.signature.params),
        )
    return list(drafts.values())


def _aliases(plugin: PluginModel, locate: Locate, scopes: ScopesOf) -> list[_Draft]:
    drafts: dict[tuple[str, str], _Draft] = {}
    for patch in plugin.surface.patches:
        if patch.kind is not PatchKind.ALIAS or not patch.local_name:
            continue
        module = patch.plugin_module
        chain = scopes(plugin.index, module).chains.get(patch.via, ()) if patch.via else ()
        file = locate(plugin.index.paths[module])
        if file is None or (patch.via and not chain):
            continue
        name = f"{patch.via}.{patch.local_name}" if patch.via else patch.local_name
        regex = alias_regex(chain, patch.local_name, patch.site.column)
        drafts.setdefault(
            (module, name),
            _Draft(ALIAS, name, module, file, regex, True),
        )
    return list(drafts.values())


def _imports(plugin: PluginModel, locate: Locate) -> list[_Draft]:
    """One probe per imported name, on the first file importing it from each module seen."""
    host = plugin.names.host
    sites: dict[tuple[str, bool], dict[str, tuple[str, str]]] = defaultdict(dict)
    modules = {path: module for module, path in plugin.index.paths.items()}
    for imp in sorted(plugin.surface.imports, key=lambda i: (i.site.path, i.site.line)):
        module = modules.get(imp.site.path, "")
        if imp.is_module_import:
            if imp.path != host:
                sites[(imp.path, True)].setdefault(imp.path, (imp.site.path, module))
        else:
            origin, _, name = imp.path.rpartition(".")
            sites[(name, False)].setdefault(origin, (imp.site.path, module))
    drafts = []
    for (name, is_module), by_origin in sites.items():
        regex = module_import_regex(name) if is_module else import_regex(name)
        for path, module in dict.fromkeys(by_origin.values()):
            file = locate(path)
            if file is not None:
                drafts.append(_Draft(IMPORT, name, module, file, regex, False))
    return drafts


def _labelled(drafts: list[_Draft], package: str) -> list[tuple[str, _Draft]]:
    """Stable labels; a name two files share gets `@<plugin module>` on each."""
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for d in drafts:
        counts[(d.kind, d.name)] += 1
    out = {}
    for d in drafts:
        label = f"{d.kind}.{d.name}"
        if counts[(d.kind, d.name)] > 1:
            label += f"@{_relative(d.module, package)}"
        out.setdefault(label, d)
    return sorted(out.items(), key=lambda item: (_ORDER[item[1].kind], item[0]))


def _forks(plugin: PluginModel, locate: Locate, host: HostSide) -> list[_Draft]:
    """A fingerprint per forked file (detected against the host at the newest pin, or declared).

    The value is a hash of the whole file without comments; its host side is the upstream file,
    so the cross-check sees upstream move on while the fork stands still.
    """
    out = []
    for fork in find_forks(plugin, host.index, host.settings.fork_threshold, host.settings.forks):
        file = locate(fork.plugin_path)
        if file is not None:
            out.append(_Draft(FORK, file, fork.plugin_module, file, _WHOLE_FILE, True,
                              fork.host_path, _WHOLE_FILE, digest=True))
    return out


def _mirrors(plugin: PluginModel, locate: Locate, scopes: ScopesOf, host: HostSide) -> list[_Draft]:
    """A fingerprint per mirrored method (an override copying an upstream body), outside forks.

    The value hashes the plugin's def; the host side hashes the upstream def it copies, so the
    cross-check sees upstream change a body the plugin did not re-derive.
    """
    forks = frozenset(f.plugin_path for f in find_forks(plugin, host.index, host.settings.fork_threshold,
                                                        host.settings.forks))
    view = host.view
    out = []
    for mirror in find_mirrors(plugin, host.index, view.resolver, host.settings.mirror_threshold, skip_paths=forks):
        patch, module = mirror.patch, mirror.patch.plugin_module
        fn = patch.function
        qual = scopes(plugin.index, module).defs.get(fn.line) if fn is not None else None
        file = locate(plugin.index.paths[module])
        if qual is None or file is None:
            continue
        host_file, host_regex = host.counterpart(patch, body=True)
        out.append(_Draft(MIRROR, qual, module, file, body_regex(scopes(plugin.index, module).chains[qual]), True,
                          host_file, host_regex, digest=True))
    return out


class HostSide:
    """The host at the newest pin: where each patched member's def is, as a file and a regex."""

    def __init__(
        self, index: CodeIndex, settings: Settings, read: Callable[[str], str | None]
    ) -> None:
        self._view = HostView(index, Resolver(index, settings.host))
        self._read = read
        self._lines: dict[str, list[str]] = {}
        self.settings = settings

    @property
    def index(self) -> CodeIndex:
        return self._view.index

    @property
    def view(self) -> HostView:
        return self._view

    def counterpart(self, patch: Patch, *, body: bool = False) -> tuple[str, str]:
        """(host file, regex of the base def's parameters, or its whole def with `body`), or ("", "").

        The scopes come from the summary's lines and the def's and its class's source lines,
        so no host module is parsed for this.
        """
        _, base = self._view.replaced_member(patch.owner, patch.name)
        index = self._view.index
        if base is None or base.kind not in (FUNCTION, METHOD) or base.module not in index.paths:
            return "", ""
        if not isinstance(base.obj, FunctionInfo):
            return "", ""
        scopes = [self._scope(base.module, base.obj.line, "def", base.obj.name)]
        if base.kind == METHOD:
            owner = self._view.resolve(base.owner) if base.owner else None
            if owner is None or owner.kind != CLASS or owner.module != base.module:
                return "", ""
            name = owner.path.rpartition(".")[2]
            scopes.insert(0, self._scope(owner.module, owner.line, "class", name))
        chain = tuple(scope for scope in scopes if scope is not None)
        if len(chain) != len(scopes):
            return "", ""
        return index.paths[base.module], (body_regex if body else sig_regex)(chain)

    def _scope(self, module: str, line: int, kind: str, name: str) -> Scope | None:
        if module not in self._lines:
            self._lines[module] = self._view.index.lines(module)
        lines = self._lines[module]
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        header = "class" if kind == "class" else r"(?:async\s+)?def"
        match = re.match(rf"([ \t]*){header}\s+{re.escape(name)}\b", text)
        return Scope(kind, name, len(match.group(1))) if match else None

    def read(self, path: str) -> str | None:
        return self._read(path)


def _verified(label: str, draft: _Draft, read: ReadFile, host: HostSide | None) -> Probe | None:
    """The probe, when it matches at the newest pin (with the words expected); its host side likewise."""
    probe = Probe(
        label,
        draft.file,
        draft.regex,
        multiline=draft.multiline,
        strip_comments=draft.kind in (SIG, FORK, MIRROR),
        digest=draft.digest,
        section=AUTO,
        host_file=draft.host_file,
        host_regex=draft.host_regex,
    )
    value = probe.evaluate(read(draft.file))
    if value is None or not all(re.search(rf"\b{re.escape(w)}\b", value) for w in draft.check):
        return None  # a shape the regex cannot follow: better no row than a false VANISHED
    if probe.host_pattern is not None and (
        host is None or probe.evaluate_host(host.read(probe.host_file)) is None
    ):
        probe = dataclasses.replace(probe, host_file="", host_regex="")
    return probe


def derive_probes(
    plugin: PluginModel,
    read: ReadFile,
    *,
    locate: Locate = lambda rel: rel,
    host: HostSide | None = None,
) -> list[Probe]:
    """The auto probes of one plugin model, sorted by kind then label.

    Args:
        read: plugin-relative path -> text at the newest pin (the probes are checked on it).
        locate: maps a path of the plugin index to the plugin-relative path probes use.
        host: the host at the newest pin, for the signature probes' upstream counterparts.
    """
    cache: dict[str, _Scopes] = {}

    def scopes(index: CodeIndex, module: str) -> _Scopes:
        if module not in cache:
            tree = index.parsed(module)
            cache[module] = _scopes(tree) if tree else _Scopes({}, {})
        return cache[module]

    drafts = (
        _signatures(plugin, locate, scopes, host)
        + _aliases(plugin, locate, scopes)
        + _imports(plugin, locate)
        + (_forks(plugin, locate, host) + _mirrors(plugin, locate, scopes, host) if host is not None else [])
    )
    texts: dict[str, str | None] = {}

    def cached(rel: str) -> str | None:
        if rel not in texts:
            texts[rel] = read(rel)
        return texts[rel]

    probes = (_verified(label, d, cached, host) for label, d in _labelled(drafts, plugin.package))
    return [p for p in probes if p is not None]


class SurfaceProbes:
    """build_ledger's `auto_probes`: materialise the newest column, discover its patches, derive probes.

    The work tree is indexed in place; a commit's files are read through the ledger's reader
    into a temporary directory (no checkout, no cache entry). A tree without a Python package
    has no patch surface and yields no probes.
    """

    def __init__(
        self,
        repo: Path,
        settings: Settings,
        *,
        host: HostSources | None = None,
        index_cache: IndexCache | None = None,
    ) -> None:
        self.repo = repo
        self.settings = settings
        self.host = host
        self.index_cache = index_cache

    def __call__(self, column: Column, read: ReadFile) -> list[Probe]:
        with ExitStack() as stack:
            base = self._materialise(column, read, stack)
            package = self.settings.plugin_package or None
            if package is None and not discover_packages(base):
                return []
            tree = load_directory(base, package)
            plugin = load_plugin_model(load_index(tree, self.index_cache), self.settings)
            host = None
            if self.host is not None:
                sources, pin = self.host, column.pin
                host = HostSide(sources.index(pin), self.settings, lambda path: sources(pin, path))
            return derive_probes(
                plugin, read, locate=_locator(tree.root, base.resolve()), host=host
            )

    def _materialise(self, column: Column, read: ReadFile, stack: ExitStack) -> Path:
        """The directory holding the column's files: the work tree, or a copy of the commit's sources."""
        if column.kind is ColumnKind.WORKTREE:
            return self.repo
        base = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="pinport-auto-")))
        with GitRepo(self.repo) as git:
            listing = git.run("ls-tree", "-r", "-z", "--name-only", column.commit)
        for rel in listing.split("\0"):
            if not (rel.endswith((".py", ".pyi")) or rel in CONFIG_FILES):
                continue
            text = read(rel)
            if text is not None:
                dest = base / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text(text, encoding="utf-8")
        return base


def _locator(tree_root: Path, plugin_root: Path) -> Locate:
    """Index paths are relative to the import root: `src/` below the plugin root, or the package's parent."""
    if tree_root.is_relative_to(plugin_root):
        prefix = tree_root.relative_to(plugin_root).as_posix()
        prefix = "" if prefix == "." else prefix + "/"
        return lambda rel: prefix + rel
    strip = plugin_root.relative_to(tree_root).as_posix() + "/"
    return lambda rel: rel[len(strip) :] if rel.startswith(strip) else None
