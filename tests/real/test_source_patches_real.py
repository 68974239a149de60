"""vllm-musa 0.1.1's source-text patches (`vllm_musa_platform/patches/*.patch.py`, applied by
`patches/__init__.py:apply_patches`, which skips a pair whose text it does not find) on real vLLM releases:
on its pin 0.13.0 every file still patches (the pairs for other releases are info), on 0.14.0 two
patches silently stop applying. Whole findings asserted."""

from __future__ import annotations

from pinport.findings import Location

MUSA = "vllm-musa", "0.1.1"
PATCHES = "vllm_musa_platform/patches/"
GPU_WORKER = PATCHES + "vllm__v1__worker__gpu_worker.patch.py"
TRITON = PATCHES + "vllm__attention__ops__triton_unified_attention.patch.py"
V0_WORKER = PATCHES + "vllm__worker__worker.patch.py"
SKIPS = ("the patcher applies a pair only where its text is found and skips it silently otherwise "
         "(vllm_musa_platform/patches/__init__.py:112)")


def _scan(real_models_of, old: str, new: str):
    from pinport.scan import scan_models
    models, settings = real_models_of(*MUSA, old, new)
    return scan_models(models, settings, checks=("source-patches",), strict=True)


def _outcome(f):
    return (f.code, f.level.value, f.status.value, f.plugin.path, f.plugin.line, f.plugin.unit, f.subject)


def test_discovered_files_pairs_and_patcher(real_models_of):
    models, settings = real_models_of(*MUSA, "0.13.0")
    from pinport.facts import ScanFacts
    found = ScanFacts(models.plugin, models.old, models.new, settings).source_patches
    assert [(f.path, f.target, len(f.pairs)) for f in found.files] == [
        (TRITON, "vllm.attention.ops.triton_unified_attention", 1),
        (GPU_WORKER, "vllm.v1.worker.gpu_worker", 2),
        (V0_WORKER, "vllm.worker.worker", 1)]
    assert (found.patcher.path, found.patcher.line, found.patcher.strict) == (
        "vllm_musa_platform/patches/__init__.py", 112, False)


def test_on_its_own_pin_every_patch_applies(real_models_of):
    """vLLM 0.13.0: `left: tl.int32 = 0` is in triton_unified_attention.py and the 0.13+ gpu_worker pair
    applies; what is left is info: the 0.10.x pair (its sibling applies) and the V0 worker module, gone
    since vLLM 0.11 (the patcher's own comment expects it)."""
    result = _scan(real_models_of, "0.13.0", "0.13.0")
    assert sorted(map(_outcome, result.findings)) == [
        ("PP0808", "info", "latent", GPU_WORKER, 17, "PATCHES[0]", "vllm.v1.worker.gpu_worker"),
        ("PP0809", "info", "latent", V0_WORKER, 16, "PATCHES", "vllm.worker.worker")]


def test_on_vllm_0_14_two_patches_stop_applying(real_models_of):
    result = _scan(real_models_of, "0.13.0", "0.14.0")
    assert sorted(map(_outcome, result.findings)) == [
        ("PP0808", "info", "latent", GPU_WORKER, 17, "PATCHES[0]", "vllm.v1.worker.gpu_worker"),
        ("PP0808", "warning", "drift", GPU_WORKER, 22, "PATCHES[1]", "vllm.v1.worker.gpu_worker"),
        ("PP0809", "info", "latent", V0_WORKER, 16, "PATCHES", "vllm.worker.worker"),
        ("PP0809", "warning", "drift", TRITON, 35, "PATCHES", "vllm.attention.ops.triton_unified_attention")]
    by_file = {(f.code, f.plugin.path): f for f in result.findings if f.level.value == "warning"}
    # the device check was rewritten: the pair's text is gone, the line it matched is now `device_type`
    device = by_file[("PP0808", GPU_WORKER)]
    assert device.old == Location("vllm/v1/worker/gpu_worker.py", 181, 0, "vllm.v1.worker.gpu_worker",
                                  'if isinstance(device, torch.device) and device.type == "cuda":')
    assert device.new == Location("vllm/v1/worker/gpu_worker.py", 175, 0, "vllm.v1.worker.gpu_worker",
                                  'if self.device_config.device_type == "cuda":')
    assert device.suggestion.startswith("vllm 0.13.0's matching line became `if self.device_config.device_type == "
                                        "\"cuda\":` (vllm/v1/worker/gpu_worker.py:175) in vllm 0.14.0")
    assert device.details == (SKIPS, f"pairs of {GPU_WORKER} that apply in vllm 0.14.0: none; in vllm 0.13.0: "
                                     f"PATCHES[1]")
    # the Triton kernel moved under vllm/v1/: the patcher finds no module and skips the whole file
    triton = by_file[("PP0809", TRITON)]
    assert triton.old == Location("vllm/attention/ops/triton_unified_attention.py", 1, 0,
                                  "vllm.attention.ops.triton_unified_attention",
                                  "module vllm.attention.ops.triton_unified_attention")
    assert triton.new == Location("vllm/v1/attention/ops/triton_unified_attention.py", 41, 0,
                                  "vllm.v1.attention.ops.triton_unified_attention", "left: tl.int32 = 0")
    assert triton.suggestion == (
        "the text is in `vllm.v1.attention.ops.triton_unified_attention` "
        "(vllm/v1/attention/ops/triton_unified_attention.py:41) in vllm 0.14.0: rename the patch file to "
        "`vllm__v1__attention__ops__triton_unified_attention.patch.py`")
