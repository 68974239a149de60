"""A git checkout read through its object store: one `git cat-file --batch` serves every blob."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import TracebackType

from ..errors import SourceNotFound


def _first_line(stderr: bytes) -> str:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[0].removeprefix("fatal: ") if lines else "git failed"


class GitRepo:
    """The git repository holding a plugin root, which may be a sub-folder of the work tree.

    Paths given to the readers are relative to the plugin root; `prefix` maps them
    into the repository. Blobs come from one long-running `git cat-file --batch`
    process, so reading a file at any commit costs one pipe round trip, never a checkout.
    """

    def __init__(self, plugin_root: Path) -> None:
        if not plugin_root.is_dir():
            raise SourceNotFound(f"{plugin_root}: no such directory")
        self.plugin_root = plugin_root
        self._batch: subprocess.Popen[bytes] | None = None
        done = self._git("rev-parse", "--is-bare-repository", "--show-prefix", check=False)
        if done.returncode != 0:
            raise SourceNotFound(f"{plugin_root}: not a git repository")
        bare, _, prefix = done.stdout.decode().partition("\n")
        self.bare = bare.strip() == "true"
        self.prefix = "" if self.bare else prefix.strip()

    def _git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        try:
            done = subprocess.run(
                ["git", "-C", str(self.plugin_root), *args], capture_output=True, check=False
            )
        except FileNotFoundError:
            raise SourceNotFound("git is not installed") from None
        if check and done.returncode != 0:
            raise SourceNotFound(f"{self.plugin_root}: git {args[0]}: {_first_line(done.stderr)}")
        return done

    def run(self, *args: str) -> str:
        """stdout of one git command run in the plugin root; SourceNotFound when it fails."""
        return self._git(*args).stdout.decode("utf-8", "replace")

    def head(self) -> str:
        """The full sha of HEAD, or "" in a repository without commits."""
        done = self._git("rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
        return done.stdout.decode().strip() if done.returncode == 0 else ""

    def repo_path(self, rel: str) -> str:
        return self.prefix + rel

    def read_blob(self, commit: str, rel: str) -> str | None:
        """The text of plugin-relative `rel` at `commit`, or None when it is not a file there."""
        if "\n" in rel:
            return None
        batch = self._start()
        assert batch.stdin is not None and batch.stdout is not None
        batch.stdin.write(f"{commit}:{self.repo_path(rel)}\n".encode())
        batch.stdin.flush()
        header = batch.stdout.readline().split()
        if len(header) != 3:  # "<name> missing" / "<name> ambiguous"
            if not header:
                raise SourceNotFound(f"{self.plugin_root}: git cat-file stopped")
            return None
        size = int(header[2])
        data = batch.stdout.read(size + 1)[:size]  # every object is followed by a newline
        return data.decode("utf-8", "replace") if header[1] == b"blob" else None

    def read_worktree(self, rel: str) -> str | None:
        """The text of plugin-relative `rel` in the working tree, or None when absent."""
        path = self.plugin_root / rel
        try:
            return path.read_bytes().decode("utf-8", "replace") if path.is_file() else None
        except OSError:
            return None

    def _start(self) -> subprocess.Popen[bytes]:
        if self._batch is None:
            self._batch = subprocess.Popen(
                ["git", "-C", str(self.plugin_root), "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        return self._batch

    def close(self) -> None:
        if self._batch is not None:
            assert self._batch.stdin is not None and self._batch.stdout is not None
            self._batch.stdin.close()
            self._batch.wait()
            self._batch.stdout.close()
            self._batch = None

    def __enter__(self) -> GitRepo:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
