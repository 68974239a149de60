from pathlib import Path

import pytest

from pinport.errors import SourceNotFound
from pinport.sources.directory import discover_packages, load_directory, select_packages
from pinport.sources.tree import SourceTree, scan_all


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


PLUGIN = {
    "pyproject.toml": '[project]\nname = "my-plugin"\n',
    "my_plugin/__init__.py": "",
    "my_plugin/patches.py": "x = 1\n",
    "my_plugin/data.json": "{}",
    "aaa_helper/__init__.py": "",
    "tests/__init__.py": "",
    "tests/test_x.py": "",
    "docs/__init__.py": "",
    "benchmarks/__init__.py": "",
    "scripts/run.py": "",
    "setup.py": "",
}


def test_repo_root(tmp_path):
    repo = _write(tmp_path / "repo", PLUGIN)
    tree = load_directory(repo, "my_plugin")
    assert tree.root == repo and tree.project_root == repo
    assert tree.package == "my_plugin"
    assert list(tree.files) == ["my_plugin/__init__.py", "my_plugin/patches.py"]
    assert tree.label == str(repo)


def test_discovery_excludes_tests_and_puts_the_project_first(tmp_path):
    repo = _write(tmp_path / "repo", PLUGIN)
    assert discover_packages(repo) == ("my_plugin", "aaa_helper")
    tree = load_directory(repo)
    assert tree.package == "my_plugin"
    assert sorted(tree.files) == [
        "aaa_helper/__init__.py",
        "my_plugin/__init__.py",
        "my_plugin/patches.py",
    ]


def test_src_layout(tmp_path):
    repo = _write(
        tmp_path / "repo", {"pyproject.toml": "", "src/pkg/__init__.py": "", "src/pkg/mod.py": ""}
    )
    tree = load_directory(repo, "pkg")
    assert tree.root == repo / "src" and tree.project_root == repo
    assert list(tree.files) == ["pkg/__init__.py", "pkg/mod.py"]
    assert load_directory(repo).package == "pkg"


def test_package_directory_itself(tmp_path):
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/sub/__init__.py": "", "pkg/sub/m.py": ""})
    for package in ("pkg", None):
        tree = load_directory(tmp_path / "pkg", package)
        assert tree.root == tmp_path and tree.package == "pkg"
        assert "pkg/sub/m.py" in tree.files


def test_label_is_the_path_as_given(tmp_path, monkeypatch):
    _write(tmp_path, {"host/vllm/__init__.py": ""})
    monkeypatch.chdir(tmp_path)
    tree = load_directory(Path("host"), "vllm")
    assert tree.label == "host" and tree.root == tmp_path / "host"
    monkeypatch.chdir(tmp_path / "host" / "vllm")
    assert load_directory(Path(".")).root == tmp_path / "host"


@pytest.mark.parametrize(
    ("files", "package"),
    [
        ({}, "pkg"),
        ({"tests/__init__.py": ""}, None),
        ({"other/__init__.py": ""}, "pkg"),
    ],
)
def test_missing_package_names_the_path(tmp_path, files, package):
    repo = _write(tmp_path / "repo", {"README": "", **files})
    with pytest.raises(SourceNotFound, match=str(repo)):
        load_directory(repo, package)


def test_missing_directory(tmp_path):
    with pytest.raises(SourceNotFound, match="no such directory"):
        load_directory(tmp_path / "nope", "pkg")


def test_select_packages_narrows_a_whole_tree(tmp_path):
    root = _write(
        tmp_path / "tree",
        {
            "src/pkg/__init__.py": "",
            "src/pkg/a.py": "",
            "src/other/__init__.py": "",
            "setup.py": "",
            "tests/t.py": "",
        },
    )
    whole = SourceTree(root=root, label="x", package="", files=scan_all(root), project_root=root)
    tree = select_packages(whole, ("pkg",), "demo 1.0")
    assert tree.root == root / "src" and tree.project_root == root
    assert (tree.label, tree.package) == ("demo 1.0", "pkg")
    assert list(tree.files) == ["pkg/__init__.py", "pkg/a.py"]
    assert select_packages(whole, None, "demo", dist="other").package == "other"
    with pytest.raises(SourceNotFound, match="no package 'missing'"):
        select_packages(whole, ("missing",), "demo 1.0")
