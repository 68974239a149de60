"""Grouping, ordering and counting shared by every renderer, so all formats agree on the numbers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pinport.findings import Finding, Kind, ScanResult, Severity, Status

SEVERITIES: tuple[Severity, ...] = tuple(sorted(Severity, key=lambda s: s.rank))
STATUSES: tuple[Status, ...] = (Status.DRIFT, Status.LATENT)  # FIXED lives in ScanResult.fixed


@dataclass(frozen=True)
class Summary:
    """Counts of one scan, computed once so text, JSON, SARIF and Markdown never disagree."""

    total: int
    by_severity: dict[str, int]  # every severity, errors first
    by_status: dict[str, int]  # drift and latent always, any other status seen after them
    by_severity_status: dict[str, dict[str, int]]  # severity -> status -> count
    by_check: dict[str, int]  # checks that ran (registry order, zeros kept), then others by name
    fixed: int
    suppressed: int  # accepted inline or by per-file-ignores
    baselined: int  # accepted by a baseline file
    files_scanned: int
    seconds: float  # wall time; shown to people, kept out of machine-readable reports

    def as_dict(self) -> dict[str, object]:
        """Plain data for the JSON and SARIF renderers: no timing, so equal scans give equal files."""
        return {
            "total": self.total,
            "by_severity": dict(self.by_severity),
            "by_status": dict(self.by_status),
            "by_severity_status": {k: dict(v) for k, v in self.by_severity_status.items()},
            "by_check": dict(self.by_check),
            "fixed": self.fixed,
            "suppressed": self.suppressed,
            "baselined": self.baselined,
            "files_scanned": self.files_scanned,
        }


def summarize(result: ScanResult) -> Summary:
    """Count the findings of `result` by severity, status and check."""
    findings = result.findings
    statuses = [s.value for s in STATUSES]
    statuses += sorted({f.status.value for f in findings} - set(statuses))
    by_severity = {s.value: 0 for s in SEVERITIES}
    by_status = dict.fromkeys(statuses, 0)
    by_severity_status = {s.value: dict.fromkeys(statuses, 0) for s in SEVERITIES}
    by_check = dict.fromkeys(result.checks, 0)
    for f in findings:
        by_severity[f.level.value] += 1
        by_status[f.status.value] += 1
        by_severity_status[f.level.value][f.status.value] += 1
    extra_checks = sorted({f.kind.check for f in findings} - set(by_check))
    by_check.update(dict.fromkeys(extra_checks, 0))
    for f in findings:
        by_check[f.kind.check] += 1
    return Summary(
        total=len(findings),
        by_severity=by_severity,
        by_status=by_status,
        by_severity_status=by_severity_status,
        by_check=by_check,
        fixed=len(result.fixed),
        suppressed=len(result.suppressed),
        baselined=len(result.baselined),
        files_scanned=result.files_scanned,
        seconds=result.seconds,
    )


def accepted_line(summary: Summary) -> str:
    """"3 suppressed, 12 in the baseline (not shown)", or "" when nothing was accepted."""
    parts = []
    if summary.suppressed:
        parts.append(f"{summary.suppressed} suppressed")
    if summary.baselined:
        parts.append(f"{summary.baselined} in the baseline")
    return ", ".join(parts) + " (not shown)" if parts else ""


def _within_file_key(f: Finding) -> tuple:
    p = f.plugin
    return (f.level.rank, p.line if p else 0, p.column if p else 0, f.kind.code, f.subject,
            f.message, f.fingerprint)


def group_by_file(findings: Iterable[Finding]) -> list[tuple[str | None, list[Finding]]]:
    """Group findings by plugin file (paths sorted, host-wide group `None` last), errors first within a file."""
    groups: dict[str | None, list[Finding]] = {}
    for f in findings:
        groups.setdefault(f.plugin.path if f.plugin else None, []).append(f)
    paths: list[str | None] = sorted(p for p in groups if p is not None)
    if None in groups:
        paths.append(None)
    return [(p, sorted(groups[p], key=_within_file_key)) for p in paths]


def triage_order(findings: Iterable[Finding]) -> list[tuple[str, list[tuple[str | None, list[Finding]]]]]:
    """Findings the way a maintainer reads them: by status (drift, the breaks the move introduces,
    before latent), then files worst first (errors before warnings; host-wide last), then errors
    first within a file. Returns [(status, [(path, findings)])], empty statuses left out."""
    by_status: dict[str, list[Finding]] = {}
    for f in findings:
        by_status.setdefault(f.status.value, []).append(f)
    order = [s.value for s in STATUSES] + sorted(set(by_status) - {s.value for s in STATUSES})
    out = []
    for status in order:
        if status not in by_status:
            continue
        groups = group_by_file(by_status[status])
        groups.sort(key=lambda g: (g[0] is None, min(f.level.rank for f in g[1]), g[0] or ""))
        out.append((status, groups))
    return out


def statistics(findings: Iterable[Finding]) -> list[tuple[Kind, Severity, int, dict[str, int]]]:
    """(kind, worst severity reported, count, count by status) per code, most frequent first, like ruff's."""
    kinds: dict[str, Kind] = {}
    worst: dict[str, Severity] = {}
    counts: dict[str, dict[str, int]] = {}
    for f in findings:
        kinds.setdefault(f.code, f.kind)
        if f.code not in worst or f.level.rank < worst[f.code].rank:
            worst[f.code] = f.level
        per_status = counts.setdefault(f.code, {})
        per_status[f.status.value] = per_status.get(f.status.value, 0) + 1
    rows = [(kinds[c], worst[c], sum(n.values()), n) for c, n in counts.items()]
    return sorted(rows, key=lambda row: (-row[2], row[0].code))


def detail_lines(f: Finding) -> list[str]:
    """The finding's details as single lines, in case a check put a whole hunk in one entry."""
    return [line for d in f.details for line in (d.splitlines() or [""])]


def cap_lines(lines: Sequence[str], limit: int) -> tuple[list[str], int]:
    """The first `limit` lines and how many were left out, so long evidence cannot swamp a report."""
    return list(lines[:limit]), max(len(lines) - limit, 0)


def drift_label(f: Finding) -> str:
    """`#N` for a finding in the drift catalogue, empty for gaps and internal kinds."""
    return f"#{f.kind.drift}" if f.kind.drift is not None else ""


def rule_kinds(findings: Iterable[Finding]) -> list[Kind]:
    """The distinct Kinds used, ordered by code, for rule tables."""
    kinds: dict[str, Kind] = {}
    for f in findings:
        kinds.setdefault(f.kind.code, f.kind)
    return [kinds[c] for c in sorted(kinds)]
