"""The code index on real vLLM releases: what a warm tree reads lazily equals what it decodes whole."""

from __future__ import annotations

import pytest

from pinport.model.index import IndexCache, load_index, load_indexes
from pinport.sources import Cache


@pytest.mark.parametrize("version", ["0.26.0", "0.33.0"])
def test_the_stored_catalog_read_by_name_is_the_decoded_catalog(vllm_tree, version):
    """`definitions` and `flags` of a warm release read from its stored row (a few names of 21,000)
    hold what the decoded row holds: every 40th name and every flag compared, absent names absent."""
    index_cache = IndexCache.in_cache(Cache())
    whole = load_index(vllm_tree(version), index_cache)._catalog  # stored by the first scan of it
    warm = load_index(vllm_tree(version), index_cache)
    stored = warm._stored_catalog
    assert stored is not None
    names = sorted(whole["definitions"])
    assert len(names) > 10_000
    for name in names[::40]:
        assert stored.entries(name) == whole["definitions"][name], name
    assert warm.definitions["LLMEngine"] == whole["definitions"]["LLMEngine"]
    assert warm.definitions.get("no_such_name_anywhere", ()) == ()
    assert warm.flags == whole["flags"] and len(warm.flags) > 2_000
    assert "_catalog" not in warm.__dict__


def test_releases_read_with_lazy_rows_give_the_same_summaries(vllm_tree):
    """The rebase's releases between OLD and NEW read each summary row when it is first needed: the
    same summaries as rows read at load, for the modules a scan of ArcticInference reads."""
    index_cache = IndexCache.in_cache(Cache())
    trees = [vllm_tree("0.27.0"), vllm_tree("0.27.1")]
    eager = load_indexes(trees, index_cache)
    lazy = load_indexes(trees, index_cache, lazy_rows=True)
    for module in ("vllm.v1.worker.gpu_model_runner", "vllm.config", "vllm.engine.arg_utils",
                   "vllm.v1.attention.backends.flash_attn", "vllm.model_executor.layers.logits_processor"):
        for a, b in zip(eager, lazy, strict=True):
            assert module in a.modules and a.modules[module] == b.modules[module], module
