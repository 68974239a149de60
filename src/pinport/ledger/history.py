"""The ledger's columns: one per distinct pin, from first-parent history, rebase branches, the work tree."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from packaging.version import InvalidVersion, Version

from ..config import Settings
from ..pins import ReadFile, read_pin
from .git import GitRepo


class ColumnKind(StrEnum):
    HISTORY = "commit"  # the first-parent commit that introduced the pin
    BRANCH = "branch"  # the tip of a rebase branch
    WORKTREE = "worktree"  # the files on disk


# When several sources carry the same pin, the freshest state of that pin wins.
_PRECEDENCE = {ColumnKind.WORKTREE: 0, ColumnKind.BRANCH: 1, ColumnKind.HISTORY: 2}


@dataclass(frozen=True)
class Column:
    """One pin of the plugin and the snapshot of the plugin that stands for it."""

    pin: str
    kind: ColumnKind
    commit: str  # full sha; for the work tree, HEAD ("" before the first commit)
    date: str  # committer date, YYYY-MM-DD in UTC ("" without a commit)
    subject: str
    branch: str = ""  # "rebase/vllm_v0.26", or "origin/rebase/vllm_v0.26" for a remote one
    dirty: bool = False  # work tree only: tracked files differ from HEAD
    planned: bool = False  # work tree standing for a pin it does not state yet (the rebase's NEW)

    @property
    def short(self) -> str:
        return self.commit[:8]


def version_key(pin: str) -> tuple:
    """Sort key with real version semantics (0.9.0.1 < 0.9.2 < 0.10.1); unparseable pins last."""
    try:
        return (0, Version(pin), pin)
    except InvalidVersion:
        return (1, pin, pin)


def _same_pin(pin: str) -> str:
    try:
        return str(Version(pin))
    except InvalidVersion:
        return pin


def _date(timestamp: str) -> str:
    return datetime.fromtimestamp(int(timestamp), UTC).strftime("%Y-%m-%d") if timestamp else ""


def pin_files(settings: Settings) -> list[str]:
    """The plugin-relative files any pin source reads, for limiting the history walk."""
    files = {"pyproject.toml" if s.kind == "requirement" else s.file for s in settings.pin_sources}
    return sorted(f for f in files if f)


def reader(repo: GitRepo, column: Column) -> ReadFile:
    """Plugin-relative path -> text in the snapshot the column stands for."""
    if column.kind is ColumnKind.WORKTREE:
        return repo.read_worktree
    return lambda rel: repo.read_blob(column.commit, rel)


def _history(repo: GitRepo, settings: Settings, refs: list[tuple[str, str]]) -> list[Column]:
    """The commit introducing each pin along the first-parent history of every ref (HEAD, main,
    each rebase branch): a pin that lives only inside a branch's history is a column too."""
    paths = pin_files(settings)  # pathspecs are relative to the plugin root, like -C
    seen: set[str] = set()
    columns = []
    for name, ref in refs:
        out = repo.run(
            "log", "--first-parent", "--reverse", "--format=%H%x1f%ct%x1f%s", ref, "--", *paths
        )
        for line in out.splitlines():
            sha, stamp, subject = line.split("\x1f", 2)
            pin = read_pin(settings, lambda rel, sha=sha: repo.read_blob(sha, rel))
            if pin and _same_pin(pin) not in seen:
                seen.add(_same_pin(pin))
                columns.append(Column(pin, ColumnKind.HISTORY, sha, _date(stamp), subject, branch=name))
    return columns


MAIN_BRANCHES = ("main", "master")


def _branches(repo: GitRepo, settings: Settings, pattern: str,
              refs: list[tuple[tuple, str, str]] | None = None) -> list[Column]:
    """The tip of every rebase branch (local and remote); `refs` collects (order, name, sha) of
    those and of main, whose first-parent histories the ledger mines too."""
    out = repo.run(
        "for-each-ref",
        "--format=%(refname)%1f%(objectname)%1f%(committerdate:unix)%1f%(symref)%1f%(subject)",
        "refs/heads",
        "refs/remotes",
    )
    found = []
    for line in out.splitlines():
        ref, sha, stamp, symref, subject = line.split("\x1f", 4)
        if symref:  # origin/HEAD
            continue
        remote = not ref.startswith("refs/heads/")
        shown = ref.removeprefix("refs/remotes/" if remote else "refs/heads/")
        name = shown.partition("/")[2] if remote else shown
        is_main = name in MAIN_BRANCHES
        if not is_main and not fnmatch.fnmatchcase(name, pattern):
            continue
        if refs is not None:
            refs.append(((remote, not is_main, shown), shown, sha))
        if is_main:
            continue
        pin = read_pin(settings, lambda rel, sha=sha: repo.read_blob(sha, rel))
        if pin:
            column = Column(pin, ColumnKind.BRANCH, sha, _date(stamp), subject, branch=shown)
            found.append((remote, -int(stamp or 0), shown, column))
    # local before remote, then the newest tip: the pick per pin in load_columns is deterministic
    return [column for *_, column in sorted(found, key=lambda f: f[:3])]


def _worktree(repo: GitRepo, settings: Settings) -> list[Column]:
    pin = read_pin(settings, repo.read_worktree)
    if not pin:
        return []
    head = repo.head()
    if not head:
        return [Column(pin, ColumnKind.WORKTREE, "", "", "", dirty=True)]
    stamp, _, subject = repo.run("log", "-1", "--format=%ct%x1f%s", head).strip().partition("\x1f")
    status = repo.run("status", "--porcelain", "--untracked-files=no", "--", ".")
    return [
        Column(pin, ColumnKind.WORKTREE, head, _date(stamp), subject, dirty=bool(status.strip()))
    ]


def load_columns(
    repo: GitRepo,
    settings: Settings,
    *,
    branch_pattern: str | None = None,
    include_worktree: bool = True,
) -> list[Column]:
    """Every distinct pin, oldest version first; per pin the work tree, else a branch, else history.

    Args:
        branch_pattern: fnmatch pattern for rebase branches, local and remote (the remote
            name is stripped before matching); default `settings.rebase_branch_pattern`.
        include_worktree: add the files on disk (skipped in a bare repository).
    """
    candidates: list[Column] = []
    if include_worktree and not repo.bare:
        candidates += _worktree(repo, settings)
    refs: list[tuple[tuple, str, str]] = []
    candidates += _branches(repo, settings, branch_pattern or settings.rebase_branch_pattern, refs)
    # HEAD's history first, then main's, then each rebase branch's (local before remote)
    walks = ([("", "HEAD")] if repo.head() else []) + [(shown, sha) for _, shown, sha in sorted(refs)]
    if walks:
        candidates += _history(repo, settings, walks)
    chosen: dict[str, Column] = {}
    extra: list[Column] = []
    for column in sorted(candidates, key=lambda c: _PRECEDENCE[c.kind]):  # stable: keeps order
        key = _same_pin(column.pin)
        if key in chosen and chosen[key].kind is ColumnKind.WORKTREE and chosen[key].dirty:
            extra.append(chosen[key])  # an edited work tree is its own column, after the committed one
            chosen[key] = column
            continue
        chosen.setdefault(key, column)
    columns = list(chosen.values()) + extra
    return sorted(columns, key=lambda c: (version_key(c.pin), c.kind is ColumnKind.WORKTREE))
