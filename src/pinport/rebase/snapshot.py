"""A plugin project as the rebase reads it: its file list and a reader, at a commit or on disk."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..ledger.git import GitRepo
from ..pins import ReadFile

_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "build", "dist", "__pycache__", ".tox", ".eggs"}


@dataclass(frozen=True)
class Snapshot:
    """Files relative to the project root (pyproject.toml's folder) and how to read one."""

    label: str
    files: tuple[str, ...]
    read: ReadFile


def disk_snapshot(root: Path, label: str = "") -> Snapshot:
    files = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")
                         and not d.endswith(".egg-info"))
        rel = Path(folder).relative_to(root)
        files += [(rel / n).as_posix() for n in names]

    def read(rel: str) -> str | None:
        path = root / rel
        try:
            return path.read_bytes().decode("utf-8") if path.is_file() else None  # line endings kept
        except (OSError, UnicodeDecodeError):
            return None

    return Snapshot(label or str(root), tuple(sorted(files)), read)


def commit_snapshot(git: GitRepo, commit: str, label: str) -> Snapshot:
    listing = git.run("ls-tree", "-r", "--name-only", commit)  # relative to the plugin root
    files = tuple(sorted(listing.splitlines()))
    return Snapshot(label, files, lambda rel: git.read_blob(commit, rel))
