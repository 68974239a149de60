import importlib.metadata
import sys
from pathlib import Path

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
    with pytest.raises(SourceNotFound, match="no interpreter at"):
        load_installed("packaging", str(tmp_path / "python"))


def _hostile_env(tmp_path: Path) -> tuple[Path, Path]:
    """A venv whose interpreter, .pth files and site hooks each leave a marker if anything runs them."""
    marker = tmp_path / "EXECUTED"
    env = tmp_path / "env"
    site = env / "lib" / "python3.11" / "site-packages"
    (env / "bin").mkdir(parents=True)
    python = env / "bin" / "python"
    python.write_text(f"#!/bin/sh\ntouch {marker}\n")
    python.chmod(0o755)
    (env / "pyvenv.cfg").write_text("home = /nowhere/bin\ninclude-system-site-packages = false\n"
                                    "version = 3.11.7\n")
    (site / "hostpkg").mkdir(parents=True)
    (site / "hostpkg" / "__init__.py").write_text(f"open({str(marker)!r}, 'w')\n")
    (site / "hostpkg" / "core.py").write_text("def run(): pass\n")
    info = site / "hostpkg-2.5.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hostpkg\nVersion: 2.5\n\nRequires-Dist: x\n")
    (info / "RECORD").write_text("hostpkg/__init__.py,,\nhostpkg/core.py,,\n")
    (site / "evil.pth").write_text(f"import os; os.system('touch {marker}')\n../../../extra\n")
    (site / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w')\n")
    return python, marker


def test_another_environment_is_read_never_run(tmp_path):
    python, marker = _hostile_env(tmp_path)
    tree = load_installed("hostpkg", str(python))
    assert not marker.exists()  # neither the interpreter, nor the .pth line, nor site hooks ran
    assert tree.root == tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    assert (tree.version, tree.label) == ("2.5", f"hostpkg 2.5 ({python})")
    assert list(tree.files) == ["hostpkg/__init__.py", "hostpkg/core.py"]
    assert "Requires-Dist: x" in tree.metadata


def test_pth_path_lines_and_editable_finders_are_followed_as_text(tmp_path):
    python, marker = _hostile_env(tmp_path)
    extra = tmp_path / "env" / "extra"  # named by evil.pth's path line, relative to site-packages
    (extra / "sidepkg").mkdir(parents=True)
    (extra / "sidepkg" / "__init__.py").write_text("")
    checkout = tmp_path / "checkout" / "src" / "editpkg"
    checkout.mkdir(parents=True)
    (checkout / "__init__.py").write_text("")
    site = tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    (site / "__editable___editpkg_0_1_finder.py").write_text(
        f"import sys\nMAPPING: dict[str, str] = {{'editpkg': {str(checkout)!r}}}\nsys.exit('ran')\n")
    assert load_installed("sidepkg", str(python)).root == extra
    assert load_installed("editpkg", str(python)).root == checkout.parent
    assert not marker.exists()


def test_an_environment_without_site_packages_is_one_line(tmp_path):
    python = tmp_path / "bin" / "python3.11"
    python.parent.mkdir()
    python.write_text("")
    with pytest.raises(SourceNotFound, match="no site-packages found for"):
        load_installed("hostpkg", str(python))
