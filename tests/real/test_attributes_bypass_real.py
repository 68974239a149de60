"""Attributes (#9), bypass (#10), gaps and host kinds on real releases, each break verified in the sources.

arctic-inference 0.2.0 pins vLLM 0.18.0; moving it to 0.24.0 is the rebase the maintainers did for
0.3.0. vLLM 0.24.0 dropped `self.pin_memory` from GPUModelRunner, turned `self.positions` from a
CpuGpuBuffer into a plain tensor, dropped `ForwardContext.virtual_engine`, turned `FusedMoE` into a
factory function and let a config property that defaults on for common architectures select the
V2 model runner (0.18.0: the opt-in VLLM_USE_V2_MODEL_RUNNER variable).
"""

from __future__ import annotations

import time

import pytest

from harness import find
from pinport.checks.bypass import BypassCheck
from pinport.checks.host_kinds import HostKindsCheck
from pinport.checks.instance_attributes import AttributesCheck
from pinport.checks.undefined import UndefinedCheck
from pinport.findings import Severity, Status
from pinport.scan import scan_models

CHECKS = (AttributesCheck(), BypassCheck(), UndefinedCheck(), HostKindsCheck())
NAMES = tuple(c.name for c in CHECKS)


@pytest.fixture(scope="module")
def checked():
    return NAMES
RUNNER = "vllm.v1.worker.gpu_model_runner.GPUModelRunner"
V2_RUNNER = "vllm.v1.worker.gpu.model_runner.GPUModelRunner"
MODEL_RUNNER = "arctic_inference/vllm/model_runner.py"


def test_v2_model_runner_bypass_with_changed_selection(move_18_24):
    finding = find(move_18_24, "PP1002", V2_RUNNER, name=RUNNER)
    assert finding.status is Status.DRIFT and finding.level is Severity.WARNING
    assert finding.plugin.path == MODEL_RUNNER  # the GPUModelRunnerPatch class statement
    # 0.18.0: gpu_worker.py `if self.use_v2_model_runner:` <- envs.VLLM_USE_V2_MODEL_RUNNER (default "0")
    assert finding.old.path == finding.new.path == "vllm/v1/worker/gpu_worker.py"
    assert finding.old.snippet == finding.new.snippet == "if self.use_v2_model_runner:"
    details = "\n".join(finding.details)
    assert "vllm 0.18.0: self.use_v2_model_runner = envs.VLLM_USE_V2_MODEL_RUNNER" in details
    assert 'vllm 0.18.0: env VLLM_USE_V2_MODEL_RUNNER (default "0")' in details
    # 0.24.0: <- vllm_config.use_v2_model_runner, a property defaulting on for listed architectures
    assert "vllm 0.24.0: self.use_v2_model_runner = vllm_config.use_v2_model_runner" in details
    assert "config `VllmConfig.use_v2_model_runner` is a property (vllm/config/vllm.py:" in details
    assert "DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES = {" in details and "LlamaForCausalLM" in details
    assert "nothing forces the patched path" in details  # 0.2.0 did not yet set the variable


def test_forced_switch_is_reported_as_informational(move_26_33):
    # arctic-inference 0.3.0 sets VLLM_USE_V2_MODEL_RUNNER=0, which 0.33.0's property still reads first.
    finding = find(move_26_33, "PP1002", V2_RUNNER, name=RUNNER)
    assert finding.level is Severity.INFO
    assert any(d.startswith("plugin forces VLLM_USE_V2_MODEL_RUNNER='0' at arctic_inference/vllm/plugin.py:")
               for d in finding.details)


def test_pin_memory_no_longer_set_by_the_base(move_18_24):
    finding = find(move_18_24, "PP0901", "GPUModelRunner.pin_memory")
    assert finding.status is Status.DRIFT and finding.plugin.path == MODEL_RUNNER
    assert finding.plugin.unit == "GPUModelRunnerPatch.__init__"
    assert finding.old.path == "vllm/v1/worker/gpu_model_runner.py"
    assert finding.old.snippet == "self.pin_memory = is_pin_memory_available()"


def test_positions_buffer_became_a_tensor(move_18_24):
    finding = find(move_18_24, "PP0904", "GPUModelRunner.positions")
    assert finding.args["members"] == "gpu" and finding.args["old_type"] == "CpuGpuBuffer"
    assert finding.old.snippet.startswith("self.positions = self._make_buffer(")
    assert finding.new.snippet.startswith("self.positions = torch.zeros(")


def test_forward_context_virtual_engine_dropped(move_18_24):
    finding = find(move_18_24, "PP0902", "ForwardContext.virtual_engine")
    assert finding.plugin.path == "arctic_inference/vllm/swiftkv/llama_swiftkv.py"
    assert finding.old.path == "vllm/forward_context.py" and "virtual_engine: int" in finding.old.snippet


def test_fused_moe_became_a_factory(move_18_24):
    finding = find(move_18_24, "PP0610", "fused_moe.FusedMoE")
    assert finding.status is Status.DRIFT and finding.args["how"] == "isinstance()"
    assert finding.new.snippet.startswith("def FusedMoE(") and finding.old.snippet.startswith("class FusedMoE(")


def test_config_gated_gaps(move_18_24):
    # shift-parallel capture calls a method and passes a name that nothing defines
    member = find(move_18_24, "PP0051", "._register_shift_cudagraph_keys")
    name = find(move_18_24, "PP0050", "compilation_cases_shift")
    assert member.plugin.path == name.plugin.path == MODEL_RUNNER
    assert member.status is Status.LATENT
    dup = find(move_18_24, "PP0052", "GPUModelRunnerPatch.sample_tokens")
    assert dup.level is Severity.WARNING


def test_drifts_of_the_next_move(move_26_33):
    flag = find(move_26_33, "PP0612", "envs.VLLM_TEST_FORCE_FP8_MARLIN")
    assert flag.status is Status.DRIFT and flag.old.path == "vllm/envs.py"
    # `self.is_ec_consumer` sits in the plugin's mirror of step_with_batch_queue: the mirrors
    # check reports it (with upstream's rename), so the attributes check stays silent there.
    assert not [f for f in move_26_33.findings if f.code == "PP0901" and f.subject.endswith("is_ec_consumer")]
    assert find(move_26_33, "PP0902", "CommonAttentionMetadata.seq_lens_cpu").status is Status.DRIFT


# Every error these checks report on the plugin's own pin is a real, latent bug:
#   suffix_decoding/cache.py   `self.max_depth`: the class only sets `_max_tree_depth` (AttributeError)
#   vllm/model_runner.py       `RoutedExpertsCapturer` is used but never imported (NameError)
#   vllm/spec_dec/fp8.py       `isinstance(layer, FusedMoE)`: FusedMoE is a function since 0.24.0 (TypeError)
OWN_PIN_ERRORS = {("PP0051", "arctic_inference/suffix_decoding/cache.py", "max_depth"),
                  ("PP0050", MODEL_RUNNER, "RoutedExpertsCapturer"),
                  ("PP0610", "arctic_inference/vllm/spec_dec/fp8.py", "FusedMoE")}


def test_own_pin_errors_are_all_real(own_pin):
    errors = {(f.code, f.plugin.path, f.args.get("name", "")) for f in own_pin.findings if f.level is Severity.ERROR}
    assert errors == OWN_PIN_ERRORS
    assert all(f.status is Status.LATENT for f in own_pin.findings)


def test_added_time_is_small(real_models):
    models, settings = real_models("0.3.0", "0.26.0", "0.33.0")
    started = time.process_time()
    scan_models(models, settings, extra_checks=CHECKS, strict=True)
    # memoised facts are reused, so this is the warm cost; the cold cost is measured in the report
    assert time.process_time() - started < 2.0


def test_member_dropped_inside_a_mirror_is_reported_once(real_models):
    from pinport.checks.mirrors import MirrorsCheck

    models, settings = real_models("0.3.0", "0.26.0", "0.33.0")
    result = scan_models(models, settings, extra_checks=(AttributesCheck(), MirrorsCheck()), strict=True)
    hits = [f for f in result.findings if f.level is Severity.ERROR and f.plugin.path == "arctic_inference/vllm/ulysses.py"
            and "is_ec_consumer" in f.message]
    assert [(f.code, f.level, f.status) for f in hits] == [("PP1202", Severity.ERROR, Status.DRIFT)]
    assert "is_mm_encoder_only" in hits[0].message
