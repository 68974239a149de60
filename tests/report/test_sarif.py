"""The SARIF renderer: required 2.1.0 structure, rules, levels, locations and fingerprints."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

import pytest

import pinport
from pinport.findings import Location, Severity
from pinport.report.sarif import render_sarif


def _run(result) -> dict:
    log = json.loads(render_sarif(result))
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    assert len(log["runs"]) == 1
    return log["runs"][0]


def _by_rule(run: dict) -> dict[str, dict]:
    return {r["ruleId"]: r for r in run["results"]}


def test_driver_and_one_rule_per_kind_used(result) -> None:
    driver = _run(result)["tool"]["driver"]
    assert driver["name"] == "pinport" and driver["version"] == pinport.__version__
    assert [r["id"] for r in driver["rules"]] == ["PP0001", "PP0201", "PP0401", "PP1001"]
    rule = driver["rules"][1]
    assert rule["name"] == "ParameterRemoved"
    assert rule["shortDescription"]["text"]
    assert rule["properties"] == {"drift": 2, "check": "override_signature", "defaultLevel": "error"}


def test_rule_ids_and_indexes_match_results(result) -> None:
    run = _run(result)
    rules = run["tool"]["driver"]["rules"]
    assert len(run["results"]) == len(result.findings)
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["message"]["text"]


def test_levels_map_info_to_note(result) -> None:
    levels = {rule: r["level"] for rule, r in _by_rule(_run(result)).items()}
    assert levels == {"PP0201": "error", "PP0401": "warning", "PP0001": "note", "PP1001": "warning"}


def test_finding_severity_override_sets_the_result_level(one_finding) -> None:
    run = _run(one_finding(severity=Severity.ERROR))
    assert run["results"][0]["level"] == "error"
    assert run["tool"]["driver"]["rules"][0]["defaultConfiguration"]["level"] == "warning"


def test_plugin_location_is_relative_and_one_based(result) -> None:
    res = _by_rule(_run(result))["PP0201"]
    physical = res["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "arctic_inference/vllm/model_runner.py",
                                            "uriBaseId": "%SRCROOT%"}
    assert physical["region"] == {"startLine": 42, "startColumn": 5}  # column 4 is 0-based
    assert res["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == (
        "GPUModelRunnerPatch._bookkeeping_sync")


def test_related_locations_carry_old_and_new_evidence(result) -> None:
    related = _by_rule(_run(result))["PP0201"]["relatedLocations"]
    assert [r["physicalLocation"]["artifactLocation"]["uriBaseId"] for r in related] == [
        "HOST_OLD", "HOST_NEW"]
    assert related[0]["message"]["text"].startswith("OLD")
    assert "spec_decode_metadata" in related[0]["message"]["text"]
    assert related[1]["message"]["text"] == "NEW: def _bookkeeping_sync(self, out):"
    assert [r["id"] for r in related] == [1, 2]


def test_old_only_evidence(result) -> None:
    related = _by_rule(_run(result))["PP0401"]["relatedLocations"]
    assert [r["physicalLocation"]["artifactLocation"]["uriBaseId"] for r in related] == ["HOST_OLD"]


def test_host_wide_finding_points_at_new_host(result) -> None:
    res = _by_rule(_run(result))["PP1001"]
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "HOST_NEW"


def test_finding_without_any_location_still_a_result(one_finding) -> None:
    res = _run(one_finding(plugin=None))["results"][0]
    assert "locations" not in res and "relatedLocations" not in res
    assert res["ruleId"] == "PP0401"


def test_fingerprints_and_properties(result) -> None:
    results = _by_rule(_run(result))
    signature = next(f for f in result.findings if f.code == "PP0201")
    assert results["PP0201"]["partialFingerprints"] == {"pinport/v1": signature.fingerprint}
    props = results["PP0201"]["properties"]
    assert props["status"] == "drift" and props["drift"] == 2
    assert props["subject"].endswith("GPUModelRunner._bookkeeping_sync")
    assert props["unit"] == "GPUModelRunnerPatch._bookkeeping_sync"
    assert props["suggestion"].startswith("drop")
    assert results["PP0001"]["properties"]["status"] == "latent"


def test_uri_base_ids_name_the_labels(result) -> None:
    bases = _run(result)["originalUriBaseIds"]
    assert set(bases) == {"%SRCROOT%", "HOST_OLD", "HOST_NEW"}
    assert "arctic-inference@main" in bases["%SRCROOT%"]["description"]["text"]
    assert "vllm 0.26.0" in bases["HOST_OLD"]["description"]["text"]
    assert "vllm 0.27.0" in bases["HOST_NEW"]["description"]["text"]


def test_uri_is_percent_encoded_with_forward_slashes(one_finding) -> None:
    res = _run(one_finding(plugin=Location("my dir\\mod.py", 1)))["results"][0]
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "my%20dir/mod.py"


def test_fixed_findings_are_not_results(result) -> None:
    run = _run(result)
    assert all(r["properties"]["status"] != "fixed" for r in run["results"])
    assert run["properties"]["summary"]["fixed"] == 1


def test_valid_against_the_official_schema(result) -> None:
    from sarif_schema import sarif_errors

    assert sarif_errors(json.loads(render_sarif(result))) == []


def test_rules_carry_help_and_a_filled_description(result) -> None:
    from pinport.report.rules import rule

    for entry in _run(result)["tool"]["driver"]["rules"]:
        documented = rule(entry["id"])
        assert entry["fullDescription"]["text"] == documented.summary and "{" not in documented.summary
        assert entry["help"]["text"].startswith(f"{entry['id']} ")
        assert "## Why it breaks" in entry["help"]["markdown"] and "```python" in entry["help"]["markdown"]
        # no public home exists: by default the page shipped inside the installed package
        assert entry["helpUri"].startswith("file:///") and entry["helpUri"].endswith(f"/docs/rules/{entry['id']}.md")
        page = Path(url2pathname(urlsplit(entry["helpUri"]).path))
        assert page.read_text(encoding="utf-8").startswith(f"# {entry['id']} {documented.kind.name}\n")
    index = _run(result)["tool"]["driver"]["informationUri"]
    assert index.startswith("file:///") and Path(url2pathname(urlsplit(index).path)).read_text().startswith(
        "# Finding codes\n")


def test_help_addresses_follow_the_docs_url_setting(result) -> None:
    from sarif_schema import sarif_errors

    log = json.loads(render_sarif(result, docs_url="https://docs.example.org/pinport/"))
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == "https://docs.example.org/pinport/rules/README.md"
    assert {r["helpUri"] for r in driver["rules"]} == {
        f"https://docs.example.org/pinport/rules/{r['id']}.md" for r in driver["rules"]}
    assert sarif_errors(log) == []


@pytest.mark.parametrize("bad", ["docs.example.org/pinport", "ftp://example.org/docs", "https://", "https://a b"])
def test_a_docs_url_that_is_no_address_is_one_line(bad: str, tmp_path: Path) -> None:
    from pinport.config import load_settings
    from pinport.errors import ConfigError

    (tmp_path / "pyproject.toml").write_text(f'[tool.pinport]\ndocs-url = "{bad}"\n')
    with pytest.raises(ConfigError, match="docs-url' must be an absolute http"):
        load_settings(tmp_path)
