"""The base a rebase starts from: the highest validated pin below NEW, read as `pinport scan` reads it."""

from __future__ import annotations

from pathlib import Path

from tests.ledger.gitrepo import ScratchRepo

from pinport.config import load_settings
from pinport.ledger.git import GitRepo
from pinport.rebase.base import choose_base

PYPROJECT = ('[project]\nname = "demo_plugin"\nversion = "1.0"\ndependencies = ["{requirement}"]\n\n'
             '[tool.pinport]\nhost = "hostlib"\nplugin-package = "demo_plugin"\n')
RELEASES = ("0.1.0", "0.1.3", "0.2.0rc1", "0.2.0", "0.3.0")


def _repo(tmp_path: Path, requirement: str) -> tuple[GitRepo, Path]:
    repo = ScratchRepo(tmp_path / "demo")
    repo.commit("start", {"pyproject.toml": PYPROJECT.format(requirement=requirement),
                          "demo_plugin/__init__.py": ""})
    return GitRepo(repo.root), repo.root


def test_a_narrow_range_counts_with_the_newest_release_it_admits(tmp_path):
    git, root = _repo(tmp_path, "hostlib>=0.1.0,<0.2")
    settings = load_settings(root)
    choice = choose_base(git, settings, "0.3.0", versions=lambda: RELEASES)
    assert choice.chosen is not None and (choice.chosen.branch, choice.chosen.pin) == ("main", "0.1.3")
    # without the host's release list the range decides nothing: main is passed over, with the reason
    blind = choose_base(git, settings, "0.3.0")
    assert blind.chosen is None
    assert [(c.branch, c.reason) for c in blind.passed_over] == [("main", "no exact hostlib pin")]


def test_an_exact_pin_needs_no_release_list(tmp_path):
    git, root = _repo(tmp_path, "hostlib==0.2.0")
    asked = []
    choice = choose_base(git, load_settings(root), "0.3.0", versions=lambda: asked.append(1) or RELEASES)
    assert choice.chosen is not None and choice.chosen.pin == "0.2.0"
    assert asked == []  # the registry is not asked for a pin that names its version


def test_a_branch_pinned_in_a_requirements_folder_is_read_from_its_own_files(tmp_path):
    # the pin of a branch lives where that branch keeps it (`requirements/cuda.txt`), not only under fixed names
    repo = ScratchRepo(tmp_path / "demo")
    repo.commit("start", {"pyproject.toml": PYPROJECT.format(requirement="hostlib"),
                          "requirements/cuda.txt": "torch==2.5\nhostlib==0.2.0\n", "demo_plugin/__init__.py": ""})
    git = GitRepo(repo.root)
    choice = choose_base(git, load_settings(repo.root), "0.3.0", versions=lambda: RELEASES)
    assert choice.chosen is not None and (choice.chosen.branch, choice.chosen.pin) == ("main", "0.2.0")
    # negative twin: the same pin in a file no pin source reads decides nothing
    other = ScratchRepo(tmp_path / "other")
    other.commit("start", {"pyproject.toml": PYPROJECT.format(requirement="hostlib"),
                           "notes/cuda.txt": "hostlib==0.2.0\n", "demo_plugin/__init__.py": ""})
    assert choose_base(GitRepo(other.root), load_settings(other.root), "0.3.0", versions=lambda: RELEASES).chosen is None
