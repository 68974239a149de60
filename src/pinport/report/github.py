"""GitHub Actions workflow commands: one annotation per finding, shown on the PR's changed files."""

from __future__ import annotations

from pinport.findings import Finding, ScanResult, Severity
from pinport.report._common import accepted_line, drift_label, summarize

_COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _data(text: str) -> str:
    # The runner's escaping for a command's message ...
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    # ... and for its key=value properties, where `:` and `,` separate.
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _annotation(f: Finding) -> str:
    title = " ".join(part for part in (f.code, f.kind.name, drift_label(f), f"[{f.status.value}]") if part)
    props = []
    if f.plugin is not None:
        props.append(f"file={_property(f.plugin.path)}")
        if f.plugin.line > 0:
            props += [f"line={f.plugin.line}", f"col={f.plugin.column + 1}"]
    props.append(f"title={_property(title)}")
    lines = [f.message]
    for label, loc in (("OLD", f.old), ("NEW", f.new)):
        if loc is not None:
            lines.append(f"{label} host: {loc}" + (f"  {loc.snippet.strip()}" if loc.snippet.strip() else ""))
    if f.suggestion:
        lines.append(f"fix: {f.suggestion}")
    return f"::{_COMMANDS[f.level]} {','.join(props)}::{_data(chr(10).join(lines))}"


def render_github(result: ScanResult) -> str:
    """Workflow commands on standard output: annotations, then one summary notice."""
    lines = [_annotation(f) for f in sorted(result.findings, key=Finding.sort_key)]
    summary = summarize(result)
    counts = ", ".join(f"{n} {s}" for s, n in summary.by_severity.items())
    text = f"pinport: {summary.total} findings ({counts}) for {result.plugin_label}, {result.old_label} → {result.new_label}"
    if accepted := accepted_line(summary):
        text += f"; {accepted}"
    lines.append(f"::notice title=pinport::{_data(text)}")
    return "\n".join(lines) + "\n"
