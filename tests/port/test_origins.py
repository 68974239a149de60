"""The right base (#15 part 1): a copy made from a release before OLD is merged from that release,
so the skipped bump's upstream change is in the proposal, and it is a latent finding of its own."""

from dataclasses import replace

from harness import HOST, PLUGIN, SYNTHETIC, expect, inline_tree, only
from pinport.checks.forks import ForksCheck
from pinport.checks.mirrors import MirrorsCheck
from pinport.config import Settings
from pinport.findings import Severity, Status
from pinport.port import CLEAN, plan_port
from pinport.scan import load_models, scan_models
from scenarios import ATTN, ATTN_FORK, DRAINING_ENGINE, DRAINING_MIRRORS, DRAINING_STEPS, PATCHING

# 0.5: what the plugin copied; 1.0 (OLD): counts steps per item, a bump the copy skipped; 2.0 (NEW): annotates
EARLY = DRAINING_ENGINE
OLD = DRAINING_STEPS
NEW = DRAINING_STEPS.replace("        outputs = []\n", "        outputs: list = []\n")


def models(tmp_path, *, history=True, versions=(EARLY, OLD, NEW), path="host/engine.py",
           plugin_files=None):
    settings = Settings(host=HOST, plugin_package=PLUGIN, pin_sources=(), **SYNTHETIC)
    trees = {v: replace(inline_tree(tmp_path / v, HOST, f"host {v}", {path: text}), version=v)
             for v, text in zip(("0.5", "1.0", "2.0"), versions, strict=True)}
    plugin = inline_tree(tmp_path / "plugin", PLUGIN, "plugin",
                         plugin_files or {"plug/patch.py": DRAINING_MIRRORS, **PATCHING})
    loaded = load_models(plugin, trees["1.0"], trees["2.0"], settings, history=(trees["0.5"],) if history else ())
    return loaded, settings


def test_a_copy_from_an_older_release_merges_from_it(tmp_path):
    loaded, settings = models(tmp_path)
    step = {i.copy.unit: i for i in plan_port(loaded, settings)}["EnginePatch.step"]
    assert step.origin is not None and (step.origin.version, step.origin.lags) == ("0.5", True)
    assert step.origin.describe("host 1.0") == "copied from host 0.5 and not updated since: upstream changed it in 1.0"
    assert step.base_label == "host 0.5" and step.status == CLEAN
    proposal = "\n".join(step.proposal)
    assert "self.steps += len(batch)" in proposal  # the skipped bump (0.5 -> 1.0)
    assert "outputs: list = []" in proposal  # the move itself (1.0 -> 2.0)
    assert "if item is None:  # plugin: skip padding" in proposal and "self.compute(item) + 1" in proposal


def test_merging_from_old_would_drop_the_skipped_bump(tmp_path):
    loaded, settings = models(tmp_path, history=False)
    step = {i.copy.unit: i for i in plan_port(loaded, settings)}["EnginePatch.step"]
    assert step.origin is None and "self.steps += len(batch)" not in "\n".join(step.proposal)


def test_a_lagging_copy_is_a_latent_finding_naming_its_release(tmp_path):
    loaded, settings = models(tmp_path)
    result = scan_models(loaded, settings, extra_checks=(MirrorsCheck(),))
    # NEW only annotates `outputs`: nothing to port OLD -> NEW, so the change finding is context (info)
    expect(result, ["PP1201 info drift", "PP1204 warning latent"])
    finding = only(result, "PP1204")
    assert (finding.status, finding.level) == (Status.LATENT, Severity.WARNING)
    assert finding.plugin.path == "plug/patch.py" and finding.plugin.unit == "EnginePatch.step"
    assert finding.plugin.column == 0  # the copy's first line, cited whole
    assert (finding.old.path, finding.old.snippet) == ("host/engine.py", "def step(self, batch):")
    assert finding.new.path == "host/engine.py" and finding.subject == "host.engine.Engine.step"
    assert finding.args["origin"] == "copied from host 0.5 and not updated since: upstream changed it in 1.0"
    assert finding.extra["origin"] == "0.5" and finding.extra["changed_in"] == ["1.0"]
    assert "-        self.steps += 1" in finding.details and "+        self.steps += len(batch)" in finding.details
    # drain was copied from 0.5 too, but 1.0 did not change it: current, no finding
    assert [f.plugin.unit for f in result.findings if f.code == "PP1204"] == ["EnginePatch.step"]


def test_without_the_history_there_is_no_lag_finding(tmp_path):
    loaded, settings = models(tmp_path, history=False)
    expect(scan_models(loaded, settings, extra_checks=(MirrorsCheck(),)), ["PP1201 info drift", "no PP1204"])


def test_a_fork_of_an_older_release_is_a_latent_finding(tmp_path):
    old = ATTN.replace("return output * self.scale", "return (output * self.scale).float()")
    new = old.replace("lengths = metadata.seq_lens", "lengths = metadata.seq_lens_cpu")
    loaded, settings = models(tmp_path, versions=(ATTN, old, new), path="host/attn.py",
                              plugin_files={"plug/tree_attn.py": ATTN_FORK})
    result = scan_models(loaded, settings, extra_checks=(ForksCheck(),))
    expect(result, ["PP0801 warning drift", "PP0807 warning latent"])
    lag = only(result, "PP0807")
    assert (lag.plugin.path, lag.subject, lag.old.path, lag.new.path) == (
        "plug/tree_attn.py", "host.attn", "host/attn.py", "host/attn.py")
    assert lag.args["origin"] == "copied from host 0.5 and not updated since: upstream changed it in 1.0"
    assert "+        return (output * self.scale).float()" in lag.details
    [fork] = plan_port(loaded, settings)
    assert fork.base_label == "host 0.5" and "(output * self.scale).float()" in fork.merge.text
    assert "metadata.seq_lens_cpu" in fork.merge.text and fork.status == CLEAN
    current, settings = models(tmp_path / "current", versions=(old, old, new), path="host/attn.py",
                               plugin_files={"plug/tree_attn.py": ATTN_FORK})
    expect(scan_models(current, settings, extra_checks=(ForksCheck(),)), ["PP0801 warning drift", "no PP0807"])


# 1.0 changed only what does not run in the step 0.5 had: a docstring, annotations, an assert
COSMETIC = DRAINING_ENGINE.replace("    def step(self, batch):\n", '    def step(self, batch: list) -> list:\n'
                                   '        """Run one batch."""\n').replace(
    "        outputs = []\n", "        outputs: list = []\n        assert batch is not None\n")


def test_a_copy_missing_only_cosmetic_upstream_changes_does_not_lag(tmp_path):
    loaded, settings = models(tmp_path, versions=(EARLY, COSMETIC, COSMETIC))
    step = {i.copy.unit: i for i in plan_port(loaded, settings)}["EnginePatch.step"]
    assert step.origin is not None and step.origin.version == "0.5" and step.origin.changed_in == ("1.0",)
    assert step.origin.missed.hunks and step.origin.missed.pending == ()  # each hunk is cosmetic
    assert all(h.cosmetic and not h.reflected for h in step.origin.missed.hunks)
    assert not step.origin.lags
    expect(scan_models(loaded, settings, extra_checks=(MirrorsCheck(),)), ["no PP1204", "no PP1201"])


def test_a_cosmetic_change_next_to_a_running_one_still_lags(tmp_path):
    changed = COSMETIC.replace("self.steps += 1", "self.steps += len(batch)")
    loaded, settings = models(tmp_path, versions=(EARLY, changed, changed))
    result = scan_models(loaded, settings, extra_checks=(MirrorsCheck(),))
    expect(result, ["PP1204 warning latent"])
    finding = only(result, "PP1204")
    assert finding.args["pending"] == 1 and "+        self.steps += len(batch)" in finding.details
    assert finding.extra["origin"] == "0.5" and finding.extra["changed_in"] == ["1.0"]


def test_an_upstream_hunk_of_annotations_only_is_not_to_port(tmp_path):
    """OLD -> NEW annotates `outputs` only (NEW above): the mirror's change finding says nothing is to port."""
    loaded, settings = models(tmp_path, history=False)
    finding = only(scan_models(loaded, settings, extra_checks=(MirrorsCheck(),)), "PP1201")
    assert (finding.args["pending"], finding.args["hunks"], finding.level) == (0, 1, Severity.INFO)
    assert any(d.endswith("nothing to port (no running code changes)") for d in finding.details)


# 1.0 changed only how fast step runs: it dropped a dense copy the copy keeps and added a compile hint
_DENSE = "value = self.compute(item.contiguous())"
SPEED = DRAINING_ENGINE.replace("        for item in batch:\n", "        torch._dynamo.decorators.mark_unbacked("
                                "batch, 0)\n        for item in batch:\n")


def test_a_copy_missing_only_speed_changes_does_not_lag(tmp_path):
    """Upstream dropped `.contiguous()` (the copy keeps the same values, densely copied) and added a
    torch._dynamo shape hint: nothing the copy computes differs, so nothing is to port."""
    early = DRAINING_ENGINE.replace("value = self.compute(item)", _DENSE)
    plugin = {"plug/patch.py": DRAINING_MIRRORS.replace("self.compute(item) + 1", "self.compute(item.contiguous()) + 1"),
              **PATCHING}
    loaded, settings = models(tmp_path, versions=(early, SPEED, SPEED), plugin_files=plugin)
    step = {i.copy.unit: i for i in plan_port(loaded, settings)}["EnginePatch.step"]
    assert step.origin is not None and step.origin.version == "0.5" and step.origin.changed_in == ("1.0",)
    assert step.origin.missed.hunks and step.origin.missed.pending == ()
    assert all(h.speed_only and not h.cosmetic and not h.reflected for h in step.origin.missed.hunks)
    assert any(d.endswith("nothing to port (only speed or debug checks: memory pinning, a dropped copy, compile "
                          "hints, a debug-mode block)")
               for d in step.origin.missed.diff_lines())
    expect(scan_models(loaded, settings, extra_checks=(MirrorsCheck(),)), ["no PP1204", "no PP1201"])


def test_an_added_dense_copy_still_lags(tmp_path):
    """Upstream adding `.contiguous()` can be a fix (a kernel or a `view` needing dense memory): to port."""
    old = DRAINING_ENGINE.replace("value = self.compute(item)", _DENSE)
    loaded, settings = models(tmp_path, versions=(EARLY, old, old))
    result = scan_models(loaded, settings, extra_checks=(MirrorsCheck(),))
    expect(result, ["PP1204 warning latent"])
    finding = only(result, "PP1204")
    assert finding.args["pending"] == 1 and f"+            {_DENSE}" in finding.details
    assert finding.extra["origin"] == "0.5" and finding.extra["changed_in"] == ["1.0"]


def _guarded(source: str) -> str:
    """DRAINING_ENGINE importing `guard` from `source`, with 1.0's step computing each value inside it."""
    return f"from {source} import guard\n" + DRAINING_ENGINE.replace(
        "            value = self.compute(item)\n", "            with guard():\n                value = self.compute(item)\n")


def test_a_copy_missing_only_a_debug_mode_block_does_not_lag(tmp_path):
    """Upstream wrapped a statement in a context manager of its debugging module (a check that is a no-op
    unless a debug mode is on): the copy computes the same without it."""
    early = "from host.sync_debug import guard\n" + DRAINING_ENGINE
    loaded, settings = models(tmp_path, versions=(early, _guarded("host.sync_debug"), _guarded("host.sync_debug")))
    step = {i.copy.unit: i for i in plan_port(loaded, settings)}["EnginePatch.step"]
    assert step.origin is not None and step.origin.version == "0.5" and step.origin.missed.pending == ()
    assert all(h.speed_only for h in step.origin.missed.hunks)
    expect(scan_models(loaded, settings, extra_checks=(MirrorsCheck(),)), ["no PP1204", "no PP1201"])


def test_a_block_of_another_context_manager_still_lags(tmp_path):
    """A context manager from any other module (a lock, a forward context, no_grad) can change what runs."""
    early = "from host.locks import guard\n" + DRAINING_ENGINE
    loaded, settings = models(tmp_path, versions=(early, _guarded("host.locks"), _guarded("host.locks")))
    result = scan_models(loaded, settings, extra_checks=(MirrorsCheck(),))
    expect(result, ["PP1204 warning latent"])
    finding = only(result, "PP1204")
    assert finding.args["pending"] == 1 and "+            with guard():" in finding.details


# 1.0 reads the step's stride without 0.5's getattr guard, through a local: the same value (Engine sets config)
_STRIDED = "self.steps += getattr(self.config, 'stride', 1)"
_STRIDE_BOUND = "stride = self.config.stride\n        self.steps += stride"


def test_a_copy_missing_only_a_refactor_does_not_lag(tmp_path):
    """Upstream dropped a getattr guard and bound the read to a local: the copy computes the same."""
    early = DRAINING_ENGINE.replace("self.steps += 1", _STRIDED)
    refactored = DRAINING_ENGINE.replace("self.steps += 1", _STRIDE_BOUND)
    plugin = {"plug/patch.py": DRAINING_MIRRORS.replace("self.steps += 1", _STRIDED), **PATCHING}
    loaded, settings = models(tmp_path, versions=(early, refactored, refactored), plugin_files=plugin)
    step = {i.copy.unit: i for i in plan_port(loaded, settings)}["EnginePatch.step"]
    assert step.origin is not None and step.origin.version == "0.5" and step.origin.changed_in == ("1.0",)
    assert step.origin.missed.hunks and step.origin.missed.pending == ()
    assert all(h.refactor_only and not h.speed_only and not h.cosmetic for h in step.origin.missed.hunks)
    expect(scan_models(loaded, settings, extra_checks=(MirrorsCheck(),)), ["no PP1204", "no PP1201"])


def test_an_added_getattr_guard_still_lags(tmp_path):
    """Upstream guarding a read it made plainly can be a fix (the attribute may be missing now): to port."""
    plain = DRAINING_ENGINE.replace("self.steps += 1", "self.steps += self.config.stride")
    guarded = DRAINING_ENGINE.replace("self.steps += 1", _STRIDED)
    plugin = {"plug/patch.py": DRAINING_MIRRORS.replace("self.steps += 1", "self.steps += self.config.stride"),
              **PATCHING}
    loaded, settings = models(tmp_path, versions=(plain, guarded, guarded), plugin_files=plugin)
    result = scan_models(loaded, settings, extra_checks=(MirrorsCheck(),))
    expect(result, ["PP1204 warning latent"])
    finding = only(result, "PP1204")
    assert finding.args["pending"] == 1 and f"+        {_STRIDED}" in finding.details
    assert finding.extra["origin"] == "0.5" and finding.extra["changed_in"] == ["1.0"]


# 1.0 gave step a parameter its body does not use (a caller's hint), or counted the steps by a helper
_HINTED = DRAINING_ENGINE.replace("def step(self, batch):", "def step(self, batch, hint=None):")
_HELPED = DRAINING_ENGINE.replace("self.steps += 1", "self.steps += count_steps(batch)")


def test_a_copy_missing_only_a_parameter_does_not_lag(tmp_path):
    """The parameter changes nothing the copy computes; what callers pass is the signature checks' to judge."""
    loaded, settings = models(tmp_path, versions=(EARLY, _HINTED, _HINTED))
    step = {i.copy.unit: i for i in plan_port(loaded, settings)}["EnginePatch.step"]
    assert step.origin is not None and step.origin.version == "0.5" and step.origin.changed_in == ("1.0",)
    assert step.origin.missed.hunks and step.origin.missed.pending == ()
    assert all(h.parameters_only for h in step.origin.missed.hunks)
    expect(scan_models(loaded, settings, extra_checks=(MirrorsCheck(),)), ["no PP1204", "no PP1201"])


def test_a_copy_naming_the_change_it_does_without_does_not_lag(tmp_path):
    """The copy's comment names upstream's `count_steps`: it keeps its own count on purpose."""
    plugin = {"plug/patch.py": DRAINING_MIRRORS.replace("self.steps += 1", "self.steps += 1  # not count_steps"),
              **PATCHING}
    loaded, settings = models(tmp_path, versions=(EARLY, _HELPED, _HELPED), plugin_files=plugin)
    step = {i.copy.unit: i for i in plan_port(loaded, settings)}["EnginePatch.step"]
    assert step.origin is not None and step.origin.version == "0.5"
    assert [h.acknowledged for h in step.origin.missed.hunks] == [("count_steps",)]
    expect(scan_models(loaded, settings, extra_checks=(MirrorsCheck(),)), ["no PP1204", "no PP1201"])


def test_a_changed_default_or_an_unnamed_helper_still_lags(tmp_path):
    """A default upstream changed gives callers that omit it another value; a helper the copy does not name
    is a change it may not know of."""
    hinted = DRAINING_MIRRORS.replace("def step(self, batch):", "def step(self, batch, hint=None):")
    for k, (early, old, mirrors) in enumerate(((_HINTED, _HINTED.replace("hint=None", "hint=0"), hinted),
                                               (EARLY, _HELPED, DRAINING_MIRRORS))):
        loaded, settings = models(tmp_path / str(k), versions=(early, old, old),
                                  plugin_files={"plug/patch.py": mirrors, **PATCHING})
        result = scan_models(loaded, settings, extra_checks=(MirrorsCheck(),))
        expect(result, ["PP1204 warning latent"])
        assert only(result, "PP1204").args["pending"] == 1


# 1.0 takes `math` from a host module of its own (and documents `reset`, which changes nothing that runs)
_MATH_MOVED = ATTN.replace("\nimport math\n", "\nfrom host.fastmath import math\n").replace(
    "    def reset(self):\n", '    def reset(self):\n        """Forget the cached state."""\n')


def test_a_fork_binding_a_moved_name_its_own_way_does_not_lag(tmp_path):
    """Upstream changed only where `math` comes from; the fork takes its own `math`: nothing to port."""
    fork = ATTN_FORK.replace("\nimport math\n", "\nfrom plug.kernels import math\n")
    loaded, settings = models(tmp_path, versions=(ATTN, _MATH_MOVED, _MATH_MOVED), path="host/attn.py",
                              plugin_files={"plug/tree_attn.py": fork})
    [item] = plan_port(loaded, settings)
    assert item.origin is not None and item.origin.version == "0.5" and item.origin.missed.pending == ()
    assert [h.imports_only for h in item.origin.missed.hunks] == [True, False]
    expect(scan_models(loaded, settings, extra_checks=(ForksCheck(),)), ["no PP0807"])


def test_a_fork_keeping_the_old_source_of_a_moved_name_still_lags(tmp_path):
    """The fork still imports the `math` upstream replaced (and an import added for no use is a side effect)."""
    side_effect = ATTN.replace("\nimport math\n", "\nimport math\nimport host.registrations\n").replace(
        "    def reset(self):\n", '    def reset(self):\n        """Forget the cached state."""\n')
    for k, old in enumerate((_MATH_MOVED, side_effect)):
        loaded, settings = models(tmp_path / str(k), versions=(ATTN, old, old), path="host/attn.py",
                                  plugin_files={"plug/tree_attn.py": ATTN_FORK})
        result = scan_models(loaded, settings, extra_checks=(ForksCheck(),))
        expect(result, ["PP0807 warning latent"])
        assert only(result, "PP0807").args["pending"] == 1


def test_an_import_for_a_use_in_another_hunk_leaves_that_hunk_to_port(tmp_path):
    """The import hunk binds `PAD` for a use upstream has further down: the import is nothing to port on its own,
    the hunk using it is."""
    padded = ATTN.replace("\nimport math\n", "\nimport math\n\nfrom host.consts import PAD\n").replace(
        "        self.num_heads = 0\n", "        self.num_heads = PAD\n")
    loaded, settings = models(tmp_path, versions=(ATTN, padded, padded), path="host/attn.py",
                              plugin_files={"plug/tree_attn.py": ATTN_FORK})
    [item] = plan_port(loaded, settings)
    assert [(h.imports_only, h.to_port) for h in item.origin.missed.hunks] == [(True, False), (False, True)]
    result = scan_models(loaded, settings, extra_checks=(ForksCheck(),))
    expect(result, ["PP0807 warning latent"])
    assert only(result, "PP0807").args["pending"] == 1


# A long step: a copy one small change away from 0.5 and another from 1.0 scores both within the tie margin
_LONG_STEP = "    def step(self, batch):\n        outputs = []\n" + "".join(
    f"        total_{k} = self.compute(batch[{k}]) + len(outputs) * {k}\n" for k in range(24)) + (
    "        value = self.compute(batch)\n        outputs.append(value)\n        return outputs\n")
_LONG_EARLY = DRAINING_ENGINE.replace("    def step(self, batch):\n", _LONG_STEP + "\n    def old_step(self, batch):\n")
# 1.0 takes a scale (and applies it) and annotates outputs
_LONG_SCALED = _LONG_EARLY.replace("def step(self, batch):", "def step(self, batch, scale):").replace(
    "value = self.compute(batch)\n", "value = self.compute(batch) * scale\n").replace(
    "        outputs = []\n        total_0", "        outputs: list = []\n        total_0")


def _long_copy(step: str) -> dict[str, str]:
    return {"plug/patch.py": "from plug.patching import ArcticPatch\nfrom host.engine import Engine\n\n\n"
            "class EnginePatch(ArcticPatch[Engine]):\n" + step.replace(
                "outputs.append(value)", "outputs.append(value)  # plugin\n        print(len(outputs))"),
            **PATCHING}


def test_a_near_tie_with_a_copy_knowing_the_newer_code_is_current(tmp_path):
    """The copy takes 1.0's `scale` (wrapped and annotated the 0.5 way): 0.5 wins by a hair only, and the
    copy names code 0.5 does not have, so it was made from 1.0's."""
    copy = _LONG_STEP.replace("def step(self, batch):", "def step(self, batch, scale):")
    loaded, settings = models(tmp_path, versions=(_LONG_EARLY, _LONG_SCALED, _LONG_SCALED),
                              plugin_files=_long_copy(copy))
    step = {i.copy.unit: i for i in plan_port(loaded, settings)}["EnginePatch.step"]
    assert step.origin is not None and (step.origin.version, step.origin.changed_in) == ("1.0", ())
    expect(scan_models(loaded, settings, extra_checks=(MirrorsCheck(),)), ["no PP1204"])


def test_a_near_tie_with_a_copy_not_knowing_the_newer_code_still_lags(tmp_path):
    """One changed line in a long function is a small margin too: without a name of 1.0's the copy is 0.5's."""
    loaded, settings = models(tmp_path, versions=(_LONG_EARLY, _LONG_SCALED, _LONG_SCALED),
                              plugin_files=_long_copy(_LONG_STEP))
    step = {i.copy.unit: i for i in plan_port(loaded, settings)}["EnginePatch.step"]
    assert step.origin is not None and step.origin.version == "0.5" and step.origin.score - step.origin.old_score < 0.01
    result = scan_models(loaded, settings, extra_checks=(MirrorsCheck(),))
    expect(result, ["PP1204 warning latent"])
    assert only(result, "PP1204").args["pending"] == 1


def test_a_near_tie_with_a_copy_knowing_only_some_newer_code_still_lags(tmp_path):
    """A partial port: the copy takes 1.0's `scale` but not its `limit`, so it may lack that change."""
    limited = _LONG_SCALED.replace("outputs.append(value)\n        return outputs\n", "outputs.append(value)\n        return outputs[: self.limit]\n")
    copy = _LONG_STEP.replace("def step(self, batch):", "def step(self, batch, scale):")
    loaded, settings = models(tmp_path, versions=(_LONG_EARLY, limited, limited), plugin_files=_long_copy(copy))
    step = {i.copy.unit: i for i in plan_port(loaded, settings)}["EnginePatch.step"]
    assert step.origin is not None and step.origin.version == "0.5" and step.origin.score - step.origin.old_score < 0.01
    expect(scan_models(loaded, settings, extra_checks=(MirrorsCheck(),)), ["PP1204 warning latent"])
