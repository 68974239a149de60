"""Mirrored methods (#12): a positive and a negative case per kind, asserted as whole findings and on evidence."""

import pytest

from harness import expect, only, run_scan
from pinport.checks.mirrors import MirrorsCheck
from pinport.findings import Severity
from scenarios import LOGGING_ENGINE as ENGINE
from scenarios import LOGGING_MIRROR as MIRROR
from scenarios import PATCHING

PATCH = "plug/patch.py"
STEPS = ENGINE.replace("self.steps += 1", "self.steps += len(batch)")  # upstream changes one line
RENAMED = STEPS.replace("log_details", "capture_details")  # ... and renames a helper the body calls


def scan(new, plugin=MIRROR, old=ENGINE, **settings):
    return run_scan({"host/engine.py": old}, {"host/engine.py": new}, {PATCH: plugin, **PATCHING},
                    checks=(MirrorsCheck(),), **settings)


@pytest.mark.parametrize(("new", "plugin", "expected"), [
    (STEPS, MIRROR, ["PP1201 warning drift"]),  # 12: upstream changed the mirrored body
    (ENGINE, MIRROR, ["no PP1201", "no PP1202"]),  # unchanged twin
    (ENGINE.replace("return outputs", "return outputs  # done"), MIRROR, ["no PP1201"]),  # a comment is no change
    (RENAMED, MIRROR, ["PP1201 warning drift", "PP1202 error drift"]),  # 12: and NEW no longer defines a member the mirror uses
    # the plugin defines the renamed member itself: nothing missing
    (RENAMED, MIRROR + "\n    def log_details(self, outputs):\n        return 0\n", ["PP1201 warning drift"]),
])
def test_mirror_kinds(new, plugin, expected):
    expect(scan(new, plugin), expected)


def test_changed_mirror_evidence_and_diff():
    result = scan(STEPS)
    expect(result, ["PP1201 warning drift"])
    finding = only(result, "PP1201")
    assert finding.status.value == "drift" and finding.level is Severity.WARNING
    assert (finding.plugin.path, finding.plugin.line, finding.plugin.unit) == (PATCH, 6, "EnginePatch.step")
    assert (finding.old.path, finding.old.line, finding.new.line) == ("host/engine.py", 12, 12)
    assert finding.subject == "host.engine.Engine.step"
    assert finding.args["pending"] == 1 and finding.args["hunks"] == 1
    assert finding.details[0].startswith("plugin copy (similarity")
    assert finding.details[1] == "plugin lines added (plug/patch.py): 9-10"
    diff = finding.details[2:]
    assert diff[:2] == ("--- a/host/engine.py", "+++ b/host/engine.py")
    assert diff[2].startswith("@@ -14,6 +14,6 @@") and diff[2].endswith("not in the plugin copy")
    assert "-        self.steps += 1" in diff and "+        self.steps += len(batch)" in diff


def test_already_ported_mirror_is_info():
    result = scan(STEPS, MIRROR.replace("self.steps += 1", "self.steps += len(batch)"))
    expect(result, ["PP1201 info drift"])
    finding = only(result, "PP1201")
    assert finding.level is Severity.INFO and finding.args["pending"] == 0
    assert finding.details[4].endswith("already in the plugin copy")


def test_removed_member_links_the_rename():
    result = scan(RENAMED)
    expect(result, ["PP1201 warning drift", "PP1202 error drift"])
    finding = only(result, "PP1202")
    assert finding.args["name"] == "log_details" and "capture_details" in finding.args["rename"]
    assert (finding.plugin.path, finding.plugin.line) == (PATCH, 14)
    assert finding.old.path == "host/engine.py" and finding.old.line == 6
    assert finding.new.path == "host/engine.py" and "capture_details" in finding.new.snippet
    assert finding.level is Severity.ERROR


def test_threshold_setting_turns_detection_off():
    expect(scan(STEPS, mirror_threshold=0.99), ["no PP1201"])


def test_best_match_mirror_whose_source_is_gone():
    plugin = MIRROR.replace("def step(self, batch):", "def step_fast(self, batch):")
    gone = ENGINE.replace("def step(self, batch):", "def run(self, batch):")
    result = scan(gone, plugin)
    expect(result, ["PP1203 warning drift"])
    finding = only(result, "PP1203")
    assert finding.subject == "host.engine.Engine.step" and finding.new is None
    expect(scan(ENGINE, plugin), ["no PP1203"])  # the twin: the copied method is still there
