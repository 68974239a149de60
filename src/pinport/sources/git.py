"""Trees from a git commit, exported by `git archive` into the cache; the checkout is untouched."""

from __future__ import annotations

import subprocess
import tarfile
import tempfile
from pathlib import Path

from ..errors import SourceNotFound
from .archive import extract_tar
from .cache import Cache
from .directory import select_packages
from .progress import ProgressFn, no_progress
from .tree import SourceTree, scan_all

CONFIG_FILES = frozenset({"pyproject.toml", "setup.py", "setup.cfg"})


def split_spec(spec: str) -> tuple[Path, str]:
    """REPO@REF split on the last '@' (a ref never contains '@' in practice, a path might)."""
    repo, sep, ref = spec.rpartition("@")
    if not sep or not repo or not ref:
        raise SourceNotFound(f"'{spec}' is not REPO@REF")
    return Path(repo).expanduser(), ref


def is_git_spec(spec: str) -> bool:
    """Whether spec reads as REPO@REF with REPO an existing checkout (a `.git` dir or file)."""
    repo, sep, ref = spec.rpartition("@")
    return bool(sep and repo and ref) and (Path(repo).expanduser() / ".git").exists()


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise SourceNotFound(f"git is not installed; cannot read {repo}") from None


def _first_line(stderr: bytes) -> str:
    text = stderr.decode("utf-8", "replace").strip().splitlines()
    return text[0].removeprefix("fatal: ") if text else "git failed"


def resolve_commit(repo: Path, ref: str) -> str:
    """The full sha of the commit `ref` names in `repo`."""
    if not repo.exists():
        raise SourceNotFound(f"{repo}: no such directory")
    done = _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    if done.returncode == 0:
        return done.stdout.decode().strip()
    if done.stderr.strip():
        raise SourceNotFound(f"{repo}: {_first_line(done.stderr)}")
    raise SourceNotFound(f"{repo}: no commit '{ref}'")


def _wanted(rel: str) -> str | None:
    return rel if rel.endswith((".py", ".pyi")) or rel in CONFIG_FILES else None


def _export(repo: Path, sha: str, staging: Path, progress: ProgressFn) -> SourceTree:
    dest = staging / "tree"
    dest.mkdir()
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(
            ["git", "-C", str(repo), "archive", "--format=tar", sha],
            stdout=subprocess.PIPE,
            stderr=errors,
        )
        assert proc.stdout is not None
        broken = ""
        try:
            with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
                extract_tar(
                    tar, dest, _wanted, description=f"exporting {sha[:12]}", progress=progress
                )
        except tarfile.TarError as exc:
            broken = str(exc)
        finally:
            proc.stdout.close()
            code = proc.wait()
        if code != 0 or broken:
            errors.seek(0)
            reason = _first_line(errors.read()) if code != 0 else broken
            raise SourceNotFound(f"{repo}: git archive {sha[:12]} failed: {reason}")
    return SourceTree(root=dest, label=sha, package="", files=scan_all(dest), project_root=dest)


def load_git(
    spec: str, package: str | None, cache: Cache, progress: ProgressFn = no_progress
) -> SourceTree:
    """The tree of REPO@REF, cached by commit sha; `package` None discovers the packages."""
    repo, ref = split_spec(spec)
    sha = resolve_commit(repo, ref)
    whole = cache.load(
        "git", sha, lambda staging: _export(repo, sha, staging, progress), progress=progress
    )
    return select_packages(whole, (package,) if package else None, spec)


def read_file_at(repo: Path | str, ref: str, path: str) -> str | None:
    """One file's text at a ref, read from the object store (no checkout); None if absent."""
    repo = Path(repo).expanduser()
    sha = resolve_commit(repo, ref)
    done = _git(repo, "cat-file", "blob", f"{sha}:{path}")
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None
