"""`pinport scan --format html` through the CLI: excerpts from the trees, the port of a mirror."""

from __future__ import annotations

from pathlib import Path

from harness import write_tree
from pinport.cli.main import main
from scenarios import LOGGING_ENGINE as ENGINE
from scenarios import LOGGING_MIRROR as MIRROR
from scenarios import PATCHING

PYPROJECT = """
[project]
name = "plug"
version = "0.9"
optional-dependencies = {host = ["host==1.0"]}

[tool.pinport]
host = "host"
patch-helpers = ["ArcticPatch"]
"""


def test_html_report_of_a_changed_mirror(tmp_path: Path, capsys):
    old, new, plugin = tmp_path / "old", tmp_path / "new", tmp_path / "plugin"
    write_tree(old, {"host/__init__.py": "", "host/engine.py": ENGINE})
    write_tree(new, {"host/__init__.py": "",
                     "host/engine.py": ENGINE.replace("self.steps += 1", "self.steps += len(batch)")})
    write_tree(plugin, {"pyproject.toml": PYPROJECT, "plug/__init__.py": "", "plug/patch.py": MIRROR, **PATCHING})
    out = tmp_path / "report.html"
    code = main(["scan", "--plugin", str(plugin), "--old", str(old), "--new", str(new), "--cache-dir",
                 str(tmp_path / "cache"), "--no-progress", "--checks", "mirrors", "--format", "html", "-o", str(out)])
    assert code == 0 and "wrote html report" in capsys.readouterr().err
    html = out.read_text(encoding="utf-8")
    assert "data-code='PP1201'" in html
    assert ("<tr class='replace'><td class='n'>6</td><td class='l'>    self.steps += 1</td><td class='n'>6</td>"
            "<td class='r'>    self.steps += len(batch)</td></tr>") in html  # upstream OLD beside NEW
    assert "Three-way merge proposal" in html and "self.steps += len(batch)" in html.split("Three-way merge proposal")[1]
    assert "class=focus" in html  # the plugin line, shown in its file
