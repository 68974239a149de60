"""PluginModel: which package and modules are scanned, and the plugin's parsed defs by name."""

from pathlib import Path

import pytest

from harness import write_tree
from pinport.config import Settings
from pinport.errors import ConfigError
from pinport.model.index import load_index
from pinport.plugin.model import load_plugin_model
from pinport.plugin.project import find_packages
from pinport.sources.tree import SourceTree, scan_all


def index(tmp_path: Path, files: dict[str, str]):
    write_tree(tmp_path, files)
    return load_index(SourceTree(tmp_path, "plugin 0.1", "", None, scan_all(tmp_path)), workers=1)


PLUGIN = {
    "plug/__init__.py": "",
    "plug/a.py": """
        from host.runner import Runner
        class RunnerPatch:
            def step(self):
                def inner():
                    pass
            class Nested:
                async def go(self):
                    pass
        def top():
            pass
    """,
    "plug/sub/__init__.py": "",
    "plug/sub/b.py": "def g(): pass\n",
    "plug/broken.py": "def f(:\n",
}


def test_package_found_from_the_tree(tmp_path):
    idx = index(tmp_path, {**PLUGIN, "setup.py": "", "tests/__init__.py": "", "tests/test_a.py": ""})
    assert find_packages(idx, Settings(host="host")).packages == ("plug",)
    assert find_packages(idx, Settings(host="host", plugin_package="other")).packages == ("other",)


@pytest.mark.parametrize("files", [
    {"one/__init__.py": "", "two/__init__.py": ""},
    {"loose.py": ""},
])
def test_package_must_be_unambiguous(tmp_path, files):
    with pytest.raises(ConfigError):
        find_packages(index(tmp_path, files), Settings(host="host"))


def test_modules_in_scope_are_sorted_and_exclude_other_packages(tmp_path):
    idx = index(tmp_path, {**PLUGIN, "plugin_extra/__init__.py": "", "plugx.py": ""})
    m = load_plugin_model(idx, Settings(host="host", plugin_package="plug"))
    assert m.modules == ["plug", "plug.a", "plug.broken", "plug.sub", "plug.sub.b"]
    assert m.package == "plug" and m.label == "plugin 0.1"
    assert m.names.host == "host"


def test_skip_removes_a_sub_package(tmp_path):
    m = load_plugin_model(index(tmp_path, PLUGIN), Settings(host="host", plugin_package="plug", skip=("sub",)))
    assert m.modules == ["plug", "plug.a", "plug.broken"]


def test_function_node_by_qualified_name(tmp_path):
    m = load_plugin_model(index(tmp_path, PLUGIN), Settings(host="host", plugin_package="plug"))
    assert m.function_node("plug.a", "RunnerPatch.step").lineno == 3
    assert m.function_node("plug.a", "RunnerPatch.step.inner").lineno == 4
    assert m.function_node("plug.a", "RunnerPatch.Nested.go").name == "go"
    assert m.function_node("plug.a", "top").name == "top"
    assert m.function_node("plug.sub.b", "g") is not None
    assert m.function_node("plug.a", "RunnerPatch") is None  # a class is not a def
    assert m.function_node("plug.broken", "f") is None
    assert m.function_node("plug.nope", "f") is None


def test_functions_in_a_module_in_source_order_with_or_without_nested_defs(tmp_path):
    m = load_plugin_model(index(tmp_path, PLUGIN), Settings())
    assert [(name, node.lineno) for name, node in m.functions_in("plug.a")] == [
        ("RunnerPatch.step", 3), ("RunnerPatch.step.inner", 4), ("RunnerPatch.Nested.go", 7), ("top", 9)]
    assert [name for name, _ in m.functions_in("plug.a", nested=False)] == [
        "RunnerPatch.step", "RunnerPatch.Nested.go", "top"]
    assert m.functions_in("plug.broken") == []


def test_the_surface_is_discovered_once_per_plugin_content_and_settings(tmp_path, monkeypatch):
    """With an index cache, the discovered surface is kept under the plugin's content, its modules
    and the settings: the next load reads it back (equal, no walk); other settings walk again."""
    from dataclasses import replace

    from pinport.model.index import IndexCache
    from pinport.plugin import model as plugin_model

    files = {"plug/__init__.py": "", "plug/a.py": "from host.runner import Runner\n\n\nclass Mine(Runner):\n"
             "    def step(self, a):\n        pass\n\n\nRunner.go = Mine.step\n"}
    write_tree(tmp_path / "p", files)
    cache = IndexCache(tmp_path / "index.sqlite")

    def load(settings):
        tree = SourceTree(tmp_path / "p", "plugin 0.1", "", None, scan_all(tmp_path / "p"))
        return load_plugin_model(load_index(tree, cache, workers=1), settings)

    settings = Settings(host="host", plugin_package="plug")
    first = load(settings)
    assert [(p.owner, p.name) for p in first.surface.patches] == [("host.runner.Runner", "step"),
                                                                   ("host.runner.Runner", "go")]
    walked = []
    discover = plugin_model.discover
    monkeypatch.setattr(plugin_model, "discover", lambda *a: walked.append(1) or discover(*a))
    assert load(settings).surface == first.surface and walked == []
    assert load(replace(settings, patch_helpers=("Helper",))).surface == first.surface and walked == [1]
