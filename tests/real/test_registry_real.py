"""Real releases through pip's own index configuration, into the user cache (one download ever)."""

import pytest

from pinport.config import Settings
from pinport.sources import Cache, fetch_release, load_host


@pytest.mark.real
def test_vllm_wheel():
    tree = load_host("0.26.0", Settings(), cache=Cache())
    assert (tree.label, tree.package, tree.version) == ("vllm 0.26.0", "vllm", "0.26.0")
    assert "vllm/v1/worker/gpu_model_runner.py" in tree.files
    assert "Requires-Dist: torch==" in tree.metadata


@pytest.mark.real
def test_arctic_inference_sdist():
    tree = fetch_release("arctic-inference", "0.3.0", cache=Cache(), prefer="sdist")
    assert tree.package == "arctic_inference"
    assert "arctic_inference/vllm/model_runner.py" in tree.files
    assert (tree.root / "pyproject.toml").is_file()
    assert "vllm==0.26.0" in tree.read_text("pyproject.toml")
