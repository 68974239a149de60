"""The ledger on the real arctic-inference release history: one commit per release, in order."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from pinport.config import load_settings
from pinport.ledger import Ledger, Row, build_ledger, default_probes
from pinport.ledger.auto import SurfaceProbes
from pinport.ledger.host import HostSources
from pinport.model.index import DATABASE, IndexCache

pytestmark = pytest.mark.real

RELEASES = [
    "0.0.4",
    "0.0.6",
    "0.0.7",
    "0.0.8",
    "0.0.9",
    "0.1.0",
    "0.1.1",
    "0.1.2",
    "0.2.0",
    "0.3.0",
]
WALK = ("0.8.1", "0.8.4", "0.9.0.1", "0.9.2", "0.10.1", "0.11.0", "0.18.0", "0.26.0")
INTRODUCED_BY = ["0.0.4", "0.0.6", "0.0.8", "0.0.9", "0.1.0", "0.1.2", "0.2.0", "0.3.0"]


def _pyproject_from_metadata(metadata: str) -> str:
    """0.0.4 is on the index as a wheel only: restate its METADATA extras as a pyproject."""
    extras: dict[str, list[str]] = defaultdict(list)
    for line in metadata.splitlines():
        if line.startswith("Requires-Dist:") and "extra ==" in line:
            requirement, _, marker = line.removeprefix("Requires-Dist:").partition(";")
            extras[marker.split("==")[1].strip().strip("'\"")].append(requirement.strip())
    body = "".join(
        f"{name} = {reqs!r}\n".replace("'", '"') for name, reqs in sorted(extras.items())
    )
    return f'[project]\nname = "arctic_inference"\n\n[project.optional-dependencies]\n{body}'


def _git(root: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_SYSTEM": os.devnull,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    subprocess.run(["git", "-C", str(root), *args], env=env, check=True, capture_output=True)


def _commit_release(root: Path, source: Path, metadata: str, version: str) -> None:
    """Replace the work tree by the release's files and commit them."""
    for path in root.iterdir():
        if path.name != ".git":
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    for path in source.iterdir():
        if not path.name.endswith(".dist-info"):
            (shutil.copytree if path.is_dir() else shutil.copy2)(path, root / path.name)
    if not (root / "pyproject.toml").exists():
        (root / "pyproject.toml").write_text(_pyproject_from_metadata(metadata))
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", f"arctic-inference {version}")


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    registry = pytest.importorskip("pinport.sources.registry")
    cache_module = pytest.importorskip("pinport.sources.cache")
    if not hasattr(registry, "fetch_release") or not hasattr(cache_module, "Cache"):
        pytest.skip("pinport.sources.registry.fetch_release is not there yet")
    from pinport.errors import NetworkUnavailable

    root = tmp_path_factory.mktemp("arctic") / "ArcticInference"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    cache = cache_module.Cache()
    for version in RELEASES:
        try:
            tree = registry.fetch_release("arctic-inference", version, cache=cache, prefer="sdist")
        except NetworkUnavailable as exc:
            pytest.skip(f"package index unreachable: {exc}")
        _commit_release(root, tree.project_root or tree.root, tree.metadata, version)
    return root


@pytest.fixture(scope="module")
def ledger(history: Path) -> Ledger:
    settings = load_settings(history)
    assert settings.profile == "arctic_inference"
    return build_ledger(history, settings, default_probes(settings.profile), include_worktree=False)


def row(ledger: Ledger, label: str) -> Row:
    return next(r for r in ledger.rows if r.probe.label == label)


def changes(ledger: Ledger, label: str) -> dict[str, str | None]:
    """pin -> new value, at the first column and wherever the value differs from the column before."""
    values = row(ledger, label).values
    return {
        pin: value
        for i, (pin, value) in enumerate(zip(ledger.pins, values, strict=True))
        if i == 0 or value != values[i - 1]
    }


def test_pin_walk_and_legend(ledger: Ledger) -> None:
    assert ledger.pins == WALK
    assert [c.subject for c in ledger.columns] == [f"arctic-inference {v}" for v in INTRODUCED_BY]


def test_forest_cascade_kv_cache_shape_and_split(ledger: Ledger) -> None:
    assert changes(ledger, "fca.kv_cache_shape") == {
        "0.8.1": None,  # the fork arrives with the 0.18.0 rebase
        "0.18.0": "(2, num_blocks, block_size, num_kv_heads, head_size)",
        "0.26.0": "(num_blocks, num_kv_heads, block_size, 2 * head_size)",
    }
    assert changes(ledger, "fca.kv_split") == {
        "0.8.1": None,
        "0.18.0": "kv_cache.unbind(0)",
        "0.26.0": "kv_cache.transpose(1, 2).split(self.head_size, dim=-1)",
    }
    assert not any(c.has_file for c in row(ledger, "fca.kv_split").cells[:6])
    # the second site of the same layout, in SwiftKV, moves at the same bump
    assert changes(ledger, "swiftkv.kv_split") == {
        "0.8.1": None,
        "0.9.2": "kv_cache.unbind(1) | kv_cache.unbind(0)",
        "0.26.0": "kv_cache.unbind(1) | kv_cache.transpose(1, 2).split(attn.head_size, dim=-1)",
    }


def test_other_known_drifts(ledger: Ledger) -> None:
    assert changes(ledger, "runner.initialize_kv_cache.params")["0.26.0"] == (
        "kv_cache_config, is_profiling: bool = False"
    )  # drift 1
    assert changes(ledger, "runner.bookkeeping_sync.params")["0.26.0"].endswith(
        "num_scheduled_tokens: int"
    )  # drift 2: spec_decode_metadata dropped
    assert changes(ledger, "runner.cumsum_and_arange_unpack") == {
        "0.8.1": None,
        "0.11.0": "cum_num_tokens, _",
        "0.26.0": "cum_num_tokens",
    }  # drift 3
    assert changes(ledger, "fca.is_quantized_kv_cache_from")["0.26.0"] == "vllm.utils.torch_utils"
    assert changes(ledger, "fp8.moe_method_ctor") == {
        "0.8.1": None,
        "0.8.4": "Fp8MoEMethod(self)",
        "0.26.0": "Fp8MoEMethod(self, layer)",
    }  # drift 7
    assert changes(ledger, "ulysses.iteration_details")["0.26.0"] == "capture_iteration_details"


def test_every_default_probe_matches_somewhere(ledger: Ledger) -> None:
    assert [r.probe.label for r in ledger.rows if not any(r.values)] == []


def test_flags(ledger: Ledger) -> None:
    raised = {(f.kind.value, f.probe, f.columns[-1]) for f in ledger.flags}
    assert ("REVERTED", "runner.positions_read", "0.26.0") in raised  # .gpu buffer back to a tensor
    assert all(column == "0.26.0" for *_, column in raised)


@pytest.fixture(scope="module")
def auto_ledger(history: Path, vllm_tree, user_cache: Path) -> Ledger:
    """Auto probes only, cross-checked against the vLLM wheels of the last two pins."""
    settings = load_settings(history)
    index_cache = IndexCache(user_cache.joinpath(*DATABASE))
    host = HostSources(vllm_tree, index_cache=index_cache)
    derive = SurfaceProbes(history, settings, host=host, index_cache=index_cache)
    return build_ledger(
        history, settings, (), include_worktree=False, auto_probes=derive, host=host
    )


def test_auto_probes_track_the_known_drifts(auto_ledger: Ledger) -> None:
    assert auto_ledger.pins == WALK
    kv = "auto.sig.GPUModelRunnerPatch.initialize_kv_cache"
    assert changes(auto_ledger, kv) == {
        "0.8.1": None,
        "0.9.0.1": '(self, kv_cache_config: "KVCacheConfig")',
        "0.9.2": "(self, kv_cache_config: KVCacheConfig)",
        "0.18.0": "(self, kv_cache_config)",
        "0.26.0": "(self, kv_cache_config, is_profiling: bool = False)",  # drift 1
    }
    assert row(auto_ledger, kv).probe.host_file == "vllm/v1/worker/gpu_model_runner.py"
    bookkeeping = changes(auto_ledger, "auto.sig.GPUModelRunnerPatch._bookkeeping_sync")
    assert "spec_decode_metadata" in bookkeeping["0.18.0"]  # drift 2: dropped at 0.26.0
    assert "spec_decode_metadata" not in bookkeeping["0.26.0"]
    graph = changes(auto_ledger, "auto.sig.UlyssesParallelState.graph_capture")  # module function
    assert graph["0.26.0"] == "(device: torch.device, graph_capture_context=None)"
    assert changes(auto_ledger, "auto.import.is_quantized_kv_cache") == {
        "0.8.1": None,
        "0.18.0": "vllm.v1.attention.backend",
        "0.26.0": "vllm.utils.torch_utils",  # drift 4
    }
    alias = row(auto_ledger, "auto.alias.GPUModelRunnerPatch._orig_initialize_kv_cache")
    assert alias.values[-1] == "GPUModelRunner.initialize_kv_cache"


def test_auto_host_cross_check(auto_ledger: Ledger) -> None:
    host_changed = {f.probe: f for f in auto_ledger.flags if f.kind.value == "HOST_CHANGED"}
    # upstream Attention.forward gained output_dtype; the plugin's (…, **kwargs) did not move
    forward = host_changed["auto.sig.UlyssesAttention.forward"]
    assert forward.columns == ("0.18.0", "0.26.0")
    assert "output_dtype" not in forward.values[0] and "output_dtype" in forward.values[1]
    # ported members raise nothing: the plugin moved along with upstream
    assert "auto.sig.GPUModelRunnerPatch.initialize_kv_cache" not in host_changed


def test_auto_fork_fingerprint(auto_ledger: Ledger) -> None:
    """The forest-cascade fork of flash_attn.py gets a fingerprint row that changes with the fork."""
    label = "auto.fork.arctic_inference/vllm/attention/flash_attn_forest_cascade.py"
    fork = row(auto_ledger, label)
    assert fork.probe.host_file == "vllm/v1/attention/backends/flash_attn.py"
    values = [v for v in fork.values if v is not None]
    assert len(values) >= 2 and len(set(values)) == len(values)  # 0.18.0 and 0.26.0 differ


def test_auto_mirror_fingerprints(auto_ledger: Ledger) -> None:
    """Mirrored methods are fingerprinted on both sides: upstream moved on while the copy did not."""
    mirrors = {r.probe.label: r for r in auto_ledger.rows if r.probe.label.startswith("auto.mirror.")}
    assert "auto.mirror.GPUModelRunnerPatch._dummy_run" in mirrors
    assert mirrors["auto.mirror.GPUModelRunnerPatch._dummy_run"].probe.host_file == "vllm/v1/worker/gpu_model_runner.py"
    host_changed = {f.probe for f in auto_ledger.flags if f.kind.value == "HOST_CHANGED"}
    assert any(label.startswith("auto.mirror.") for label in host_changed)
