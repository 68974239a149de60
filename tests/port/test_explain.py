"""Every conflict explained (#15 part 3): the sides, upstream's change, and a suggestion when one
side's change is a pure rename, an added argument or added statements."""

import json

from pinport.port import explain_conflicts, port_json, port_markdown, render_port, run_port
from pinport.port.explain import _suggest
from pinport.report.excerpts import build_html_context
from pinport.report.html import render_html
from pinport.scan import scan_models
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
    text = render_port(report)
    assert "conflict plug/patch.py:20 in EnginePatch.step" in text and "+            value = self.compute(item) * 2" in text
    assert json.loads(port_json(report))["conflicts"] == [conflict.as_dict()]
    # and in the HTML report: the three columns of the block, beside the merge proposal
    result = scan_models(models, settings)
    html = render_html(result, build_html_context(models, settings, result))
    block = html[html.index("<div class='conflict-explained' data-line='20' data-kind=''>"):]
    block = block[:block.index("</div></div>") + len("</div></div>")]
    assert [h for h in ("<h4>plugin</h4>", "<h4>upstream OLD → NEW</h4>", "<h4>suggested resolution</h4>")
            if h in block] == ["<h4>plugin</h4>", "<h4>upstream OLD → NEW</h4>", "<h4>suggested resolution</h4>"]
    assert "<span>            value = self.compute(item) + 1</span>" in block
    assert "<span class=del>-            value = self.compute(item)</span>" in block
    assert "<span class=ins>+            value = self.compute(item) * 2</span>" in block
