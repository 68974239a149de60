"""Phase 0, the base: the newest pin with a completed, validated rebase, and the branch to work on.

Candidates are `main` (and `master`), local and remote, and every branch matching the
rebase-branch pattern. `main` always counts; a rebase branch counts only when its tree holds a
validation record (`REBASE_TEST.md` / `REBASE_REPORT.md` anywhere), because an unfinished rebase
is no base. Everything is read from git objects: no checkout, nothing moved.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from packaging.version import InvalidVersion, Version

from ..config import Settings
from ..errors import PinportError
from ..ledger.git import GitRepo
from ..ledger.history import MAIN_BRANCHES
from ..pins import read_pin


@dataclass(frozen=True)
class Candidate:
    """One branch tip that could be the base, and why it was or was not chosen."""

    branch: str  # "main", "origin/rebase/vllm_v26"
    commit: str
    pin: str | None
    record: str  # the validation record found in its tree ("" when none)
    is_main: bool
    remote: bool
    reason: str = ""  # why it was passed over ("" for the chosen one)

    @property
    def short(self) -> str:
        return self.commit[:8]


@dataclass(frozen=True)
class BaseChoice:
    """The chosen base (None outside git or when no candidate counts) and every candidate seen."""

    chosen: Candidate | None
    passed_over: tuple[Candidate, ...] = ()
    warnings: tuple[str, ...] = field(default=())

    def reason(self) -> str:
        c = self.chosen
        if c is None:
            return "no main or validated rebase branch with a pin"
        why = "main always counts" if c.is_main else f"validation record {c.record}"
        return f"{c.branch} at {c.short}: pin {c.pin}, the highest validated pin ({why})"


def _version(pin: str | None) -> Version | None:
    try:
        return Version(pin) if pin else None
    except InvalidVersion:
        return None


def branch_name(settings: Settings, new: str) -> str:
    """`rebase/<host>_v<NN>` for NEW: the pattern's `*` filled with the minor (0.x) or major.minor."""
    version = _version(new)
    if version is None:
        number = new
    else:
        number = str(version.minor) if version.major == 0 else f"{version.major}.{version.minor}"
    pattern = settings.rebase_branch_pattern
    return pattern.replace("*", number, 1) if pattern.count("*") == 1 else f"rebase/{settings.host}_v{number}"


def _record(git: GitRepo, commit: str, names: tuple[str, ...]) -> str:
    listing = git.run("ls-tree", "-r", "--name-only", "--full-tree", commit)
    wanted = set(names)
    found = sorted(p for p in listing.splitlines() if PurePosixPath(p).name in wanted)
    return found[0] if found else ""


def _candidates(git: GitRepo, settings: Settings, skip: str,
                versions: Callable[[], Iterable[str]] | None = None) -> list[Candidate]:
    out = git.run("for-each-ref", "--format=%(refname)%1f%(objectname)%1f%(symref)", "refs/heads",
                  "refs/remotes")
    found = []
    for line in out.splitlines():
        ref, sha, symref = line.split("\x1f", 2)
        if symref:
            continue
        remote = not ref.startswith("refs/heads/")
        shown = ref.removeprefix("refs/remotes/" if remote else "refs/heads/")
        name = shown.partition("/")[2] if remote else shown
        is_main = name in MAIN_BRANCHES
        if not is_main and not fnmatch.fnmatchcase(name, settings.rebase_branch_pattern):
            continue
        if name == skip:
            continue  # the branch this rebase works on is its output, not a base
        pin = read_pin(settings, lambda rel, sha=sha: git.read_blob(sha, rel),
                       lambda sha=sha: git.run("ls-tree", "-r", "--name-only", sha).splitlines(), versions=versions)
        record = _record(git, sha, settings.validation_records)
        found.append(Candidate(shown, sha, pin, record, is_main, remote))
    return sorted(found, key=lambda c: (c.remote, not c.is_main, c.branch))


def choose_base(git: GitRepo, settings: Settings, new: str, *, old: str | None = None,
                versions: Callable[[], Iterable[str]] | None = None) -> BaseChoice:
    """The highest pin below NEW among main and validated rebase branches; the rest with reasons.

    `versions` lists the host's releases, so a branch pinned by a narrow range counts with the newest
    release its range admits, as `pinport scan` reads it.

    Ties go to a local branch over a remote one and to main over a rebase branch. A given
    `--old` older than the chosen pin is warned about (the rebase would redo a finished one).
    """
    new_version = _version(new)
    counted: list[Candidate] = []
    passed: list[Candidate] = []
    for cand in _candidates(git, settings, branch_name(settings, new), versions):
        version = _version(cand.pin)
        if version is None:
            reason = f"no exact {settings.host_dist} pin"
        elif not cand.is_main and not cand.record:
            reason = f"no validation record ({' / '.join(settings.validation_records)}) in its tree"
        elif new_version is not None and version >= new_version:
            reason = f"pin {cand.pin} is not older than NEW {new}"
        else:
            counted.append(cand)
            continue
        passed.append(Candidate(**{**cand.__dict__, "reason": reason}))
    if not counted:
        return BaseChoice(None, tuple(passed))
    best = max(counted, key=lambda c: (_version(c.pin), not c.remote, c.is_main))
    for cand in counted:
        if cand is best:
            continue
        reason = (f"pin {cand.pin} is older than {best.pin}" if _version(cand.pin) < _version(best.pin)
                  else f"same pin as {best.branch}")
        passed.append(Candidate(**{**cand.__dict__, "reason": reason}))
    warnings = []
    if old and _version(old) is not None and _version(old) < _version(best.pin):
        warnings.append(f"--old {old} is older than the validated base {best.pin} on {best.branch}: "
                        "the rebase redoes work already done")
    passed.sort(key=lambda c: (c.remote, not c.is_main, c.branch))
    return BaseChoice(best, tuple(passed), tuple(warnings))


class BranchRefused(PinportError):
    """--branch cannot create the working branch without touching something that exists."""


def create_branch(git: GitRepo, name: str, commit: str) -> str:
    """Create `name` at `commit` and check it out; never with uncommitted changes, never moving a branch.

    Returns what was done, in words. An existing branch is used as it is when it is checked out.
    """
    status = git.run("status", "--porcelain", "--untracked-files=no")
    current = git.run("rev-parse", "--abbrev-ref", "HEAD").strip()
    exists = bool(git.run("for-each-ref", "--format=%(refname)", f"refs/heads/{name}").strip())
    if exists:
        if current == name:
            return f"on {name} already"
        raise BranchRefused(f"branch {name} exists; check it out (or delete it yourself) and run again")
    if status.strip():
        first = status.strip().splitlines()[0].strip()
        raise BranchRefused(f"uncommitted changes ({first}); --branch needs a clean tree")
    git.run("switch", "-q", "-c", name, commit)
    return f"created {name} at {commit[:8]} and checked it out"
