"""Machine-readable JSON report: the findings' own `as_dict` plus the scan's labels and counts."""

from __future__ import annotations

import json

import pinport
from pinport.findings import Finding, ScanResult
from pinport.report._common import summarize


def _ordered(findings: tuple[Finding, ...]) -> list[dict[str, object]]:
    return [f.as_dict() for f in sorted(findings, key=Finding.sort_key)]


FORMAT, FORMAT_VERSION = "pinport-report", 1  # documented in docs/report.schema.json


def render_json(result: ScanResult) -> str:
    """Render `result` as indented, key-sorted JSON so that equal scans give equal files."""
    document = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "tool": {"name": "pinport", "version": pinport.__version__},
        "plugin": result.plugin_label,
        "old": result.old_label,
        "new": result.new_label,
        "checks": list(result.checks),
        "summary": summarize(result).as_dict(),
        "findings": _ordered(result.findings),
        "fixed": _ordered(result.fixed),
    }
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
