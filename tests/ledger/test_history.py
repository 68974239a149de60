from __future__ import annotations

from pathlib import Path

import pytest

from pinport.config import PinSource, Settings, load_settings
from pinport.errors import SourceNotFound
from pinport.ledger import ColumnKind
from pinport.ledger.git import GitRepo
from pinport.ledger.history import load_columns, pin_files, version_key

from .conftest import SETTINGS, Synthetic
from .gitrepo import ScratchRepo, pyproject


def columns(root: Path, settings: Settings = SETTINGS, **kwargs):
    with GitRepo(root) as git:
        return load_columns(git, settings, **kwargs)


def test_columns_in_version_order_with_branches_and_worktree(synthetic: Synthetic) -> None:
    got = columns(synthetic.root)
    assert [(c.pin, c.kind) for c in got] == [
        ("0.8.1", ColumnKind.HISTORY),
        ("0.9.0.1", ColumnKind.HISTORY),
        ("0.9.2", ColumnKind.BRANCH),  # a back-port slots in by version, not by date
        ("0.10.1", ColumnKind.BRANCH),  # the committed state of the pin (a branch wins over history)
        ("0.10.1", ColumnKind.WORKTREE),  # an edited work tree is its own column, after it
        ("0.11.0", ColumnKind.BRANCH),
        ("0.12.0", ColumnKind.BRANCH),
    ]


def test_history_column_is_the_commit_that_introduced_the_pin(synthetic: Synthetic) -> None:
    first = columns(synthetic.root)[0]
    assert first.commit == synthetic.shas["start on vllm 0.8.1"]  # not "feature work"
    assert (first.date, first.subject, first.short) == (
        "2024-01-01",
        "start on vllm 0.8.1",
        first.commit[:8],
    )


def test_branch_wins_over_history_for_the_same_pin(synthetic: Synthetic) -> None:
    by_pin = {c.pin: c for c in columns(synthetic.root, include_worktree=False)}
    fix = by_pin["0.10.1"]
    assert (fix.kind, fix.branch, fix.commit) == (
        ColumnKind.BRANCH,
        "rebase/vllm_v0.10.1-fix",
        synthetic.shas["rebase/vllm_v0.10.1-fix"],
    )


def test_remote_branches_count_and_keep_their_remote_name(synthetic: Synthetic) -> None:
    newest = columns(synthetic.root)[-1]
    assert (newest.pin, newest.branch) == ("0.12.0", "origin/rebase/vllm_v0.12")


def test_local_branch_wins_over_remote_for_the_same_pin(synthetic: Synthetic) -> None:
    synthetic.repo.git("branch", "-q", "rebase/vllm_v0.12", "origin/rebase/vllm_v0.12")
    assert columns(synthetic.root)[-1].branch == "rebase/vllm_v0.12"


def test_branch_pattern_is_settable(synthetic: Synthetic) -> None:
    got = columns(synthetic.root, branch_pattern="feature/*", include_worktree=False)
    assert [(c.pin, c.kind) for c in got] == [
        ("0.8.1", ColumnKind.HISTORY),
        ("0.9.0.1", ColumnKind.HISTORY),
        ("0.10.1", ColumnKind.HISTORY),
        ("0.13.0", ColumnKind.BRANCH),
    ]
    from_settings = Settings(pin_sources=SETTINGS.pin_sources, rebase_branch_pattern="feature/*")
    assert [c.pin for c in columns(synthetic.root, from_settings, include_worktree=False)][
        -1
    ] == "0.13.0"


def test_worktree_column_is_dirty_or_clean(synthetic: Synthetic) -> None:
    worktree = columns(synthetic.root)[4]
    assert worktree.dirty and worktree.commit == synthetic.repo.git("rev-parse", "HEAD")
    synthetic.repo.git("checkout", "-q", "--", ".")
    clean = columns(synthetic.root)
    assert [c.pin for c in clean].count("0.10.1") == 1  # a clean work tree is its commit: it wins
    assert clean[3].kind is ColumnKind.WORKTREE and not clean[3].dirty


def test_worktree_with_a_new_pin_adds_a_column(synthetic: Synthetic) -> None:
    synthetic.repo.write({"pyproject.toml": pyproject("0.14.0")})
    got = columns(synthetic.root)
    assert (got[-1].pin, got[-1].kind) == ("0.14.0", ColumnKind.WORKTREE)
    assert ("0.10.1", ColumnKind.BRANCH) in [(c.pin, c.kind) for c in got]  # the fix branch


def test_pin_comes_from_the_profile_sources_not_comments_or_other_extras(tmp_path: Path) -> None:
    # ArcticInference: the `vllm` extra's pin, not the older `embedding` extra's; later a constant
    repo = ScratchRepo(tmp_path / "ai")
    name = "arctic_inference"
    repo.commit(
        "0.0.9",
        {
            "pyproject.toml": pyproject("0.9.2", name=name, embedding="0.9.2", tool=False),
            "arctic_inference/utils.py": "def get_compatible_vllm_version(): ...\n",
        },
    )
    repo.commit(
        "0.1.0", {"pyproject.toml": pyproject("0.10.1", name=name, embedding="0.9.2", tool=False)}
    )
    constant = 'VLLM_PATCH_VERSION = "0.26.0"\n'
    repo.commit(
        "0.3.0",
        {
            "pyproject.toml": pyproject("0.18.0", name=name, embedding="0.9.2", tool=False).replace(
                'vllm = ["vllm==0.18.0"]', 'vllm = ["vllm"]\nvllm-18 = ["vllm==0.18.0"]'
            ),
            "arctic_inference/utils.py": constant,
        },
    )
    settings = load_settings(repo.root)
    assert settings.profile == "arctic_inference"
    assert [c.pin for c in columns(repo.root, settings)] == ["0.9.2", "0.10.1", "0.26.0"]


def test_a_pin_seen_again_keeps_its_first_commit(tmp_path: Path) -> None:
    repo = ScratchRepo(tmp_path / "p")
    first = repo.commit("a", {"pyproject.toml": pyproject("0.9.2")})
    repo.commit("b", {"pyproject.toml": pyproject("0.10.1")})
    repo.commit("back", {"pyproject.toml": pyproject("0.9.2")})
    got = columns(repo.root, include_worktree=False)
    assert [(c.pin, c.commit == first) for c in got] == [("0.9.2", True), ("0.10.1", False)]


def test_first_parent_only(tmp_path: Path) -> None:
    repo = ScratchRepo(tmp_path / "p")
    repo.commit("a", {"pyproject.toml": pyproject("0.9.2")})
    repo.git("checkout", "-q", "-b", "side")
    repo.commit("side bump", {"pyproject.toml": pyproject("0.9.9")})
    repo.commit("side back", {"pyproject.toml": pyproject("0.9.2")})
    repo.git("checkout", "-q", "main")
    repo.commit("m", {"other.txt": "x"})
    repo.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
    assert [c.pin for c in columns(repo.root, include_worktree=False)] == ["0.9.2"]


def test_plugin_in_a_subfolder_of_the_repository(tmp_path: Path) -> None:
    repo = ScratchRepo(tmp_path / "mono")
    repo.commit(
        "a", {"plugins/p/pyproject.toml": pyproject("0.9.2"), "pyproject.toml": pyproject("1.0")}
    )
    repo.commit("b", {"plugins/p/pyproject.toml": pyproject("0.10.1")})
    got = columns(repo.root / "plugins" / "p", include_worktree=False)
    assert [c.pin for c in got] == ["0.9.2", "0.10.1"]


def test_empty_repository_has_only_the_worktree(tmp_path: Path) -> None:
    repo = ScratchRepo(tmp_path / "p")
    repo.write({"pyproject.toml": pyproject("0.9.2")})
    got = columns(repo.root)
    assert [(c.pin, c.kind, c.commit, c.dirty) for c in got] == [
        ("0.9.2", ColumnKind.WORKTREE, "", True)
    ]


def test_not_a_git_repository(tmp_path: Path) -> None:
    with pytest.raises(SourceNotFound, match="not a git repository"):
        GitRepo(tmp_path)
    with pytest.raises(SourceNotFound, match="no such directory"):
        GitRepo(tmp_path / "missing")


def test_read_blob_through_one_batch_process(synthetic: Synthetic) -> None:
    sha = synthetic.shas["start on vllm 0.8.1"]
    with GitRepo(synthetic.root) as git:
        assert (
            git.read_blob(sha, "plugin/attn.py") == "def kv_cache_shape(n, h):\n    return (2, n)\n"
        )
        assert git.read_blob(sha, "README.md") is None
        assert git.read_blob(sha, "plugin") is None  # a tree, not a file
        assert git.read_blob("0" * 40, "plugin/attn.py") is None
        assert "(2, n, h, d)" not in (git.read_blob("HEAD", "plugin/attn.py") or "")
        assert "(n, 2, h, d)" in (git.read_worktree("plugin/attn.py") or "")


def test_pin_files_cover_every_source() -> None:
    settings = Settings(
        pin_sources=(
            PinSource("regex", file="pkg/utils.py", pattern="(x)"),
            PinSource("requirement", extra="vllm"),
        )
    )
    assert pin_files(settings) == ["pkg/utils.py", "pyproject.toml"]


def test_version_order() -> None:
    pins = ["0.10.1", "0.9.2", "0.9.0.1", "0.26.0", "0.8.1", "not-a-version", "0.11.0rc1"]
    assert sorted(pins, key=version_key) == [
        "0.8.1",
        "0.9.0.1",
        "0.9.2",
        "0.10.1",
        "0.11.0rc1",
        "0.26.0",
        "not-a-version",
    ]


def test_bump_merged_from_a_side_branch_is_introduced_by_the_merge(tmp_path: Path) -> None:
    repo = ScratchRepo(tmp_path / "p")
    repo.commit("a", {"pyproject.toml": pyproject("0.9.2")})
    repo.git("checkout", "-q", "-b", "bump")
    repo.commit("bump to 0.10.1", {"pyproject.toml": pyproject("0.10.1")})
    repo.git("checkout", "-q", "main")
    repo.commit("m", {"other.txt": "x"})
    repo.git("merge", "-q", "--no-ff", "-m", "merge bump", "bump")
    got = columns(repo.root, include_worktree=False)
    assert [(c.pin, c.subject) for c in got] == [("0.9.2", "a"), ("0.10.1", "merge bump")]


def test_a_pin_only_inside_a_rebase_branch_history_is_a_column(tmp_path: Path) -> None:
    # main went 0.18.0 -> 0.26.0 in one merge; 0.24.0 only exists inside rebase/vllm_v26's history
    repo = ScratchRepo(tmp_path / "p")
    repo.commit("start on 0.18.0", {"pyproject.toml": pyproject("0.18.0")})
    repo.git("switch", "-q", "-c", "rebase/vllm_v26")
    stop = repo.commit("stop at 0.24.0", {"pyproject.toml": pyproject("0.24.0")})
    repo.commit("on to 0.26.0", {"pyproject.toml": pyproject("0.26.0")})
    repo.git("switch", "-q", "main")
    got = columns(repo.root)
    assert [(c.pin, c.kind) for c in got] == [
        ("0.18.0", ColumnKind.WORKTREE),  # the clean work tree on main stands for its pin
        ("0.24.0", ColumnKind.HISTORY),
        ("0.26.0", ColumnKind.BRANCH),
    ]
    assert (got[1].commit, got[1].branch, got[1].subject) == (stop, "rebase/vllm_v26", "stop at 0.24.0")
