"""Which plugin modules run: reached from the declared roots through imports, module-naming strings,
package walks and parents; findings in the others are context (plugin/module_reach.py)."""

from __future__ import annotations

import pytest

from harness import expect, load_inline_models, run_scan
from pinport.plugin.module_reach import unreached_modules

HOST_OLD = {"host/mod.py": "def kept():\n    pass\n\n\ndef gone():\n    pass\n"}
HOST_NEW = {"host/mod.py": "def kept():\n    pass\n"}
ENTRY = ('[project]\nname = "plug"\n\n[project.entry-points."host.general_plugins"]\n'
         'plug = "plug.boot:register"\n')
BROKEN = "from host.mod import gone\n"  # NEW dropped `gone`: PP0601 where this module runs


def _unreached(plugin: dict[str, str], **settings: object) -> list[str]:
    with load_inline_models(HOST_OLD, HOST_NEW, plugin, **settings) as (models, config):
        return sorted(unreached_modules(models.plugin, config))


def test_a_module_nothing_imports_is_unreached_and_its_break_is_context():
    plugin = {"pyproject.toml": ENTRY,
              "plug/boot.py": "def register():\n    from plug import used  # function-local\n",
              "plug/used.py": BROKEN, "plug/dead.py": BROKEN}
    assert _unreached(plugin) == ["plug.dead"]
    result = run_scan(HOST_OLD, HOST_NEW, plugin, names=("imports",))
    expect(result, ["PP0601 error drift", "PP0601 info drift"])
    (dead,) = [f for f in result.findings if f.plugin.path == "plug/dead.py"]
    (used,) = [f for f in result.findings if f.plugin.path == "plug/used.py"]
    assert (dead.code, dead.level.value, dead.status.value, dead.old.path, dead.new) == (
        "PP0601", "info", "drift", "host/mod.py", None)
    assert dead.details[0].startswith("`plug.dead` is never imported")
    assert (used.code, used.level.value, used.status.value, used.old.path, used.new) == (
        "PP0601", "error", "drift", "host/mod.py", None)
    assert not any("never imported" in d for d in used.details)


def test_without_declared_roots_every_module_is_reached():
    plugin = {"plug/boot.py": "def register():\n    pass\n", "plug/dead.py": BROKEN}
    assert _unreached(plugin) == []
    expect(run_scan(HOST_OLD, HOST_NEW, plugin, names=("imports",)), ["PP0601 error drift"])


def test_a_root_outside_the_plugin_decides_nothing():
    plugin = {"pyproject.toml": '[project.entry-points."host.general_plugins"]\nx = "other_lib:register"\n',
              "plug/boot.py": "", "plug/dead.py": BROKEN}
    assert _unreached(plugin) == []


@pytest.mark.parametrize(("boot", "extra", "reached"), [
    # a class path the host imports by name
    ('WORKER = "plug.workers.gpu.GPUWorker"\n', {"plug/workers/gpu.py": "class GPUWorker:\n    pass\n"},
     {"plug.workers", "plug.workers.gpu"}),
    ('ARCH = ("Arch", "plug.workers.gpu:GPUWorker")\n', {"plug/workers/gpu.py": ""}, {"plug.workers", "plug.workers.gpu"}),
    # an import hook's table: host name -> plugin module
    ('MAPPING = {"host.sampler": "plug.sampler"}\n', {"plug/sampler.py": ""}, {"plug.sampler"}),
    # an f-string spelling a package: anything below it
    ('import importlib\n\n\ndef load(n):\n    return importlib.import_module(f"plug.models.{n}")\n',
     {"plug/models/a.py": ""}, {"plug.models", "plug.models.a"}),
])
def test_strings_naming_plugin_modules_reach_them(boot, extra, reached):
    plugin = {"pyproject.toml": ENTRY, "plug/boot.py": boot, "plug/dead.py": "", **extra}
    assert _unreached(plugin) == ["plug.dead"]
    assert not reached & set(_unreached(plugin))


def test_relative_import_module_with_package_reaches_the_sibling():
    plugin = {"pyproject.toml": ENTRY, "plug/boot.py": "from plug.parsers import register\n",
              "plug/parsers/__init__.py": ('import importlib\nPARSERS = {"a": (".a_parser", "A")}\n\n\n'
                                          "def register():\n    for path, _ in PARSERS.values():\n"
                                          "        importlib.import_module(path, package=__name__)\n"),
              "plug/parsers/a_parser.py": "", "plug/parsers/b_parser.py": ""}
    assert _unreached(plugin) == ["plug.parsers.b_parser"]


def test_a_package_walk_reaches_every_module_below_it():
    walk = ("import pkgutil\nimport importlib\nimport plug.models as models\n\n\n"
            "def load_all():\n    for info in pkgutil.walk_packages(models.__path__, 'plug.models.'):\n"
            "        importlib.import_module(info.name)\n")
    plugin = {"pyproject.toml": ENTRY, "plug/boot.py": walk, "plug/models/a.py": "", "plug/models/deep/b.py": "",
              "plug/other.py": ""}
    assert _unreached(plugin) == ["plug.other"]


def test_importing_a_module_runs_its_parents():
    plugin = {"pyproject.toml": ENTRY, "plug/boot.py": "import plug.sub.leaf\n", "plug/sub/__init__.py": "from . import side\n",
              "plug/sub/leaf.py": "", "plug/sub/side.py": "", "plug/sub/dead.py": ""}
    assert _unreached(plugin) == ["plug.sub.dead"]


@pytest.mark.parametrize(("files", "settings"), [
    ({"pyproject.toml": '[project]\nname = "plug"\n\n[project.scripts]\nplug = "plug.cli:main"\n'}, {}),
    ({"pyproject.toml": ENTRY, "plug/__main__.py": "from plug import cli\n"}, {}),
])
def test_scripts_and_main_are_roots(files, settings):
    plugin = {**files, "plug/boot.py": "", "plug/cli.py": "", "plug/dead.py": ""}
    assert "plug.cli" not in _unreached(plugin, **settings)
    assert "plug.dead" in _unreached(plugin, **settings)


def test_the_gate_apply_functions_are_roots():
    from pinport.config import GateSettings
    plugin = {"pyproject.toml": ENTRY, "plug/boot.py": "", "plug/late.py": "", "plug/dead.py": ""}
    assert _unreached(plugin) == ["plug.dead", "plug.late"]
    assert _unreached(plugin, gate=GateSettings(apply=("plug.late:apply",))) == ["plug.dead"]


def test_a_dynamic_import_of_an_unspelt_name_leaves_everything_reached():
    plugin = {"pyproject.toml": ENTRY, "plug/dead.py": "",
              "plug/boot.py": "import importlib\nimport os\n\n\ndef load():\n    importlib.import_module(os.environ['M'])\n"}
    assert _unreached(plugin) == []


@pytest.mark.parametrize(("tool", "reached"), [
    ('import plug.helper\n\nif __name__ == "__main__":\n    plug.helper.main()\n', True),  # `python -m plug.tool`
    ('import plug.helper\n\nNAME = "__main__"\n', False),  # the string alone runs nothing
])
def test_a_module_guarded_by_name_main_is_a_root(tool, reached):
    plugin = {"pyproject.toml": ENTRY, "plug/boot.py": "", "plug/tool.py": tool, "plug/helper.py": ""}
    expected = [] if reached else ["plug.helper", "plug.tool"]
    assert _unreached(plugin) == expected
