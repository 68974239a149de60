"""The Markdown renderer: tables, per-file sections, escaping and evidence blocks."""

from __future__ import annotations

from pinport.findings import Location
from pinport.report.markdown import render_markdown


def test_title_and_inputs_table(result) -> None:
    out = render_markdown(result)
    assert out.startswith("# pinport report:")
    assert "| Plugin | `arctic-inference@main` |" in out
    assert out.index("| OLD host | `vllm 0.26.0` |") < out.index("| NEW host | `vllm 0.27.0` |")


def test_summary_tables(result) -> None:
    out = render_markdown(result)
    assert "| Severity | drift | latent | Total |" in out
    assert "| error | 1 | 0 | 1 |" in out
    assert "| info | 0 | 1 | 1 |" in out
    assert "| **total** | **3** | **1** | **4** |" in out
    assert "| `mirrors` | 0 |" in out


def test_one_section_per_file_then_host_wide(result) -> None:
    out = render_markdown(result)
    first = out.index("### `arctic_inference/utils.py`")
    second = out.index("### `arctic_inference/vllm/model_runner.py`")
    assert first < second < out.index("### Host-wide")


def test_finding_row(result) -> None:
    row = next(line for line in render_markdown(result).splitlines() if "`PP0201`" in line)
    cells = [c.strip() for c in row.strip("|").split(" | ")]
    assert cells[:5] == ["`PP0201`", "error", "drift", "#2", "`arctic_inference/vllm/model_runner.py:42`"]
    assert cells[7] == "`vllm/v1/worker/gpu_model_runner.py:1800`"
    assert cells[8] == "`vllm/v1/worker/gpu_model_runner.py:1850`"
    assert "spec" in cells[9]


def test_pipes_and_backticks_are_escaped(one_finding) -> None:
    out = render_markdown(one_finding(
        args={"name": "a|b", "module": "__init__"},
        plugin=Location("p.py", 1, 0, "f`g|h", ""),
        suggestion="use `x | y`"))
    row = next(line for line in out.splitlines() if "`PP0401`" in line)
    assert "a\\|b moved to \\_\\_init\\_\\_" in row
    assert "``f`g\\|h``" in row
    assert "use \\`x \\| y\\`" in row
    assert row.count(" | ") == 9  # exactly ten cells: no stray pipe split a cell


def test_details_block_with_diff_fence(result) -> None:
    out = render_markdown(result)
    assert "<details>" in out and "</details>" in out
    assert "<summary>PP0201 <code>arctic_inference/vllm/model_runner.py:42</code>" in out
    diff = out.index("```diff\n@@ -10,3 +10,3 @@\n def f(x):\n-    return x.unbind(0)\n")
    assert out.index("```python\ndef _bookkeeping_sync(self, out):") < diff


def test_plain_details_are_not_marked_as_diff(result) -> None:
    out = render_markdown(result)
    assert "```\ncall site 0\n" in out


def test_fence_outgrows_backticks_in_details(one_finding) -> None:
    out = render_markdown(one_finding(details=("```", "x")))
    assert "````\n```\nx\n````" in out


def test_fixed_section_and_no_findings(result, empty_result) -> None:
    assert "## Fixed by the move" in render_markdown(result)
    out = render_markdown(empty_result)
    assert "No findings." in out and "Fixed by the move" not in out
