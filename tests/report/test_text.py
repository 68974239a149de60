"""The text renderer: grouping, ordering, evidence lines and the footer."""

from __future__ import annotations

from pinport.findings import Location
from pinport.report.text import render_text


def test_header_names_the_three_inputs_old_before_new(result) -> None:
    header = render_text(result).splitlines()[0]
    assert "arctic-inference@main" in header
    assert header.index("vllm 0.26.0") < header.index("vllm 0.27.0")


def test_groups_by_file_with_host_wide_last(result) -> None:
    lines = render_text(result).splitlines()
    headers = [line for line in lines if line and not line.startswith(" ") and ":" not in line]
    assert headers[:3] == ["arctic_inference/utils.py", "arctic_inference/vllm/model_runner.py",
                           "host-wide"]


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


def test_color_is_off_by_default_and_plain_ansi_when_on(result) -> None:
    assert "\x1b[" not in render_text(result)
    colored = render_text(result, color=True)
    assert "\x1b[31merror\x1b[0m" in colored
    assert "\x1b[33mwarning\x1b[0m" in colored
    assert "\x1b[34minfo\x1b[0m" in colored


def test_control_characters_in_source_are_escaped(one_finding) -> None:
    out = render_text(one_finding(old=Location("h.py", 1, 0, "f", "x = '\x1b[2J'")))
    assert "\x1b" not in out and "\\x1b[2J" in out
