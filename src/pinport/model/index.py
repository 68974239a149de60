"""The code index of a source tree: every module's summary, built in parallel and cached by content.

Summaries are cached in one SQLite database in the user cache, keyed by file content hash,
module name and model version, so unchanged files are never parsed twice (not across runs,
and not across two host versions in the same run). Several trees are indexed in one process
pool so both cores stay busy.
"""

from __future__ import annotations

import ast
import gc
import hashlib
import os
import pickle
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import closing
from functools import cached_property
from multiprocessing import get_context
from pathlib import Path

from ..sources.progress import ProgressFn, no_progress
from ..sources.tree import SourceTree
from .parse import summarize
from .summary import BindingKind, ModuleSummary

MODEL_VERSION = "2"  # bump whenever summary.py or parse.py change what a summary holds
_CHUNK = 24


def module_name(rel: str) -> tuple[str, bool] | None:
    """('pkg.mod', is_package) for 'pkg/mod.py' or 'pkg/mod/__init__.py'; None if not importable."""
    stem, dot, ext = rel.rpartition(".")
    if ext not in ("py", "pyi") or not dot:
        return None
    parts = stem.split("/")
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts), is_package


class LazyModules(Mapping[str, ModuleSummary]):
    """Module name -> summary, unpickled on first access: a scan reads a few hundred of thousands.

    Trees of one scan share the memo, so a file both host versions contain is loaded once.
    A cached row that does not unpickle to a summary is recomputed from the file and rewritten.
    """

    def __init__(self, keys: dict[str, str], blobs: dict[str, bytes], memo: dict[str, ModuleSummary],
                 jobs: dict[str, tuple[str, str, bool]], cache: IndexCache) -> None:
        self._keys = dict(sorted(keys.items()))  # module -> cache key
        self._blobs = blobs
        self._memo = memo
        self._jobs = jobs
        self._cache = cache

    def __getitem__(self, module: str) -> ModuleSummary:
        key = self._keys[module]
        summary = self._memo.get(key)
        if summary is None:
            summary = self._load(key)
            self._memo[key] = summary
        return summary

    def _load(self, key: str) -> ModuleSummary:
        gc_was_enabled = gc.isenabled()
        gc.disable()  # unpickling builds many small objects; collection passes are waste here
        try:
            summary = pickle.loads(self._blobs[key])
            if isinstance(summary, ModuleSummary):
                return summary
            raise TypeError(type(summary).__name__)
        except Exception:  # a damaged cache row: recompute that one file, rewrite the row
            blob = _summarize_file(self._jobs[key])
            self._blobs[key] = blob
            self._cache.put_many([(key, blob)])
            return pickle.loads(blob)
        finally:
            if gc_was_enabled:
                gc.enable()

    def __contains__(self, module: object) -> bool:
        return module in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def digest(self) -> str:
        """Identity of the whole tree's content, for facts computed over every module."""
        return hashlib.blake2b("\n".join(f"{m}={k}" for m, k in self._keys.items()).encode(),
                               digest_size=16).hexdigest()


class CodeIndex:
    """All modules of one tree by dotted name, with lazy access to source text and parsed trees."""

    def __init__(self, tree: SourceTree, modules: Mapping[str, ModuleSummary],
                 paths: dict[str, str], packages: set[str], cache: IndexCache | None = None) -> None:
        self.tree = tree
        self.modules = modules
        self.paths = paths  # module -> path relative to tree.root
        self.packages = packages
        self._sources: dict[str, str] = {}
        self._asts: dict[str, ast.Module | None] = {}
        self._cache = cache or IndexCache(None)

    @property
    def label(self) -> str:
        return self.tree.label

    def source(self, module: str) -> str:
        if module not in self._sources:
            self._sources[module] = self.tree.read_text(self.paths[module])
        return self._sources[module]

    def lines(self, module: str) -> list[str]:
        return self.source(module).splitlines()

    def line_text(self, module: str, line: int) -> str:
        lines = self.lines(module)
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""

    def parsed(self, module: str) -> ast.Module | None:
        """The full tree of one module, parsed on first request (checks needing bodies use this)."""
        if module not in self._asts:
            try:
                self._asts[module] = ast.parse(self.source(module))
            except (SyntaxError, ValueError):
                self._asts[module] = None
        return self._asts[module]

    def is_package(self, module: str) -> bool:
        return module in self.packages

    @cached_property
    def _catalog(self) -> dict[str, object]:
        """Facts over every module, cached per tree so a warm scan need not load every summary."""
        key = f"catalog:{self.modules.digest()}:{MODEL_VERSION}" if isinstance(self.modules, LazyModules) else ""
        if key:
            blob = self._cache.get_many([key]).get(key)
            if blob is not None:
                try:
                    return pickle.loads(blob)
                except Exception:
                    pass  # damaged: rebuild below
        definitions: dict[str, list[tuple[str, BindingKind]]] = {}
        flags: list[tuple[str, str]] = []
        for mod in sorted(self.modules):
            summary = self.modules[mod]
            for name, b in summary.bindings.items():
                if b.kind in (BindingKind.FUNCTION, BindingKind.CLASS, BindingKind.ASSIGN):
                    definitions.setdefault(name, []).append((mod, b.kind))
                if name.isupper():
                    flags.append((mod, name))
            flags.extend((mod, name) for name in summary.lazy_exports if name.isupper())
        catalog = {"definitions": definitions, "flags": flags}
        if key:
            self._cache.put_many([(key, pickle.dumps(catalog, protocol=pickle.HIGHEST_PROTOCOL))])
        return catalog

    @property
    def definitions(self) -> dict[str, list[tuple[str, BindingKind]]]:
        """Top-level name -> [(module, kind)] for every def, class and assignment (not imports)."""
        return self._catalog["definitions"]  # type: ignore[return-value]

    @property
    def flags(self) -> list[tuple[str, str]]:
        """(module, NAME) for every upper-case module constant and lazy export (`envs.VLLM_*`)."""
        return self._catalog["flags"]  # type: ignore[return-value]


class IndexCache:
    """Summaries by (content hash, module, model version) in SQLite; a corrupt database is rebuilt."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    def _connect(self) -> sqlite3.Connection | None:
        if self.path is None:
            return None
        for attempt in range(2):
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(self.path, timeout=60)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("CREATE TABLE IF NOT EXISTS summaries (key TEXT PRIMARY KEY, blob BLOB)")
                return conn
            except sqlite3.DatabaseError:
                if attempt:
                    return None  # unusable cache: index without it rather than fail the scan
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            except OSError:
                return None
        return None

    def get_many(self, keys: Sequence[str]) -> dict[str, bytes]:
        conn = self._connect()
        if conn is None:
            return {}
        found: dict[str, bytes] = {}
        with closing(conn):
            try:
                for i in range(0, len(keys), 900):
                    chunk = keys[i:i + 900]
                    marks = ",".join("?" * len(chunk))
                    found.update(conn.execute(f"SELECT key, blob FROM summaries WHERE key IN ({marks})", chunk))
            except sqlite3.DatabaseError:
                return {}
        return found

    def put_many(self, items: Iterable[tuple[str, bytes]]) -> None:
        conn = self._connect()
        if conn is None:
            return
        with closing(conn):
            try:
                with conn:
                    conn.executemany("INSERT OR REPLACE INTO summaries VALUES (?, ?)", items)
            except sqlite3.DatabaseError:
                pass  # a cache that cannot be written only costs speed next time


def _summarize_file(job: tuple[str, str, bool]) -> bytes:
    path, module, is_package = job
    with open(path, "rb") as fh:
        return pickle.dumps(summarize(fh.read(), module, is_package), protocol=pickle.HIGHEST_PROTOCOL)


def _summarize_chunk(jobs: list[tuple[str, str, bool]]) -> list[bytes]:
    gc.disable()  # short-lived worker: collection passes only cost time here
    return [_summarize_file(job) for job in jobs]


def _modules_of(tree: SourceTree) -> dict[str, tuple[str, bool]]:
    """module -> (relative path, is_package); a .py wins over a .pyi stub of the same module."""
    out: dict[str, tuple[str, bool]] = {}
    for rel in tree.files:
        named = module_name(rel)
        if named and (named[0] not in out or out[named[0]][0].endswith(".pyi")):
            out[named[0]] = (rel, named[1])
    return out


def load_indexes(trees: Sequence[SourceTree], cache: IndexCache | None = None, *,
                 workers: int | None = None, progress: ProgressFn = no_progress) -> list[CodeIndex]:
    """Index several trees at once, sharing the cache and one process pool between them."""
    cache = cache or IndexCache(None)
    layouts = [_modules_of(t) for t in trees]
    keys: dict[str, tuple[str, str, bool]] = {}  # cache key -> job (absolute path, module, is_package)
    tree_keys: list[dict[str, str]] = []
    for tree, layout in zip(trees, layouts, strict=True):
        mapping = {}
        for mod, (rel, is_pkg) in layout.items():
            key = f"{tree.files[rel]}:{mod}:{int(is_pkg)}:{MODEL_VERSION}"
            mapping[mod] = key
            keys.setdefault(key, (str(tree.root / rel), mod, is_pkg))
        tree_keys.append(mapping)
    blobs = cache.get_many(sorted(keys))
    missing = sorted(k for k in keys if k not in blobs)
    total = len(keys)
    progress("indexing", total - len(missing), total)
    if missing:
        fresh = _compute(missing, keys, workers, progress, total - len(missing), total)
        blobs.update(fresh)
        cache.put_many(fresh.items())
    memo: dict[str, ModuleSummary] = {}
    out = []
    for tree, layout, mapping in zip(trees, layouts, tree_keys, strict=True):
        modules = LazyModules(mapping, blobs, memo, keys, cache)
        paths = {mod: rel for mod, (rel, _) in layout.items()}
        packages = {mod for mod, (_, is_pkg) in layout.items() if is_pkg}
        out.append(CodeIndex(tree, modules, paths, packages, cache))
    progress("indexing", total, total)
    return out


def _compute(missing: list[str], jobs: dict[str, tuple[str, str, bool]], workers: int | None,
             progress: ProgressFn, done: int, total: int) -> dict[str, bytes]:
    workers = workers if workers is not None else (os.cpu_count() or 1)
    if workers <= 1 or len(missing) < 2 * _CHUNK:
        fresh = {}
        for key in missing:
            fresh[key] = _summarize_file(jobs[key])
            done += 1
            if done % 50 == 0:
                progress("indexing", done, total)
        return fresh
    # Big files first so no worker is left with a long tail.
    ordered = sorted(missing, key=lambda k: -_size(jobs[k][0]))
    chunks = [ordered[i::max(1, len(ordered) // _CHUNK)] for i in range(max(1, len(ordered) // _CHUNK))]
    fresh = {}
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("fork")) as pool:
        for chunk, results in zip(chunks, pool.map(_summarize_chunk, [[jobs[k] for k in c] for c in chunks]),
                                  strict=True):
            fresh.update(zip(chunk, results, strict=True))
            done += len(chunk)
            progress("indexing", done, total)
    return fresh


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def load_index(tree: SourceTree, cache: IndexCache | None = None, **kwargs) -> CodeIndex:
    """Index one tree (see load_indexes)."""
    return load_indexes([tree], cache, **kwargs)[0]
