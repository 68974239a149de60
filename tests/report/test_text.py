"""The text renderer: grouping, ordering, evidence lines and the footer."""

from __future__ import annotations

from pinport.findings import Location
from pinport.report.text import render_text


def test_header_names_the_three_inputs_old_before_new(result) -> None:
    header = render_text(result).splitlines()[0]
    assert "arctic-inference@main" in header
    assert header.index("vllm 0.26.0") < header.index("vllm 0.27.0")


def test_drift_before_latent_then_files_worst_first_host_wide_last(result) -> None:
    lines = render_text(result).splitlines()
    headers = [line for line in lines if line and not line.startswith((" ", "pinport:"))][:5]
    assert headers == ["drift: introduced by the move (3)", "arctic_inference/vllm/model_runner.py", "host-wide",
                       "latent: already broken on OLD (1)", "arctic_inference/utils.py"]


def test_errors_come_before_warnings_within_a_file(result) -> None:
    out = render_text(result)
    error = out.index("model_runner.py:42  PP0201 error [drift] #2  _bookkeeping_sync lost")
    warning = out.index("model_runner.py:7  PP0401 warning [drift] #4")
    assert error < warning


def test_evidence_lines(result) -> None:
    out = render_text(result)
    assert "in GPUModelRunnerPatch._bookkeeping_sync" in out
    assert "OLD host: vllm/v1/worker/gpu_model_runner.py:1800  def _bookkeeping_sync(self, out, sp" in out
    assert "NEW host: vllm/v1/worker/gpu_model_runner.py:1850  def _bookkeeping_sync(self, out):" in out
    assert "fix: drop spec_decode_metadata" in out
    assert "-    return x.unbind(0)" in out
    assert out.index("OLD host: vllm/v1") < out.index("NEW host: vllm/v1")


def test_latent_without_drift_number_and_long_details_capped(result) -> None:
    out = render_text(result)
    assert "utils.py:3  PP0001 info [latent]  _register" in out
    assert "call site 19" in out and "call site 20" not in out
    assert "… 10 more" in out


def test_host_wide_finding(result) -> None:
    out = render_text(result)
    assert "host-wide  PP1001 warning [drift] #10" in out
    assert "NEW host: vllm/v1/worker/gpu/model_runner.py:30" in out


def test_footer_counts(result) -> None:
    out = render_text(result)
    assert "4 findings (1 error, 2 warnings, 1 info)" in out
    assert "3 drift, 1 latent" in out
    assert "imports 1, override_signature 1, bypass 1, mirrors 0, gaps 1" in out
    assert "1 fixed" in out
    assert out.rstrip().endswith("12 files scanned in 1.50s")


def test_no_findings(empty_result) -> None:
    assert "no findings" in render_text(empty_result)


def test_plain_text_without_width_is_not_wrapped(result) -> None:
    out = render_text(result)
    assert "\x1b[" not in out
    assert max(len(line) for line in out.splitlines()) > 80


def test_long_lines_fold_to_the_width_under_their_indent(result) -> None:
    out = render_text(result, width=60)
    lines = out.splitlines()
    assert all(len(line) <= 60 for line in lines if " " in line.strip())
    start = next(i for i, line in enumerate(lines) if line.startswith("      NEW host: vllm/v1/worker/gpu_model_runner"))
    assert lines[start + 1].startswith("          ") and lines[start + 1].strip() == "_bookkeeping_sync(self, out):"
    assert " ".join(out.split()) == " ".join(render_text(result).split())  # folding only


def test_statistics_counts_by_code(result) -> None:
    from pinport.report.text import render_statistics

    lines = render_statistics(result).splitlines()
    assert lines[-1].startswith("    4  total")
    assert len(lines) == 5 and all(line[:5].strip() == "1" for line in lines[:4])
    assert "    1  PP0201  error    1 drift                 ParameterRemoved" in lines


def test_control_characters_in_source_are_escaped(one_finding) -> None:
    out = render_text(one_finding(old=Location("h.py", 1, 0, "f", "x = '\x1b[2J'")))
    assert "\x1b" not in out and "\\x1b[2J" in out
