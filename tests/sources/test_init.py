import subprocess
import sys

import pytest

import pinport.sources as sources
from pinport.config import Settings
from pinport.errors import SourceNotFound
from pinport.sources import load_host, load_plugin

from .conftest import make_sdist, make_wheel


def test_public_api():
    assert sorted(sources.__all__) == sources.__all__
    assert all(hasattr(sources, name) for name in sources.__all__)


@pytest.fixture
def configured_index(fake_index, pip_settings):
    folder = fake_index.folder
    fake_index.add(
        make_wheel(folder, "host-dist", "1.2.0", {"hostpkg/__init__.py": "", "hostpkg/a.py": ""})
    )
    fake_index.add(
        make_sdist(
            folder,
            "my-plugin",
            "0.3.0",
            {
                "pyproject.toml": '[project]\nname = "my-plugin"\n',
                "my_plugin/__init__.py": "",
                "tests/test_a.py": "",
            },
        )
    )
    pip_settings["index-url"] = fake_index.url
    return fake_index


SETTINGS = Settings(host="hostpkg", host_distribution="host-dist")


def test_host_version_comes_from_the_registry(configured_index, cache):
    tree = load_host("1.2.0", SETTINGS, cache=cache)
    assert (tree.label, tree.package) == ("host-dist 1.2.0", "hostpkg")
    assert list(tree.files) == ["hostpkg/__init__.py", "hostpkg/a.py"]
    assert load_host("v1.2.0", SETTINGS, cache=cache).root == tree.root  # same release


def test_host_directory_installed_and_git(tmp_path, cache):
    (tmp_path / "host" / "hostpkg").mkdir(parents=True)
    (tmp_path / "host" / "hostpkg" / "__init__.py").write_text("")
    assert load_host(str(tmp_path / "host"), SETTINGS, cache=cache).root == tmp_path / "host"
    installed = load_host("installed", Settings(host="packaging"), cache=cache)
    assert installed.version and "packaging/version.py" in installed.files
    repo = tmp_path / "host"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@e.invalid",
            "commit",
            "-qm",
            "x",
        ],
        check=True,
    )
    tree = load_host(f"{repo}@HEAD", SETTINGS, cache=cache)
    assert tree.root.is_relative_to(cache.root) and "hostpkg/__init__.py" in tree.files


def test_installed_with_another_interpreter(cache):
    tree = load_host(f"installed:{sys.executable}", Settings(host="packaging"), cache=cache)
    assert sys.executable in tree.label


def test_plugin_directory_keeps_the_repo_root(tmp_path, cache):
    (tmp_path / "my_plugin").mkdir()
    (tmp_path / "my_plugin" / "__init__.py").write_text("")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")
    (tmp_path / "pyproject.toml").write_text("")
    tree = load_plugin(str(tmp_path), None, cache=cache)
    assert tree.root == tmp_path and tree.package == "my_plugin"
    assert list(tree.files) == ["my_plugin/__init__.py"]
    named = load_plugin(str(tmp_path), Settings(plugin_package="tests"), cache=cache)
    assert named.package == "tests"


def test_plugin_release_is_an_sdist(configured_index, cache):
    tree = load_plugin("my-plugin==0.3.0", None, cache=cache)
    assert tree.package == "my_plugin" and (tree.root / "pyproject.toml").is_file()
    assert list(tree.files) == ["my_plugin/__init__.py"]


@pytest.mark.parametrize("spec", ["latest", "no/such/dir", "x@y"])
def test_bad_host_specs(spec, cache):
    with pytest.raises(SourceNotFound, match="is not a version, 'installed"):
        load_host(spec, SETTINGS, cache=cache)


@pytest.mark.parametrize("spec", ["my-plugin", "==1.0", "no/such/dir"])
def test_bad_plugin_specs(spec, cache):
    with pytest.raises(SourceNotFound, match="is not a directory, REPO@REF or NAME==VERSION"):
        load_plugin(spec, None, cache=cache)
