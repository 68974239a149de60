"""The core checks on real releases: named breaks verified by reading the vLLM sources."""

from __future__ import annotations

import pytest

from harness import find
from pinport.findings import Severity, Status

CORE = ("imports", "signatures", "aliases")


@pytest.fixture(scope="module")
def checked():
    return CORE


def test_moved_symbol_is_found_with_its_new_home(move_26_33):
    # vLLM 0.33.0 moved is_quantized_kv_cache out of vllm.utils.torch_utils (#4).
    finding = find(move_26_33, "PP0402", "torch_utils.is_quantized_kv_cache")
    assert finding.status is Status.DRIFT
    assert finding.args["where"] == "vllm.v1.kv_cache_interface.is_quantized_kv_cache"
    assert finding.plugin.path == "arctic_inference/vllm/attention/flash_attn_forest_cascade.py"
    assert finding.old.path == "vllm/utils/torch_utils.py"
    assert finding.new.path == "vllm/v1/kv_cache_interface.py"


def test_parameter_added_upstream_to_patched_method(move_26_33):
    # GPUModelRunner.initialize_kv_cache gained kv_cache_allocation_context in 0.33.0 (#1).
    finding = find(move_26_33, "PP0101", "GPUModelRunner.initialize_kv_cache",
                    param="kv_cache_allocation_context")
    assert finding.plugin.unit == "GPUModelRunnerPatch.initialize_kv_cache"
    assert finding.new.path == "vllm/v1/worker/gpu_model_runner.py"
    assert "kv_cache_allocation_context" in finding.new.snippet
    assert "kv_cache_allocation_context" not in finding.old.snippet


def test_replaced_module_function_lost_a_parameter(move_26_33):
    # parallel_state.graph_capture no longer takes graph_capture_context in 0.33.0 (#2).
    finding = find(move_26_33, "PP0202", "parallel_state.graph_capture", param="graph_capture_context")
    assert finding.plugin.path == "arctic_inference/vllm/ulysses.py"
    assert finding.level is Severity.INFO  # optional (default None): no caller has to pass it


def test_override_of_dropped_method_overrides_nothing(move_26_33):
    finding = find(move_26_33, "PP0203", "GPUModelRunner._pad_for_sequence_parallelism")
    assert finding.level is Severity.ERROR and finding.new is None and finding.old is not None


def test_removed_module_takes_its_patch_target_with_it(move_26_33):
    # one root cause, one finding: the patch class's target lives in the missing module
    finding = find(move_26_33, "PP0401", "", module="vllm.transformers_utils.configs.mlp_speculator")
    assert not [f for f in move_26_33.findings if f.code == "PP0003"]
    assert any(d.startswith("the same missing module: PP0003") and "MLPSpeculatorConfigPatch" in d
               for d in finding.details)


def test_unused_fork_class_is_one_info(own_pin):
    # The forest-cascade fork keeps its own FlashAttentionBackend, but the plugin installs
    # ForestFlashAttentionBackend (attention/__init__.py:31), a subclass of upstream's: vLLM never calls
    # the fork's supports_combination (which lacks use_mm_prefix) or any other of its 13 methods.
    finding = find(own_pin, "PP0204", "flash_attn_forest_cascade.FlashAttentionBackend")
    assert finding.level is Severity.INFO and finding.args["count"] == 13 and finding.plugin.line == 69
    assert not [f for f in own_pin.findings if f.plugin and f.plugin.unit.startswith("FlashAttentionBackend.")]


def test_no_error_findings_against_own_pin(own_pin):
    errors = [(f.code, f.subject, f.message) for f in own_pin.findings if f.level is Severity.ERROR]
    assert errors == []


@pytest.fixture(scope="module")
def move_18_26(real_scan):
    return real_scan("0.2.0", "0.18.0", "0.26.0", CORE)


@pytest.mark.parametrize(("code", "subject", "args"), [
    # DOMAIN.md's own catalogue examples, each checked in the vLLM 0.18.0 and 0.26.0 sources:
    ("PP0402", "backend.is_quantized_kv_cache", {"where": "vllm.utils.torch_utils.is_quantized_kv_cache"}),  # 4
    ("PP0501", "fa_utils.flash_attn_supports_fp8", {"candidate": "flash_attn_supports_quant_query_input"}),  # 5
    ("PP0601", "batch_invariant.vllm_is_batch_invariant", {}),  # 6
    ("PP0201", "GPUModelRunner._bookkeeping_sync", {"param": "spec_decode_metadata"}),  # 2
    ("PP0101", "GPUModelRunner.initialize_kv_cache", {"param": "is_profiling"}),  # 1
    ("PP0101", "GPUModelRunner._capture_cudagraphs", {"param": "profiler"}),  # 1
    ("PP0101", "parallel_state.graph_capture", {"param": "graph_capture_context"}),  # 1, module function
])
def test_catalogue_examples_on_the_0_18_to_0_26_rebase(move_18_26, code, subject, args):
    finding = find(move_18_26, code, subject, **args)
    assert finding.status is Status.DRIFT
    assert finding.plugin is not None and finding.plugin.path.startswith("arctic_inference/vllm/")


def test_removed_helper_points_at_the_flag_that_replaced_it(move_18_26):
    finding = find(move_18_26, "PP0601", "batch_invariant.vllm_is_batch_invariant")
    assert "vllm.envs.VLLM_BATCH_INVARIANT" in finding.suggestion
