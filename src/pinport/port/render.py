"""The port report in words: one line per copy, the counts, then what was written or applied."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .plan import CLEAN, CONFLICT, GONE, UNCHANGED, PortItem

if TYPE_CHECKING:
    from .run import PortReport

_STATUS = {UNCHANGED: "unchanged upstream", CLEAN: "clean merge", CONFLICT: "conflicts", GONE: "gone from NEW"}


def _item_line(item: PortItem) -> str:
    c = item.copy
    where = c.plugin.path if c.kind == "fork" else f"{c.plugin.path}:{c.plugin.start} {c.unit}"
    status = _STATUS[item.status]
    if item.status == CONFLICT:
        status += f" ({item.conflicts})"
    elif item.status == CLEAN and not item.changes:
        status += " (already ported)"
    d = item.delta
    return (f"  {c.kind:<6} {where}  <- {c.old.path if c.kind == 'fork' else c.subject}  "
            f"[similarity {c.score:.2f}; kept {len(d.kept)}, changed {len(d.changed)}, added {len(d.added)}]: "
            f"{status}")


def render_port(report: PortReport, *, diffs: bool = True) -> str:
    """Text for `pinport port`: every copy, the counts, and each write or edit with its conflicts."""
    out = [f"port {report.plugin_label}: {report.old_label} -> {report.new_label}"]
    out.extend(_item_line(i) for i in report.items)
    n = report.counts()
    out.append(f"{len(report.items)} copies: {n[CLEAN]} clean merges ({n['already_ported']} already ported), "
               f"{n[CONFLICT]} with conflicts, {n[UNCHANGED]} unchanged upstream, {n[GONE]} gone from NEW")
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
