"""Host conventions come from the host's profile (`profiles/hosts/<host>.toml`), not from code: the
plugin entry-point groups (`plugin-groups`) and the spelling of the host's environment flags
(`flag-prefix`). A synthetic host `acme` whose profile names other values than vLLM's shows it:
`acme.general_plugins` / `ACME_` (what `<host>.general_plugins` and `<HOST>_` would guess) are
not its conventions."""

from __future__ import annotations

import pytest

from harness import write_tree
from pinport import config
from pinport.config import load_settings
from pinport.findings import Finding, Kind, Location, ScanResult, Severity
from pinport.gate.run import _selection_jobs, gate_entry_point
from pinport.plugin.project import host_entry_points, is_plugin_checkout

ACME = {"plugin-groups": ["acme.extensions", "acme.devices"], "flag-prefix": "ACMEX_"}


@pytest.fixture
def acme_profile(monkeypatch):
    real = config.load_host_profile
    monkeypatch.setattr(config, "load_host_profile", lambda host: dict(ACME) if host == "acme" else real(host))


def _project(root, group: str) -> None:
    write_tree(root, {"pyproject.toml": f'[project]\nname = "acme-plug"\n\n[tool.pinport]\nhost = "acme"\n\n'
                                        f'[project.entry-points."{group}"]\nplug = "acme_plug.boot:register"\n',
                      "acme_plug/__init__.py": "", "acme_plug/boot.py": "def register():\n    pass\n"})


def test_the_host_profile_names_the_plugin_groups(tmp_path, acme_profile):
    _project(tmp_path, "acme.devices")
    settings = load_settings(tmp_path)
    assert (settings.host, settings.plugin_groups, settings.flag_prefix) == (
        "acme", ("acme.extensions", "acme.devices"), "ACMEX_")
    assert [(e.group, e.value, e.file) for e in host_entry_points(tmp_path, settings)] == [
        ("acme.devices", "acme_plug.boot:register", "pyproject.toml")]
    assert is_plugin_checkout(tmp_path, settings)
    # the gate runs the entry point of the first group (the general plugins') when there is one
    assert gate_entry_point(settings, tmp_path) == ""
    _project(tmp_path, "acme.extensions")
    assert gate_entry_point(load_settings(tmp_path), tmp_path) == "acme_plug.boot:register"


def test_a_group_the_profile_does_not_name_is_no_plugin_group(tmp_path, acme_profile):
    _project(tmp_path, "acme.general_plugins")  # vLLM's convention, spelt for acme: not acme's
    settings = load_settings(tmp_path)
    assert host_entry_points(tmp_path, settings) == []
    assert not is_plugin_checkout(tmp_path, settings)  # and it does not require acme either
    assert gate_entry_point(settings, tmp_path) == ""


def test_vllm_s_groups_and_prefix_come_from_its_host_profile(tmp_path):
    settings = load_settings(tmp_path)
    assert (settings.plugin_groups, settings.flag_prefix) == (("vllm.general_plugins", "vllm.platform_plugins"),
                                                              "VLLM_")


_SWITCH = Kind("PP1002", "Bypassed", "bypassed", Severity.WARNING, 10, "bypass")


@pytest.mark.parametrize(("prefix", "expected"), [
    ("ACMEX_", ["ACMEX_USE_FAST"]),  # the host's flags, as its profile spells them
    ("ACME_", ["ACME_OTHER"]),  # negative twin: what `<HOST>_` would guess picks another variable
])
def test_the_gate_sets_only_the_host_s_flags(prefix, expected):
    finding = Finding(_SWITCH, {"name": "Runner"}, Location("plug/p.py", 1, 0, "P"), subject="acme.w.Runner",
                      new=Location("acme/w.py", 7, 0, "pick"), extra={"flags": ("ACMEX_USE_FAST", "ACME_OTHER")})
    static = ScanResult("plug", "acme 1", "acme 2", (finding,))
    (job,) = _selection_jobs(static, prefix)
    assert (job["module"], job["line"], job["candidate"], job["env_vars"]) == ("acme.w", 7, "acme.w.Runner", expected)
