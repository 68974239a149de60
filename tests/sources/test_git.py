import subprocess
from pathlib import Path

import pytest

from pinport.errors import SourceNotFound
from pinport.sources import git
from pinport.sources.git import is_git_spec, load_git, read_file_at, resolve_commit, split_spec


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "commit.gpgsign=false",
            *args,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _commit(repo: Path, files: dict[str, str], message: str) -> str:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "my@repo"  # an '@' in the path: specs split on the last one
    path.mkdir()
    _git(path, "init", "-q", "-b", "main")
    _commit(
        path,
        {
            "pyproject.toml": '[project]\nname = "pkg"\n',
            "pkg/__init__.py": "",
            "pkg/mod.py": "v = 1\n",
            "pkg/data.txt": "d",
            "tests/test_mod.py": "",
        },
        "one",
    )
    _git(path, "tag", "v1")
    _commit(path, {"pkg/mod.py": "v = 2\n", "pkg/new.py": ""}, "two")
    return path


def test_loads_a_tag_without_touching_the_checkout(repo, cache):
    (repo / "pkg" / "mod.py").write_text("v = 'dirty'\n")  # uncommitted change
    before = _git(repo, "status", "--porcelain")
    tree = load_git(f"{repo}@v1", "pkg", cache)
    assert tree.read_text("pkg/mod.py") == "v = 1\n"
    assert list(tree.files) == ["pkg/__init__.py", "pkg/mod.py"]
    assert tree.label == f"{repo}@v1" and tree.package == "pkg"
    assert (tree.project_root / "pyproject.toml").is_file()
    assert not (tree.root / "pkg" / "data.txt").exists()
    assert tree.root.is_relative_to(cache.root / "git")
    assert _git(repo, "status", "--porcelain") == before
    assert (repo / "pkg" / "mod.py").read_text() == "v = 'dirty'\n"


def test_cached_by_commit(repo, cache, monkeypatch):
    first = load_git(f"{repo}@main", None, cache)
    assert first.package == "pkg" and "pkg/new.py" in first.files
    assert first.root.parent.name == resolve_commit(repo, "main")

    def no_export(*args):
        raise AssertionError("exported twice")

    monkeypatch.setattr(git, "_export", no_export)
    again = load_git(f"{repo}@HEAD", "pkg", cache)
    assert again.files == first.files and again.label == f"{repo}@HEAD"


@pytest.mark.parametrize("ref", ["nope", "v1~5", "--output=x"])
def test_bad_ref(repo, cache, ref):
    with pytest.raises(SourceNotFound, match="no commit"):
        load_git(f"{repo}@{ref}", "pkg", cache)


def test_not_a_repository(tmp_path, cache):
    with pytest.raises(SourceNotFound, match="not a git repository"):
        load_git(f"{tmp_path}@main", "pkg", cache)
    with pytest.raises(SourceNotFound, match="no such directory"):
        load_git(f"{tmp_path / 'missing'}@main", "pkg", cache)


def test_missing_package_at_ref(repo, cache):
    with pytest.raises(SourceNotFound, match="no package 'other'"):
        load_git(f"{repo}@v1", "other", cache)


def test_specs(repo, tmp_path):
    assert split_spec(f"{repo}@v1") == (repo, "v1")
    assert is_git_spec(f"{repo}@v1")
    assert not is_git_spec(f"{tmp_path}@v1")
    assert not is_git_spec("0.26.0")
    with pytest.raises(SourceNotFound):
        split_spec("no-ref-here")


def test_read_file_at(repo):
    assert read_file_at(repo, "v1", "pkg/mod.py") == "v = 1\n"
    assert read_file_at(str(repo), "main", "pkg/mod.py") == "v = 2\n"
    assert read_file_at(repo, "v1", "pkg/new.py") is None
    with pytest.raises(SourceNotFound):
        read_file_at(repo, "nope", "pkg/mod.py")
