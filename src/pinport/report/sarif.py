"""SARIF 2.1.0 report for code-scanning UIs: one run, one rule per Kind used, host evidence as related locations."""

from __future__ import annotations

import json
import re
from urllib.parse import quote

import pinport
from pinport.findings import Finding, Kind, Location, ScanResult, Severity
from pinport.report._common import rule_kinds, summarize
from pinport.report.rules import rule_markdown, rule_text, rule_url, rules, rules_index_url

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT_KEY = "pinport/v1"
# Plugin paths are relative to the plugin's project root (where pyproject.toml is), the base code
# scanning UIs resolve against the checkout; host evidence lives in the two host trees.
PLUGIN_BASE, OLD_BASE, NEW_BASE = "%SRCROOT%", "HOST_OLD", "HOST_NEW"

_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def sarif_level(severity: Severity) -> str:
    """SARIF's name for a severity; SARIF has no "info", its lowest reported level is "note"."""
    return _LEVELS[severity]


def _uri(path: str) -> str:
    # SARIF wants a relative URI reference, not a file path: forward slashes, percent-encoded.
    return quote(path.replace("\\", "/").lstrip("/"), safe="/")


def _humanize(name: str) -> str:
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).split()
    return " ".join([words[0], *(w.lower() for w in words[1:])]) if words else name


def _physical(loc: Location, base: str) -> dict[str, object]:
    physical: dict[str, object] = {"artifactLocation": {"uri": _uri(loc.path), "uriBaseId": base}}
    if loc.line >= 1:  # SARIF regions are 1-based; an unknown line gets no region at all
        # No region.snippet: a snippet may be a whole signature, not the text the region spans.
        physical["region"] = {"startLine": loc.line, "startColumn": max(loc.column, 0) + 1}
    return physical


def _location(loc: Location, base: str) -> dict[str, object]:
    location: dict[str, object] = {"physicalLocation": _physical(loc, base)}
    if loc.unit:
        location["logicalLocations"] = [{"fullyQualifiedName": loc.unit}]
    return location


def _related(f: Finding) -> list[dict[str, object]]:
    related = []
    for label, loc, base in (("OLD", f.old, OLD_BASE), ("NEW", f.new, NEW_BASE)):
        if loc is None:
            continue
        snippet = loc.snippet.strip()
        entry = _location(loc, base)
        entry["id"] = len(related) + 1
        entry["message"] = {"text": f"{label}: {snippet}" if snippet else label}
        related.append(entry)
    return related


def _rule(kind: Kind, docs_url: str) -> dict[str, object]:
    out: dict[str, object] = {
        "id": kind.code,
        "name": kind.name,
        "shortDescription": {"text": _humanize(kind.name)},
        "defaultConfiguration": {"level": sarif_level(kind.severity)},
        "properties": {"drift": kind.drift, "check": kind.check,
                       "defaultLevel": sarif_level(kind.severity)},
    }
    documented = rules().get(kind.code)
    if documented is not None:
        out["fullDescription"] = {"text": documented.summary}
        out["help"] = {"text": rule_text(documented), "markdown": rule_markdown(documented, title=False)}
    if url := rule_url(kind.code, docs_url):
        out["helpUri"] = url
    return out


def _result(f: Finding, rule_index: int) -> dict[str, object]:
    out: dict[str, object] = {
        "ruleId": f.kind.code,
        "ruleIndex": rule_index,
        "level": sarif_level(f.level),
        "message": {"text": f.message},
    }
    # A host-wide finding still needs somewhere to point: NEW evidence first, as that is what breaks.
    if f.plugin is not None:
        out["locations"] = [_location(f.plugin, PLUGIN_BASE)]
    elif f.new is not None:
        out["locations"] = [_location(f.new, NEW_BASE)]
    elif f.old is not None:
        out["locations"] = [_location(f.old, OLD_BASE)]
    if related := _related(f):
        out["relatedLocations"] = related
    out["partialFingerprints"] = {FINGERPRINT_KEY: f.fingerprint}
    out["properties"] = {
        "status": f.status.value,
        "drift": f.kind.drift,
        "check": f.kind.check,
        "subject": f.subject,
        "unit": f.plugin.unit if f.plugin else "",
        "suggestion": f.suggestion,
        "details": list(f.details),
    }
    return out


def _base(label: str, text: str) -> dict[str, object]:
    return {"description": {"text": f"{text}: {label}"}}


def render_sarif(result: ScanResult, *, docs_url: str = "") -> str:
    """Render `result` as a SARIF 2.1.0 log, key-sorted so equal scans give equal files.

    `helpUri` and `informationUri` point into `docs_url` (the `docs-url` setting: a published copy
    of pinport's docs/ folder), by default into the copy shipped with the package (file://).
    """
    kinds = rule_kinds(result.findings)
    index = {k.code: i for i, k in enumerate(kinds)}
    run = {
        "tool": {"driver": {
            "name": "pinport",
            "version": pinport.__version__,
            "semanticVersion": pinport.__version__,
            **({"informationUri": home} if (home := rules_index_url(docs_url)) else {}),
            "rules": [_rule(k, docs_url) for k in kinds],
        }},
        "originalUriBaseIds": {
            PLUGIN_BASE: _base(result.plugin_label, "Plugin source tree"),
            OLD_BASE: _base(result.old_label, "Host source tree at OLD"),
            NEW_BASE: _base(result.new_label, "Host source tree at NEW"),
        },
        "results": [_result(f, index[f.kind.code]) for f in sorted(result.findings, key=Finding.sort_key)],
        "properties": {
            "plugin": result.plugin_label,
            "old": result.old_label,
            "new": result.new_label,
            "checks": list(result.checks),
            "summary": summarize(result).as_dict(),
        },
    }
    log = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
