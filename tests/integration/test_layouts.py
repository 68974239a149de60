"""Plugin paths are relative to the plugin's repository in every format, `src/` layouts included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import write_tree
from pinport.cli.main import main

PYPROJECT = """
[project]
name = "plug"
version = "1.2.3"
optional-dependencies = {host = ["host==1.0"]}

[tool.pinport]
host = "host"
"""
PATCH = "from host.runner import Runner\n\nclass Mine(Runner):\n    def step(self, a):\n        pass\n"


@pytest.fixture(params=["flat", "src"])
def trees(request, tmp_path: Path) -> dict[str, object]:
    old, new, plugin = tmp_path / "old", tmp_path / "new", tmp_path / "plugin"
    write_tree(old, {"host/__init__.py": "", "host/runner.py": "class Runner:\n    def step(self, a):\n        pass\n"})
    write_tree(new, {"host/__init__.py": "",
                     "host/runner.py": "class Runner:\n    def step(self, a, is_profiling=False):\n        pass\n"
                     "\n\n\ndef drive(runner: Runner):\n    runner.step(1, is_profiling=True)\n"})
    prefix = "src/" if request.param == "src" else ""
    write_tree(plugin, {"pyproject.toml": PYPROJECT, f"{prefix}plug/__init__.py": "", f"{prefix}plug/patch.py": PATCH,
                        "tests/test_x.py": "import plug\n"})
    return {"old": old, "new": new, "plugin": plugin, "tmp": tmp_path, "path": f"{prefix}plug/patch.py"}


def _scan(trees, capsys, *extra: str) -> str:
    main(["scan", "--plugin", str(trees["plugin"]), "--old", str(trees["old"]), "--new", str(trees["new"]),
          "--cache-dir", str(trees["tmp"] / "cache"), "--no-progress", *extra])
    return capsys.readouterr().out


def test_text_names_repository_paths_and_the_project(trees, capsys):
    out = _scan(trees, capsys)
    assert f"\n{trees['path']}\n  {trees['path']}:4  PP0101 warning [drift] #1" in out
    assert out.startswith(f"pinport: plug 1.2.3 ({trees['plugin']})  OLD ")


def test_json_names_repository_paths(trees, capsys):
    report = json.loads(_scan(trees, capsys, "--format", "json"))
    [finding] = report["findings"]
    assert finding["plugin"]["path"] == trees["path"] and finding["new"]["path"] == "host/runner.py"
    assert report["plugin"] == f"plug 1.2.3 ({trees['plugin']})"


def test_sarif_names_repository_paths(trees, capsys):
    from sarif_schema import sarif_errors

    log = json.loads(_scan(trees, capsys, "--format", "sarif"))
    assert sarif_errors(log) == []
    [result] = log["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": trees["path"], "uriBaseId": "%SRCROOT%"}
    assert location["region"]["startLine"] == 4


def test_inline_suppression_and_per_file_ignores_use_repository_paths(trees, capsys):
    patch = trees["plugin"] / trees["path"]
    patch.write_text(PATCH.replace("def step(self, a):", "def step(self, a):  # pinport: ignore[PP0101]"),
                     encoding="utf-8")
    report = json.loads(_scan(trees, capsys, "--format", "json"))
    assert report["findings"] == [] and report["summary"]["suppressed"] == 1
    patch.write_text(PATCH, encoding="utf-8")
    report = json.loads(_scan(trees, capsys, "--format", "json", "--per-file-ignores", f"{trees['path']}:PP01"))
    assert report["findings"] == [] and report["summary"]["suppressed"] == 1
