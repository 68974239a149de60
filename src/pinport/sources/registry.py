"""Releases from the package index: choose a file, download it once, keep only its sources."""

from __future__ import annotations

import gzip
import hashlib
import shutil
import tarfile
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from ..errors import NetworkUnavailable, VersionNotFound
from .archive import Select, extract_tar, extract_zip, safe_relpath
from .cache import Cache
from .directory import NOT_PACKAGES, select_packages
from .package_index import (
    NETWORK_ERRORS,
    IndexConfig,
    IndexFile,
    describe_failure,
    index_config,
    list_project,
)
from .progress import ProgressFn, no_progress
from .tree import SourceTree, scan_all

_CHUNK = 1 << 20
_SDIST_KEEP = frozenset({"pyproject.toml", "setup.py", "setup.cfg", "PKG-INFO"})
_BROKEN_ARCHIVE = (zipfile.BadZipFile, tarfile.TarError, gzip.BadGzipFile, EOFError, zlib.error)
_KINDS = {"wheel": "wheels", "sdist": "sdists"}  # preference -> cache folder


def list_versions(dist: str, *, indexes: Sequence[str] | None = None) -> list[str]:
    """Every version the index has files for, oldest first (unparseable file names ignored)."""
    listing = list_project(dist, index_config(indexes))
    return [str(v) for v in sorted({f.version for f in listing.files})]


def fetch_release(
    dist: str,
    version: str,
    *,
    cache: Cache,
    prefer: str = "wheel",
    packages: tuple[str, ...] | None = None,
    progress: ProgressFn = no_progress,
    indexes: Sequence[str] | None = None,
) -> SourceTree:
    """The sources of `dist==version`, downloaded and extracted once, then read from the cache.

    Args:
        prefer: "wheel" or "sdist"; the other kind is used when the preferred one is missing.
        packages: the import packages the tree is about; default: those the release ships
            (tests, docs … excluded), the one named like the distribution first.
        indexes: index URLs to ask instead of pip's configuration (tests, mirrors).
    """
    if prefer not in _KINDS:
        raise ValueError(f"prefer must be 'wheel' or 'sdist', not {prefer!r}")
    try:
        wanted = Version(version)
    except InvalidVersion:
        raise VersionNotFound(f"'{version}' is not a valid version of {dist}") from None
    label = f"{dist} {wanted}"

    def build(staging: Path) -> SourceTree:
        return _build(dist, wanted, staging, prefer, index_config(indexes), progress)

    name = f"{canonicalize_name(dist)}-{release_key(wanted)}"
    whole = cache.load(_KINDS[prefer], name, build, progress=progress)
    return select_packages(whole, packages, label, dist)


def release_key(version: Version) -> str:
    """One spelling per release, for cache keys: `0.26`, `0.26.0` and `0.26.0.0` are one release.

    Trailing zeros are dropped, then the release is padded to three parts, so the common
    spelling (`0.26.0`) is its own key and caches filled before this rule stay valid.
    """
    release = list(version.release)
    while len(release) > 3 and release[-1] == 0:
        release.pop()
    release += [0] * (3 - len(release))
    text = (f"{version.epoch}!" if version.epoch else "") + ".".join(map(str, release))
    if version.pre is not None:
        text += f"{version.pre[0]}{version.pre[1]}"
    if version.post is not None:
        text += f".post{version.post}"
    if version.dev is not None:
        text += f".dev{version.dev}"
    if version.local is not None:
        text += f"+{version.local}"
    return text


def _missing(dist: str, wanted: Version, files: Sequence[IndexFile]) -> str:
    versions = sorted({f.version for f in files})
    if not versions:
        return f"{dist} has no wheel or sdist on the package index"
    finals = [v for v in versions if not v.is_prerelease] or versions
    near = [v for v in versions if v < wanted][-2:] + [v for v in versions if v > wanted][:2]
    return (
        f"{dist} {wanted} is not on the package index "
        f"(newest: {finals[-1]}; nearest: {', '.join(map(str, near))})"
    )


def _wheel_rank(file: IndexFile) -> int:
    # sources are the same in every wheel of a release; prefer the pure one, then the common one
    platforms = {tag.platform for tag in file.tags}
    if "any" in platforms:
        return 0
    if any(p.startswith("manylinux") and p.endswith("x86_64") for p in platforms):
        return 1
    return 2


def choose_file(files: Sequence[IndexFile], prefer: str) -> IndexFile:
    """The file to fetch: not yanked, of the preferred kind, pure/x86_64 wheel or .tar.gz first."""

    def rank(file: IndexFile) -> tuple:
        within = (
            _wheel_rank(file)
            if file.kind == "wheel"
            else int(not file.filename.endswith(".tar.gz"))
        )
        return (file.yanked, file.kind != prefer, within, file.filename)

    return min(files, key=rank)


def _build(
    dist: str,
    wanted: Version,
    staging: Path,
    prefer: str,
    config: IndexConfig,
    progress: ProgressFn,
) -> SourceTree:
    listing = list_project(dist, config)
    candidates = [f for f in listing.files if f.version == wanted]
    if not candidates:
        # an index we could not reach may have had it
        if listing.failures:
            raise NetworkUnavailable(listing.failures[0])
        raise VersionNotFound(_missing(dist, wanted, listing.files))
    chosen = choose_file(candidates, prefer)
    archive = _download(chosen, staging / "download", config, progress)
    dest = staging / "tree"
    dest.mkdir()
    try:
        if chosen.kind == "wheel":
            metadata = _extract_wheel(archive, dest, progress)
        else:
            metadata = _extract_sdist(archive, dest, progress)
    except _BROKEN_ARCHIVE as exc:
        raise NetworkUnavailable(f"{chosen.filename} is not a readable archive ({exc})") from None
    shutil.rmtree(archive.parent)  # only the sources are kept
    return SourceTree(
        root=dest,
        label=f"{dist} {wanted}",
        package="",
        version=str(wanted),
        files=scan_all(dest),
        metadata=metadata,
        project_root=dest if chosen.kind == "sdist" else None,
    )


def _download(file: IndexFile, folder: Path, config: IndexConfig, progress: ProgressFn) -> Path:
    """Stream file into folder in chunks, reporting bytes; the index's sha256 must match."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / (safe_relpath(Path(file.filename).name) or "archive")
    description = f"downloading {file.filename}"
    digest = hashlib.sha256()
    done = 0
    try:
        response = config.open(file.url)
    except NETWORK_ERRORS as exc:
        raise NetworkUnavailable(describe_failure(file.url, exc)) from None
    with response, open(target, "wb") as out:
        length = response.headers.get("Content-Length", "")
        total = int(length) if length.isdigit() else None
        progress(description, 0, total)
        while True:
            try:
                chunk = response.read(_CHUNK)
            except NETWORK_ERRORS as exc:
                raise NetworkUnavailable(describe_failure(file.url, exc)) from None
            if not chunk:
                break
            out.write(chunk)
            digest.update(chunk)
            done += len(chunk)
            progress(description, done, total)
    if total is not None and done != total:
        raise NetworkUnavailable(f"download of {file.filename} stopped at {done} of {total} bytes")
    if file.sha256 and digest.hexdigest() != file.sha256.lower():
        raise NetworkUnavailable(
            f"download of {file.filename} is corrupt: sha256 {digest.hexdigest()[:16]}…, "
            f"the index says {file.sha256[:16]}…"
        )
    return target


def _extract_wheel(path: Path, dest: Path, progress: ProgressFn) -> str:
    with zipfile.ZipFile(path) as wheel:
        tops = {name.split("/", 1)[0] for name in wheel.namelist()}
        metadata_files = sorted(f"{top}/METADATA" for top in tops if top.endswith(".dist-info"))

        def select(rel: str) -> str | None:
            top = rel.split("/", 1)[0]
            in_package = "/" in rel and not top.endswith((".dist-info", ".data"))
            keep = rel in metadata_files or (in_package and rel.endswith((".py", ".pyi")))
            return rel if keep else None

        extract_zip(wheel, dest, select, description=f"extracting {path.name}", progress=progress)
    return _read_text(dest, metadata_files)


def _sdist_selector(names: list[str]) -> Select:
    """Keep .py/.pyi, the build files and whole package dirs, with the sdist's top folder stripped.

    The top folder is the one directory holding PKG-INFO or a build file; members outside it
    (which a well-formed sdist does not have) are dropped.
    """
    rels = [rel for name in names if (rel := safe_relpath(name))]
    tops = {r.split("/")[0] for r in rels if r.count("/") == 1 and r.split("/")[1] in _SDIST_KEEP}
    top = tops.pop() if len(tops) == 1 else None

    def strip(rel: str) -> str | None:
        if top is None:
            return rel
        return rel[len(top) + 1 :] if rel.startswith(top + "/") else None

    stripped = [s for rel in rels if (s := strip(rel))]
    package_dirs = tuple(
        s.removesuffix("/__init__.py") + "/"
        for s in stripped
        if s.endswith("/__init__.py")
        and s.count("/") == (2 if s.startswith("src/") else 1)
        and s.split("/")[-2] not in NOT_PACKAGES
    )

    def select(rel: str) -> str | None:
        s = strip(rel)
        if s and (s in _SDIST_KEEP or s.endswith((".py", ".pyi")) or s.startswith(package_dirs)):
            return s
        return None

    return select


def _extract_sdist(path: Path, dest: Path, progress: ProgressFn) -> str:
    description = f"extracting {path.name}"
    if path.name.endswith(".zip"):
        with zipfile.ZipFile(path) as archive:
            select = _sdist_selector(archive.namelist())
            extract_zip(archive, dest, select, description=description, progress=progress)
    else:
        with tarfile.open(path, "r:*") as archive:
            members = archive.getmembers()
            select = _sdist_selector([m.name for m in members])
            extract_tar(
                archive,
                dest,
                select,
                description=description,
                total=len(members),
                progress=progress,
            )
    return _read_text(dest, ["PKG-INFO"])


def _read_text(dest: Path, candidates: Sequence[str]) -> str:
    for rel in candidates:
        if (dest / rel).is_file():
            return (dest / rel).read_text(encoding="utf-8", errors="replace")
    return ""
