"""Other real vLLM plugins: found, pinned and scanned with no settings (tests/real/plugins.toml)."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

import pytest

from pinport.config import load_settings
from pinport.model.index import IndexCache, load_indexes
from pinport.pins import find_pins, read_pin
from pinport.plugin.model import load_plugin_model
from pinport.plugin.uses import find_host_methods
from pinport.sources import Cache, fetch_release, list_versions

PLUGINS = tomllib.loads((Path(__file__).parent / "plugins.toml").read_text(encoding="utf-8"))
RELEASES = sorted({(dist, v) for dist, spec in PLUGINS.items()
                   for pair in spec["pairs"] for v in pair[:2]} |
                  {(dist, spec["validated"]) for dist, spec in PLUGINS.items() if spec["validated"]})
PINS = {(dist, before): old for dist, spec in PLUGINS.items() for before, _, old, _ in spec["pairs"]} | {
    (dist, after): new for dist, spec in PLUGINS.items() for _, after, _, new in spec["pairs"]}


@cache
def host_versions() -> tuple[str, ...]:
    return tuple(list_versions("vllm"))


def release(dist: str, version: str):
    return fetch_release(dist, version, cache=Cache(), prefer="sdist")


def _reader(root: Path):
    def read(rel: str) -> str | None:
        try:
            return (root / rel).read_text(encoding="utf-8")
        except OSError:
            return None

    def listing() -> list[str]:
        return sorted(p.relative_to(root).as_posix() for pattern in ("*", "*/*") for p in root.glob(pattern)
                      if p.is_file())
    return read, listing


@pytest.mark.parametrize(("dist", "version"), sorted(PINS))
def test_pin_read_without_settings(dist, version):
    tree = release(dist, version)
    root = tree.project_root or tree.root
    settings = load_settings(root)
    assert settings.profile == PLUGINS[dist].get("profile", "") and settings.plugin_package == ""
    read, listing = _reader(root)
    assert read_pin(settings, read, listing, host_versions) == PINS[(dist, version)]


def test_local_version_pin_and_its_span():
    tree = release("vllm-rbln", "0.11.2")
    read, listing = _reader(tree.root)
    (statement,) = find_pins(read, "vllm", listing)
    assert (statement.file, statement.requirement, statement.exact) == (
        "vllm_rbln-0.11.2.dist-info/METADATA", "vllm==0.24.0+cpu", "0.24.0+cpu")
    assert read(statement.file)[statement.start:statement.end] == "vllm==0.24.0+cpu"


def test_readme_install_line_is_the_only_exact_pin():
    tree = release("vllm-musa", "0.1.1")
    read, listing = _reader(tree.project_root or tree.root)
    statements = find_pins(read, "vllm", listing)
    assert [s.requirement for s in statements if s.exact] == ["vllm==0.13.0"]
    assert read_pin(load_settings(tree.project_root), read, listing) == "0.13.0"


@pytest.mark.parametrize(("dist", "version"), RELEASES)
def test_plugin_found_without_settings(dist, version):
    """The packages and modules a scan judges, from the release alone (no host is needed to find them: the
    scans below judge them on their pins)."""
    tree = release(dist, version)
    (index,) = load_indexes([tree], IndexCache.in_cache(Cache()))
    plugin = load_plugin_model(index, load_settings(tree.project_root or tree.root))
    assert plugin.packages == tuple(PLUGINS[dist]["packages"])
    assert plugin.modules and not any(m.startswith(("tests", "examples")) for m in plugin.modules)
    assert all(m.partition(".")[0] in plugin.packages for m in plugin.modules)


ANSWERS = sorted((Path(__file__).parent / "answers").glob("*.toml"))


@pytest.fixture(scope="module")
def own_pin_scans(real_models_of):
    def scan(answer: dict):
        from pinport.scan import scan_models
        models, settings = real_models_of(answer["plugin"], answer["version"], answer["host"])
        return scan_models(models, settings, strict=True)
    return scan


def _at(result, code: str, where: str):
    path, _, line = where.rpartition(":")
    return [f for f in result.findings if f.code == code and f.plugin and f.plugin.path == path
            and f.plugin.line == int(line)]


@pytest.mark.parametrize("answer_file", ANSWERS, ids=[a.stem for a in ANSWERS])
def test_no_false_error_remains_on_the_validated_release(answer_file, own_pin_scans):
    answer = tomllib.loads(answer_file.read_text(encoding="utf-8"))
    assert PLUGINS[answer["plugin"]]["validated"] == answer["version"]
    result = own_pin_scans(answer)
    true_errors = {(f["code"], where) for f in answer.get("finding", []) if f["verdict"]
                   for where in (f["plugin"], *f.get("also", ()))}
    # a false error whose idiom is not understood yet is listed as open (`now = "error"`): exactly those remain
    # (an entry names every place its verdict covers: `plugin` and each of `also`)
    still_open = {(f["code"], where) for f in answer.get("finding", []) if not f["verdict"] and f["now"] == "error"
                  for where in (f["plugin"], *f.get("also", ()))}
    errors = [f for f in result.findings if f.level.value == "error"]
    false_now = {(f.code, f"{f.plugin.path}:{f.plugin.line}") for f in errors} - true_errors
    assert sorted(false_now) == sorted(still_open)
    for entry in answer.get("finding", []):  # each answered false error: what pinport reports now
        for where in (entry["plugin"], *entry.get("also", ())):
            found = _at(result, entry["code"], where)
            if entry["now"] == "none":
                assert found == [], where
            else:
                assert found and all(f.level.value == entry["now"] for f in found), where
                assert all(f.status.value == "latent" and f.plugin.unit for f in found)


def _labelled(entry: dict) -> list[tuple[str, str]]:
    """The (code, plugin file:line) pairs one answer entry covers: its `code` and each of `also_codes`
    (other warnings the same reading answers), at `plugin` and each of `also`."""
    return [(code, where) for code in (entry["code"], *entry.get("also_codes", ()))
            for where in (entry["plugin"], *entry.get("also", ()))]


def _answered_warnings(answer: dict) -> dict[tuple[str, str], bool]:
    """(code, plugin file:line) -> verdict, for every warning the answer file labels (the `[[warning]]`
    entries and the answered errors pinport now reports as warnings): a label answers its own codes only."""
    out: dict[tuple[str, str], bool] = {}
    for entry in (*answer.get("warning", ()), *(f for f in answer.get("finding", ()) if f["now"] == "warning")):
        for key in _labelled(entry):
            out[key] = bool(entry["verdict"])
    return out


WARNINGS_ANSWERED = [a for a in ANSWERS if "warning_precision" in tomllib.loads(a.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("answer_file", WARNINGS_ANSWERED, ids=[a.stem for a in WARNINGS_ANSWERED])
def test_every_warning_on_the_validated_release_is_answered(answer_file, own_pin_scans):
    """Each warning the validated release shows on its own pin was read in the vLLM sources (true: a host
    call path reaches the mismatch); the answer file states the resulting precision, as the README does."""
    answer = tomllib.loads(answer_file.read_text(encoding="utf-8"))
    result = own_pin_scans(answer)
    labels = _answered_warnings(answer)
    warnings = [f for f in result.findings if f.level.value == "warning"]
    keys = [(f.code, f"{f.plugin.path}:{f.plugin.line}") for f in warnings]
    assert sorted({k for k in keys if k not in labels}) == []
    for entry in answer.get("warning", ()):  # no stale answer: each labelled place still warns, with that code
        for code, place in _labelled(entry):
            if entry.get("now") == "info":  # read as a warning once; a rule now shows it as context
                found = _at(result, code, place)
                assert found and all(f.level.value == "info" for f in found), (code, place)
                continue
            if entry.get("now") == "none":  # read as a warning once; a rule now finds nothing there
                assert _at(result, code, place) == [], (code, place)
                continue
            assert (code, place) in keys, (code, place)
    true = sum(labels[k] for k in keys)
    assert f"{true}/{len(warnings)}" == answer["warning_precision"]


def test_string_target_registry_patches_are_discovered(real_models_of):
    """vllm-rbln 0.11.2 installs its patches with `@register_patch(target="vllm.…")`: each decorated
    function is a patch of that host member, judged with `self` as the target class."""
    from pinport.plugin.records import PatchKind
    models, _ = real_models_of("vllm-rbln", "0.11.2", "0.24.0")
    found = {(p.site.path, p.site.line): p.target for p in models.plugin.surface.patches
             if p.kind is PatchKind.ASSIGNMENT and p.plugin_module.startswith("vllm_rbln.patches")}
    assert found[("vllm_rbln/patches/gpt_oss.py", 38)] == "vllm.model_executor.models.gpt_oss.MLPBlock.forward"
    assert found[("vllm_rbln/patches/attention.py", 204)] == "vllm.model_executor.layers.attention.Attention.forward"
    # the factory applied by hand: register_patch(target=...)(Fp8MoEMethod)
    assert found[("vllm_rbln/patches/fp8_moe_method.py", 18)] == "vllm.model_executor.layers.quantization.fp8.Fp8MoEMethod"
    methods = {m.qualname: m.owners for m in find_host_methods(models.plugin) if m.module == "vllm_rbln.patches.gpt_oss"}
    assert methods["patched_gptoss_mlp_forward"] == ("vllm.model_executor.models.gpt_oss.MLPBlock",)
    assert len(found) >= 25


def test_worker_extension_is_a_member_of_the_host_worker(real_models_of):
    """vllm-lens 1.3.0 sets `worker_extension_cls` to its HiddenStatesExtension (a constant, through
    `_activations_plugin.py:332`); vLLM mixes it into its GPU Worker, so its `self` is judged as one."""
    models, _ = real_models_of("vllm-lens", "1.3.0", "0.30.0")
    (target,) = [t for t in models.plugin.surface.targets if t.plugin_class == "HiddenStatesExtension"]
    assert (target.site.path, target.site.line, target.target, target.is_patch) == (
        "vllm_lens/_worker_ext.py", 901, "vllm.v1.worker.gpu_worker.Worker", False)
    view = models.new
    worker = view.resolve(target.target)
    assert worker is not None and all(view.member(worker, n) is not None
                                      for n in ("model_runner", "parallel_config", "rank"))


def test_registry_patches_on_their_own_pin(real_models_of):
    """vllm-rbln 0.12.0 on vLLM 0.30.0: its registry patches are judged; the one true signature break is
    a warning, because only one model's code reaches it (setting `optional-paths`)."""
    from pinport.scan import scan_models
    models, settings = real_models_of("vllm-rbln", "0.12.0", "0.30.0")
    result = scan_models(models, settings, strict=True)
    assert not [f for f in result.findings if f.level.value == "error"]
    breaks = [(f.code, f.level.value, f.status.value, f"{f.plugin.path}:{f.plugin.line}", f.args.get("param"),
               f.new.path) for f in result.findings if f.plugin.path.endswith("patches/deepseek_v2.py")
              and f.code.startswith("PP01")]  # (its attention forward copy also lags: PP1204 at :100)
    # DeepseekV2MoE.forward takes already_sequence_parallel (deepseek_v2.py:410), which only
    # Dots3NoteMoE passes to super().forward(...) (vllm/models/dots3_note/nvidia/model.py:148)
    assert breaks == [("PP0101", "warning", "latent", "vllm_rbln/patches/deepseek_v2.py:70",
                       "already_sequence_parallel", "vllm/model_executor/models/deepseek_v2.py")]
    # a plain function set in place of the staticmethod create_draft_parallel_config, called through
    # the class (config/speculative.py:1550), takes both arguments
    assert not [f for f in result.findings if f.code == "PP0111" and f.plugin.path.endswith("speculative_config.py")]
    # RotaryEmbedding.forward_oot (CustomOp's passthrough) replaced: judged against forward_native
    rope = [f for f in result.findings if f.plugin.path == "vllm_rbln/patches/rotary_embedding.py"
            and f.code.startswith("PP01")]
    assert rope and all(f.args["base"].endswith("RotaryEmbedding.forward_native") for f in rope)


@pytest.mark.parametrize(("version", "pin"), [("0.30.0rc1", "0.30.0"), ("0.29.0rc1", "0.28.0")])
def test_vllm_ascend_pin_read_from_its_readme(version, pin):
    """vllm-ascend requires an unversioned vLLM; its README's branch table states the tag its main
    branch is tested on (PKG-INFO in the sdist: "CI commitment for vLLM main branch and vLLM vX tag").
    The built-in vllm_ascend profile reads it; without it, `--old` would be needed."""
    tree = release("vllm-ascend", version)
    root = tree.project_root or tree.root
    settings = load_settings(root)
    read, listing = _reader(root)
    assert settings.profile == "vllm_ascend"
    assert [s.requirement for s in find_pins(read, "vllm", listing) if s.exact] == []
    assert read_pin(settings, read, listing, host_versions) == pin


def test_torch_module_base_next_to_host_bases_gives_members(real_models_of):
    """vllm-ascend 0.30.0rc1's model classes are `nn.Module` subclasses mixing in host interfaces
    (`class AscendDeepseekV4ForCausalLM(nn.Module, SupportsPP, ...)`, models/deepseek_v4/model.py:1044):
    `self.named_parameters()` (model.py:1162) is torch's, not an undefined member. Nine PP0051 errors
    on its own pin (vLLM 0.30.0) were false before third-party bases were understood."""
    from pinport.scan import scan_models
    models, settings = real_models_of("vllm-ascend", "0.30.0rc1", "0.30.0")
    facts = models.facts(settings)
    assert facts.foreign_base("vllm_ascend.models.deepseek_v4.model", "AscendDeepseekV4ForCausalLM")
    assert not facts.foreign_base("vllm_ascend.models.deepseek_v4.model", "DeepseekV2MixtureOfExperts")
    result = scan_models(models, settings, checks=("undefined",), strict=True)
    assert [f for f in result.findings if f.args.get("name") == "named_parameters"] == []
    # the check still judges these modules: a name defined nowhere stays an error
    assert any(f.code == "PP0051" and f.level.value == "error" for f in result.findings)


def test_members_of_a_namedtuple_base_are_defined_on_a_plugin_never_run_before(real_models_of):
    """turboquant-plus-vllm 0.13.12 (open range `vllm>=...`, scanned on vLLM 0.33.0), tried as a new
    user would: `class TuneMetaData(NamedTuple)` reads `self._asdict()` (turboquant_vllm/flute/tune.py:272),
    NamedTuple's own member; before inert bases gave their members this was its one error."""
    from pinport.scan import scan_models
    models, settings = real_models_of("turboquant-plus-vllm", "0.13.12", "0.33.0")
    result = scan_models(models, settings, checks=("undefined",), strict=True)
    assert [f for f in result.findings if f.args.get("name") == "_asdict"] == []
    assert [f for f in result.findings if f.level.value == "error"] == []


def test_a_host_class_swapped_for_a_factory_during_a_constructor(real_models_of):
    """duplexjev-vllm 0.3.0 (no requirement on vLLM; scanned on 0.33.0), a plugin never run before:
    `DuplexJevForConditionalGeneration.__init__` sets `ultravox.UltravoxWhisperEncoder = _make_tower` around
    `super().__init__()` and restores it (duplexjev_vllm/model.py:59). vLLM 0.33.0's ultravox.py only builds
    the encoder, inside `UltravoxModel.__init__` (`vllm/model_executor/models/ultravox.py:694`), and no module
    reads it as `ultravox.UltravoxWhisperEncoder`: the factory serves, no PP0611 error."""
    from pinport.scan import scan_models
    models, settings = real_models_of("duplexjev-vllm", "0.3.0", "0.33.0")
    result = scan_models(models, settings, checks=("host-kinds",), strict=True)
    assert [f for f in result.findings if f.code == "PP0611"] == []


def test_a_declared_receiver_rebound_by_a_host_helper_confirms_the_call(real_models_of):
    """hotwire-vllm 0.1.2 (no requirement on vLLM; scanned on 0.33.0), a plugin never run before: it replaces
    `VllmConfig.compute_hash` with `compute_hash(self)` (hotwire/_patch.py:299). vLLM 0.33.0 calls
    `vllm_config.compute_hash(include_version=False)` (model_executor/warmup/flashinfer_autotune_cache.py:37)
    on a local declared `vllm_config: VllmConfig` (:33) and rebound by `replace(vllm_config, ...)` (:36): the
    declaration types the receiver, so the TypeError there is certain (an error, not a warning)."""
    from pinport.scan import scan_models
    models, settings = real_models_of("hotwire-vllm", "0.1.2", "0.33.0")
    result = scan_models(models, settings, strict=True)  # PP0110 of another check confirms PP0101
    found = [(f.code, f.level.value, f.status.value, f.args["param"], f.new.path, f.new.line,
              [(s.path, s.line) for s in f.sites]) for f in result.findings if f.plugin.line == 299]
    assert found == [("PP0101", "error", "latent", "include_version", "vllm/config/vllm.py", 460,
                      [("vllm/model_executor/warmup/flashinfer_autotune_cache.py", 37)])]


def test_a_host_subclass_built_inside_a_function_defines_its_members(real_models_of):
    """tessera-quant 0.1.0 (`vllm>=0.28`, open; scanned on 0.33.0), a plugin never run before, builds its MoE
    method per route inside a function: `class TesseraMoEMethod(FusedMoEMethodBase)` (serving/moe_route.py:275)
    defines `_load_wire` (:369) and `_record` (:480), which its `create_weights` and `apply` read as `self.`
    members: no PP0051 error (two before class bodies inside functions counted)."""
    from pinport.scan import scan_models
    models, settings = real_models_of("tessera-quant", "0.1.0", "0.33.0")
    result = scan_models(models, settings, checks=("undefined",), strict=True)
    assert [(f.code, f.args.get("name")) for f in result.findings if f.code == "PP0051"] == []


def test_host_helper_handed_self_registers_the_quant_scales(real_models_of):
    """vLLM 0.24.0's `Attention.__init__` hands `self` to `_init_kv_cache_quant` (attention.py:430),
    which calls `set_default_quant_scales(layer, register_buffer=True)` (:153), which registers
    `_k_scale`, `_q_scale`, ... on it (:98-:100): members vllm-rbln 0.11.2's attention patches see."""
    models, _ = real_models_of("vllm-rbln", "0.11.2", "0.24.0")
    view = models.new
    attention = view.resolve("vllm.model_executor.layers.attention.attention.Attention")
    assert attention is not None
    given = view.attributes_from_helpers(attention)
    assert {"_k_scale", "_v_scale", "_q_scale", "_prob_scale"} <= given
    assert "_k_scale" not in attention.obj.instance_attrs  # not assigned on `self` in the class itself


def test_an_implicitly_called_rename_in_place_is_info_where_every_host_call_binds(own_pin_scans):
    """vllm-rbln 0.11.2 replaces gpt_oss `MLPBlock.forward(self, x)` with `(self, hidden_states)`
    (patches/gpt_oss.py:38); vLLM 0.24.0 keeps every MLPBlock in `TransformerBlock.mlp` (gpt_oss.py:243)
    and calls it positionally (`self.mlp(hidden_states)`, :263): info. The true warnings stay."""
    result = own_pin_scans({"plugin": "vllm-rbln", "version": "0.11.2", "host": "0.24.0"})
    rename = [(f.code, f.level.value, f.status.value, f.args["param"], f.new.path, f.new.line, f.old.path, f.old.line)
              for f in _at(result, "PP0101", "vllm_rbln/patches/gpt_oss.py:38") +
              _at(result, "PP0201", "vllm_rbln/patches/gpt_oss.py:38")]
    gpt_oss = "vllm/model_executor/models/gpt_oss.py"
    assert rename == [("PP0101", "info", "latent", "x", gpt_oss, 205, gpt_oss, 205),
                      ("PP0201", "info", "latent", "hidden_states", gpt_oss, 205, gpt_oss, 205)]
    assert all("can fail against the replacement" in f.details[-1] for f in _at(result, "PP0101", "vllm_rbln/patches/gpt_oss.py:38"))
    true = [(f.code, f.level.value, f.status.value, f.args["param"], f.new.path)
            for f in _at(result, "PP0101", "vllm_rbln/v1/worker/rbln_worker.py:281") +
            _at(result, "PP0101", "vllm_rbln/model_executor/layers/fused_moe/runner/moe_runner.py:106")]
    # (RBLNWorker.load_model: info, its one host caller passing load_dummy_weights is gpu_worker.Worker's elastic
    # executor, gpu_worker.py:140; the v2 runner's call is a DraftModelSpeculator's, model_runner.py:294)
    assert true == [("PP0101", "info", "latent", "load_dummy_weights", "vllm/v1/worker/worker_base.py"),
                    ("PP0101", "warning", "latent", "input_ids", "vllm/model_executor/layers/fused_moe/runner/moe_runner.py"),
                    ("PP0101", "warning", "latent", "router_logits", "vllm/model_executor/layers/fused_moe/runner/moe_runner.py")]


def test_moe_apply_overrides_are_info_where_only_a_replaced_runner_reaches_their_host_caller(own_pin_scans):
    """vllm-rbln 0.11.2's MoE methods' `apply(layer, x, router_logits)` lacks vLLM 0.24.0's keywords; the one
    host call passing them (routed_experts.py:1091) is reached only through MoERunner.forward, which
    RBLNMoERunner, installed in place of every MoERunner, overrides (the caller graph, plugin/host_paths.py)."""
    result = own_pin_scans({"plugin": "vllm-rbln", "version": "0.11.2", "host": "0.24.0"})
    layers = "vllm/model_executor/layers/"
    for where, base, line in [
            ("vllm_rbln/model_executor/layers/fused_moe/unquantized_fused_moe_method.py:28",
             layers + "fused_moe/unquantized_fused_moe_method.py", 295),
            ("vllm_rbln/model_executor/layers/quantization/fp8.py:298", layers + "fused_moe/fused_moe_method_base.py", 172),
            ("vllm_rbln/model_executor/layers/quantization/mxfp4.py:120", layers + "quantization/mxfp4.py", 429)]:
        found = sorted((f.code, f.level.value, f.status.value, f.args["param"], f.new.path, f.new.line, f.old.path,
                        f.old.line) for f in _at(result, "PP0101", where))
        assert found == [("PP0101", "info", "latent", p, base, line, base, line)
                         for p in ("shared_experts", "shared_experts_input", "topk_ids", "topk_weights")], where
    # the runner's own true warning stays: other MoE models still pass router_logits= (olmoe.py:117)
    runner = _at(result, "PP0101", "vllm_rbln/model_executor/layers/fused_moe/runner/moe_runner.py:106")
    assert sorted((f.level.value, f.args["param"]) for f in runner) == [("warning", "input_ids"),
                                                                        ("warning", "router_logits")]


def test_vllm_kunlun_pin_read_from_its_readme():
    """vllm-kunlun requires an unversioned vLLM; its README asks for "vLLM (same version as vllm-kunlun)" and
    names the release line in its Version Matrix ("| v0.11.0 | Latest stable version |"). Release 0.11.1
    carries that README, and its platform imports `_Backend` from `vllm.platforms.interface`, which vLLM
    0.11.0 defines and 0.11.1 no longer does: the built-in vllm_kunlun profile reads 0.11.0."""
    tree = release("vllm-kunlun", "0.11.1")
    root = tree.project_root or tree.root
    settings = load_settings(root)
    read, listing = _reader(root)
    assert settings.profile == "vllm_kunlun"
    assert [s.requirement for s in find_pins(read, "vllm", listing) if s.exact] == []
    assert read_pin(settings, read, listing, host_versions) == "0.11.0"
    assert "from vllm.platforms.interface import DeviceCapability, Platform, PlatformEnum, _Backend" in \
        (root / "vllm_kunlun/platforms/kunlun.py").read_text(encoding="utf-8")
