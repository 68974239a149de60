"""Triage in the terminal: ordering, filters, statistics, colour choices, progress bars, shared options."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

import pytest
from rich.console import Console

from harness import write_tree
from pinport.cli.main import cli, main
from pinport.cli.progress import progress_reporter

PYPROJECT = """
[project]
name = "plug"
version = "0.4.0"
optional-dependencies = {host = ["host==1.0"]}

[tool.pinport]
host = "host"
"""
OLD_RUNNER = "class Runner:\n    def step(self, a):\n        pass\n"
NEW_RUNNER = "class Runner:\n    def step(self, a, is_profiling=False):\n        pass\n" \
             "\n\n\ndef drive(runner: Runner):\n    runner.step(1, is_profiling=True)\n"  # a host call that reaches the override
# an optional upstream parameter the subclass lacks (warning, drift); an import of a name that
# neither host version has (error, latent: already broken on OLD)
PATCH = ("from host.runner import Runner\nfrom host.runner import gone\n\n"
         "class Mine(Runner):\n    def step(self, a):\n        pass\n")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture()
def trees(tmp_path: Path) -> dict[str, Path]:
    old, new, plugin = tmp_path / "old", tmp_path / "new", tmp_path / "plugin"
    write_tree(old, {"host/__init__.py": "", "host/runner.py": OLD_RUNNER})
    write_tree(new, {"host/__init__.py": "", "host/runner.py": NEW_RUNNER})
    write_tree(plugin, {"pyproject.toml": PYPROJECT, "plug/__init__.py": "", "plug/patch.py": PATCH})
    return {"old": old, "new": new, "plugin": plugin, "tmp": tmp_path}


def _scan(trees, *extra: str) -> list[str]:
    return ["scan", "--plugin", str(trees["plugin"]), "--old", str(trees["old"]), "--new", str(trees["new"]),
            "--cache-dir", str(trees["tmp"] / "cache"), "--no-progress", "--checks", "signatures,imports", *extra]


def test_drift_comes_before_latent_and_the_plugin_is_named(trees, capsys):
    assert main(_scan(trees, "--fail-on", "warning")) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"pinport: plug 0.4.0 ({trees['plugin']})  OLD ")
    drift = out.index("drift: introduced by the move (1)")
    warning = out.index("plug/patch.py:5  PP0101 warning [drift] #1")
    latent = out.index("latent: already broken on OLD (1)")
    error = out.index("plug/patch.py:2  PP0601 error [latent] #6")
    assert drift < warning < latent < error


@pytest.mark.parametrize(("flags", "shown"), [
    (("--min-severity", "error"), ["PP0601"]),
    (("--min-severity", "info"), ["PP0101", "PP0601"]),
    (("--status", "drift"), ["PP0101"]),
    (("--status", "latent"), ["PP0601"]),
    (("--status", "drift", "--min-severity", "error"), []),
    (("--status", "drift", "--status", "latent"), ["PP0101", "PP0601"]),
])
def test_filters_narrow_what_is_shown_not_the_exit_code(trees, capsys, flags, shown):
    assert main(_scan(trees, "--format", "json", "--fail-on", "warning", *flags)) == 1
    import json

    report = json.loads(capsys.readouterr().out)
    assert sorted(f["code"] for f in report["findings"]) == shown


def test_statistics(trees, capsys):
    main(_scan(trees, "--statistics"))
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["    1  PP0101  warning  1 drift                 ParameterMissing",
                     "    1  PP0601  error    1 latent                NameRemoved",
                     "    2  total"]


@pytest.mark.parametrize(("env", "flag", "coloured"), [
    ({}, "auto", False),  # not a terminal
    ({"FORCE_COLOR": "1"}, "auto", True),
    ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, "auto", False),
    ({"FORCE_COLOR": "1", "TERM": "dumb"}, "auto", False),
    ({"NO_COLOR": "1"}, "always", True),
    ({"FORCE_COLOR": "1"}, "never", False),
])
def test_colour_choices(trees, capsys, monkeypatch, env, flag, coloured):
    for name in ("FORCE_COLOR", "NO_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    main(_scan(trees, "--color", flag))
    out = capsys.readouterr().out
    assert bool(ANSI.search(out)) is coloured
    plain = ANSI.sub("", out)
    assert "plug/patch.py:2  PP0601 error [latent] #6" in plain
    if coloured:
        assert "\x1b[1;31merror\x1b[0m" in out or "\x1b[31;1merror\x1b[0m" in out


def test_terminal_width_folds_long_lines(trees, capsys, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "60")
    main(_scan(trees))
    lines = ANSI.sub("", capsys.readouterr().out).splitlines()
    foldable = [line for line in lines if " " in line.strip()]  # a long path alone cannot fold
    assert max(len(line) for line in foldable) <= 60, [line for line in foldable if len(line) > 60]
    assert any(line.startswith("      ") and "does not" in line for line in lines)


def _bars(console: Console) -> list[str]:
    text = console.file.getvalue().replace("\r", "\n")  # type: ignore[attr-defined]
    return [line for line in (ANSI.sub("", re.sub(r"\x1b\[\??[0-9;]*[A-Za-z]", "", t)) for t in text.split("\n"))
            if line.strip()]


def test_progress_counts_files_and_bytes_at_80_columns():
    console = Console(file=io.StringIO(), width=80, force_terminal=True, color_system=None)
    with progress_reporter(console=console) as progress:
        name = "downloading vllm-0.33.0-cp38-abi3-manylinux_2_31_x86_64.whl"
        for done in range(0, 400_000_001, 50_000_000):
            progress(name, done, 400_000_000)
            time.sleep(0.02)
        progress("indexing", 1204, 1866)
        time.sleep(0.1)
    lines = _bars(console)
    assert lines and max(len(line) for line in lines) <= 80
    download = [line for line in lines if line.startswith("downloading vllm-0.33.0")]
    assert download and all("…" in line for line in download)
    assert any(re.search(r"\d+\.\d MB/400\.0 MB \d+(\.\d)? [kMG]?B/s", line) for line in download)
    assert any(re.search(r"^indexing .*1,204/1,866 files", line) for line in lines)


def test_no_bars_when_not_a_terminal_or_disabled():
    for console, enabled in ((Console(file=io.StringIO(), width=80), True),
                             (Console(file=io.StringIO(), width=80, force_terminal=True), False)):
        with progress_reporter(enabled=enabled, console=console) as progress:
            progress("indexing", 1, 2)
        assert console.file.getvalue() == ""  # type: ignore[attr-defined]


def test_every_fetching_command_has_cache_dir_and_no_progress():
    offline = {"checks", "rule"}  # commands that fetch nothing
    missing = []
    for name, command in cli.commands.items():
        if name in offline:
            continue
        options = {opt for param in command.params for opt in getattr(param, "opts", [])}
        missing += [f"{name} {opt}" for opt in ("--cache-dir", "--no-progress") if opt not in options]
    assert missing == []
