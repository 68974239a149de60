"""Plain-text report for terminals and logs: grouped by plugin file, errors first, one summary footer."""

from __future__ import annotations

from pinport.findings import Finding, Location, ScanResult, Severity
from pinport.report._common import (
    Summary,
    accepted_line,
    cap_lines,
    detail_lines,
    drift_label,
    group_by_file,
    summarize,
)

MAX_DETAIL_LINES = 20
HOST_WIDE = "host-wide"
_INDENT = "  "
_SUB = "      "

# Plain ANSI SGR codes; the terminal library stays in cli/, which decides whether to ask for color.
_COLORS = {Severity.ERROR: "\x1b[31m", Severity.WARNING: "\x1b[33m", Severity.INFO: "\x1b[34m"}
_RESET = "\x1b[0m"

# Source lines and host snippets are untrusted: control characters would corrupt the terminal.
_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F) if c != 0x09}


def _clean(text: str) -> str:
    return text.translate(_CONTROL)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 or word == "info" else f"{n} {word}s"


def _severity(level: Severity, color: bool) -> str:
    return f"{_COLORS[level]}{level.value}{_RESET}" if color else level.value


def _host_line(label: str, loc: Location | None) -> list[str]:
    if loc is None:
        return []
    snippet = _clean(loc.snippet.strip())
    return [f"{_SUB}{label} host: {_clean(str(loc))}" + (f"  {snippet}" if snippet else "")]


def _finding_lines(f: Finding, color: bool) -> list[str]:
    where = _clean(str(f.plugin)) if f.plugin else HOST_WIDE
    head = [f.kind.code, _severity(f.level, color), f"[{f.status.value}]"]
    if drift := drift_label(f):
        head.append(drift)
    lines = [f"{_INDENT}{where}  {' '.join(head)}  {_clean(f.message)}"]
    if f.plugin and f.plugin.unit:
        lines.append(f"{_SUB}in {_clean(f.plugin.unit)}")
    lines += _host_line("OLD", f.old)
    lines += _host_line("NEW", f.new)
    if f.suggestion:
        lines.append(f"{_SUB}fix: {_clean(f.suggestion)}")
    shown, hidden = cap_lines(detail_lines(f), MAX_DETAIL_LINES)
    lines += [f"{_SUB}{_clean(d)}" for d in shown]
    if hidden:
        lines.append(f"{_SUB}… {hidden} more")
    return lines


def _footer(summary: Summary, result: ScanResult) -> list[str]:
    if summary.total:
        sev = ", ".join(_plural(n, s) for s, n in summary.by_severity.items())
        lines = [f"{_plural(summary.total, 'finding')} ({sev})"]
        lines.append("status: " + ", ".join(f"{n} {s}" for s, n in summary.by_status.items()))
    else:
        lines = ["no findings"]
    if summary.by_check:
        lines.append("checks: " + ", ".join(f"{c} {n}" for c, n in summary.by_check.items()))
    if summary.fixed:
        lines.append(f"{summary.fixed} fixed by the move {result.old_label} → {result.new_label}")
    if accepted := accepted_line(summary):
        lines.append(accepted)
    lines.append(f"{_plural(summary.files_scanned, 'file')} scanned in {summary.seconds:.2f}s")
    return lines


def render_text(result: ScanResult, *, color: bool = False) -> str:
    """Render `result` for a terminal; byte-identical for identical input, ANSI color only on request."""
    lines = [f"pinport: {_clean(result.plugin_label)}  "
             f"OLD {_clean(result.old_label)} → NEW {_clean(result.new_label)}"]
    for path, findings in group_by_file(result.findings):
        lines += ["", _clean(path) if path is not None else HOST_WIDE]
        for f in findings:
            lines += _finding_lines(f, color)
    if result.fixed:
        lines += ["", "fixed by the move"]
        for f in sorted(result.fixed, key=Finding.sort_key):
            where = _clean(str(f.plugin)) if f.plugin else HOST_WIDE
            lines.append(f"{_INDENT}{where}  {f.kind.code}  {_clean(f.message)}")
    lines += ["", *_footer(summarize(result), result)]
    return "\n".join(lines) + "\n"
