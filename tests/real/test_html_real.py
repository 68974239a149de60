"""The HTML report of the default job in a real headless Chromium: loads clean, filters work, ports shown."""

from __future__ import annotations

from browser import ARTIFACTS, browser_page
from pinport.findings import Severity
from pinport.report.excerpts import build_html_context
from pinport.report.html import render_html


def _visible(page) -> list[dict[str, str]]:
    return page.eval_on_selector_all(".finding:not([hidden])", "els => els.map(e => ({...e.dataset}))")


def test_html_report_in_chromium(real_scan, real_models, tmp_path):
    result = real_scan("0.3.0", "0.26.0", "0.33.0", ())
    models, settings = real_models("0.3.0", "0.26.0", "0.33.0")
    context = build_html_context(models, settings, result)
    assert any(v.conflicts for v in context.ports.values())  # the default job has conflicting mirrors
    report = tmp_path / "report.html"
    report.write_text(render_html(result, context), encoding="utf-8")
    total = len(result.findings)
    with browser_page() as (page, errors):
        page.goto(report.as_uri())
        page.wait_for_selector("#shown")
        assert page.text_content("#shown") == f"{total} of {total}"
        assert errors == []

        page.uncheck("input[name=severity][value=info]")
        shown = _visible(page)
        infos = sum(1 for f in result.findings if f.level is Severity.INFO)
        assert infos and len(shown) == total - infos and all(f["severity"] != "info" for f in shown)
        assert page.text_content("#shown") == f"{total - infos} of {total}"

        page.click("#show-all")
        page.select_option("select[name=check]", "mirrors")
        mirrors = [f for f in result.findings if f.kind.check == "mirrors"]
        shown = _visible(page)
        assert len(shown) == len(mirrors) and {f["code"] for f in shown} == {f.code for f in mirrors}
        first = page.locator(".finding:not([hidden])").first
        assert first.locator("table.diff tr.replace, table.diff tr.insert, table.diff tr.delete").count() > 0
        marker = page.locator(".finding:not([hidden]) pre.merge span.marker").first
        assert marker.is_visible()
        assert marker.evaluate("e => getComputedStyle(e).backgroundColor") not in ("rgba(0, 0, 0, 0)", "transparent")
        first.screenshot(path=str(ARTIFACTS / "html-report-mirror.png"))

        # each conflict explained side by side: plugin lines | upstream's change of the region | resolution
        view = next(v for v in context.ports.values() if v.explanations and v.kind == "mirror")
        explained = view.explanations[0]
        block = page.locator(f".finding:not([hidden]) .conflict-explained[data-line='{explained.line}']").first
        assert block.is_visible() and block.get_attribute("data-kind") == explained.kind
        columns = block.locator(".side")
        assert columns.count() == 3
        boxes = [columns.nth(k).bounding_box() for k in range(3)]
        assert boxes[0]["x"] < boxes[1]["x"] < boxes[2]["x"] and len({round(b["y"]) for b in boxes}) == 1
        assert [columns.nth(k).locator("h4").text_content() for k in range(3)] == [
            "plugin", f"upstream {explained.base_label} → NEW", "suggested resolution"]
        assert columns.nth(0).locator("span").all_text_contents() == list(explained.plugin)
        assert columns.nth(1).locator("span").all_text_contents() == list(explained.upstream_change)
        removed = [x for x in explained.upstream_change if x.startswith("-")]
        assert columns.nth(1).locator("span.del").count() == len(removed)
        assert columns.nth(2).locator("span").all_text_contents() == (list(explained.resolution)
                                                                      or ["(merge by hand)"])
        block.screenshot(path=str(ARTIFACTS / "html-report-conflict.png"))

        page.click("#show-all")
        page.fill("input[name=q]", "is_quantized_kv_cache")
        shown = _visible(page)
        expected = [f for f in result.findings if "is_quantized_kv_cache" in f.message]
        assert expected and len(shown) >= len(expected)

        page.click("#show-all")
        page.click("tr.pick[data-field=drift][data-value='12']")
        assert page.input_value("select[name=drift]") == "12"
        assert {f["drift"] for f in _visible(page)} == {"12"}
        # groups with nothing left to show are hidden too
        assert page.locator("section.group:not([hidden])").count() < page.locator("section.group").count()

        page.click("#show-all")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "html-report.png"))
        assert (ARTIFACTS / "html-report.png").stat().st_size > 10_000
        assert errors == []
