"""The terminal summary of `pinport rebase`: what was chosen, changed and written, in that order."""

from __future__ import annotations

from pathlib import Path

from ..findings import Severity
from .run import Rebase


def render_summary(rebase: Rebase, written: list[Path]) -> str:
    r = rebase
    out = [f"pinport rebase: {r.plugin_label}, {r.host_label_old} -> {r.new}"]
    out += [f"note: {n}" for n in r.notes]
    if r.base is not None:
        out.append(f"base: {r.base.reason()}")
        out += [f"  passed over {c.branch} ({c.short}, pin {c.pin or '-'}): {c.reason}" for c in r.base.passed_over]
        out += [f"warning: {w}" for w in r.base.warnings]
    if r.branch_note:
        out.append(f"branch: {r.branch_note}")
    if r.applied:
        out.append(f"applied {len(r.applied)} edits:")
        for a in r.applied:
            out.append(f"  {a.path}:{a.line}  {a.what}")
            for before, after in _pairs(a.before, a.after):
                out.append(f"      {before}  ->  {after}")
    else:
        planned = [e for e in r.pins.edits if e.changes]
        out.append(f"planned (run with --apply): {len(planned)} pin edits, {len(r.fixes.fixes)} safe fixes, "
                   f"{len(r.merges)} clean merges")
        for e in planned:
            out.append(f"  {e.path}:{e.line}  {e.before.strip()}  ->  {e.after.strip()}")
        for f in r.fixes.fixes:
            out.append(f"  {f.path}:{f.line}  {f.what}")
    for e in r.pins.edits:
        if not e.changes:
            out.append(f"  left alone: {e.path}:{e.line} {e.finding.message}")
    if r.stops is not None:
        out.append(f"stops: {' -> '.join([r.old, *r.stops.proposed])} ({len(r.stops.steps)} releases judged "
                   f"in {r.stops.seconds:.1f}s)")
    open_ = [f for f in r.findings if f.fingerprint not in r.done]
    errors = sum(1 for f in open_ if f.level is Severity.ERROR)
    out.append(f"findings: {len(r.findings)} ({len(r.findings) - len(open_)} resolved, {len(open_)} open, "
               f"{errors} open errors)")
    documents = [p for p in written if p.suffix != ".html"]
    if documents:
        out.append(f"documents in {documents[0].parent}: {', '.join(p.name for p in documents)}")
    out += [f"HTML report (open it in a browser): {p}" for p in written if p.suffix == ".html"]
    return "\n".join(out) + "\n"


def _pairs(before: str, after: str) -> list[tuple[str, str]]:
    a, b = before.splitlines(), after.splitlines()
    if not a and not b:
        return []
    if len(a) == len(b):
        return [(x.strip(), y.strip()) for x, y in zip(a, b, strict=True) if x != y]
    return [(" / ".join(x.strip() for x in a), " / ".join(y.strip() for y in b))]
