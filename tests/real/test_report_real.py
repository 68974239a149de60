"""Reports of real scans: unique fingerprints, acceptance and the machine-readable formats."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from harness import find
from pinport.findings import Severity, Status
from pinport.report.json import render_json
from pinport.report.sarif import render_sarif

# (plugin, OLD, NEW): the default job, an older plugin across a long move, and the plugin on its own pin.
SCANS = [("0.3.0", "0.26.0", "0.33.0"), ("0.2.0", "0.18.0", "0.26.0"), ("0.3.0", "0.26.0", "0.26.0")]


@pytest.mark.parametrize("scan", SCANS, ids=["-".join(s) for s in SCANS])
def test_no_two_findings_share_a_fingerprint(real_scan, scan):
    result = real_scan(*scan, ())
    assert len(result.findings) > 10
    shared = {p: n for p, n in Counter(f.fingerprint for f in result.findings).items() if n > 1}
    assert shared == {}
    fixed = Counter(f.fingerprint for f in result.fixed)
    assert all(n == 1 for n in fixed.values())


def test_findings_that_used_to_collide_are_told_apart(real_scan):
    """vLLM 0.33.0's LlamaAttention.forward takes neither `k` nor `v`: two findings on one override
    (neither does 0.26.0's: latent)."""
    result = real_scan("0.3.0", "0.26.0", "0.33.0", ())
    k = find(result, "PP0201", "LlamaAttention.forward", param="k")
    v = find(result, "PP0201", "LlamaAttention.forward", param="v")
    for f in (k, v):
        assert f.plugin.path == "arctic_inference/vllm/swiftkv/llama_swiftkv.py"
        assert f.plugin.unit == "LlamaSwiftKVAttention.forward"
        # broken on 0.26.0 already (latent); info: only the plugin's own decoder layer calls it with k, v
        assert f.status is Status.LATENT and f.level is Severity.INFO
        assert f.new.path == "vllm/model_executor/models/llama.py"
    assert k.fingerprint != v.fingerprint and k.occurrence == v.occurrence == 0
    fingerprints = [f.fingerprint for f in result.findings]
    assert len(set(fingerprints)) == len(fingerprints)


def test_fingerprints_do_not_depend_on_the_versions(real_scan):
    """A latent finding keeps its fingerprint from one NEW to another, so a baseline survives a bump."""
    on_own_pin = {f.fingerprint for f in real_scan("0.3.0", "0.26.0", "0.26.0", ()).findings}
    moved = real_scan("0.3.0", "0.26.0", "0.33.0", ())
    latent = [f for f in moved.findings if f.status is Status.LATENT]
    assert latent and all(f.fingerprint in on_own_pin for f in latent)


@pytest.mark.parametrize("scan", SCANS, ids=["-".join(s) for s in SCANS])
def test_sarif_of_real_scans_is_valid_and_documented(real_scan, scan):
    from sarif_schema import sarif_errors

    result = real_scan(*scan, ())
    log = json.loads(render_sarif(result))
    assert sarif_errors(log) == []
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} == {f.code for f in result.findings}
    for rule in rules:
        assert rule["fullDescription"]["text"] and "{" not in rule["fullDescription"]["text"]
        assert rule["help"]["text"] and rule["help"]["markdown"] and rule["helpUri"].endswith(f"{rule['id']}.md")
    for res in run["results"]:
        uri = res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert uri.startswith("arctic_inference/") or res["locations"][0]["physicalLocation"]["artifactLocation"][
            "uriBaseId"] != "%SRCROOT%"
    prints = [r["partialFingerprints"]["pinport/v1"] for r in run["results"]]
    assert len(prints) == len(set(prints)) == len(result.findings)


@pytest.mark.parametrize("scan", SCANS, ids=["-".join(s) for s in SCANS])
def test_json_of_real_scans_follows_the_documented_schema(real_scan, scan):
    from jsonschema import Draft7Validator

    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "report.schema.json").read_text("utf-8"))
    result = real_scan(*scan, ())
    document = json.loads(render_json(result))
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in Draft7Validator(schema).iter_errors(document)]
    assert errors == []
    assert document["format_version"] == 1 and "seconds" not in json.dumps(document["summary"])


def test_default_jobs_markdown_summary_fits_a_pr_comment(real_scan):
    from pinport.report.markdown import render_markdown, render_markdown_summary

    result = real_scan("0.3.0", "0.26.0", "0.33.0", ())
    summary = render_markdown_summary(result, full_report="https://example.invalid/run/1")
    assert len(summary) < 60_000 and len(summary) < len(render_markdown(result)) / 2
    lines = [line for line in summary.splitlines() if line.startswith("- **PP")]
    assert len(lines) == len(result.findings)  # every finding has its line when it fits
    assert "\\`" not in summary  # code spans, not escaped backticks
    errors_first = [line.split()[2] for line in lines[:3]]  # the fork's three import errors lead
    assert errors_first == ["error"] * 3
