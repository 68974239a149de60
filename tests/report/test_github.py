"""GitHub workflow-command annotations: one per finding, escaped as the runner expects."""

from __future__ import annotations

from dataclasses import replace

from pinport.findings import Location
from pinport.report.github import render_github


def test_one_annotation_per_finding_and_a_summary(result) -> None:
    lines = render_github(result).splitlines()
    assert len(lines) == len(result.findings) + 1
    assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines)
    assert sum("file=arctic_inference/" in line for line in lines) == sum(1 for f in result.findings if f.plugin)
    assert lines[-1].startswith("::notice title=pinport::pinport: ")


def test_signature_finding_annotation_is_exact(result) -> None:
    finding = next(f for f in result.findings if f.code == "PP0201")
    only = replace(result, findings=(finding,))
    line = render_github(only).splitlines()[0]
    assert line == ("::error file=arctic_inference/vllm/model_runner.py,line=42,col=5,"
                    "title=PP0201 ParameterRemoved #2 [drift]::_bookkeeping_sync lost parameter spec_decode_metadata"
                    "%0AOLD host: vllm/v1/worker/gpu_model_runner.py:1800  "
                    "def _bookkeeping_sync(self, out, spec_decode_metadata):"
                    "%0ANEW host: vllm/v1/worker/gpu_model_runner.py:1850  def _bookkeeping_sync(self, out):"
                    "%0Afix: drop spec_decode_metadata from the override")


def test_properties_and_data_are_escaped(result) -> None:
    finding = next(f for f in result.findings if f.code == "PP0201")
    odd = replace(finding, plugin=replace(finding.plugin, path="a,b:c%.py"), suggestion="100% sure\nsecond line")
    line = render_github(replace(result, findings=(odd,))).splitlines()[0]
    assert "file=a%2Cb%3Ac%25.py," in line and line.endswith("fix: 100%25 sure%0Asecond line")
    assert "\n" not in line


def test_host_wide_finding_has_no_file(result) -> None:
    finding = next(f for f in result.findings if f.code == "PP0201")
    host_wide = replace(finding, plugin=None, new=Location("vllm/x.py", 3))
    line = render_github(replace(result, findings=(host_wide,))).splitlines()[0]
    assert line.startswith("::error title=PP0201")
