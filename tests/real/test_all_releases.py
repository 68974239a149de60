"""Every vLLM release from 0.8.1 to 0.33.0 downloads, extracts and indexes without a crash."""

from __future__ import annotations

import pytest

from pinport.model.index import DATABASE, IndexCache, load_index
from pinport.model.resolve import Resolver

VERSIONS = [
    "0.8.1", "0.8.2", "0.8.3", "0.8.4", "0.8.5", "0.8.5.post1", "0.9.0", "0.9.0.1", "0.9.1", "0.9.2",
    "0.10.0", "0.10.1", "0.10.1.1", "0.10.2", "0.11.0", "0.11.1", "0.11.2", "0.12.0", "0.13.0", "0.14.0",
    "0.14.1", "0.15.0", "0.15.1", "0.16.0", "0.17.0", "0.17.1", "0.18.0", "0.18.1", "0.19.0", "0.19.1",
    "0.20.0", "0.20.1", "0.20.2", "0.21.0", "0.22.0", "0.22.1", "0.23.0", "0.24.0", "0.25.0", "0.25.1",
    "0.26.0", "0.27.0", "0.27.1", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0",
]


@pytest.mark.parametrize("version", VERSIONS)
def test_release_indexes(version, vllm_tree, user_cache):
    tree = vllm_tree(version)
    index = load_index(tree, IndexCache(user_cache.joinpath(*DATABASE)), eager=True)
    assert len(index.modules) > 500
    broken = [m for m, s in index.modules.items() if s.syntax_error]
    assert broken == [], f"vllm {version}: files that Python 3.11 cannot parse: {broken[:5]}"
    resolver = Resolver(index, "vllm")
    # A name every release since 0.8 exports from the package root, through its lazy/explicit exports.
    assert resolver.resolve("vllm.LLM") is not None
    assert resolver.resolve("vllm.SamplingParams") is not None
