"""git in a test's plugin tree, with a fixed identity and no signing (the --apply tests need a clean tree)."""

import subprocess
from pathlib import Path


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", "-c",
                           "commit.gpgsign=false", "-C", str(root), *args], capture_output=True, text=True,
                          check=True)
    return done.stdout
