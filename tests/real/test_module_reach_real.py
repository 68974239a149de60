"""Module reach on a real plugin: vllm-kunlun 0.11.1 still ships vLLM's V0 worker and model runner, a fork of
vLLM 0.10.1's chat server and more that nothing imports; its bootstrap reaches the rest through function-local
imports, an import hook's table, class-path strings and a relative `importlib.import_module`."""

from __future__ import annotations

import pytest

from pinport.scan import scan_models


@pytest.fixture(scope="module")
def own_pin_scan(real_models_of):
    """vllm-kunlun 0.11.1 on its own pin, as `pinport scan` runs it."""
    models, settings = real_models_of("vllm-kunlun", "0.11.1", "0.11.0")
    return scan_models(models, settings, strict=True)


def test_the_modules_kunlun_never_imports(real_models_of):
    models, settings = real_models_of("vllm-kunlun", "0.11.1", "0.11.0")
    unreached = models.facts(settings).unreached_modules
    # the V0 worker: platforms/kunlun.py names vLLM's workers only; model_runner is imported by worker alone
    assert {"vllm_kunlun.worker.worker", "vllm_kunlun.worker.model_runner",
            "vllm_kunlun.entrypoints.openai.serving_chat"} <= unreached
    reached = set(models.plugin.modules) - unreached
    assert {
        "vllm_kunlun.platforms.kunlun",  # the class path register() returns
        "vllm_kunlun.ops.sample.sampler",  # the import hook's table (vllm_kunlun/__init__.py:18)
        "vllm_kunlun.reasoning.minimax_m2_reasoning_parser",  # import_module(".minimax_…", package=__name__)
        "vllm_kunlun.ops.attention.backends.kunlun_attn",  # get_attn_backend_cls's V0 class path
        "vllm_kunlun.models.qwen2_vl",  # registered models
    } <= reached


def test_kunlun_breaks_in_never_imported_modules_are_info(own_pin_scan):
    result = own_pin_scan
    at = {(f.code, f.level.value, f.status.value, f.plugin.path, f.plugin.line, f.old is None, f.new is None)
          for f in result.findings if f.plugin and f.plugin.path in (
              "vllm_kunlun/worker/worker.py", "vllm_kunlun/entrypoints/openai/serving_chat.py")
          and f.code.startswith("PP06")}
    # `_check_if_gpu_supports_dtype` left vllm/v1/worker/gpu_worker.py; random_tool_call_id left chat_utils
    assert ("PP0601", "info", "latent", "vllm_kunlun/worker/worker.py", 3, True, True) in at
    assert ("PP0601", "info", "latent", "vllm_kunlun/entrypoints/openai/serving_chat.py", 20, True, True) in at
    info = [f for f in result.findings if f.plugin and f.plugin.path == "vllm_kunlun/worker/model_runner.py"]
    assert info and all(f.level.value == "info" for f in info)
    assert all("`vllm_kunlun.worker.model_runner` is never imported" in f.details[0] for f in info
               if f.code in ("PP0401", "PP0601", "PP0402", "PP0304", "PP0612", "PP0702"))
    # a reached module's true break stays an error: the sampler the import hook maps
    sampler = [f for f in result.findings if f.plugin and f.plugin.path == "vllm_kunlun/ops/sample/sampler.py"
               and f.code == "PP0601"]
    assert sampler and all(f.level.value == "error" for f in sampler)
    # `def _dbg(x):` in the KunlunOps class body reads no KunlunOps member
    assert not [f for f in result.findings if f.code == "PP0051" and f.plugin.path == "vllm_kunlun/ops/_kunlun_ops.py"]
    assert sum(f.level.value == "error" for f in result.findings) == 34
