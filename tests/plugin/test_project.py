"""Finding the plugin without settings: entry points, namespace packages, src/ layouts, host imports."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness import write_tree
from pinport.config import Settings, load_settings
from pinport.errors import ConfigError
from pinport.model.index import load_index
from pinport.plugin.model import load_plugin_model
from pinport.plugin.project import EntryPoint, find_packages, is_plugin_checkout, read_entry_points
from pinport.sources import load_directory

HOST = load_settings(None)  # vLLM, with its host profile (its plugin entry-point groups)


def packages(root: Path, settings: Settings = HOST):
    found = find_packages(load_index(load_directory(root), workers=1), settings)
    return found.packages, found.reason


def test_entry_points_from_every_build_file(tmp_path):
    write_tree(tmp_path, {
        "pyproject.toml": '[project]\nname = "a"\n[project.entry-points."vllm.general_plugins"]\n'
                          'x = "pkg_a.plugin:register"\n[project.entry-points.console_scripts]\nc = "pkg_a.cli:main"\n',
        "setup.py": 'import sys\nsys.exit(1)\nsetup(entry_points={"vllm.platform_plugins": ["p = pkg_b:register"],\n'
                    '    "other": "o = pkg_c"})\n',
        "setup.cfg": "[options.entry_points]\nvllm.general_plugins =\n    y = pkg_d.hooks:load\n",
        "pkg-1.dist-info/entry_points.txt": "[vllm.general_plugins]\nz = pkg_e:go\n",
    })
    assert read_entry_points(tmp_path) == [
        EntryPoint("vllm.general_plugins", "x", "pkg_a.plugin:register", "pyproject.toml"),
        EntryPoint("console_scripts", "c", "pkg_a.cli:main", "pyproject.toml"),
        EntryPoint("vllm.platform_plugins", "p", "pkg_b:register", "setup.py"),
        EntryPoint("other", "o", "pkg_c", "setup.py"),
        EntryPoint("vllm.general_plugins", "y", "pkg_d.hooks:load", "setup.cfg"),
        EntryPoint("vllm.general_plugins", "z", "pkg_e:go", "pkg-1.dist-info/entry_points.txt"),
    ]
    assert EntryPoint("g", "n", "pkg_d.hooks : load", "f").module == "pkg_d.hooks"


def test_entry_points_choose_among_several_packages(tmp_path):
    write_tree(tmp_path, {
        "pyproject.toml": '[project]\nname = "repo"\n[project.entry-points."vllm.platform_plugins"]\n'
                          'hw = "hw_plugin:register"\n',
        "hw_plugin/__init__.py": "def register(): return 'hw_plugin.platform.HwPlatform'\n",
        "helper_lib/__init__.py": "import vllm\n",
        "tests/__init__.py": "import vllm\n",
    })
    assert packages(tmp_path) == (("hw_plugin",), "entry points (vllm.platform_plugins)")
    # a configured group counts as well; other groups do not
    (tmp_path / "pyproject.toml").write_text('[project.entry-points."my.hooks"]\nh = "helper_lib"\n')
    assert packages(tmp_path, replace(HOST, entry_point_groups=("my.hooks",)))[0] == ("helper_lib",)


def test_without_entry_points_the_packages_that_import_the_host(tmp_path):
    write_tree(tmp_path, {
        "src/one/__init__.py": "",
        "src/one/patch.py": "from vllm.worker import Worker\n",
        "src/two/__init__.py": "import vllm.envs as envs\n",
        "src/util/__init__.py": "import torch\n",
    })
    assert packages(tmp_path) == (("one", "two"), "the packages that import vllm")
    model = load_plugin_model(load_index(load_directory(tmp_path), workers=1), HOST)
    assert model.packages == ("one", "two") and model.modules == ["one", "one.patch", "two"]


def test_namespace_package_without_init(tmp_path):
    write_tree(tmp_path, {
        "pyproject.toml": '[project]\nname = "acme-vllm"\n[project.entry-points."vllm.general_plugins"]\n'
                          'a = "acme.vllm_ext.plugin:register"\n',
        "acme/vllm_ext/__init__.py": "",
        "acme/vllm_ext/plugin.py": "from vllm.model_executor.models import ModelRegistry\n",
        "scripts/run.py": "import vllm\n",  # loose scripts are no package
    })
    tree = load_directory(tmp_path)
    assert "acme/vllm_ext/plugin.py" in tree.files and not any(f.startswith("scripts/") for f in tree.files)
    model = load_plugin_model(load_index(tree, workers=1), HOST)
    assert model.packages == ("acme",) and "acme.vllm_ext.plugin" in model.modules


def test_no_package_importing_the_host_among_several_is_an_error(tmp_path):
    write_tree(tmp_path, {"one/__init__.py": "", "two/__init__.py": ""})
    with pytest.raises(ConfigError, match="several packages"):
        packages(tmp_path)


def test_a_copy_of_the_host_is_no_plugin(tmp_path):
    """A distribution shipping the host's own package (a fork of vLLM under another name) is refused with
    one line; beside a package of the plugin's own, the copy is left out and said so."""
    write_tree(tmp_path / "fork", {"vllm/__init__.py": "", "vllm/engine.py": "import vllm\n"})
    with pytest.raises(ConfigError, match=r"its package `vllm` is vllm itself \(a fork of the host"):
        packages(tmp_path / "fork")
    write_tree(tmp_path / "both", {"vllm/__init__.py": "", "vllm/engine.py": "import vllm\n",
                                   "myplug/__init__.py": "from vllm import engine\n"})
    assert packages(tmp_path / "both") == (("myplug",), "the packages that import vllm; `vllm`, a copy of the "
                                                        "host, left out")
    write_tree(tmp_path / "plain", {"myplug/__init__.py": "import vllm\n"})
    assert packages(tmp_path / "plain") == (("myplug",), "the only package")


@pytest.mark.parametrize(("files", "expected"), [
    ({"pyproject.toml": '[project.entry-points."vllm.general_plugins"]\na = "p:r"\n'}, True),
    ({"setup.py": 'setup(install_requires=["vllm==0.9.2"])\n'}, True),
    ({"requirements.txt": "vllm==0.9.2\n", "setup.cfg": "[metadata]\nname = x\n"}, True),
    ({"pyproject.toml": '[project]\nname = "pinport"\nkeywords = ["vllm"]\ndependencies = ["click"]\n'}, False),
    ({"README.md": "pip install vllm==0.9.2\n"}, False),  # no build file: not a project
])
def test_is_plugin_checkout(tmp_path, files, expected):
    write_tree(tmp_path, files)
    assert is_plugin_checkout(tmp_path, HOST) is expected
