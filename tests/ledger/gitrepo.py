"""A throwaway git repository for ledger tests: commits with fixed dates, branches, remotes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_SYSTEM": os.devnull,
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}


# what the tests' Settings say too: only the `vllm` extra holds the pin
TOOL = '\n[tool.pinport]\npatch-helpers = ["ArcticPatch"]\npin-sources = [{kind = "requirement", extra = "vllm"}]\n'


def pyproject(
    pin: str, *, name: str = "demo_plugin", embedding: str = "", tool: bool = True
) -> str:
    """A plugin pyproject pinning `vllm==pin` in the `vllm` extra (and an older one in `embedding`)."""
    extra = f'embedding = ["vllm=={embedding}", "protobuf==5.29.5"]\n' if embedding else ""
    return (
        f'[project]\nname = "{name}"\nversion = "0.1"\n\n'
        f"[project.optional-dependencies]\n{extra}"
        f'# next: vllm==9.9.9\nvllm = ["vllm=={pin}"]\n' + (TOOL if tool else "")
    )


class ScratchRepo:
    """`root` holds a fresh repository on branch main; every commit gets a distinct fixed date."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        self._day = 0
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        env = {**os.environ, **_ENV}
        done = subprocess.run(
            ["git", "-C", str(self.root), *args],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        return done.stdout.strip()

    def write(self, files: dict[str, str | None]) -> None:
        """Write (or, for None, delete) files relative to the root."""
        for rel, text in files.items():
            path = self.root / rel
            if text is None:
                path.unlink()
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")

    def commit(self, message: str, files: dict[str, str | None] | None = None) -> str:
        """Write files, commit everything; returns the new sha."""
        self.write(files or {})
        self._day += 1
        stamp = f"2024-01-{self._day:02d}T12:00:00+00:00"
        self.git("add", "-A")
        env = {**os.environ, **_ENV, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
        subprocess.run(
            ["git", "-C", str(self.root), "commit", "-q", "--allow-empty", "-m", message],
            env=env,
            check=True,
            capture_output=True,
        )
        return self.git("rev-parse", "HEAD")
