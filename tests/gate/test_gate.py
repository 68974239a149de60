"""The gate end to end on a real (tiny) host installed into venvs, with a synthetic plugin."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from pinport.cli.main import main
from pinport.config import load_settings
from pinport.findings import Severity, Status
from pinport.gate import render_gate, run_gate, use_python
from pinport.gate.env import MARKER, make_env
from pinport.scan import load_models, scan_models
from pinport.sources import load_directory

pytestmark = pytest.mark.slow


def _gate(plugin_tree: Path, host_trees: dict[str, Path], env, new: str, **gate_env: str):
    settings = load_settings(plugin_tree)
    if gate_env:
        settings = replace(settings, gate=replace(settings.gate, env=(*settings.gate.env, *gate_env.items())))
    plugin = load_directory(plugin_tree, "tinyplug")
    old_tree = load_directory(host_trees["1.0"], "tinyhost")
    new_tree = load_directory(host_trees[new], "tinyhost")
    models = load_models(plugin, old_tree, new_tree, settings)
    static = scan_models(models, settings)
    return run_gate(plugin.root, env, settings, models.plugin, static=static, project_root=plugin_tree,
                    new_label=f"tinyhost {new}")


def _steps(result) -> dict[str, str]:
    return {s.name: s.label for s in result.steps}


def _find(result, code: str, path: str, line: int):
    found = [f for f in result.report.findings if f.code == code and f.plugin and
             (f.plugin.path, f.plugin.line) == (path, line)]
    assert len(found) == 1, [(f.code, str(f.plugin)) for f in result.report.findings]
    return found[0]


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"" for p in sorted(root.rglob("*"))}


def test_passing_case_every_step_passes(plugin_tree, host_trees, host_envs):
    envs, _ = host_envs
    before = _tree(plugin_tree)
    result = _gate(plugin_tree, host_trees, envs["1.0"], "1.0")
    assert _tree(plugin_tree) == before  # nothing written into the plugin (no byte code, no pytest cache)
    assert _steps(result) == {"compile": "PASS", "host": "PASS", "import": "PASS", "bootstrap": "PASS",
                              "patches": "PASS", "selection": "PASS", "tests": "PASS", "join": "PASS"}
    assert not result.failed
    assert result.patch_classes == (2, 2)
    assert {c.status for c in result.patches} == {"applied"}
    # absent modules are stubbed and listed, at the plugin line that imports them, as info
    stubs = {f.subject: f for f in result.findings if f.code == "PP0080"}
    assert set(stubs) == {"tinyplug._C", "tinyplug_optional_dependency"}
    assert (stubs["tinyplug._C"].plugin.path, stubs["tinyplug._C"].plugin.line) == ("tinyplug/kernels.py", 2)
    assert stubs["tinyplug._C"].level is Severity.INFO and stubs["tinyplug._C"].status is Status.CONFIRMED
    assert result.stubbed == {"tinyplug._C": "extension", "tinyplug_optional_dependency": "optional"}
    assert "1 tests collected" in next(s.summary for s in result.steps if s.name == "tests")


def test_failing_case_lists_every_break_in_one_run(plugin_tree, host_trees, host_envs):
    envs, _ = host_envs
    result = _gate(plugin_tree, host_trees, envs["2.0"], "2.0")
    assert _steps(result) == {"compile": "PASS", "host": "PASS", "import": "FAIL", "bootstrap": "PASS",
                              "patches": "FAIL", "selection": "PASS", "tests": "FAIL", "join": "PASS"}
    # moved name: recorded at the plugin frame, predicted by the static imports check
    moved = _find(result, "PP0072", "tinyplug/engine_patch.py", 2)
    assert moved.subject == "tinyhost.utils.helper" and moved.status is Status.CONFIRMED
    assert moved.plugin.snippet == "from tinyhost.utils import helper"
    assert moved.level is Severity.ERROR and moved.args["prediction"] == "; predicted by PP0402"
    # removed attribute used in a class body: the import went on past the first break
    removed = _find(result, "PP0073", "tinyplug/engine_patch.py", 7)
    assert removed.subject == "tinyhost.engine.Engine.legacy"
    assert removed.plugin.snippet == "_orig_legacy = Engine.legacy"
    assert removed.details[0] == "AttributeError: type object 'Engine' has no attribute 'legacy'"
    # the static findings the gate reproduced are confirmed, keeping their static status as evidence
    static_moved = _find(result, "PP0402", "tinyplug/engine_patch.py", 2)
    assert static_moved.status is Status.CONFIRMED and "static status: drift" in static_moved.details
    assert _find(result, "PP0001", "tinyplug/engine_patch.py", 7).status is Status.CONFIRMED
    # missing compiled extension: stubbed, listed, not a break
    assert result.stubbed["tinyplug._C"] == "extension"
    # the patch that does not apply (the plugin skips it on 2.x), by identity
    missed = _find(result, "PP0077", "tinyplug/runner_patch.py", 6)
    assert missed.subject == "tinyhost.workers.runner.Runner.execute"
    assert missed.args["detail"] == "tinyhost.workers.runner.Runner.execute is tinyhost.workers.runner.Runner.execute"
    assert result.patch_classes == (1, 2)
    # the tests' collection error, with its file
    collect = _find(result, "PP0078", "tests/test_engine.py", 1)
    assert "cannot import name 'helper' from 'tinyhost.utils'" in collect.args["error"]
    assert result.failed


def test_switch_to_the_parallel_implementation_is_decided_from_the_environment(plugin_tree, host_trees, host_envs):
    envs, _ = host_envs
    patched = _gate(plugin_tree, host_trees, envs["1.0"], "1.0")
    [kept] = [f for f in patched.findings if f.code == "PP0081"]
    assert kept.level is Severity.INFO and kept.subject == "tinyhost.workers.fast_runner.Runner"
    assert kept.args["chosen"] == "the patched `tinyhost.workers.runner.Runner`"
    assert (kept.args["test"], kept.args["site"]) == ("flags.TINYHOST_FAST", "tinyhost/workers/worker.py:7")
    assert kept.details == ("flags: TINYHOST_FAST=unset (False)",)
    bypassed = _gate(plugin_tree, host_trees, envs["1.0"], "1.0", TINYHOST_FAST="1")
    [chosen] = [f for f in bypassed.findings if f.code == "PP0081"]
    assert chosen.level is Severity.WARNING and chosen.status is Status.CONFIRMED
    assert chosen.args["chosen"].startswith("`tinyhost.workers.fast_runner.Runner` (the parallel implementation")
    assert chosen.details == ("flags: TINYHOST_FAST=1 (True)",)
    assert _steps(bypassed)["selection"] == "FAIL"


def test_unpredicted_break_is_reported_as_such(plugin_tree, host_trees, host_envs):
    envs, _ = host_envs
    settings = load_settings(plugin_tree)
    plugin = load_directory(plugin_tree, "tinyplug")
    # static scan against 1.0 on both sides predicts nothing; the gate in 2.0 sees the breaks
    same = load_directory(host_trees["1.0"], "tinyhost")
    models = load_models(plugin, same, same, settings)
    static = scan_models(models, settings)
    result = run_gate(plugin.root, envs["2.0"], settings, models.plugin, static=static, project_root=plugin_tree)
    moved = _find(result, "PP0072", "tinyplug/engine_patch.py", 2)
    assert moved.args["prediction"] == "; no static finding predicted this"
    assert _steps(result)["join"] == "FAIL"
    assert not [f for f in result.report.findings if f.status is Status.CONFIRMED and f.code == "PP0402"]


def test_report_formats_carry_steps_and_confirmed_findings(plugin_tree, host_trees, host_envs):
    envs, _ = host_envs
    result = _gate(plugin_tree, host_trees, envs["2.0"], "2.0")
    text = render_gate(result, "text")
    assert "FAIL import: 6 of 6 plugin modules import; 2 import-time breaks recorded in one run" in text
    assert "PP0072 error [confirmed] #4" in text
    document = json.loads(render_gate(result, "json"))
    assert [s["result"] for s in document["gate"]["steps"]] == ["PASS", "PASS", "FAIL", "PASS", "FAIL", "PASS",
                                                               "FAIL", "PASS"]
    assert document["gate"]["patch_classes"] == {"applied": 1, "total": 2}
    assert {f["code"] for f in document["findings"] if f["status"] == "confirmed"} >= {
        "PP0072", "PP0073", "PP0077", "PP0078", "PP0402", "PP0001"}
    sarif = json.loads(render_gate(result, "sarif"))
    assert sarif["runs"][0]["properties"]["gate"]["failed"] is True
    assert "| import | **FAIL** |" in render_gate(result, "markdown")


def test_env_is_reused_and_a_half_built_one_rebuilt(host_envs, wheelhouse, monkeypatch):
    envs, cache = host_envs
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # the rebuild installs from the test's own wheels
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheelhouse))
    env = envs["1.0"]
    again = make_env("tinyhost", "1.0", cache=cache)
    assert again.python == env.python and not again.built
    (env.path / MARKER).unlink()  # as if the build had been interrupted before the marker
    rebuilt = make_env("tinyhost", "1.0", cache=cache)
    assert rebuilt.built and (env.path / MARKER).is_file()
    assert use_python(rebuilt.python, "tinyhost").host_version == "1.0"


def test_cli_gate_with_python_and_plugin_tree(plugin_tree, host_trees, host_envs, capsys):
    envs, _ = host_envs
    code = main(["gate", "--plugin", str(plugin_tree), "--old", str(host_trees["1.0"]),
                 "--new", str(host_trees["2.0"]), "--python", str(envs["2.0"].python), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL patches: 1 of 2 patched members" in out
    assert "tinyplug/engine_patch.py:7  PP0073 error [confirmed]" in out


def test_cli_gate_without_environment_is_one_line_exit_2(plugin_tree, capsys):
    assert main(["gate", "--plugin", str(plugin_tree), "--python", "/nonexistent/python", "--old", "1.0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pinport: error: ")



def test_cli_gate_sarif_help_addresses_follow_docs_url_as_the_scan_does(plugin_tree, host_trees, host_envs, capsys):
    from sarif_schema import sarif_errors

    envs, _ = host_envs
    pyproject = plugin_tree / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(
        "[tool.pinport]\n", '[tool.pinport]\ndocs-url = "https://docs.example.org/pinport/"\n'))
    argv = ["--plugin", str(plugin_tree), "--old", str(host_trees["1.0"]), "--new", str(host_trees["2.0"]),
            "--format", "sarif", "--no-progress"]
    assert main(["gate", *argv, "--python", str(envs["2.0"].python)]) == 1
    gate_log = json.loads(capsys.readouterr().out)
    driver = gate_log["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == "https://docs.example.org/pinport/rules/README.md"
    assert {"PP0072", "PP0073", "PP0402"} <= {r["id"] for r in driver["rules"]}
    assert {r["helpUri"] for r in driver["rules"]} == {
        f"https://docs.example.org/pinport/rules/{r['id']}.md" for r in driver["rules"]}
    assert sarif_errors(gate_log) == []
    # the scan's SARIF of the same plugin, through the same renderer: the same address for a shared rule
    main(["scan", *argv])
    scan_rules = {r["id"]: r["helpUri"] for r in json.loads(capsys.readouterr().out)["runs"][0]["tool"]["driver"]["rules"]}
    assert scan_rules["PP0402"] == next(r["helpUri"] for r in driver["rules"] if r["id"] == "PP0402")
    # the flag wins over the setting; a flag that is no address is one line and exit 2, before any run
    assert main(["gate", *argv, "--python", str(envs["2.0"].python), "--docs-url", "https://other.example/d"]) == 1
    assert json.loads(capsys.readouterr().out)["runs"][0]["tool"]["driver"]["informationUri"] == \
        "https://other.example/d/rules/README.md"
    assert main(["gate", *argv, "--python", str(envs["2.0"].python), "--docs-url", "docs.example.org"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pinport: error: ") and "--docs-url" in err[0]
