"""The CLI in-process: exit codes, formats, output files and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import cli_trees, scan_argv
from pinport.cli.main import main

PYPROJECT = """
[project]
name = "plug"
optional-dependencies = {host = ["host==1.0"]}

[tool.pinport]
host = "host"
plugin-package = "plug"
"""


@pytest.fixture()
def trees(tmp_path: Path) -> dict[str, Path]:
    return cli_trees(tmp_path, {
        "pyproject.toml": PYPROJECT,
        "plug/__init__.py": "",
        "plug/patch.py": "from host.runner import Runner\n\nclass Mine(Runner):\n    def step(self, a):\n        pass\n",
        "plug/broken.py": "def oops(:\n",
    })


def test_text_report_and_exit_code(trees, capsys):
    assert main(scan_argv(trees)) == 1  # the plugin file that does not parse is an error finding
    out = capsys.readouterr().out
    assert "PP0101" in out and "plug/patch.py:4" in out
    assert "PP0005" in out and "plug/broken.py" in out  # reported, and the other file still analysed


@pytest.mark.parametrize("fmt", ["json", "sarif", "markdown"])
def test_formats_to_file(trees, fmt, capsys):
    out_file = trees["tmp"] / f"report.{fmt}"
    assert main(scan_argv(trees, "--format", fmt, "-o", str(out_file))) == 1
    text = out_file.read_text(encoding="utf-8")
    assert "PP0101" in text
    if fmt != "markdown":
        json.loads(text)
    assert "wrote" in capsys.readouterr().err


def test_json_carries_evidence(trees, capsys):
    main(scan_argv(trees, "--format", "json", "--checks", "signatures"))
    data = json.loads(capsys.readouterr().out)
    finding = next(f for f in data["findings"] if f["code"] == "PP0101")
    assert finding["plugin"]["path"] == "plug/patch.py" and finding["new"]["path"] == "host/runner.py"
    assert finding["drift"] == 1 and finding["status"] == "drift"


def test_fail_on(trees, capsys):
    (trees["plugin"] / "plug" / "broken.py").unlink()
    # the subclass finding is capped at warning: exit 0 unless warnings fail too
    assert main(scan_argv(trees, "--checks", "signatures")) == 0
    assert main(scan_argv(trees, "--checks", "signatures", "--fail-on", "warning")) == 1


def test_single_check_command(trees, capsys):
    (trees["plugin"] / "plug" / "broken.py").unlink()
    args = scan_argv(trees)
    args[0] = "signatures"
    assert main(args) == 0
    assert "PP0101" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "fragment"), [
    (["scan", "--plugin", "/no/such/dir", "--old", "/x", "--new", "/y"], "plugin '/no/such/dir'"),
    (["scan", "--checks", "nope"], "unknown check 'nope'"),
])
def test_bad_input_is_one_line_exit_2(trees, argv, fragment, capsys):
    if argv[1] == "--checks":
        argv = scan_argv(trees, "--checks", "nope")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("pinport: error:") and fragment in err and err.count("\n") == 1


def test_missing_host_directory(trees, capsys):
    args = scan_argv(trees)
    args[args.index("--new") + 1] = str(trees["tmp"] / "nothing-here")
    assert main(args) == 2
    assert "pinport: error:" in capsys.readouterr().err


def test_checks_listing(capsys):
    assert main(["checks"]) == 0
    out = capsys.readouterr().out
    assert "signatures" in out and "PP0101" in out
