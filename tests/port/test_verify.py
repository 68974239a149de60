"""Every proposal verified (#15 part 4): a clean merge is offered as clean only when its file parses
and re-scanning it adds nothing to the merged unit and clears what the merge was meant to fix."""

from pinport.port import CLEAN, UNVERIFIED, plan_port, port_json, run_port, verified_merges
from pinport.port import plan as plan_module
from scenarios import DRAINING_ENGINE, DRAINING_MIRRORS, DRAINING_STEPS, PATCHING

# the plugin's own line in step reads `self.config`; NEW stops setting it (and changes step elsewhere)
CONFIGURED = DRAINING_MIRRORS.replace("            outputs.append(value)\n",
                                      "            outputs.append(value)\n            self.config.log(value)\n")
WITHOUT_CONFIG = DRAINING_STEPS.replace("        self.config = config\n", "")


def test_clean_merges_that_pass_are_verified(load):
    models, settings, _ = load({"host/engine.py": DRAINING_ENGINE}, {"host/engine.py": DRAINING_STEPS},
                               {"plug/patch.py": DRAINING_MIRRORS, **PATCHING})
    report = run_port(models, settings)
    step = {i.copy.unit: i for i in report.items}["EnginePatch.step"]
    assert (step.status, step.verified, step.verification) == (CLEAN, True, "")
    assert [i.copy.unit for i in verified_merges(models, settings)] == ["EnginePatch.step"]
    assert report.counts()["verified"] == 1


def test_a_merge_that_still_uses_a_member_new_dropped_is_not_clean(load):
    models, settings, _ = load({"host/engine.py": DRAINING_ENGINE}, {"host/engine.py": WITHOUT_CONFIG},
                               {"plug/patch.py": CONFIGURED, **PATCHING})
    assert {i.copy.unit: i.status for i in plan_port(models, settings)}["EnginePatch.step"] == CLEAN  # unverified
    report = run_port(models, settings)
    step = {i.copy.unit: i for i in report.items}["EnginePatch.step"]
    assert step.status == UNVERIFIED and not step.verified
    assert step.verification.startswith("still PP1202 after the merge: the mirror of `host.engine.Engine.step` "
                                        "uses `self.config`")
    assert verified_merges(models, settings) == ()
    assert '"status": "unverified"' in port_json(report)


def test_a_proposal_that_does_not_parse_is_not_clean(load, monkeypatch):
    models, settings, _ = load({"host/engine.py": DRAINING_ENGINE}, {"host/engine.py": DRAINING_STEPS},
                               {"plug/patch.py": DRAINING_MIRRORS, **PATCHING})
    real = plan_module.merge_copy

    def broken(ours, base, theirs, labels):
        merged, *rest = real(ours, base, theirs, labels)
        return (plan_module.MergeResult(merged.text.replace("return outputs", "return outputs)"), ()), *rest)

    monkeypatch.setattr(plan_module, "merge_copy", broken)
    step = {i.copy.unit: i for i in run_port(models, settings).items}["EnginePatch.step"]
    assert step.status == UNVERIFIED and step.verification.startswith("the proposed file does not parse")
