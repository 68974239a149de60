"""The HTML report as a document: self-contained, escaped, filter data on every finding."""

from __future__ import annotations

import re
from dataclasses import replace

from pinport.findings import Location
from pinport.report.excerpts import Excerpt, HtmlContext, PortView
from pinport.report.html import render_html


def test_self_contained_document(result) -> None:
    out = render_html(result)
    assert out.startswith("<!DOCTYPE html>") and out.rstrip().endswith("</html>")
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", out)  # nothing fetched from anywhere
    assert "http://" not in out and "https://" not in out
    assert "default-src 'none'" in out


def test_every_finding_carries_its_filter_data(result) -> None:
    out = render_html(result)
    articles = re.findall(r"<article class='finding' ([^>]*)>", out)
    assert len(articles) == len(result.findings)
    signature = next(a for a in articles if "data-code='PP0201'" in a)
    assert "data-severity='error'" in signature and "data-status='drift'" in signature
    assert "data-check='override_signature'" in signature and "data-drift='2'" in signature


def test_untrusted_text_is_escaped(one_finding) -> None:
    out = render_html(one_finding(args={"name": "<script>alert(1)</script>", "module": "b"},
                                  old=Location("h.py", 1, 0, "f", "x = '</pre><img src=x>'")))
    assert "<script>alert(1)</script>" not in out and "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert "<img src=x>" not in out


def test_excerpts_and_port_proposal(result) -> None:
    finding = next(f for f in result.findings if f.code == "PP0201")
    mirror = replace(finding, kind=replace(finding.kind, code="PP1201", drift=12, check="mirrors"))
    ctx = HtmlContext(
        excerpts={("plugin", finding.plugin.path, 42): Excerpt(finding.plugin.path, 40, ("a", "b", "def f():"), 42)},
        ports={(finding.plugin.path, finding.plugin.unit): PortView(
            "mirror", finding.plugin.path, finding.plugin.unit, "vllm.x.f", "conflict", "x = 1\ny = 2\n",
            "x = 1\ny = 3\n", "x = 1\ny = 9\n", "x = 1\n<<<<<<< plugin\ny = 9\n=======\ny = 3\n>>>>>>> NEW\n", 1)})
    out = render_html(replace(result, findings=(mirror,)), ctx)
    assert "<span data-n='42' class=focus>def f():</span>" in out
    assert "<tr class='replace'><td class='n'>2</td><td class='l'>y = 2</td><td class='n'>2</td><td class='r'>y = 3</td></tr>" in out
    assert "<span data-n='2' class=marker>&lt;&lt;&lt;&lt;&lt;&lt;&lt; plugin</span>" in out
    assert "<span data-n='3' class=conflict>y = 9</span>" in out
    assert "conflict, 1 conflicts" in out
