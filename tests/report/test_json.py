"""The JSON renderer: the document's shape, round-trip and fingerprints."""

from __future__ import annotations

import json

import pinport
from pinport.report.json import render_json


def test_round_trips_with_tool_labels_and_summary(result) -> None:
    doc = json.loads(render_json(result))
    assert doc["tool"] == {"name": "pinport", "version": pinport.__version__}
    assert (doc["plugin"], doc["old"], doc["new"]) == ("arctic-inference@main", "vllm 0.26.0",
                                                      "vllm 0.27.0")
    assert doc["summary"]["total"] == 4
    assert doc["summary"]["by_severity"] == {"error": 1, "warning": 2, "info": 1}
    assert doc["summary"]["files_scanned"] == 12


def test_findings_are_the_findings_own_dicts(result) -> None:
    doc = json.loads(render_json(result))
    expected = sorted((f.as_dict() for f in result.findings), key=lambda d: d["fingerprint"])
    assert sorted(doc["findings"], key=lambda d: d["fingerprint"]) == expected


def test_fingerprint_and_missing_locations(result) -> None:
    by_code = {d["code"]: d for d in json.loads(render_json(result))["findings"]}
    signature = next(f for f in result.findings if f.code == "PP0201")
    assert by_code["PP0201"]["fingerprint"] == signature.fingerprint
    assert by_code["PP1001"]["plugin"] is None
    assert by_code["PP0401"]["new"] is None
    assert by_code["PP0001"]["status"] == "latent" and by_code["PP0001"]["drift"] is None


def test_fixed_findings_listed_separately(result) -> None:
    doc = json.loads(render_json(result))
    assert [d["status"] for d in doc["fixed"]] == ["fixed"]
    assert all(d["status"] != "fixed" for d in doc["findings"])


def test_keys_are_sorted(result) -> None:
    text = render_json(result)
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
