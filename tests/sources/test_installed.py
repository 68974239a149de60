import importlib.metadata
import sys

import pytest

from pinport.errors import SourceNotFound
from pinport.sources.installed import load_installed


def test_installed_distribution():
    tree = load_installed("packaging")
    assert tree.version == importlib.metadata.version("packaging")
    assert (tree.root / "packaging" / "version.py").is_file()
    assert "packaging/version.py" in tree.files
    assert "Name: packaging" in tree.metadata
    assert tree.label == f"packaging {tree.version} (installed)"


def test_another_interpreter_is_named_in_the_label():
    tree = load_installed("packaging", sys.executable)
    assert tree.label.endswith(f"({sys.executable})")


def test_found_without_importing_and_without_metadata(tmp_path, monkeypatch):
    site = tmp_path / "site"
    (site / "sidepkg").mkdir(parents=True)
    (site / "sidepkg" / "__init__.py").write_text("raise SystemExit('imported')\n")
    (site / "sidepkg" / "m.py").write_text("")
    monkeypatch.setenv("PYTHONPATH", str(site))
    tree = load_installed("sidepkg")
    assert tree.root == site and tree.version is None
    assert list(tree.files) == ["sidepkg/__init__.py", "sidepkg/m.py"]
    assert tree.label == "sidepkg (installed)"


def test_a_checkout_in_the_working_directory_does_not_shadow(tmp_path, monkeypatch):
    (tmp_path / "packaging").mkdir()
    (tmp_path / "packaging" / "__init__.py").write_text("")
    monkeypatch.chdir(tmp_path)
    assert load_installed("packaging").root != tmp_path


def test_not_installed():
    with pytest.raises(SourceNotFound, match="not installed"):
        load_installed("no_such_package_pinport_test")


def test_missing_interpreter(tmp_path):
    with pytest.raises(SourceNotFound, match="cannot run"):
        load_installed("packaging", str(tmp_path / "python"))
