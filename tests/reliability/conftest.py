"""Small host/plugin trees for the reliability probes, generated per test; the fake index of tests/sources."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import write_tree
from sources.conftest import fake_index, make_wheel, pip_settings  # noqa: F401  (fixtures reused)

HOST_OLD = {"host/__init__.py": "", "host/runner.py": "class Runner:\n    def step(self, a):\n        pass\n"}
HOST_NEW = {"host/__init__.py": "",
            "host/runner.py": "class Runner:\n    def step(self, a, is_profiling=False):\n        pass\n"}
PLUGIN = {
    "pyproject.toml": '[project]\nname = "plug"\n\n[tool.pinport]\nhost = "host"\n',
    "plug/__init__.py": "",
    "plug/patch.py": "from host.runner import Runner\n\n\nclass Mine(Runner):\n    def step(self, a):\n        pass\n",
}


@pytest.fixture()
def trees(tmp_path: Path) -> dict[str, Path]:
    """OLD and NEW hosts (`step` gains a parameter) and a plugin overriding it: one PP0101 at NEW."""
    for name, files in (("old", HOST_OLD), ("new", HOST_NEW), ("plugin", PLUGIN)):
        write_tree(tmp_path / name, files)
    return {"old": tmp_path / "old", "new": tmp_path / "new", "plugin": tmp_path / "plugin",
            "cache": tmp_path / "cache", "tmp": tmp_path}


def scan_args(trees: dict[str, Path], *extra: str, command: str = "scan") -> list[str]:
    return [command, "--plugin", str(trees["plugin"]), "--old", str(trees["old"]), "--new", str(trees["new"]),
            "--cache-dir", str(trees["cache"]), "--no-progress", *extra]



