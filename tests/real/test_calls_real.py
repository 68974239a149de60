"""Calls, callers of replaced members and plugin-load timing on real releases.

Every asserted finding was verified by reading the vLLM sources of both versions; the
comments say where.
"""

from __future__ import annotations

import pytest

from harness import find
from pinport.checks.call_binding import CallsCheck
from pinport.checks.load_timing import LoadTimingCheck
from pinport.checks.replaced_callers import ReplacedCallersCheck
from pinport.findings import Severity, Status

NAMES = tuple(c.name for c in (CallsCheck(), ReplacedCallersCheck(), LoadTimingCheck()))


@pytest.fixture(scope="module")
def checked():
    return NAMES


# -- calls (#3, #7) -----------------------------------------------------------------------------
def test_helper_needs_a_new_argument_and_returns_one_value(move_18_24):
    # 0.24.0 gpu_model_runner.py:1672: _get_cumsum_and_arange(self, num_tokens, arange_out, ...)
    # -> np.ndarray, `return cu_num_tokens`; 0.18.0 returned (cu_num_tokens, arange).
    missing = find(move_18_24, "PP0301", "GPUModelRunner._get_cumsum_and_arange", name="arange_out")
    assert (missing.plugin.path, missing.plugin.line) == ("arctic_inference/vllm/model_runner.py", 510)
    assert missing.status is Status.DRIFT and missing.new.line == 1672
    unpack = find(move_18_24, "PP0305", "GPUModelRunner._get_cumsum_and_arange")
    assert unpack.args["count"] == 2 and unpack.args["returns"] == "a single value"


def test_kernel_helper_needs_new_arguments_and_moved_to_create_weights(move_18_24):
    # 0.24.0 kernels/linear/__init__.py:539: init_fp8_linear_kernel(..., input_dtype, out_dtype,
    # weight_shape, ...); upstream now calls it from create_weights (fp8.py:387).
    # one call, two missing arguments: one finding listing both (one root cause, one finding)
    finding = find(move_18_24, "PP0301", "init_fp8_linear_kernel", name="input_dtype")
    assert (finding.plugin.path, finding.plugin.line) == ("arctic_inference/vllm/spec_dec/fp8.py", 76)
    assert [(f.code, f.level, f.status) for f in move_18_24.findings
            if f.subject.endswith("init_fp8_linear_kernel")] == [("PP0301", Severity.ERROR, Status.DRIFT)]
    assert any(d.startswith("the same call also: PP0301") and "`weight_shape`" in d for d in finding.details)
    assert any("fp8.py:387 (Fp8LinearMethod.create_weights)" in d for d in finding.details)


def test_constructor_needs_the_layer_since_before_the_pin(move_18_24):
    # fp8.py: Fp8MoEMethod.__init__(self, quant_config, layer) on 0.18.0 (line 656) and 0.24.0;
    # the plugin still calls Fp8MoEMethod(self): latent, found only once the path ran.
    finding = find(move_18_24, "PP0701", "Fp8MoEMethod", name="layer")
    assert finding.status is Status.LATENT and finding.plugin.line == 333
    assert "layer" in finding.old.snippet and "layer" in finding.new.snippet


def test_original_alias_called_with_a_dropped_argument(move_18_24):
    # 0.24.0 gpu_model_runner.py:3613: _bookkeeping_sync lost spec_decode_metadata; the plugin's
    # override still calls self._orig_bookkeeping_sync(..., spec_decode_metadata) (6 positional).
    finding = find(move_18_24, "PP0303", "GPUModelRunner._bookkeeping_sync")
    assert (finding.args["given"], finding.args["accepted"]) == (6, 5)


def test_weights_loader_dropped_a_keyword(move_26_33):
    # 0.33.0 models/utils.py:242: AutoWeightsLoader.__init__(self, module, *,
    # ignore_unexpected_prefixes=None, ignore_unexpected_suffixes=None): no skip_prefixes.
    finding = find(move_26_33, "PP0702", "AutoWeightsLoader", name="skip_prefixes")
    assert (finding.plugin.path, finding.plugin.line) == ("arctic_inference/vllm/swiftkv/llama_swiftkv.py", 908)
    assert finding.status is Status.DRIFT and finding.new.line == 242


# -- callers of replaced members (#1) -----------------------------------------------------------
def test_module_function_callers_pass_a_new_keyword(move_18_26):
    # 0.26.0 gpu_model_runner.py:6652: graph_capture(device=..., graph_capture_context=cap_ctx),
    # against the plugin's UlyssesParallelState.graph_capture(device) in 0.2.0.
    finding = find(move_18_26, "PP0110", "parallel_state.graph_capture", name="graph_capture_context")
    assert finding.level is Severity.ERROR and finding.status is Status.DRIFT
    assert finding.details[0].startswith("vllm/v1/worker/gpu_model_runner.py:6652")


@pytest.mark.parametrize(("member", "keyword", "site"), [
    # 0.26.0 gpu_model_runner.py:6462: self.initialize_kv_cache(minimal_config, is_profiling=True)
    ("GPUModelRunner.initialize_kv_cache", "is_profiling", "vllm/v1/worker/gpu_model_runner.py:6462"),
    # 0.26.0 gpu_model_runner.py:6811: self._capture_cudagraphs(..., profiler=...)
    ("GPUModelRunner._capture_cudagraphs", "profiler", "vllm/v1/worker/gpu_model_runner.py:6811"),
])
def test_method_callers_pass_new_keywords(move_18_26, member, keyword, site):
    finding = find(move_18_26, "PP0110", member, name=keyword)
    assert any(d.startswith(site) for d in finding.details)


@pytest.mark.parametrize(("member", "keyword", "site"), [
    # 0.33.0 gpu_worker.py:907: initialize_kv_cache(kv_cache_config, kv_cache_allocation_context=...)
    ("GPUModelRunner.initialize_kv_cache", "kv_cache_allocation_context", "vllm/v1/worker/gpu_worker.py:907"),
    # 0.33.0 gpu_worker.py:700: self.model_runner.profile_run(randomize_inputs=...)
    ("GPUModelRunner.profile_run", "randomize_inputs", "vllm/v1/worker/gpu_worker.py:700"),
])
def test_worker_callers_on_the_next_move(move_26_33, member, keyword, site):
    finding = find(move_26_33, "PP0110", member, name=keyword)
    assert finding.status is Status.DRIFT and any(d.startswith(site) for d in finding.details)


# -- plugin-load timing (#11) -------------------------------------------------------------------
def test_first_engine_args_is_built_before_the_patches(move_26_33):
    # 0.33.0 arg_utils.py:931: EngineArgs.__post_init__ calls load_general_plugins(), and
    # LLM.__init__ builds the first EngineArgs(...) (llm.py:295): its patched __new__ and
    # __post_init__ never run. The plugin's own _ensure_arctic_fields (args.py:69), called first in
    # the patched create_engine_config (args.py:191), backfills that instance: info, saying so,
    # placed on the patched construction member.
    finding = find(move_26_33, "PP1102", "arg_utils.EngineArgs")
    assert finding.level is Severity.INFO and finding.status is Status.LATENT
    assert (finding.plugin.line, finding.plugin.unit) == (110, "EngineArgsPatch.__new__")
    assert (finding.new.path, finding.new.line) == ("vllm/engine/arg_utils.py", 931)
    assert any(d.startswith("built at vllm/entrypoints/llm.py:295") for d in finding.details)
    assert any("calls `_ensure_arctic_fields(self)`" in d and "line 191" in d for d in finding.details)
    assert find(move_26_33, "PP1102", "arg_utils.AsyncEngineArgs").level is Severity.INFO


# -- noise on the plugin's own pin --------------------------------------------------------------
def test_own_pin_errors_are_the_known_latent_break(own_pin):
    # The one break on 0.26.0 -> 0.26.0 is real: static_sink_attention.py:182 calls
    # super().forward(query, key, value, output_shape), which lands in the plugin's
    # UlyssesAttention.forward(self, query, key, value, **kwargs): a TypeError. Only openpangu builds
    # a StaticSinkAttention, so it is a warning (an optional host path), with that reason.
    assert [f for f in own_pin.findings if f.level is Severity.ERROR] == []
    finding = find(own_pin, "PP0111", "vllm.model_executor.layers.attention.Attention.forward")
    assert finding.level is Severity.WARNING
    assert finding.details[0].startswith("vllm/model_executor/layers/attention/static_sink_attention.py:182")
    assert any(d.startswith("warning: only host code for some models") for d in finding.details)
    assert all(f.status is Status.LATENT for f in own_pin.findings)
