"""Every failure that is not a finding: one line `pinport: error: ...`, exit 2, before any work starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pinport.cli.main import main
from pinport.model.index import DATABASE

from .conftest import make_wheel, scan_args


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pinport: error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("spec, says", [
    ("a/b==1.0", "'a/b'"),
    ("a b==1.0", "'a b'"),
    ("plug==not-a-version", "'not-a-version' is not a valid version"),
    ("nothing-here", "is not a directory, REPO@REF or NAME==VERSION"),
])
def test_plugin_specs_the_cache_would_reject(trees, capsys, spec, says):
    args = scan_args(trees)
    args[args.index("--plugin") + 1] = spec
    assert main(args) == 2
    assert says in _one_error_line(capsys)
    assert not trees["cache"].exists()  # refused before anything was fetched or cached


def test_host_name_that_is_no_distribution(trees, capsys):
    assert main(scan_args(trees, "--host", "vllmé")) == 2
    assert _one_error_line(capsys) == (
        "pinport: error: --host must be a Python package name like 'vllm' or 'pkg.sub', not 'vllmé'")


def test_an_epoch_version_is_fetched_like_any_other(trees, capsys, fake_index, pip_settings):
    fake_index.add(make_wheel(fake_index.folder, "host", "1!1.0", {"host/__init__.py": "",
                                                                   "host/runner.py": "class Runner:\n    pass\n"}))
    pip_settings["index-url"] = fake_index.url
    args = scan_args(trees, "--checks", "aliases")
    args[args.index("--old") + 1] = "1!1.0"
    assert main(args) == 0
    assert (trees["cache"] / "wheels" / "host-1!1.0.0").is_dir()


def test_a_version_spelled_short_is_the_same_cache_entry(trees, capsys, fake_index, pip_settings):
    fake_index.add(make_wheel(fake_index.folder, "host", "2.0.0", {"host/__init__.py": ""}))
    pip_settings["index-url"] = fake_index.url
    for spelling in ("2.0.0", "2.0", "2"):
        args = scan_args(trees, "--checks", "aliases")
        args[args.index("--old") + 1] = spelling
        assert main(args) == 0
    assert sorted(p.name for p in (trees["cache"] / "wheels").iterdir() if p.is_dir()) == ["host-2.0.0"]


@pytest.mark.parametrize("setting, says", [
    ('fail-on = "bogus"', "'fail-on' must be one of error, warning, info, not 'bogus'"),
    ('host = ""', "'host' must not be empty"),
    ('host-distribution = "../../x"', "'host-distribution' must be a distribution name"),
    ('plugin-package = "/etc"', "'plugin-package' must be a Python package name"),
    ('skip = "tests"', "'skip' must be a list, not a string"),
    ("mirror-threshold = true", "'mirror-threshold' must be a number in (0, 1]"),
    ('profile = "../../x"', "'profile' must be a Python package name"),
    ('probes-file = "/etc/passwd"', "'probes-file' must be a path inside the plugin tree"),
    ('colour = "red"', "unknown setting 'colour'"),
    ('[[tool.pinport.pin-sources]]\nkind = "regex"\nfile = "plug/__init__.py"\npattern = "V = .*"',
     "needs a capturing group"),
    ('[[tool.pinport.pin-sources]]\nkind = "regex"\nfile = "../../etc/passwd"\npattern = "(root)"',
     "'file' must be a path inside the plugin tree"),
    ('[[tool.pinport.pin-sources]]\nkind = "regex"\nfile = "plug/__init__.py"\npattern = "(["',
     "is not a valid regular expression"),
    ('[[tool.pinport.pin-sources]]\nkind = "guess"', "'kind' must be one of requirement, regex"),
    ('[[tool.pinport.forks]]\nplugin = "plug/a.py"', "needs 'plugin' and 'host'"),
])
@pytest.mark.parametrize("command", ["scan", "imports", "port"])
def test_settings_of_the_wrong_kind(trees, capsys, setting, says, command):
    host = "" if setting.startswith("host =") else 'host = "host"\n'
    (trees["plugin"] / "pyproject.toml").write_text(f'[project]\nname = "plug"\n\n[tool.pinport]\n{host}{setting}\n')
    assert main(scan_args(trees, command=command)) == 2
    assert says in _one_error_line(capsys)
    assert not (trees["cache"] / "index").exists()  # said before any indexing


def test_settings_are_checked_by_ledger_too(trees, capsys):
    pyproject = trees["plugin"] / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + 'fail-on = "bogus"\n')
    assert main(["ledger", str(trees["plugin"])]) == 2
    assert "'fail-on' must be one of" in _one_error_line(capsys)


def test_pyproject_that_is_not_utf8(trees, capsys):
    (trees["plugin"] / "pyproject.toml").write_bytes(b'[project]\nname = "plug"\n# caf\xe9\n')
    assert main(scan_args(trees)) == 2
    assert _one_error_line(capsys).endswith("pyproject.toml: not UTF-8 (byte 29: b'\\xe9')")


def test_pin_regex_reads_only_inside_the_plugin(trees, capsys, tmp_path):
    outside = tmp_path / "secret.py"
    outside.write_text('VERSION = "9.9.9"\n')
    (trees["plugin"] / "plug" / "leak.py").symlink_to(outside)
    pyproject = trees["plugin"] / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '[[tool.pinport.pin-sources]]\nkind = "regex"\n'
                         'file = "plug/leak.py"\npattern = "VERSION = \\"(.+)\\""\n')
    args = scan_args(trees)
    del args[args.index("--old"):args.index("--old") + 2]
    assert main(args) == 2
    assert "no exact host pin found: no requirement names host; pass --old" in _one_error_line(capsys)


def test_summaries_database_that_is_a_directory(trees, capsys):
    trees["cache"].joinpath(*DATABASE).mkdir(parents=True)
    assert main(scan_args(trees, "--fail-on", "warning")) == 1  # the finding; the unusable cache costs only speed
    assert "PP0101" in capsys.readouterr().out


@pytest.mark.parametrize("extra, says", [
    (["--bogus"], "No such option '--bogus'"),
    (["--fail-on", "bogus"], "'bogus' is not one of 'error', 'warning', 'info'"),
    (["--format", "yaml"], "'yaml' is not one of"),
    (["--checks", "nope"], "unknown check 'nope'"),
])
def test_usage_errors_are_one_line(trees, capsys, extra, says):
    assert main(scan_args(trees, *extra)) == 2
    line = _one_error_line(capsys)
    assert says in line


def test_unwritable_output_is_refused_before_the_scan(trees, capsys):
    missing = trees["tmp"] / "no" / "such" / "report.json"
    assert main(scan_args(trees, "-o", str(missing))) == 2
    assert _one_error_line(capsys) == f"pinport: error: cannot write {missing}: no directory {missing.parent}"
    assert not (trees["cache"] / "index").exists()
    if os.geteuid() != 0:  # root writes anywhere
        locked = trees["tmp"] / "locked"
        locked.mkdir(mode=0o500)
        assert main(scan_args(trees, "-o", str(locked / "r.json"))) == 2
        assert "permission denied" in _one_error_line(capsys)


def test_internal_error_names_the_input_and_points_to_debug(trees, capsys, monkeypatch):
    import pinport.report as report

    def broken(result, fmt, **options):
        raise KeyError("boom")

    monkeypatch.setattr("pinport.cli.main.render", broken)
    assert report  # the renderer table is untouched; only the CLI's reference is broken
    assert main(scan_args(trees, "--format", "json")) == 2
    assert _one_error_line(capsys) == ("pinport: error: internal error while rendering the json report: "
                                       "KeyError: 'boom'; run again with --debug for the traceback")
    assert main(scan_args(trees, "--format", "json", "--debug")) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and err.strip().splitlines()[-1].startswith("pinport: error: internal error")


def test_the_installed_command_exits_2_with_one_line(trees):
    """The console script itself: no traceback, exit 2 (not 1, the code for findings)."""
    done = subprocess.run([sys.executable, "-m", "pinport", *scan_args(trees, "--host", "")],
                          capture_output=True, text=True, check=False, cwd=Path(trees["tmp"]))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == ["pinport: error: --host must not be empty"]


def test_a_pin_pattern_that_backtracks_forever_is_cut_off(trees, capsys, monkeypatch):
    monkeypatch.setattr("pinport.pins.PATTERN_SECONDS", 0.2)
    (trees["plugin"] / "plug" / "version.py").write_text("V = '" + "x" * 5000 + "'\n")
    pyproject = trees["plugin"] / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '[[tool.pinport.pin-sources]]\nkind = "regex"\n'
                         'file = "plug/version.py"\npattern = "(x+x+)+y"\n')
    args = scan_args(trees)
    del args[args.index("--old"):args.index("--old") + 2]
    assert main(args) == 2
    assert _one_error_line(capsys) == ("pinport: error: pin source pattern '(x+x+)+y' took over 0.2 s on "
                                       "plug/version.py; simplify it")
