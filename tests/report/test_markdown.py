"""The Markdown renderer: tables, per-file sections, escaping and evidence blocks."""

from __future__ import annotations

from pinport.findings import Kind, Location, Severity
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


def test_drift_before_latent_then_files_worst_first(result) -> None:
    out = render_markdown(result)
    order = [out.index(h) for h in ("### Drift: introduced by the move (3)",
                                     "#### `arctic_inference/vllm/model_runner.py` (2)", "#### Host-wide (1)",
                                     "### Latent: already broken on OLD (1)", "#### `arctic_inference/utils.py` (1)")]
    assert order == sorted(order)


def test_finding_block(result) -> None:
    lines = render_markdown(result).splitlines()
    start = lines.index("- **PP0201** error · drift · #2 — `arctic_inference/vllm/model_runner.py:42` "
                        "in `GPUModelRunnerPatch._bookkeeping_sync`")
    assert lines[start + 1:start + 5] == [
        "  \\_bookkeeping\\_sync lost parameter spec\\_decode\\_metadata",
        "  OLD host: `vllm/v1/worker/gpu_model_runner.py:1800`",
        "  NEW host: `vllm/v1/worker/gpu_model_runner.py:1850`",
        "  fix: drop spec\\_decode\\_metadata from the override"]


def test_quoted_names_become_real_code_spans(one_finding) -> None:
    out = render_markdown(one_finding(
        kind=Kind("PP0401", "ModuleMissing", "`{name}` moved to `{module}` (a|b)", Severity.ERROR, 4, "imports"),
        args={"name": "x.__init__", "module": "a*b"},
        plugin=Location("p.py", 1, 0, "f`g|h", ""),
        suggestion="use `x | y` instead"))
    assert "  `x.__init__` moved to `a*b` (a\\|b)" in out.splitlines()
    assert "in ``f`g|h``" in out
    assert "  fix: use `x | y` instead" in out.splitlines()
    assert "\\`" not in out  # no escaped backticks anywhere


def test_tables_are_narrow(result) -> None:
    tables = [line for line in render_markdown(result).splitlines() if line.startswith("|")]
    assert tables and max(line.count(" | ") + 1 for line in tables) <= 4


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


def test_summary_is_cut_to_the_limit_and_links_the_full_report(result) -> None:
    from pinport.report.markdown import render_markdown_summary

    whole = render_markdown_summary(result, full_report="report.md")
    assert "Full report with evidence: [report.md](report.md)" in whole
    assert sum(line.startswith("- **PP") for line in whole.splitlines()) == 4
    cut = render_markdown_summary(result, full_report="report.md", limit=len(whole) - 50)
    assert len(cut) <= len(whole) - 50
    shown = sum(line.startswith("- **PP") for line in cut.splitlines())
    assert shown < 4 and cut.rstrip().endswith(f"… and {4 - shown} more findings in the full report.")
