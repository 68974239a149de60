"""Host sources for the ledger's cross-check: one tree per pin, loaded once, read and indexed on demand."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..config import Settings
from ..model.index import CodeIndex, IndexCache, load_index
from ..sources import Cache, SourceTree, fetch_release
from ..sources.progress import ProgressFn, no_progress

__all__ = ["HostSources", "registry_host"]


class HostSources:
    """A HostReader `(version, path) -> text | None` that also indexes a version's tree when asked.

    `load_tree` is called at most once per version; texts and indexes are kept for the
    process, since the ledger asks for the same upstream file once per probe.
    """

    def __init__(
        self, load_tree: Callable[[str], SourceTree], *, index_cache: IndexCache | None = None
    ) -> None:
        self._load_tree = load_tree
        self._index_cache = index_cache
        self._trees: dict[str, SourceTree] = {}
        self._indexes: dict[str, CodeIndex] = {}
        self._texts: dict[tuple[str, str], str | None] = {}

    def tree(self, version: str) -> SourceTree:
        if version not in self._trees:
            self._trees[version] = self._load_tree(version)
        return self._trees[version]

    def index(self, version: str) -> CodeIndex:
        """The code index of the host at `version` (summaries come from the index cache when warm)."""
        if version not in self._indexes:
            self._indexes[version] = load_index(self.tree(version), self._index_cache)
        return self._indexes[version]

    def __call__(self, version: str, path: str) -> str | None:
        key = (version, path)
        if key not in self._texts:
            self._texts[key] = _read(self.tree(version).root, path)
        return self._texts[key]


def _read(root: Path, rel: str) -> str | None:
    """A file of the tree, never one outside it (a probe's host-file is user input)."""
    path = (root / rel).resolve()
    if not path.is_relative_to(root.resolve()) or not path.is_file():
        return None
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return None


def registry_host(
    settings: Settings,
    *,
    cache: Cache | None = None,
    index_cache: IndexCache | None = None,
    progress: ProgressFn = no_progress,
) -> HostSources:
    """Host releases from the package index through the user cache: a download at most once per pin.

    Raises (when a version is first read): VersionNotFound, NetworkUnavailable.
    """
    store = cache or Cache()

    def load(version: str) -> SourceTree:
        return fetch_release(
            settings.host_dist,
            version,
            cache=store,
            prefer="wheel",
            packages=(settings.host,),
            progress=progress,
        )

    return HostSources(load, index_cache=index_cache)
