"""The user cache: one directory per extracted release or commit, built once, locked, validated."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from stat import S_ISREG
from typing import BinaryIO

import platformdirs

from ..errors import CacheError
from .archive import safe_relpath
from .progress import NOTICE, ProgressFn, no_progress
from .tree import SourceTree, hash_bytes

CACHE_DIR_VARIABLE = "PINPORT_CACHE_DIR"
MANIFEST = "manifest.json"
STATS = "verified.json"  # size and mtime of each file when its hash was last checked (beside the manifest)
_FORMAT = 1
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+!,\[\]-]*$")  # `!`: a PEP 440 epoch (1!0.26.0)

Build = Callable[[Path], SourceTree]  # staging dir -> tree whose root lies inside it


def default_root() -> Path:
    """The cache location: $PINPORT_CACHE_DIR (the one environment read), else the user cache."""
    override = os.environ.get(CACHE_DIR_VARIABLE)
    return Path(override).expanduser() if override else Path(platformdirs.user_cache_dir("pinport"))


class Cache:
    """Entries live at `<root>/<kind>/<name>/` (`wheels/vllm-0.26.0`, `git/<sha>`).

    Each holds the extracted files and a `manifest.json` written last; an entry is
    built in a staging directory beside it and moved into place in one rename, under
    an flock on `<kind>/<name>.lock` so concurrent runs build it once.
    """

    def __init__(self, root: Path | None = None, *, verify: bool = False, lock_timeout: float = 900) -> None:
        self.root = root if root is not None else default_root()
        self.verify = verify  # hash every file of an entry, not only those whose size or mtime changed
        self.lock_timeout = lock_timeout

    def path(self, *parts: str) -> Path:
        """A path inside the cache root, for other components' own files (an index database)."""
        return self.root.joinpath(*parts)

    def entry_dir(self, kind: str, name: str) -> Path:
        for part in (kind, name):
            if not _NAME.match(part):
                raise CacheError(f"{part!r} cannot name a cache entry")
        return self.root / kind / name

    def _ensure_dir(self, path: Path) -> None:
        try:
            path.mkdir(parents=True, exist_ok=True)
            if not os.access(path, os.W_OK):
                raise PermissionError(13, "Permission denied")
        except OSError as exc:
            raise CacheError(
                f"cannot write the cache at {self.root}: {exc.strerror or exc}"
            ) from None

    @contextmanager
    def lock(self, kind: str, name: str, progress: ProgressFn = no_progress) -> Iterator[None]:
        """Hold one entry's inter-process lock. While another run holds it, say who (pid and command,
        written into the lock file) and wait, up to `lock_timeout` seconds."""
        entry = self.entry_dir(kind, name)
        self._ensure_dir(entry.parent)
        lock_path = entry.parent / f"{name}.lock"
        try:
            handle = open(lock_path, "a+b")
        except OSError as exc:
            raise CacheError(f"cannot write the cache at {self.root}: {exc.strerror}") from None
        with handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self._wait(handle, lock_path, f"{kind}/{name}", progress)
            try:
                _write_holder(handle)
                yield
            finally:
                _write_holder(handle, clear=True)
                fcntl.flock(handle, fcntl.LOCK_UN)

    def read(self, kind: str, name: str, *, check_files: bool = True) -> SourceTree | None:
        """An intact entry's tree, or None (never builds, never waits, never touches the network).
        `check_files=False` trusts the manifest (a caller that reads few files handles a missing one)."""
        try:
            return _read_entry(self.entry_dir(kind, name), check_files=check_files)
        except ValueError:
            return None

    def names(self, kind: str) -> list[str]:
        """The names of the entries of one kind present (intact or not)."""
        folder = self.root / kind
        try:
            return sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
        except OSError:
            return []

    def _wait(self, handle: BinaryIO, lock_path: Path, what: str, progress: ProgressFn) -> None:
        holder = _read_holder(handle)
        progress(f"waiting for {holder} to finish {what} (up to {self.lock_timeout:g} s)", NOTICE, None)
        deadline = time.monotonic() + self.lock_timeout
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise CacheError(f"gave up after {self.lock_timeout:g} s waiting for {holder} to finish "
                                     f"{what}; stop it, or remove {lock_path} if no such run is left") from None
                time.sleep(0.1)

    def load(
        self, kind: str, name: str, build: Build, *, progress: ProgressFn = no_progress
    ) -> SourceTree:
        """The entry's tree: from the cache when intact, else built by `build(staging)`, stored."""
        entry = self.entry_dir(kind, name)
        # Entries are immutable once renamed into place, so an intact one is read without the
        # lock (which also serves a cache that is read-only for this user).
        tree = _read_entry(entry, self.verify)
        if tree is not None:
            return tree
        with self.lock(kind, name, progress):
            if entry.exists():
                tree = _read_entry(entry, self.verify)
                if tree is not None:
                    return tree
                progress(f"rebuilding corrupt cache entry {kind}/{name} (damaged or edited since it was stored)",
                         NOTICE, None)
                self._remove(entry)
            for stale in entry.parent.glob(f".{name}.staging-*"):  # left by a killed run
                self._remove(stale)
            return self._build(entry, build)

    def _build(self, entry: Path, build: Build) -> SourceTree:
        try:
            staging = Path(tempfile.mkdtemp(prefix=f".{entry.name}.staging-", dir=entry.parent))
        except OSError as exc:
            raise CacheError(f"cannot write the cache at {self.root}: {exc.strerror}") from None
        try:
            tree = build(staging)
            manifest = _manifest(tree, staging)
            (staging / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
            root = tree.root
            _record_stats(staging, {rel: [(st := (root / rel).lstat()).st_size, st.st_mtime_ns]
                                    for rel in tree.files})
            # mkdtemp made it private; an entry is as readable as the files in it
            staging.chmod(0o755)
            os.replace(staging, entry)
        except OSError as exc:
            # build() turns network failures into PinportErrors; what is left is the disk
            raise CacheError(f"cannot write cache entry {entry}: {exc.strerror or exc}") from None
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
        return _tree_from(manifest, entry)

    def _remove(self, path: Path) -> None:
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError as exc:
            raise CacheError(f"cannot remove cache entry {path}: {exc.strerror}") from None


def _relative(path: Path | None, staging: Path) -> str | None:
    return None if path is None else path.relative_to(staging).as_posix()


def _manifest(tree: SourceTree, staging: Path) -> dict:
    return {
        "format": _FORMAT,
        "root": _relative(tree.root, staging),
        "project_root": _relative(tree.project_root, staging),
        "label": tree.label,
        "package": tree.package,
        "version": tree.version,
        "metadata": tree.metadata,
        "files": tree.files,
    }


def _tree_from(manifest: dict, entry: Path) -> SourceTree:
    project = manifest.get("project_root")
    return SourceTree(
        root=entry / manifest["root"],
        label=manifest["label"],
        package=manifest["package"],
        version=manifest["version"],
        files=manifest["files"],
        metadata=manifest["metadata"],
        project_root=entry / project if project is not None else None,
    )


def _inside(rel: object) -> bool:
    return isinstance(rel, str) and (rel == "." or safe_relpath(rel) is not None)


def _read_entry(entry: Path, verify: bool = False, *, check_files: bool = True) -> SourceTree | None:
    """The stored tree, or None when the manifest is missing or unreadable, or a file it lists is
    missing or no longer has the content the manifest hashed (see `_files_intact`); with
    `check_files=False` the manifest is trusted and no file is looked at."""
    try:
        manifest = json.loads((entry / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT:
        return None
    if not all(isinstance(manifest.get(key), str) for key in ("label", "package", "metadata")):
        return None
    files = manifest.get("files")
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        return None
    if not isinstance(manifest.get("version"), str | None) or not _inside(manifest.get("root")):
        return None
    if manifest.get("project_root") is not None and not _inside(manifest["project_root"]):
        return None
    if not all(_inside(rel) for rel in files):
        return None
    tree = _tree_from(manifest, entry)
    if not check_files:
        return tree
    return tree if _files_intact(entry, tree, verify) else None


def _files_intact(entry: Path, tree: SourceTree, verify: bool) -> bool:
    """Every listed file has the content the manifest hashed. Cheap on a warm run: a file whose size
    and mtime are those recorded in `STATS` when it was last hashed is not read again; any other
    (or every one, with `verify`) is hashed, and its stats recorded for next time."""
    try:
        recorded = json.loads((entry / STATS).read_text(encoding="utf-8"))
        known = recorded.get("files", {}) if isinstance(recorded, dict) else {}
    except (OSError, ValueError):
        known = {}
    fresh: dict[str, list[int]] = {}
    root = str(tree.root)  # string paths: a release has thousands of files, pathlib costs more than lstat
    for rel, digest in tree.files.items():
        path = os.path.join(root, rel)
        try:
            stat = os.lstat(path)
        except OSError:
            return False
        if not S_ISREG(stat.st_mode):
            return False
        seen = [stat.st_size, stat.st_mtime_ns]
        if not verify and known.get(rel) == seen:
            continue
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            if hash_bytes(data) != digest:
                return False
        except OSError:
            return False
        fresh[rel] = seen
    if fresh:
        _record_stats(entry, {**{k: v for k, v in known.items() if k in tree.files}, **fresh})
    return True


def _record_stats(entry: Path, files: dict[str, list[int]]) -> None:
    tmp = entry / f".{STATS}.{os.getpid()}.tmp"
    try:
        tmp.write_text(json.dumps({"format": 1, "files": files}), encoding="utf-8")
        os.replace(tmp, entry / STATS)
    except OSError:  # a read-only cache: the files are hashed again next time, which costs only time
        with suppress(OSError):
            tmp.unlink(missing_ok=True)


def _write_holder(handle: BinaryIO, clear: bool = False) -> None:
    """Who holds a lock, for a run that has to wait for it: pid and command line."""
    try:
        handle.seek(0)
        handle.truncate()
        if not clear:
            command = " ".join(Path(sys.argv[0]).name if i == 0 else a for i, a in enumerate(sys.argv[:4]))
            handle.write(f"{os.getpid()} {command}".encode(errors="replace")[:200])
        handle.flush()
    except OSError:
        pass  # the lock itself still works; only the message names no one


def _read_holder(handle: BinaryIO) -> str:
    try:
        handle.seek(0)
        text = handle.read(200).decode(errors="replace").strip()
    except OSError:
        text = ""
    pid, _, command = text.partition(" ")
    if not pid.isdigit():
        return "another pinport run"
    return f"pinport run {pid} ({command or 'unknown command'})"
