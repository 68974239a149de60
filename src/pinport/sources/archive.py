"""Safe extraction of tar and zip archives: only regular files, never outside the destination."""

from __future__ import annotations

import posixpath
import re
import shutil
import stat
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

from .progress import ProgressFn, no_progress

# member path (relative to the archive root) -> where to write it under dest, or None to skip
Select = Callable[[str], str | None]

_DRIVE = re.compile(r"^[A-Za-z]:")
_REPORT_EVERY = 64  # members between progress reports


def safe_relpath(name: str) -> str | None:
    """The normalised relative form of an archive member name, or None if it could land outside."""
    # Backslashes and drive letters mean a Windows path; POSIX would write them literally, but a
    # name like "..\\x" is never something a source archive needs.
    if not name or "\\" in name or "\x00" in name or _DRIVE.match(name) or name.startswith("/"):
        return None
    norm = posixpath.normpath(name)
    if norm in (".", "..") or norm.startswith("../"):
        return None
    return norm


def _write(dest: Path, rel: str, stream: IO[bytes]) -> bool:
    target = dest / rel
    # Nothing in dest is a link (only regular files are ever written), so this is a second guard.
    if not target.parent.resolve().is_relative_to(dest.resolve()):
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "wb") as out:
        shutil.copyfileobj(stream, out)
    return True


def _target(name: str, select: Select) -> str | None:
    rel = safe_relpath(name)
    if rel is None:
        return None
    chosen = select(rel)
    return safe_relpath(chosen) if chosen is not None else None


def extract_tar(
    tar: tarfile.TarFile,
    dest: Path,
    select: Select,
    *,
    description: str,
    total: int | None = None,
    progress: ProgressFn = no_progress,
) -> list[str]:
    """Write the selected regular-file members of tar under dest; links and devices are skipped.

    Works on streams (mode "r|"): members are read once, in order. Returns the paths written.
    """
    written: list[str] = []
    seen = 0
    progress(description, 0, total)
    for member in tar:
        seen += 1
        if seen % _REPORT_EVERY == 0:
            progress(description, seen, total)
        rel = _target(member.name, select) if member.isreg() else None
        stream = tar.extractfile(member) if rel else None
        if rel and stream and _write(dest, rel, stream):
            written.append(rel)
    progress(description, seen, total if total is not None else seen)
    return written


def _is_regular(info: zipfile.ZipInfo) -> bool:
    # many tools record permission bits but no file type (or no Unix mode at all): a plain file
    kind = stat.S_IFMT(info.external_attr >> 16)
    return not info.is_dir() and kind in (0, stat.S_IFREG)


def extract_zip(
    archive: zipfile.ZipFile,
    dest: Path,
    select: Select,
    *,
    description: str,
    progress: ProgressFn = no_progress,
) -> list[str]:
    """Write the selected regular-file members of a zip under dest; symlink entries are skipped."""
    infos = archive.infolist()
    written: list[str] = []
    progress(description, 0, len(infos))
    for index, info in enumerate(infos, 1):
        if index % _REPORT_EVERY == 0:
            progress(description, index, len(infos))
        rel = _target(info.filename, select) if _is_regular(info) else None
        if rel is None:
            continue
        with archive.open(info) as stream:
            if _write(dest, rel, stream):
                written.append(rel)
    progress(description, len(infos), len(infos))
    return written
