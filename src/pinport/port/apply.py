"""`pinport port --apply`: edit the plugin in place, one method or file at a time, on a clean git tree.

A clean tree means every edit can be reviewed with `git diff` and undone with `git checkout`;
a dirty one is refused unless the caller allows it. Each edit replaces exactly the lines of one
copy (plain line-range replacement, no reformatting), after checking the file still holds what
was analysed. The result says what changed where, and on which lines conflicts remain.
"""

from __future__ import annotations

import difflib
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import PinportError
from ..sources.cache import default_root
from ..sources.tree import SourceTree, hash_bytes
from .merge import conflict_lines
from .plan import FileProposal, PortItem


class DirtyTree(PinportError):
    """--apply on a plugin tree with uncommitted changes (or one git does not track)."""


@dataclass(frozen=True)
class AppliedChange:
    """One edit made: where, the lines before and after, its diff and its remaining conflicts."""

    path: str
    unit: str
    kind: str  # "mirror" or "fork"
    old_start: int  # the copy's lines in the file as analysed
    old_end: int
    new_start: int  # its lines in the file as finally written
    new_end: int
    diff: tuple[str, ...]
    conflict_lines: tuple[int, ...]  # lines of `<<<<<<<` markers in the file as finally written


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    git = shutil.which("git")
    if git is None:
        return None
    try:
        return subprocess.run([git, "--no-optional-locks", "-C", str(root), *args], capture_output=True,
                              text=True, check=False)
    except OSError:
        return None


def check_clean(tree: SourceTree, paths: list[str], allow_dirty: bool) -> None:
    """Refuse a tree --apply must not edit: a downloaded release, or (unless allowed) a git tree
    with uncommitted changes, files git does not track, or no git at all."""
    root = tree.root.resolve()
    if tree.version is not None or root.is_relative_to(default_root().resolve()):
        raise DirtyTree(f"{tree.label}: a downloaded release, not a working copy; use --write DIR instead")
    if allow_dirty:
        return
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None or top.returncode != 0:
        raise DirtyTree(f"{root}: not a git work tree; --apply needs one (or pass --allow-dirty)")
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    if status is None or status.returncode != 0 or status.stdout.strip():
        first = status.stdout.strip().splitlines()[0] if status and status.stdout.strip() else "git status failed"
        raise DirtyTree(f"{root}: uncommitted changes ({first.strip()}); commit or stash them first, or pass "
                        "--allow-dirty")
    untracked = _git(root, "ls-files", "--error-unmatch", "--", *paths) if paths else None
    if untracked is not None and untracked.returncode != 0:
        raise DirtyTree(f"{root}: a file to edit is not tracked by git ({untracked.stderr.strip()}); pass "
                        "--allow-dirty to edit it anyway")


def apply_proposals(proposals: list[FileProposal], tree: SourceTree, *,
                    allow_dirty: bool = False) -> tuple[list[AppliedChange], list[str]]:
    """Edit each proposal's copies into the plugin files; (changes made, files skipped with why)."""
    check_clean(tree, [p.path for p in proposals], allow_dirty)
    changes: list[AppliedChange] = []
    skipped: list[str] = []
    for proposal in proposals:
        path = tree.root / proposal.path
        try:
            data = path.read_bytes()
        except OSError as exc:
            skipped.append(f"{proposal.path}: cannot read ({exc.strerror})")
            continue
        if proposal.path in tree.files and hash_bytes(data) != tree.files[proposal.path]:
            skipped.append(f"{proposal.path}: changed on disk since it was analysed; run again")
            continue
        lines = data.decode("utf-8", "replace").splitlines()
        made = []
        offset = 0
        try:
            for item in proposal.items:  # top-down: each edit shifts only what follows it
                made.append(_apply_one(path, proposal.path, lines, item, offset))
                offset += len(item.proposal) - (item.copy.plugin.end - item.copy.plugin.start + 1)
        except OSError as exc:
            skipped.append(f"{proposal.path}: cannot write ({exc.strerror}) after {len(made)} of "
                           f"{len(proposal.items)} edits")
        final = "\n".join(lines) + "\n"
        markers = conflict_lines(final)
        for change in made:
            changes.append(AppliedChange(**{**change.__dict__, "conflict_lines": tuple(
                m for m in markers if change.new_start <= m <= change.new_end)}))
    return changes, skipped


def _apply_one(path: Path, rel: str, lines: list[str], item: PortItem, offset: int) -> AppliedChange:
    """Replace one copy's lines in `lines`, write the file, and say what changed."""
    span = item.copy.plugin
    start = span.start + offset
    before = lines[start - 1:start - 1 + span.end - span.start + 1]
    lines[start - 1:start - 1 + len(before)] = item.proposal
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    diff = tuple(x.rstrip("\n") for x in difflib.unified_diff(
        [x + "\n" for x in before], [x + "\n" for x in item.proposal], f"a/{rel}", f"b/{rel}", n=2))
    diff = tuple(_shift_header(x, start - 1) for x in diff)
    return AppliedChange(rel, span.qualname if item.copy.kind == "mirror" else "<module>", item.copy.kind,
                         span.start, span.end, start, start + len(item.proposal) - 1, diff, ())


def _shift_header(line: str, by: int) -> str:
    """Put a hunk header of a span's diff into file line numbers."""
    if not line.startswith("@@ ") or not by:
        return line
    old, new = line.split(" ")[1:3]

    def moved(part: str) -> str:
        sign, rest = part[0], part[1:]
        first, _, count = rest.partition(",")
        return f"{sign}{int(first) + by}" + (f",{count}" if count else "")

    return f"@@ {moved(old)} {moved(new)} @@"
