"""Three-way merges with git's own `merge-file` (base = upstream OLD, theirs = upstream NEW,
ours = the plugin copy): a real merge algorithm, never a home-made one.

`git merge-file -p --diff3` prints the merged text; conflicts are marked as git marks them,
with the base version between `|||||||` and `=======` so a reviewer sees all three sides.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import PinportError

MARKERS = ("<<<<<<< ", "||||||| ", "=======", ">>>>>>> ")


class MergeUnavailable(PinportError):
    """git (for `git merge-file`) is not installed or failed."""


@dataclass(frozen=True)
class MergeResult:
    """The merged text and where its conflicts are (1-based lines of each `<<<<<<<` marker)."""

    text: str
    conflict_lines: tuple[int, ...]

    @property
    def conflicts(self) -> int:
        return len(self.conflict_lines)

    @property
    def clean(self) -> bool:
        return not self.conflict_lines


def is_marker(line: str) -> bool:
    return line.startswith(MARKERS[0]) or line.startswith(MARKERS[1]) or line.startswith(MARKERS[3]) \
        or line.rstrip("\n") == MARKERS[2]


def conflict_lines(text: str) -> tuple[int, ...]:
    return tuple(i for i, line in enumerate(text.splitlines(), 1) if line.startswith(MARKERS[0]))


def _git() -> str:
    git = shutil.which("git")
    if git is None:
        raise MergeUnavailable("three-way merges need git (`git merge-file`); install git")
    return git


def merge3(ours: str, base: str, theirs: str, *, labels: tuple[str, str, str] = ("plugin", "OLD", "NEW")) -> MergeResult:
    """Merge the change base -> theirs into ours with `git merge-file -p --diff3`."""
    git = _git()
    with tempfile.TemporaryDirectory(prefix="pinport-merge-") as tmp:
        paths = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = Path(tmp) / name
            path.write_text(text, encoding="utf-8")
            paths.append(str(path))
        cmd = [git, "merge-file", "-p", "--diff3", "-L", labels[0], "-L", labels[1], "-L", labels[2], *paths]
        try:
            done = subprocess.run(cmd, capture_output=True, check=False)
        except OSError as exc:
            raise MergeUnavailable(f"cannot run git merge-file ({exc.strerror})") from None
    # The exit status is the number of conflicts (capped at 127); a negative one is an error.
    if done.returncode < 0 or done.returncode > 127:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise MergeUnavailable(f"git merge-file failed: {message[0] if message else done.returncode}")
    text = done.stdout.decode("utf-8", "replace")
    return MergeResult(text, conflict_lines(text))
