"""Markdown report a maintainer pastes into a PR: inputs, summary tables, then findings per plugin file."""

from __future__ import annotations

import html
import re

from pinport.findings import Finding, Location, ScanResult
from pinport.report._common import (
    SEVERITIES,
    accepted_line,
    cap_lines,
    detail_lines,
    drift_label,
    summarize,
    triage_order,
)

MAX_DETAIL_LINES = 200  # collapsed, so more than text shows; PR comments still have a size limit
_STATUS_TITLES = {"drift": "Drift: introduced by the move", "latent": "Latent: already broken on OLD"}
PR_COMMENT_LIMIT = 60_000  # characters; GitHub rejects a comment over 65,536
# Names like `__init__` or `a*b` must not turn into emphasis, nor `<module>` into an HTML tag.
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&#!])")
_DIFF_START = ("@@", "--- ", "+++ ", "diff --git")


def _text(value: str) -> str:
    """Literal text safe inside a table cell: markdown punctuation escaped, newlines as breaks."""
    return "<br>".join(_SPECIAL.sub(r"\\\1", line) for line in value.splitlines())


_SPAN = re.compile(r"`([^`\n]+)`")


def _prose(value: str, *, cell: bool = False) -> str:
    """A message as Markdown: its `quoted` names become real code spans, the rest is escaped text."""
    out, last = [], 0
    for match in _SPAN.finditer(value):
        out += [_text(value[last:match.start()]), _code(match.group(1), cell=cell)]
        last = match.end()
    out.append(_text(value[last:]))
    return "".join(out)


def _code(value: str, *, cell: bool = True) -> str:
    """A code span that survives backticks in `value`; pipes escaped when it sits in a table."""
    if not value:
        return ""
    value = " ".join(value.split("\n"))
    fence = "`" * (max((len(r) for r in re.findall(r"`+", value)), default=0) + 1)
    if value.startswith("`") or value.endswith("`"):
        value = f" {value} "
    if cell:  # GFM splits cells before parsing code spans, so `\|` is how a pipe gets in
        value = value.replace("|", "\\|")
    return f"{fence}{value}{fence}"


def _row(cells: list[str] | tuple[str, ...]) -> str:
    return "| " + " | ".join(cells) + " |"


def _table(header: tuple[str, ...], rows: list[list[str]], numeric_from: int = 99) -> list[str]:
    align = ["---:" if i >= numeric_from else "---" for i in range(len(header))]
    return [_row(header), _row(align), *(_row(r) for r in rows)]


def _where(loc: Location | None) -> str:
    return _code(str(loc)) if loc else ""


def _segments(lines: list[str]) -> list[tuple[str, list[str]]]:
    """Split evidence into runs of diff hunks and plain lines, so hunks get diff highlighting."""
    if not any(line.startswith(_DIFF_START) for line in lines):
        filled = [line for line in lines if line]
        lang = "diff" if filled and all(line[:1] in "+-" for line in filled) else ""
        return [(lang, lines)]
    segments: list[tuple[str, list[str]]] = []
    for line in lines:
        if line.startswith(_DIFF_START):
            lang = "diff"
        elif segments and segments[-1][0] == "diff" and (not line or line[:1] in "+- \\"):
            lang = "diff"
        else:
            lang = ""
        if segments and segments[-1][0] == lang:
            segments[-1][1].append(line)
        else:
            segments.append((lang, [line]))
    return segments


def _fenced(lang: str, lines: list[str]) -> list[str]:
    longest = max((len(r) for line in lines for r in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{lang}", *lines, fence, ""]


def _evidence(f: Finding) -> list[str]:
    """A collapsed block with host snippets and detail lines; empty when there is nothing to add."""
    body: list[str] = []
    for label, loc in (("OLD", f.old), ("NEW", f.new)):
        if loc is not None and loc.snippet.strip():
            body += [f"**{label}** {_code(str(loc), cell=False)}", "",
                     *_fenced("python", [loc.snippet.strip()])]
    shown, hidden = cap_lines(detail_lines(f), MAX_DETAIL_LINES)
    for lang, lines in _segments(shown) if shown else []:
        body += _fenced(lang, lines)
    if hidden:
        body += [f"… {hidden} more lines", ""]
    if not body:
        return []
    where = html.escape(str(f.plugin) if f.plugin else f.subject or "host-wide")
    summary = f"{f.kind.code} <code>{where}</code>: evidence"
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "</details>", ""]


def _summary_section(result: ScanResult) -> list[str]:
    summary = summarize(result)
    statuses = list(summary.by_status)
    rows = [[s.value, *(str(summary.by_severity_status[s.value][st]) for st in statuses),
             str(summary.by_severity[s.value])] for s in SEVERITIES]
    rows.append(["**total**", *(f"**{summary.by_status[st]}**" for st in statuses),
                 f"**{summary.total}**"])
    lines = ["## Summary", "", *_table(("Severity", *statuses, "Total"), rows, numeric_from=1), ""]
    if summary.by_check:
        check_rows = [[_code(c), str(n)] for c, n in summary.by_check.items()]
        lines += [*_table(("Check", "Findings"), check_rows, numeric_from=1), ""]
    files = "file" if summary.files_scanned == 1 else "files"
    lines.append(f"{summary.files_scanned} plugin {files} scanned in {summary.seconds:.2f}s.")
    if summary.fixed:
        lines.append(f"{summary.fixed} fixed by the move (listed at the end).")
    if accepted := accepted_line(summary):
        lines.append(f"Accepted: {accepted}.")
    return [*lines, ""]


def _head(f: Finding) -> str:
    drift = f" · {drift_label(f)}" if drift_label(f) else ""
    where = f" — {_where(f.plugin)}" if f.plugin else ""
    unit = f" in {_code(f.plugin.unit, cell=False)}" if f.plugin and f.plugin.unit else ""
    return f"**{f.kind.code}** {f.level.value} · {f.status.value}{drift}{where}{unit}"


def _finding_block(f: Finding) -> list[str]:
    """One finding as a short list item: head, message, OLD/NEW, fix; evidence collapsed under it."""
    lines = [f"- {_head(f)}", f"  {_prose(f.message)}"]
    for label, loc in (("OLD", f.old), ("NEW", f.new)):
        if loc is not None:
            lines.append(f"  {label} host: {_code(str(loc), cell=False)}")
    if f.suggestion:
        lines.append(f"  fix: {_prose(f.suggestion)}")
    return [*lines, "", *_evidence(f)]


def _findings_section(result: ScanResult) -> list[str]:
    lines = ["## Findings", ""]
    sections = triage_order(result.findings)
    if not sections:
        return [*lines, "No findings.", ""]
    for status, groups in sections:
        count = sum(len(g) for _, g in groups)
        lines += [f"### {_STATUS_TITLES.get(status, status)} ({count})", ""]
        for path, findings in groups:
            title = _code(path, cell=False) if path is not None else "Host-wide"
            lines += [f"#### {title} ({len(findings)})", ""]
            for f in findings:
                lines += _finding_block(f)
    return lines


def _fixed_section(result: ScanResult) -> list[str]:
    if not result.fixed:
        return []
    rows = [[f"`{f.kind.code}`", _where(f.plugin), _prose(f.message, cell=True)]
            for f in sorted(result.fixed, key=Finding.sort_key)]
    return ["## Fixed by the move", "", *_table(("Code", "Location", "Message"), rows), ""]


def render_markdown(result: ScanResult) -> str:
    """Render `result` as GitHub-flavoured Markdown for a pull request description or comment."""
    inputs = [["Plugin", _code(result.plugin_label)], ["OLD host", _code(result.old_label)],
              ["NEW host", _code(result.new_label)]]
    lines = [f"# pinport report: {_text(result.plugin_label)}", "",
             *_table(("Input", "Label"), inputs), ""]
    lines += _summary_section(result) + _findings_section(result) + _fixed_section(result)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


def _summary_line(f: Finding) -> str:
    where = _where(f.plugin) if f.plugin else "host-wide"
    drift = f" {drift_label(f)}" if drift_label(f) else ""
    return f"- **{f.kind.code}** {f.level.value}{drift} {where}: {_prose(f.message)}"


def render_markdown_summary(result: ScanResult, *, full_report: str = "", limit: int = PR_COMMENT_LIMIT) -> str:
    """A report that fits a PR comment: the summary tables and one line per finding, drift and errors
    first, cut to stay under `limit` characters; `full_report` (a URL or file) is linked for the rest."""
    head = [f"# pinport: {_text(result.plugin_label)}, {_code(result.old_label, cell=False)} → "
            f"{_code(result.new_label, cell=False)}", "", *_summary_section(result)]
    if full_report:
        head += [f"Full report with evidence: [{_text(full_report)}]({full_report.replace(' ', '%20')})", ""]
    body: list[str] = []
    for status, groups in triage_order(result.findings):
        body += ["", f"### {_STATUS_TITLES.get(status, status)} ({sum(len(g) for _, g in groups)})", ""]
        body += [_summary_line(f) for _, findings in groups for f in findings]
    text = "\n".join(head + body)
    if len(text) + 1 <= limit:
        return text.rstrip("\n") + "\n"
    total = sum(1 for line in body if line.startswith("- "))
    kept, size, shown = [], len("\n".join(head)) + 200, 0  # room for the closing note
    for line in body:
        if size + len(line) + 1 > limit:
            break
        kept.append(line)
        size += len(line) + 1
        shown += line.startswith("- ")
    note = f"… and {total - shown} more findings" + (" in the full report." if full_report else
                                                   " (run `pinport scan --format markdown` for all).")
    return "\n".join([*head, *kept, "", note]) + "\n"
