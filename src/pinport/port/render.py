"""The port report: one line per copy, the counts, each conflict explained, then what was written
or applied; as text, Markdown or JSON."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .explain import Explanation, explain_conflicts
from .plan import CLEAN, CONFLICT, GONE, UNCHANGED, UNVERIFIED, PortItem

if TYPE_CHECKING:
    from .run import PortReport

_STATUS = {UNCHANGED: "unchanged upstream", CLEAN: "clean merge", CONFLICT: "conflicts", GONE: "gone from NEW",
           UNVERIFIED: "merged, NOT verified"}


def _status(item: PortItem) -> str:
    status = _STATUS[item.status]
    if item.status == CONFLICT:
        status += f" ({item.conflicts}; {item.line_conflicts} before the statement/token merges)"
    elif item.status == CLEAN and not item.changes:
        status += " (already ported)"
    elif item.status == CLEAN and item.verified:
        status += " (verified)"
    elif item.status == UNVERIFIED:
        status += f": {item.verification}"
    if item.status in (CLEAN, CONFLICT, UNVERIFIED) and item.line_conflicts > item.conflicts and \
            item.status != CONFLICT:
        status += f"; {item.line_conflicts} line conflicts resolved by statement/token merges"
    return status


def _notes(item: PortItem) -> list[str]:
    out = []
    if item.origin is not None and item.origin.lags:
        out.append(f"{item.origin.describe('OLD')}; merged from {item.origin.release}")
    if item.renames:
        out.append("upstream renames applied to the plugin's lines: " + ", ".join(map(str, item.renames)))
    if item.refused:
        out.append(f"finer merge refused: it would lose the plugin line `{item.refused[0]}`")
    return out


def _item_line(item: PortItem) -> str:
    c = item.copy
    where = c.plugin.path if c.kind == "fork" else f"{c.plugin.path}:{c.plugin.start} {c.unit}"
    d = item.delta
    return (f"  {c.kind:<6} {where}  <- {c.old.path if c.kind == 'fork' else c.subject}  "
            f"[similarity {c.score:.2f}; kept {len(d.kept)}, changed {len(d.changed)}, added {len(d.added)}]: "
            f"{_status(item)}")


def _summary(report: PortReport) -> str:
    n = report.counts()
    return (f"{len(report.items)} copies: {n[CLEAN]} clean merges ({n['verified']} verified, {n['already_ported']} "
            f"already ported), {n[UNVERIFIED]} failing verification, {n[CONFLICT]} with conflicts "
            f"({report.conflicts} blocks; {report.line_conflicts} from the line merge alone), {n[UNCHANGED]} "
            f"unchanged upstream, {n[GONE]} gone from NEW")


def _explained(e: Explanation) -> list[str]:
    out = [f"  conflict {e.path}:{e.line} in {e.unit}" + (f" [{e.kind}]" if e.kind else "") + f": {e.suggestion}"]
    out.append("    plugin:")
    out.extend(f"      {x}" for x in e.plugin or ["(nothing)"])
    out.append(f"    upstream {e.base_label} -> NEW:")
    out.extend(f"      {x}" for x in e.upstream_change or ["(no change)"])
    if e.resolution:
        out.append("    suggested:")
        out.extend(f"      {x}" for x in e.resolution)
    return out


def render_port(report: PortReport, *, diffs: bool = True) -> str:
    """Text for `pinport port`: every copy, the counts, each conflict explained, and each write or edit."""
    out = [f"port {report.plugin_label}: {report.old_label} -> {report.new_label}"]
    for item in report.items:
        out.append(_item_line(item))
        out.extend(f"         {note}" for note in _notes(item))
    out.append(_summary(report))
    for explanation in explain_conflicts(report.items):
        out.extend(_explained(explanation))
    if report.write_dir:
        out.append(f"wrote {len(report.written)} files to {report.write_dir}: {', '.join(report.written)}")
    for change in report.applied:
        edit = change.edit
        conflicts = (f"; conflicts remain at lines {', '.join(map(str, change.conflict_lines))}"
                     if change.conflict_lines else "")
        out.append(f"applied {change.kind} {change.unit}: {edit.path}:{edit.start}-{edit.end} -> lines "
                   f"{edit.new_start}-{edit.new_end}{conflicts}")
        out.extend(f"    {line}" for line in edit.describe())
        if diffs:
            out.extend(f"      {line}" for line in edit.diff())
    out.extend(f"skipped {reason}" for reason in report.skipped)
    return "\n".join(out) + "\n"


def port_markdown(report: PortReport) -> str:
    """The port report as Markdown: a table of copies, then each conflict with the three sides."""
    out = [f"# Port of {report.plugin_label}: {report.old_label} → {report.new_label}", "", _summary(report), "",
           "| copy | kind | upstream | status | notes |", "|---|---|---|---|---|"]
    for item in report.items:
        c = item.copy
        notes = "; ".join(_notes(item)).replace("|", "\\|")
        out.append(f"| `{c.plugin.path}:{c.plugin.start}` `{c.unit}` | {c.kind} | `{c.subject}` | "
                   f"{_status(item).replace('|', '/')} | {notes} |")
    for e in explain_conflicts(report.items):
        out += ["", f"## Conflict at `{e.path}:{e.line}` ({e.unit})", "", f"**{e.kind or 'both changed'}**: "
                f"{e.suggestion}", "", "Plugin:", "", "```python", *e.plugin, "```", "",
                f"Upstream {e.base_label} → NEW:", "", "```diff", *e.upstream_change, "```"]
        if e.resolution:
            out += ["", "Suggested:", "", "```python", *e.resolution, "```"]
    return "\n".join(out) + "\n"


def port_json(report: PortReport) -> str:
    """The port report as JSON: every copy with its status, origin, merge counts, and every conflict."""
    def item(i: PortItem) -> dict[str, object]:
        origin = i.origin
        return {"kind": i.copy.kind, "path": i.copy.plugin.path, "line": i.copy.plugin.start, "unit": i.copy.unit,
                "upstream": i.copy.subject, "status": i.status, "changes": i.changes, "verified": i.verified,
                "verification": i.verification, "conflicts": i.conflicts, "line_conflicts": i.line_conflicts,
                "renames": [str(r) for r in i.renames], "refused_lines": list(i.refused),
                "origin": None if origin is None else {
                    "release": origin.release, "version": origin.version, "through": origin.through,
                    "changed_in": list(origin.changed_in), "lags": origin.lags, "score": origin.score,
                    "old_score": origin.old_score}}
    return json.dumps({"plugin": report.plugin_label, "old": report.old_label, "new": report.new_label,
                       "counts": report.counts(), "conflict_blocks": report.conflicts,
                       "line_conflict_blocks": report.line_conflicts, "items": [item(i) for i in report.items],
                       "conflicts": [e.as_dict() for e in explain_conflicts(report.items)]}, indent=1) + "\n"
