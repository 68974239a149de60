"""The right base (#15 part 1): a copy made from a release before OLD is merged from that release,
so the skipped bump's upstream change is in the proposal, and it is a latent finding of its own."""

from dataclasses import replace

from harness import HOST, PLUGIN, inline_tree, only
from pinport.checks.mirrors import MirrorsCheck
from pinport.config import Settings
from pinport.findings import Severity, Status
from pinport.port import CLEAN, plan_port
from pinport.scan import load_models, scan_models
from scenarios import DRAINING_ENGINE, DRAINING_MIRRORS, DRAINING_STEPS, PATCHING

# 0.5: what the plugin copied; 1.0 (OLD): counts steps per item, a bump the copy skipped; 2.0 (NEW): annotates
EARLY = DRAINING_ENGINE
OLD = DRAINING_STEPS
NEW = DRAINING_STEPS.replace("        outputs = []\n", "        outputs: list = []\n")


def models(tmp_path, *, history=True):
    settings = Settings(host=HOST, plugin_package=PLUGIN, pin_sources=())
    trees = {v: replace(inline_tree(tmp_path / v, HOST, f"host {v}", {"host/engine.py": text}), version=v)
             for v, text in (("0.5", EARLY), ("1.0", OLD), ("2.0", NEW))}
    plugin = inline_tree(tmp_path / "plugin", PLUGIN, "plugin", {"plug/patch.py": DRAINING_MIRRORS, **PATCHING})
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
    finding = only(result, "PP1204")
    assert (finding.status, finding.level) == (Status.LATENT, Severity.WARNING)
    assert finding.plugin.path == "plug/patch.py" and finding.plugin.unit == "EnginePatch.step"
    assert (finding.old.path, finding.old.snippet) == ("host/engine.py", "def step(self, batch):")
    assert finding.new.path == "host/engine.py" and finding.subject == "host.engine.Engine.step"
    assert finding.args["origin"] == "copied from host 0.5 and not updated since: upstream changed it in 1.0"
    assert finding.extra["origin"] == "0.5" and finding.extra["changed_in"] == ["1.0"]
    assert "-        self.steps += 1" in finding.details and "+        self.steps += len(batch)" in finding.details
    # drain was copied from 0.5 too, but 1.0 did not change it: current, no finding
    assert [f.plugin.unit for f in result.findings if f.code == "PP1204"] == ["EnginePatch.step"]
