"""The break classes issue 11 asked for, on the real releases: attribute chains, closed string sets,
host call sites found through typed chains, and the classes whose real instances are none.

Every asserted finding was read in the vLLM sources of both versions; the comments say where.
"""

from __future__ import annotations

import pytest

from harness import find
from pinport.checks.attribute_chains import ChainsCheck
from pinport.checks.call_binding import CallsCheck
from pinport.checks.call_defaults import DefaultsCheck
from pinport.checks.closed_values import ClosedValuesCheck
from pinport.checks.factories import FactoriesCheck
from pinport.checks.replaced_callers import ReplacedCallersCheck
from pinport.findings import Severity, Status

NAMES = tuple(c.name for c in (ChainsCheck(), ClosedValuesCheck(), DefaultsCheck(), FactoriesCheck(), CallsCheck(),
                               ReplacedCallersCheck()))


@pytest.fixture(scope="module")
def checked():
    return NAMES


@pytest.fixture(scope="module", params=[("0.18.0", "0.24.0"), ("0.18.0", "0.26.0")], ids=["18-24", "18-26"])
def rebase_18(real_scan, request):
    return real_scan("0.2.0", *request.param, NAMES)


# -- attribute chains (#9) --------------------------------------------------------------------------
def test_routed_experts_flag_moved_off_the_model_config(move_26_33):
    # 0.26.0 config/model.py:222: ModelConfig.enable_return_routed_experts: bool = False; 0.33.0 moved it
    # to AuxOutputConfig (config/aux_output.py:14). The plugin's sample_tokens reads
    # self.model_config.enable_return_routed_experts on every step (model_runner.py:1693), and the host
    # types self.model_config from `self.model_config = vllm_config.model_config` (VllmConfig field).
    finding = find(move_26_33, "PP0905", "ModelConfig.enable_return_routed_experts")
    assert (finding.plugin.path, finding.plugin.line) == ("arctic_inference/vllm/model_runner.py", 1693)
    assert finding.level is Severity.ERROR and finding.status is Status.DRIFT
    assert (finding.old.path, finding.old.line) == ("vllm/config/model.py", 222)
    assert finding.new.path == "vllm/config/model.py" and finding.args["chain"] == "self.model_config"


def test_native_sequence_parallel_flag_gone_behind_the_ulysses_test(move_26_33):
    # 0.26.0 config/compilation.py:129: PassConfig.enable_sp; 0.33.0's PassConfig (compilation.py:114)
    # has no enable_sp. The plugin reads it only when ulysses_sequence_parallel_size > 1: a warning.
    finding = find(move_26_33, "PP0905", "PassConfig.enable_sp")
    assert (finding.plugin.line, finding.level, finding.status) == (128, Severity.WARNING, Status.DRIFT)
    assert (finding.old.line, finding.new.line) == (129, 114)
    assert finding.details == ("the read runs only behind a condition",)


def test_chains_on_the_previous_rebase_are_all_present(rebase_18):
    # 0.2.0 against 0.24.0 / 0.26.0: every member the plugin reads along a typed chain still exists.
    assert [f for f in rebase_18.findings if f.code == "PP0905"] == []


# -- host call sites found through a typed chain (#1) ------------------------------------------------
@pytest.mark.parametrize(("member", "line", "site"), [
    # 0.33.0 model_executor/models/transformers/base.py:647 and :685:
    # self.model_config.get_num_attention_heads(self.parallel_config, arch_config), where
    # `self.model_config = vllm_config.model_config` (base.py:133); the plugin's replacement
    # UlyssesModelConfig.get_num_*_heads(self, parallel_config) takes no second argument.
    ("ModelConfig.get_num_attention_heads", 66, "vllm/model_executor/models/transformers/base.py:647"),
    ("ModelConfig.get_num_kv_heads", 60, "vllm/model_executor/models/transformers/base.py:685"),
])
def test_transformers_backend_passes_the_arch_config(move_26_33, member, line, site):
    finding = find(move_26_33, "PP0111", member)
    assert (finding.plugin.path, finding.plugin.line) == ("arctic_inference/vllm/ulysses.py", line)
    assert finding.status is Status.DRIFT and finding.details[0].startswith(site)


# -- closed sets of strings (#7) ---------------------------------------------------------------------
def test_mlp_speculator_dropped_from_the_speculative_methods(move_26_33):
    # 0.26.0 config/speculative.py:66-76: SpeculativeMethod = Literal["ngram", "medusa", "mlp_speculator", ...],
    # SpeculativeConfig.method: SpeculativeMethod | None (line 94), handled at lines 890-891 and 1146.
    # 0.33.0 speculative.py:74: no "mlp_speculator" (nor anywhere in the file); the plugin's
    # SpeculativeConfigPatch.__post_init__ sets self.method = "mlp_speculator" (config.py:161) for the
    # upstream __post_init__ to handle, and compares with it at config.py:112.
    findings = [f for f in move_26_33.findings if f.code == "PP0708"]
    assert len(findings) == 1
    finding = findings[0]
    assert (finding.plugin.path, finding.plugin.line) == ("arctic_inference/vllm/config.py", 161)
    assert finding.args["value"] == "mlp_speculator" and finding.args["how"] == "assigned to"
    assert finding.subject == "vllm.config.speculative.SpeculativeConfig.method"
    assert finding.level is Severity.WARNING and finding.status is Status.DRIFT
    assert (finding.old.line, finding.new.line) == (94, 419)
    assert finding.details[1] == "also compared at line 112"


# -- the classes the real releases hold no instance of -------------------------------------------------
def test_no_default_or_factory_keyword_the_plugin_relies_on_moved(move_26_33, rebase_18):
    # Every plugin call that binds on both versions (269 host calls on 0.3.0, 254 on 0.2.0) leaves out
    # only parameters whose default is unchanged; no host factory the plugin calls forwards **kwargs
    # (StatelessProcessGroup.create, AsyncLLM.from_vllm_config name theirs); the one
    # dataclasses.replace (model_runner.py:1966, BatchDescriptor num_reqs/uniform) keeps its fields
    # (0.33.0 forward_context.py:37-42).
    for result in (move_26_33, rebase_18):
        assert [f for f in result.findings if f.code in ("PP0706", "PP0707")] == []


def test_self_helpers_unpack_what_they_return(move_26_33):
    # model_runner.py unpacks five self helpers (_build_attention_metadata, _determine_batch_execution_and_padding
    # (5 values), _get_slot_mappings, _prepare_mm_inputs, _get_draft_token_ids_cpu) and the scheduler's
    # get_request_counts (an interface method: `-> tuple[int, int]`); all agree on 0.33.0.
    assert [f for f in move_26_33.findings if f.code == "PP0305"] == []


def test_another_plugin_reads_layout_properties_upstream_dropped(real_models_of):
    # vllm-rbln 0.11.2 (pinned to 0.24.0) builds its own upstream TransferTopology(...) (rbln_nixl/worker.py:292)
    # and reads its properties: 0.24.0 kv_connector/utils.py:494 `is_kv_layout_blocks_first`, :498
    # `cross_layers_blocks`; 0.30.0's TransferTopology (utils.py:421) has neither. The maintainers' next
    # release (0.12.0, pinned to 0.30.0) added RblnTransferTopology(TransferTopology) defining them again,
    # "the layout upstream standardized away".
    from pinport.scan import scan_models
    models, settings = real_models_of("vllm-rbln", "0.11.2", "0.24.0", "0.30.0")
    result = scan_models(models, settings, checks=(ChainsCheck().name,), strict=True)
    worker = "vllm_rbln/distributed/kv_transfer/kv_connector/v1/rbln_nixl/worker.py"
    found = {(f.plugin.line, f.args["name"]) for f in result.findings if f.code == "PP0905"}
    assert (410, "is_kv_layout_blocks_first") in found and (306, "cross_layers_blocks") in found
    finding = next(f for f in result.findings if f.plugin.line == 410)
    assert finding.plugin.path == worker and finding.level is Severity.ERROR and finding.status is Status.DRIFT
    assert (finding.old.path, finding.old.line, finding.new.line) == ("vllm/distributed/kv_transfer/kv_connector/utils.py",
                                                                      494, 421)
    assert {f.subject.rpartition(".")[0] for f in result.findings} == {
        "vllm.distributed.kv_transfer.kv_connector.utils.TransferTopology"}
