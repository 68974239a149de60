"""The gate on the real job: arctic-inference 0.3.0 in a venv with vLLM 0.33.0 (cached in the user cache;
the first run pays the install, several minutes and about 9.4 GB)."""

from __future__ import annotations

import json

import pytest

from pinport.cli.main import main

pytestmark = pytest.mark.slow

# (plugin file, line, gate code, what is missing): every import-time break of 0.3.0 on 0.33.0
BREAKS = [
    ("arctic_inference/vllm/config.py", 22, "PP0071", "vllm.transformers_utils.configs.mlp_speculator", "PP0401"),
    ("arctic_inference/vllm/attention/flash_attn_forest_cascade.py", 19, "PP0072",
     "vllm.utils.torch_utils.is_quantized_kv_cache", "PP0402"),
    ("arctic_inference/vllm/attention/flash_attn_forest_cascade.py", 34, "PP0072",
     "vllm.v1.attention.ops.common.cp_lse_ag_out_rs", "PP0402"),
    ("arctic_inference/vllm/attention/flash_attn_forest_cascade.py", 60, "PP0072",
     "vllm.v1.attention.backends.utils.get_kv_cache_layout", "PP0601"),
    ("arctic_inference/vllm/spec_dec/fp8.py", 11, "PP0072", "vllm.model_executor.layers.fused_moe.FusedMoE",
     "PP0501"),
]


@pytest.fixture(scope="module")
def gate_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("gate") / "gate.json"
    code = main(["gate", "--plugin", "arctic-inference==0.3.0", "--new", "0.33.0", "--make-env",
                 "--format", "json", "-o", str(out), "--no-progress"])
    assert code == 1
    return json.loads(out.read_text(encoding="utf-8"))


def _at(report: dict, path: str, line: int, code: str) -> list[dict]:
    return [f for f in report["findings"] if f["code"] == code and f["plugin"]
            and (f["plugin"]["path"], f["plugin"]["line"]) == (path, line)]


@pytest.mark.parametrize(("path", "line", "code", "missing", "static_code"), BREAKS)
def test_every_import_time_break_in_one_run(gate_report, path, line, code, missing, static_code):
    [found] = _at(gate_report, path, line, code)
    assert found["subject"] == missing
    assert (found["status"], found["severity"]) == ("confirmed", "error")
    assert found["message"].endswith(f"; predicted by {static_code}")
    [static] = _at(gate_report, path, line, static_code)
    assert static["status"] == "confirmed" and "static status: drift" in static["details"]


def test_exactly_these_breaks_and_stubs(gate_report):
    breaks = sorted((f["plugin"]["path"], f["plugin"]["line"]) for f in gate_report["findings"]
                    if f["code"] in ("PP0071", "PP0072", "PP0073", "PP0074", "PP0075"))
    assert breaks == sorted((p, n) for p, n, *_ in BREAKS)
    assert gate_report["gate"]["stubbed"]["arctic_inference.suffix_decoding._C"] == "extension"


def test_patch_classes_applied(gate_report):
    steps = {s["name"]: s for s in gate_report["gate"]["steps"]}
    assert steps["bootstrap"]["result"] == "PASS"
    # every patch class but the one whose target module is gone (MLPSpeculatorConfig) applies in full
    assert gate_report["gate"]["patch_classes"] == {"applied": 23, "total": 24}
    [missed] = [f for f in gate_report["findings"] if f["code"] == "PP0077"]
    assert missed["subject"] == "vllm.transformers_utils.configs.mlp_speculator.MLPSpeculatorConfig.__init__"
    assert steps["tests"]["result"] == "SKIP"  # the sdist ships no tests
