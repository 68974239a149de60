"""Every conflict explained (#15 part 3): the sides, upstream's change, and a suggestion when one
side's change is a pure rename, an added argument or added statements."""

from pinport.port import explain_conflicts, port_markdown, run_port
from pinport.port.explain import _suggest
from scenarios import DRAINING_ENGINE as ENGINE
from scenarios import DRAINING_MIRRORS, PATCHING
from scenarios import DRAINING_SCALED as SCALED


def test_a_pure_upstream_rename_suggests_the_plugin_lines_renamed():
    kind, suggestion, resolution = _suggest(["    x = self.old_name + 1  # plugin"], ["    x = self.old_name"],
                                            ["    x = self.new_name"])
    assert kind == "rename" and "self.old_name -> self.new_name" in suggestion
    assert resolution == ["    x = self.new_name + 1  # plugin"]


def test_an_added_argument_and_added_statements_are_named():
    kind, suggestion, _ = _suggest(["    f(a, b) + 1"], ["    f(a, b)"], ["    f(a, b, c=2)"])
    assert kind == "added argument" and "`c = 2`" in suggestion
    kind, _, resolution = _suggest(["    a = 2  # plugin", "    b = 1"], ["    a = 1", "    b = 1"],
                                   ["    a = 1", "    b = 1", "    c = 3"])
    assert kind == "added statements" and resolution == ["    a = 2  # plugin", "    b = 1", "    c = 3"]
    assert _suggest(["    a = 2"], ["    a = 1"], [])[0] == "removed upstream"


def test_conflicts_are_explained_in_every_format(load):
    models, settings, _ = load({"host/engine.py": ENGINE}, {"host/engine.py": SCALED},
                               {"plug/patch.py": DRAINING_MIRRORS, **PATCHING})
    report = run_port(models, settings)
    [conflict] = explain_conflicts(report.items)
    assert (conflict.path, conflict.line, conflict.unit) == ("plug/patch.py", 20, "EnginePatch.step")
    assert conflict.plugin == ("            value = self.compute(item) + 1",)
    assert conflict.upstream_change == ("@@ -1 +1 @@", "-            value = self.compute(item)",
                                        "+            value = self.compute(item) * 2")
    assert conflict.as_dict()["kind"] == "" and "merge by hand" in conflict.suggestion
    markdown = port_markdown(report)
    assert "## Conflict at `plug/patch.py:20` (EnginePatch.step)" in markdown
    assert "+            value = self.compute(item) * 2" in markdown
