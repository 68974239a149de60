"""A synthetic plugin history: pin bumps on main, rebase branches (one a back-port, one remote), a dirty tree."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from pinport.config import PinSource, load_settings
from pinport.ledger import Probe

from .gitrepo import ScratchRepo, pyproject

# vLLM's host profile (rebase branches `rebase/vllm_v*`), the plugin's patch helper and pin source
SETTINGS = replace(load_settings(None), patch_helpers=("ArcticPatch",),
                   pin_sources=(PinSource("requirement", extra="vllm"),))

PROBES = (
    Probe("kv.shape", "plugin/attn.py", r"return (\(.*\))"),
    Probe("runner.params", "plugin/runner.py", r"def forward\(self, ([^)]*)\)"),
)


def attn(shape: str) -> str:
    return f"def kv_cache_shape(n, h):\n    return {shape}\n"


def runner(params: str) -> str:
    return f"class Runner:\n    def forward(self, {params}):\n        pass\n"


@dataclass
class Synthetic:
    repo: ScratchRepo
    shas: dict[str, str]  # message -> sha

    @property
    def root(self) -> Path:
        return self.repo.root


@pytest.fixture
def synthetic(tmp_path: Path) -> Synthetic:
    """main: 0.8.1 -> 0.9.0.1 -> 0.10.1 (with commits in between that keep the pin);
    rebase/vllm_v0.9.2 (a back-port from the 0.9.0.1 commit), rebase/vllm_v0.11,
    origin/rebase/vllm_v0.12 (remote only), rebase/vllm_v0.10.1-fix (same pin as main's
    newest), an unrelated branch and origin/HEAD; main checked out with a dirty attn.py."""
    repo = ScratchRepo(tmp_path / "plugin")
    shas = {}
    steps = [
        ("start on vllm 0.8.1", "0.8.1", "(2, n)", "x"),
        ("feature work", "0.8.1", "(2, n)", "x, y"),
        ("rebase onto vllm 0.9.0.1", "0.9.0.1", "(n, 2)", "x, y"),
        ("rebase onto vllm 0.10.1", "0.10.1", "(n, 2, h)", "x, y, z"),
    ]
    for message, pin, shape, params in steps:
        shas[message] = repo.commit(
            message,
            {
                "pyproject.toml": pyproject(pin, embedding="0.8.0"),
                "plugin/attn.py": attn(shape),
                "plugin/runner.py": runner(params),
            },
        )
    repo.commit("docs", {"README.md": "hello\n"})

    def branch(name: str, base: str, pin: str, shape: str, params: str) -> None:
        repo.git("checkout", "-q", "-b", name, base)
        shas[name] = repo.commit(
            f"port to vllm {pin}",
            {
                "pyproject.toml": pyproject(pin, embedding="0.8.0"),
                "plugin/attn.py": attn(shape),
                "plugin/runner.py": runner(params),
            },
        )

    branch("rebase/vllm_v0.9.2", shas["rebase onto vllm 0.9.0.1"], "0.9.2", "(n, 2)", "x, y")
    branch("rebase/vllm_v0.11", "main", "0.11.0", "(n, h, 2)", "x, y, z, w")
    branch("rebase/vllm_v0.12", "rebase/vllm_v0.11", "0.12.0", "(n, h, 2)", "x, y, z, w")
    repo.git("update-ref", "refs/remotes/origin/rebase/vllm_v0.12", shas["rebase/vllm_v0.12"])
    repo.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/rebase/vllm_v0.12")
    repo.git("checkout", "-q", "main")
    repo.git("branch", "-q", "-D", "rebase/vllm_v0.12")
    branch("rebase/vllm_v0.10.1-fix", "main", "0.10.1", "(n, 2, h)", "x, y, z")
    branch("feature/vllm_v0.13", "main", "0.13.0", "(n, 2, h)", "x, y, z")
    repo.git("checkout", "-q", "main")
    repo.write({"plugin/attn.py": attn("(n, 2, h, d)")})
    return Synthetic(repo, shas)
