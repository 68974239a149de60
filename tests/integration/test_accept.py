"""Accepting findings through the CLI: inline comments, code selection, per-file-ignores, baselines."""

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
OVERRIDE = "from host.runner import Runner\n\nclass Mine(Runner):\n    def step(self, a):{comment}\n        pass\n"


@pytest.fixture()
def trees(tmp_path: Path) -> dict[str, Path]:
    return cli_trees(tmp_path, {"pyproject.toml": PYPROJECT, "plug/__init__.py": "",
                                "plug/patch.py": OVERRIDE.format(comment=""),
                                "plug/other.py": OVERRIDE.format(comment="")})


def _scan(trees: dict[str, Path], capsys, *extra: str) -> tuple[int, dict]:
    code = main(scan_argv(trees, "--format", "json", "--fail-on", "warning", *extra))
    return code, json.loads(capsys.readouterr().out)


def _where(report: dict) -> list[tuple[str, str, int]]:
    return [(f["code"], f["plugin"]["path"], f["plugin"]["line"]) for f in report["findings"]]


def test_both_overrides_are_reported_without_acceptance(trees, capsys):
    code, report = _scan(trees, capsys)
    assert code == 1
    assert _where(report) == [("PP0101", "plug/other.py", 4), ("PP0101", "plug/patch.py", 4)]
    finding = report["findings"][1]
    assert finding["severity"] == "warning" and finding["status"] == "drift"
    assert finding["new"]["snippet"] == "def step(self, a, is_profiling=False)"
    assert report["summary"]["suppressed"] == 0 and report["summary"]["baselined"] == 0


@pytest.mark.parametrize("comment", ["  # pinport: ignore[PP0101]", "  # pinport: ignore", "  # pinport: ignore[pp01]",
                                     "  # noqa: E501  # pinport: ignore[PP0201, PP0101]"])
def test_inline_comment_suppresses_and_is_counted(trees, capsys, comment):
    (trees["plugin"] / "plug" / "patch.py").write_text(OVERRIDE.format(comment=comment), encoding="utf-8")
    code, report = _scan(trees, capsys)
    assert code == 1  # plug/other.py still fails
    assert _where(report) == [("PP0101", "plug/other.py", 4)]
    assert report["summary"]["suppressed"] == 1 and report["summary"]["total"] == 1


def test_inline_comment_for_another_code_suppresses_nothing(trees, capsys):
    (trees["plugin"] / "plug" / "patch.py").write_text(OVERRIDE.format(comment="  # pinport: ignore[PP0201]"),
                                                     encoding="utf-8")
    _, report = _scan(trees, capsys)
    assert len(report["findings"]) == 2 and report["summary"]["suppressed"] == 0


def test_text_summary_counts_suppressed(trees, capsys):
    for name in ("patch.py", "other.py"):
        (trees["plugin"] / "plug" / name).write_text(OVERRIDE.format(comment="  # pinport: ignore"), encoding="utf-8")
    code = main(scan_argv(trees, "--fail-on", "warning"))
    out = capsys.readouterr().out
    assert code == 0
    assert "no findings" in out and "2 suppressed (not shown)" in out and "plug/patch.py:4" not in out


@pytest.mark.parametrize(("flags", "left"), [
    (("--ignore", "PP01"), []),
    (("--ignore", "PP"), []),
    (("--select", "PP02"), []),
    (("--select", "PP02", "--extend-select", "PP0101"), ["plug/other.py", "plug/patch.py"]),
    (("--ignore", "PP01", "--select", "PP0101"), ["plug/other.py", "plug/patch.py"]),  # more specific wins
    (("--per-file-ignores", "plug/other*:PP0101"), ["plug/patch.py"]),
])
def test_code_selection_flags(trees, capsys, flags, left):
    code, report = _scan(trees, capsys, *flags)
    assert [p for _, p, _ in _where(report)] == left
    assert code == (1 if left else 0)
    expected_suppressed = 1 if "--per-file-ignores" in flags else 0  # deselected codes are not "accepted"
    assert report["summary"]["suppressed"] == expected_suppressed


def test_settings_in_pyproject(trees, capsys):
    pyproject = trees["plugin"] / "pyproject.toml"
    pyproject.write_text(PYPROJECT + 'per-file-ignores = {"plug/patch.py" = ["PP0101"]}\n', encoding="utf-8")
    _, report = _scan(trees, capsys)
    assert _where(report) == [("PP0101", "plug/other.py", 4)] and report["summary"]["suppressed"] == 1
    pyproject.write_text(PYPROJECT + 'ignore = ["PP01"]\nextend-select = ["PP0101"]\n', encoding="utf-8")
    _, report = _scan(trees, capsys)
    assert len(report["findings"]) == 2
    pyproject.write_text(PYPROJECT + 'extend-skip = ["other"]\n', encoding="utf-8")
    _, report = _scan(trees, capsys)
    assert _where(report) == [("PP0101", "plug/patch.py", 4)] and report["summary"]["files_scanned"] == 2


@pytest.mark.parametrize(("setting", "fragment"), [
    ('ignore = ["PP-01"]', "'PP-01' is not a finding code"),
    ('select = "PP01"', "'select' must be a list of finding codes"),
    ('per-file-ignores = ["x"]', "'per-file-ignores' must be a table"),
])
def test_bad_settings_are_one_line(trees, capsys, setting, fragment):
    (trees["plugin"] / "pyproject.toml").write_text(PYPROJECT + setting + "\n", encoding="utf-8")
    code = main(scan_argv(trees))
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("pinport: error:") and fragment in err and err.count("\n") == 1


def test_baseline_written_then_applied_leaves_only_new_findings(trees, capsys):
    baseline = trees["tmp"] / "baseline.json"
    code, _ = _scan(trees, capsys, "--write-baseline", str(baseline))
    assert code == 0  # everything written to the baseline is accepted
    accepted = json.loads(baseline.read_text(encoding="utf-8"))
    assert [(f["code"], f["path"]) for f in accepted["findings"]] == [("PP0101", "plug/other.py"),
                                                                       ("PP0101", "plug/patch.py")]
    # lines move (a header comment), and a new file brings a new finding
    (trees["plugin"] / "plug" / "patch.py").write_text("# moved down\n\n" + OVERRIDE.format(comment=""),
                                                       encoding="utf-8")
    (trees["plugin"] / "plug" / "third.py").write_text(OVERRIDE.format(comment=""), encoding="utf-8")
    code, report = _scan(trees, capsys, "--baseline", str(baseline))
    assert code == 1
    assert _where(report) == [("PP0101", "plug/third.py", 4)]
    assert report["summary"]["baselined"] == 2


def test_baseline_with_two_findings_of_one_identity(trees, capsys):
    """Two overrides of one host method in one plugin unit are told apart by order, not line."""
    twice = ("from host.runner import Runner\n\nclass Mine(Runner):\n    def step(self, a):\n        pass\n\n"
             "class Mine(Runner):\n    def step(self, a):\n        pass\n")
    (trees["plugin"] / "plug" / "patch.py").write_text(twice, encoding="utf-8")
    _, report = _scan(trees, capsys)
    prints = [f["fingerprint"] for f in report["findings"]]
    assert len(prints) == 3 and len(set(prints)) == 3
    baseline = trees["tmp"] / "baseline.json"
    _scan(trees, capsys, "--write-baseline", str(baseline))
    (trees["plugin"] / "plug" / "patch.py").write_text("\n\n\n" + twice, encoding="utf-8")
    code, report = _scan(trees, capsys, "--baseline", str(baseline))
    assert code == 0 and report["findings"] == [] and report["summary"]["baselined"] == 3


@pytest.mark.parametrize(("content", "fragment"), [
    ("not json", "is not JSON"),
    ('{"format": "other"}', "is not a pinport baseline"),
    ('{"format": "pinport-baseline", "version": 99, "findings": []}', "has version 99"),
])
def test_bad_baseline_is_one_line(trees, capsys, content, fragment):
    baseline = trees["tmp"] / "baseline.json"
    baseline.write_text(content, encoding="utf-8")
    code = main(scan_argv(trees, "--baseline", str(baseline)))
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("pinport: error:") and fragment in err and err.count("\n") == 1


def test_missing_baseline_is_one_line(trees, capsys):
    code = main(["scan", "--plugin", str(trees["plugin"]), "--baseline", str(trees["tmp"] / "none.json")])
    err = capsys.readouterr().err
    assert code == 2 and "cannot read baseline" in err and err.count("\n") == 1
