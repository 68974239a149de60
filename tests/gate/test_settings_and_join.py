"""Fast parts of the gate: its settings, reading the plugin's entry point, the static <-> dynamic join."""

from __future__ import annotations

import pytest

from pinport.config import load_settings
from pinport.errors import ConfigError
from pinport.findings import Finding, Kind, Location, Severity, Status
from pinport.gate import find_entry_point
from pinport.gate.findings import break_finding, join


def _project(tmp_path, pyproject: str = "", **files: str):
    (tmp_path / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    for name, text in files.items():
        (tmp_path / name.replace("__", ".")).write_text(text, encoding="utf-8")
    return tmp_path


def test_profile_gate_keys_merge_one_by_one_with_the_plugins(tmp_path):
    (tmp_path / "arctic_inference").mkdir()
    root = _project(tmp_path, '[project]\nname = "arctic-inference"\n[tool.pinport.gate]\nenv = { X = true }\n'
                              'tests = "test"\n')
    gate = load_settings(root).gate
    assert gate.env == (("X", "1"),)  # the plugin's env replaces the profile's env...
    assert gate.tests == "test"
    assert gate.apply[0] == "arctic_inference.vllm.model_runner:GPUModelRunnerPatch.apply_patch"  # ...apply stays


@pytest.mark.parametrize(("table", "message"), [
    ('entry-point = "no_colon"', "'entry-point' must be 'module:function'"),
    ("timeout = -1", "'timeout' must be a positive number"),
    ('stub = ["not a module"]', "'stub'[0] must be a Python package name"),
    ('unknown = 1', "unknown setting 'unknown'"),
])
def test_bad_gate_settings_are_one_line_errors(tmp_path, table, message):
    root = _project(tmp_path, f"[tool.pinport.gate]\n{table}\n")
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("(", r"\(")) as info:
        load_settings(root)
    assert "\n" not in str(info.value)


def test_entry_point_from_pyproject_setup_cfg_and_setup_py(tmp_path):
    group = "vllm.general_plugins"
    one = _project(tmp_path, f'[project.entry-points."{group}"]\nx = "pkg.plugin:register"\n')
    assert find_entry_point(one, group) == "pkg.plugin:register"
    (tmp_path / "b").mkdir()
    two = _project(tmp_path / "b", "", setup__cfg=f"[options.entry_points]\n{group} =\n    x = pkg.b:go\n")
    assert find_entry_point(two, group) == "pkg.b:go"
    (tmp_path / "c").mkdir()
    three = _project(tmp_path / "c", "", setup__py=f"setup(entry_points={{'{group}': ['x = pkg.c:run']}})\n")
    assert find_entry_point(three, group) == "pkg.c:run"
    assert find_entry_point(three, "other.group") == ""


_STATIC = Kind("PP0402", "NameMoved", "`{name}` moved", Severity.ERROR, 4, "imports")


def _break(line: int, missing: str) -> Finding:
    return break_finding({"phase": "import", "module": "plug.mod", "type": "ImportError", "fix": "stub name",
                          "message": f"cannot import name '{missing.rpartition('.')[2]}' from 'host.a' (/x/a.py)",
                          "path": "plug/mod.py", "line": line, "code": "from host.a import x",
                          "function": "<module>", "missing": missing}, "host 2.0")


def test_join_confirms_the_static_finding_and_names_what_predicted_the_break():
    static = Finding(_STATIC, {"name": "x"}, Location("plug/mod.py", 3, 0, "<module>"), subject="host.a.x")
    other = Finding(_STATIC, {"name": "y"}, Location("plug/other.py", 3, 0, "<module>"), subject="host.a.y")
    joined_static, joined_dynamic = join([static, other], [_break(3, "host.a.x"), _break(9, "host.a.z")])
    assert [f.status for f in joined_static] == [Status.CONFIRMED, Status.DRIFT]
    assert "static status: drift" in joined_static[0].details
    assert [f.args["prediction"] for f in joined_dynamic] == ["; predicted by PP0402",
                                                              "; no static finding predicted this"]
    first = joined_dynamic[0]
    assert (first.code, first.level, first.status, first.subject) == ("PP0072", Severity.ERROR, Status.CONFIRMED,
                                                                      "host.a.x")
    assert first.args["error"] == "cannot import name 'x' from 'host.a'"  # the host file's path is dropped
