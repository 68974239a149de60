"""Plain-text report for terminals and logs: drift before latent, files worst first, errors first
within a file, one summary footer. Plain text only: the CLI adds colour (rich) when it prints."""

from __future__ import annotations

import textwrap

from pinport.findings import Finding, Location, ScanResult
from pinport.report._common import (
    Summary,
    accepted_line,
    cap_lines,
    detail_lines,
    drift_label,
    statistics,
    summarize,
    triage_order,
)

MAX_DETAIL_LINES = 20
HOST_WIDE = "host-wide"
_INDENT = "  "
_SUB = "      "

_SECTIONS = {"drift": "drift: introduced by the move", "latent": "latent: already broken on OLD"}

# Source lines and host snippets are untrusted: control characters would corrupt the terminal.
_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F) if c != 0x09}


def _clean(text: str) -> str:
    return text.translate(_CONTROL)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 or word == "info" else f"{n} {word}s"


def _host_line(label: str, loc: Location | None) -> list[str]:
    if loc is None:
        return []
    snippet = _clean(loc.snippet.strip())
    return [f"{_SUB}{label} host: {_clean(str(loc))}" + (f"  {snippet}" if snippet else "")]


def _finding_lines(f: Finding) -> list[str]:
    where = _clean(str(f.plugin)) if f.plugin else HOST_WIDE
    head = [f.kind.code, f.level.value, f"[{f.status.value}]"]
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


def _wrap(line: str, width: int | None) -> list[str]:
    """A long line folded at spaces to `width`, continuation lines indented under their line."""
    if not width or len(line) <= width:
        return [line]
    indent = " " * (len(line) - len(line.lstrip(" ")) + 4)
    return textwrap.wrap(line, width, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False) or [line]


def render_text(result: ScanResult, *, width: int | None = None) -> str:
    """Render `result` for a terminal or a log; byte-identical for identical input.

    `width` folds long lines (the CLI passes the terminal's width; files and pipes get none)."""
    lines = [f"pinport: {_clean(result.plugin_label)}  "
             f"OLD {_clean(result.old_label)} → NEW {_clean(result.new_label)}"]
    for status, groups in triage_order(result.findings):
        count = sum(len(findings) for _, findings in groups)
        lines += ["", f"{_SECTIONS.get(status, status)} ({count})"]
        for path, findings in groups:
            lines += ["", _clean(path) if path is not None else HOST_WIDE]
            for f in findings:
                lines += _finding_lines(f)
    if result.fixed:
        lines += ["", "fixed by the move"]
        for f in sorted(result.fixed, key=Finding.sort_key):
            where = _clean(str(f.plugin)) if f.plugin else HOST_WIDE
            lines.append(f"{_INDENT}{where}  {f.kind.code}  {_clean(f.message)}")
    lines += ["", *_footer(summarize(result), result)]
    return "\n".join(w for line in lines for w in _wrap(line, width)) + "\n"


def render_statistics(result: ScanResult) -> str:
    """Counts by finding code, most frequent first (`--statistics`, like ruff's)."""
    rows = statistics(result.findings)
    lines = [f"{count:>5}  {kind.code}  {level.value:<7}  "
             f"{', '.join(f'{n} {s}' for s, n in sorted(per_status.items())):<22}  {kind.name}"
             for kind, level, count, per_status in rows]
    summary = summarize(result)
    lines.append(f"{summary.total:>5}  total" + (f"  ({accepted})" if (accepted := accepted_line(summary)) else ""))
    return "\n".join(lines) + "\n"
