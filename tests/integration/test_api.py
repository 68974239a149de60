"""The Python API: `pinport.scan(...)` gives what `pinport scan` reports, through the same cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pinport
from harness import cli_trees, outcomes, scan_argv
from pinport.cli.main import main
from pinport.errors import PinportError
from pinport.findings import Severity, Status

PYPROJECT = """
[project]
name = "plug"
version = "2.0"
optional-dependencies = {host = ["host==1.0"]}

[tool.pinport]
host = "host"
"""


@pytest.fixture()
def trees(tmp_path: Path) -> dict[str, Path]:
    return cli_trees(tmp_path, {"pyproject.toml": PYPROJECT, "plug/__init__.py": "",
                                "plug/patch.py": "from host.runner import Runner\nfrom host.runner import gone\n\n"
                                                 "class Mine(Runner):\n    def step(self, a):\n        pass\n"})


def test_scan_returns_what_the_cli_reports(trees, capsys):
    result = pinport.scan(trees["plugin"], old=trees["old"], new=trees["new"], cache_dir=trees["cache"])
    assert main(scan_argv(trees, "--format", "json")) == 1
    report = json.loads(capsys.readouterr().out)
    assert [f.fingerprint for f in result.findings] == [f["fingerprint"] for f in report["findings"]]
    moved = next(f for f in result.findings if f.code == "PP0101")
    assert (moved.level, moved.status, moved.plugin.path, moved.plugin.line) == (
        Severity.WARNING, Status.DRIFT, "plug/patch.py", 5)
    assert moved.new.snippet == "def step(self, a, is_profiling=False)"
    assert json.loads(pinport.render(result, "json"))["findings"] == report["findings"]


def _cached_summaries(trees) -> tuple[int, int | None]:
    seen: list[tuple[str, int, int | None]] = []
    pinport.scan(trees["plugin"], old=trees["old"], new=trees["new"], cache_dir=trees["cache"],
                 progress=lambda what, done, total: seen.append((what, done, total)))
    return next((done, total) for what, done, total in seen if what == "indexing")


def test_second_scan_reads_the_cache(trees):
    assert _cached_summaries(trees) == (0, 5)  # a cold cache: nothing there yet
    assert any((trees["cache"] / "index").iterdir())  # the index cache lives in the given cache dir
    cached, total = _cached_summaries(trees)
    assert total == 5 and cached >= 4  # every module the scan needed is read back (one was never needed)


def test_code_selection_and_baseline(trees, tmp_path, capsys):
    only = pinport.scan(trees["plugin"], old=trees["old"], new=trees["new"], cache_dir=trees["cache"],
                        select=("PP06",))
    assert outcomes(only, at=True) == ["PP0601 error latent <module>:2"]
    baseline = tmp_path / "baseline.json"
    main(scan_argv(trees, "--write-baseline", str(baseline)))
    capsys.readouterr()
    accepted = pinport.scan(trees["plugin"], old=trees["old"], new=trees["new"], cache_dir=trees["cache"],
                            baseline=baseline)
    assert accepted.findings == () and len(accepted.baselined) == 2


def test_bad_input_raises_a_pinport_error(trees):
    with pytest.raises(PinportError, match="no such directory|not"):
        pinport.scan(trees["plugin"], old=trees["old"], new=trees["old"].parent / "nothing", cache_dir=trees["cache"])


def test_module_stays_a_module():
    import pinport.scan as scan_module

    assert callable(scan_module) and scan_module.scan_models is not None
