"""Small host/plugin trees for the reliability probes, generated per test; the fake index of tests/sources."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness import write_tree
from pinport.config import Settings
from pinport.findings import ScanResult
from pinport.scan import load_models, scan_models
from pinport.sources.tree import SourceTree, scan_files
from sources.conftest import fake_index, make_wheel, pip_settings  # noqa: F401  (fixtures reused)

HOST_OLD = {"host/__init__.py": "", "host/runner.py": "class Runner:\n    def step(self, a):\n        pass\n"}
HOST_NEW = {"host/__init__.py": "",
            "host/runner.py": "class Runner:\n    def step(self, a, is_profiling=False):\n        pass\n"
                          "\n\n\ndef drive(runner: Runner):\n    runner.step(1, is_profiling=True)\n"}
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





def scan_bytes(old: dict[str, bytes], new: dict[str, bytes], plugin: dict[str, bytes],
               tmp: Path, **settings: object) -> ScanResult:
    """Scan trees written byte for byte (BOMs, encodings, line endings kept), checks strict."""
    trees = []
    for name, package, files in (("old", "host", old), ("new", "host", new), ("plugin", "plug", plugin)):
        root = tmp / name
        for rel, data in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
        trees.append(SourceTree(root, f"{name}", package, None, scan_files(root, (package,))))
    config = replace(Settings(host="host", plugin_package="plug", pin_sources=()), **settings)
    return scan_models(load_models(trees[2], trees[0], trees[1], config), config, strict=True)


def encoded(files: dict[str, str]) -> dict[str, bytes]:
    return {rel: text.encode() for rel, text in files.items()}
