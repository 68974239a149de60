"""A self-contained HTML report: one file (inline style and script, no network), readable from file://.

A summary by severity, check and drift number that doubles as filters; per finding the plugin code
beside the upstream code at OLD and NEW; for mirrors and forks the upstream OLD -> NEW change side
by side and the three-way merge proposal with its conflicts marked.
"""

from __future__ import annotations

import difflib
import json
from html import escape
from typing import TYPE_CHECKING

import pinport
from pinport.findings import Finding, Location, ScanResult
from pinport.report._common import SEVERITIES, accepted_line, drift_label, summarize, triage_order
from pinport.report.excerpts import Excerpt, HtmlContext, PortView

if TYPE_CHECKING:
    from pinport.port.explain import Explanation

_CSS = """
:root { --err:#b3261e; --warn:#9a6700; --info:#0b5cad; --bg:#fff; --fg:#1f2328; --mute:#59636e; --line:#d1d9e0;
  --del:#ffebe9; --ins:#dafbe1; --chg:#fff8c5; --conflict:#ffd7d5; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg);
  margin: 0; padding: 0 1.5rem 3rem; }
header { padding: 1rem 0 .5rem; border-bottom: 1px solid var(--line); }
h1 { font-size: 1.35rem; margin: 0 0 .25rem; } h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
h3 { font-size: 1rem; margin: 1.2rem 0 .4rem; } .mute { color: var(--mute); }
code, pre, .code { font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.summary { display: flex; flex-wrap: wrap; gap: 1.5rem; align-items: flex-start; }
table.counts { border-collapse: collapse; } table.counts td, table.counts th { border: 1px solid var(--line);
  padding: .2rem .6rem; text-align: right; } table.counts th:first-child, table.counts td:first-child { text-align: left; }
table.counts tr.pick { cursor: pointer; } table.counts tr.pick:hover { background: #f6f8fa; }
#filters { position: sticky; top: 0; background: var(--bg); padding: .6rem 0; border-bottom: 1px solid var(--line);
  display: flex; flex-wrap: wrap; gap: .4rem 1.2rem; align-items: center; z-index: 1; }
#filters fieldset { border: 0; padding: 0; margin: 0; display: flex; gap: .5rem; align-items: center; }
#filters legend { float: left; font-weight: 600; margin-right: .3rem; }
.sev-error { color: var(--err); font-weight: 600; } .sev-warning { color: var(--warn); font-weight: 600; }
.sev-info { color: var(--info); font-weight: 600; }
.finding { border: 1px solid var(--line); border-radius: 6px; margin: .6rem 0; padding: .5rem .8rem; }
.finding[hidden] { display: none; }
.finding .head { display: flex; flex-wrap: wrap; gap: .5rem; align-items: baseline; }
.badge { border: 1px solid var(--line); border-radius: 1rem; padding: 0 .5rem; font-size: 12px; }
.status-drift { background: #fbefff; } .status-latent { background: #f6f8fa; }
.sides { display: grid; grid-template-columns: repeat(auto-fit, minmax(22rem, 1fr)); gap: .6rem; margin-top: .5rem; }
.side { min-width: 0; } .side h4 { margin: 0 0 .2rem; font-size: 12px; color: var(--mute); font-weight: 600;
  overflow-wrap: anywhere; }
pre.src { margin: 0; padding: .3rem 0; background: #f6f8fa; border-radius: 4px; overflow-x: auto; }
pre.src span { display: block; padding: 0 .5rem; white-space: pre; }
pre.src span.focus { background: var(--chg); }
pre.src span::before { content: attr(data-n); display: inline-block; width: 3.2em; color: var(--mute);
  text-align: right; margin-right: .8em; user-select: none; }
table.diff { border-collapse: collapse; width: 100%; table-layout: fixed; }
table.diff td { padding: 0 .4rem; white-space: pre; overflow: hidden; text-overflow: ellipsis; vertical-align: top; }
table.diff td.n { width: 3.5em; color: var(--mute); text-align: right; user-select: none; }
table.diff tr.delete td.l, table.diff tr.replace td.l { background: var(--del); }
table.diff tr.insert td.r, table.diff tr.replace td.r { background: var(--ins); }
pre.merge span.conflict { background: var(--conflict); } pre.merge span.marker { background: #ff8182; font-weight: 700; }
.conflict-explained { border-left: 3px solid #ff8182; padding-left: .6rem; margin: .6rem 0; }
.conflict-explained .sides { grid-template-columns: repeat(3, minmax(0, 1fr)); }
pre.src span.del { background: var(--del); } pre.src span.ins { background: var(--ins); }
details > summary { cursor: pointer; color: var(--mute); margin-top: .4rem; }
#shown { font-weight: 600; }
"""

_JS = """
(function () {
  var form = document.getElementById('filters');
  var findings = Array.prototype.slice.call(document.querySelectorAll('.finding'));
  var shown = document.getElementById('shown');
  function checked(name) {
    return Array.prototype.slice.call(form.querySelectorAll('input[name=' + name + ']:checked'))
      .map(function (box) { return box.value; });
  }
  function apply() {
    var sev = checked('severity'), st = checked('status');
    var check = form.elements.check.value, drift = form.elements.drift.value;
    var text = form.elements.q.value.trim().toLowerCase();
    var n = 0;
    findings.forEach(function (el) {
      var ok = sev.indexOf(el.dataset.severity) >= 0 && st.indexOf(el.dataset.status) >= 0 &&
        (!check || el.dataset.check === check) && (!drift || el.dataset.drift === drift) &&
        (!text || el.textContent.toLowerCase().indexOf(text) >= 0);
      el.hidden = !ok;
      if (ok) { n += 1; }
    });
    document.querySelectorAll('section.group').forEach(function (group) {
      group.hidden = !group.querySelector('.finding:not([hidden])');
    });
    shown.textContent = n + ' of ' + findings.length;
  }
  form.addEventListener('change', apply);
  form.addEventListener('input', apply);
  document.querySelectorAll('tr.pick').forEach(function (row) {
    row.addEventListener('click', function () {
      var field = form.elements[row.dataset.field];
      if (field.tagName === 'SELECT') { field.value = row.dataset.value; } else {
        form.querySelectorAll('input[name=' + row.dataset.field + ']').forEach(function (box) {
          box.checked = box.value === row.dataset.value;
        });
      }
      apply();
    });
  });
  document.getElementById('show-all').addEventListener('click', function () {
    form.reset(); apply();
  });
  apply();
})();
"""


def _prose(text: str) -> str:
    """Escaped text whose `quoted` names become <code>."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: no spans
        return escape(text)
    return "".join(escape(p) if i % 2 == 0 else f"<code>{escape(p)}</code>" for i, p in enumerate(parts))


def _source(ex: Excerpt | None, loc: Location, label: str) -> str:
    title = f"<h4>{escape(label)} <code>{escape(str(loc))}</code>" + (
        f" <span class='mute'>{escape(loc.unit)}</span>" if loc.unit else "") + "</h4>"
    if ex is None:
        body = f"<span data-n='{loc.line}' class='focus'>{escape(loc.snippet)}</span>" if loc.snippet else ""
    else:
        body = "".join(f"<span data-n='{n}'{' class=focus' if n == ex.focus else ''}>{escape(text)}</span>"
                       for n, text in enumerate(ex.lines, ex.start))
    return f"<div class='side'>{title}<pre class='src'>{body}</pre></div>"


def _side_by_side(old: str, new: str) -> str:
    """The upstream OLD -> NEW change as a two-column table (difflib opcodes, context collapsed to 3 lines)."""
    a, b = old.splitlines(), new.splitlines()
    rows = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(3):
        rows.append("<tr class='gap'><td class='n'>…</td><td class='l'></td><td class='n'>…</td><td class='r'></td></tr>")
        for tag, i1, i2, j1, j2 in group:
            for k in range(max(i2 - i1, j2 - j1)):
                left = a[i1 + k] if i1 + k < i2 else ""
                right = b[j1 + k] if j1 + k < j2 else ""
                ln = str(i1 + k + 1) if i1 + k < i2 else ""
                rn = str(j1 + k + 1) if j1 + k < j2 else ""
                rows.append(f"<tr class='{tag}'><td class='n'>{ln}</td><td class='l'>{escape(left)}</td>"
                            f"<td class='n'>{rn}</td><td class='r'>{escape(right)}</td></tr>")
    if not rows:
        return "<p class='mute'>Upstream did not change it.</p>"
    return ("<table class='diff'><colgroup><col style='width:3.5em'><col><col style='width:3.5em'><col></colgroup>"
            "<thead><tr><th></th><th>upstream OLD</th><th></th><th>upstream NEW</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _merge(text: str) -> str:
    out, inside = [], False
    for n, line in enumerate(text.splitlines(), 1):
        marker = line.startswith(("<<<<<<<", "|||||||", "=======", ">>>>>>>"))
        if line.startswith("<<<<<<<"):
            inside = True
        cls = "marker" if marker else "conflict" if inside else ""
        if line.startswith(">>>>>>>"):
            inside = False
        out.append(f"<span data-n='{n}'{f' class={cls}' if cls else ''}>{escape(line)}</span>")
    return f"<pre class='src merge'>{''.join(out)}</pre>"


def _column(title: str, lines: list[tuple[str, str]]) -> str:
    body = "".join(f"<span{f' class={cls}' if cls else ''}>{escape(text)}</span>" for text, cls in lines)
    return f"<div class='side'><h4>{escape(title)}</h4><pre class='src'>{body}</pre></div>"


def _explained(e: Explanation) -> str:
    """One conflict block side by side: the plugin's lines | upstream's change of the region | what to do."""
    change = [(x, "del" if x.startswith("-") else "ins" if x.startswith("+") else "") for x in e.upstream_change]
    resolution = [(x, "") for x in e.resolution]
    kind = f" <span class='badge'>{escape(e.kind)}</span>" if e.kind else ""
    return (f"<div class='conflict-explained' data-line='{e.line}' data-kind='{escape(e.kind)}'>"
            f"<p><code>{escape(e.path)}:{e.line}</code> in <code>{escape(e.unit)}</code>{kind}: "
            f"{escape(e.suggestion)}</p><div class='sides'>"
            + _column("plugin", [(x, "") for x in e.plugin])
            + _column(f"upstream {e.base_label} → NEW", change)
            + _column("suggested resolution", resolution or [("(merge by hand)", "")])
            + "</div></div>")


def _port(view: PortView) -> str:
    what = "forked file" if view.kind == "fork" else "mirrored method"
    base = f"upstream {view.base_label} (the release it was copied from)" if view.base_label else "upstream OLD"
    parts = [f"<details open><summary>Port of this {what} (upstream <code>{escape(view.subject)}</code>): "
             f"{escape(view.status)}" + (f", {view.conflicts} conflicts" if view.conflicts else "") + "</summary>"]
    if view.theirs:
        parts.append(_side_by_side(view.base, view.theirs))
    if view.merged:
        parts.append(f"<h4>Three-way merge proposal (base: {escape(base)}; theirs: upstream NEW; ours: the plugin)"
                     f"</h4>{_merge(view.merged)}")
    if view.explanations:
        parts.append(f"<h4>Conflicts explained ({len(view.explanations)})</h4>"
                     + "".join(_explained(e) for e in view.explanations))
    parts.append("</details>")
    return "".join(parts)


def _port_for(f: Finding, ctx: HtmlContext) -> PortView | None:
    if f.plugin is None or f.kind.drift not in (8, 12):
        return None
    found = ctx.ports.get((f.plugin.path, f.plugin.unit))
    if found is None and f.kind.drift == 8:  # a fork finding names the file, not a unit
        found = next((v for v in ctx.ports.values() if v.kind == "fork" and v.path == f.plugin.path), None)
    return found


def _finding(f: Finding, ctx: HtmlContext, ports: dict[tuple[str, str], str]) -> str:
    """One finding's article; `ports` holds the port sections rendered so far by the view's key
    (several findings on one copy show the same port, and its diff is the costly part)."""
    drift = str(f.kind.drift) if f.kind.drift is not None else ""
    head = (f"<div class='head'><strong><code>{f.code}</code></strong>"
            f"<span class='sev-{f.level.value}'>{f.level.value}</span>"
            f"<span class='badge status-{f.status.value}'>{f.status.value}</span>"
            + (f"<span class='badge'>drift {escape(drift_label(f))}</span>" if drift else "")
            + f"<span class='mute'>{escape(f.kind.name)} · {escape(f.kind.check)}</span></div>")
    body = [f"<p>{_prose(f.message)}</p>"]
    if f.suggestion:
        body.append(f"<p><strong>Fix:</strong> {_prose(f.suggestion)}</p>")
    sides = []
    for side, loc, label in (("plugin", f.plugin, "plugin"), ("old", f.old, "upstream OLD"),
                             ("new", f.new, "upstream NEW")):
        if loc is not None:
            sides.append(_source(ctx.excerpts.get((side, loc.path, loc.line)), loc, label))
    if sides:
        body.append(f"<div class='sides'>{''.join(sides)}</div>")
    if (view := _port_for(f, ctx)) is not None:
        key = (view.path, view.unit)
        if key not in ports:
            ports[key] = _port(view)
        body.append(ports[key])
    if f.details:
        body.append("<details><summary>evidence</summary><pre class='src'>"
                    + "".join(f"<span>{escape(d)}</span>" for d in f.details) + "</pre></details>")
    attrs = (f"data-severity='{f.level.value}' data-status='{f.status.value}' data-check='{escape(f.kind.check)}' "
             f"data-drift='{drift}' data-code='{f.code}' data-fingerprint='{f.fingerprint}'")
    return f"<article class='finding' {attrs}>{head}{''.join(body)}</article>"


def _counts_table(title: str, field: str, rows: list[tuple[str, str, int]]) -> str:
    cells = "".join(f"<tr class='pick' data-field='{field}' data-value='{escape(value)}'>"
                    f"<td>{escape(label)}</td><td>{n}</td></tr>" for label, value, n in rows)
    return f"<table class='counts'><thead><tr><th>{escape(title)}</th><th>findings</th></tr></thead><tbody>{cells}</tbody></table>"


def render_html(result: ScanResult, context: HtmlContext | None = None) -> str:
    """Render `result` as one HTML document; `context` adds source excerpts and port proposals."""
    ctx = context or HtmlContext()
    summary = summarize(result)
    by_drift: dict[str, int] = {}
    for f in result.findings:
        key = str(f.kind.drift) if f.kind.drift is not None else ""
        by_drift[key] = by_drift.get(key, 0) + 1
    drift_rows = [(f"#{k}" if k else "none (gaps, internal)", k, n)
                  for k, n in sorted(by_drift.items(), key=lambda kv: (kv[0] == "", int(kv[0] or 0)))]
    severity_table = ("<table class='counts'><thead><tr><th>severity</th>"
                      + "".join(f"<th>{escape(s)}</th>" for s in summary.by_status) + "<th>total</th></tr></thead><tbody>"
                      + "".join(f"<tr class='pick' data-field='severity' data-value='{s.value}'>"
                                f"<td class='sev-{s.value}'>{s.value}</td>"
                                + "".join(f"<td>{summary.by_severity_status[s.value][st]}</td>" for st in summary.by_status)
                                + f"<td>{summary.by_severity[s.value]}</td></tr>" for s in SEVERITIES)
                      + "</tbody></table>")
    check_table = _counts_table("check", "check", [(c, c, n) for c, n in summary.by_check.items() if n])
    drift_table = _counts_table("drift", "drift", drift_rows)
    checks = "".join(f"<option value='{escape(c)}'>{escape(c)}</option>" for c, n in summary.by_check.items() if n)
    drifts = "".join(f"<option value='{escape(v)}'>{escape(label)}</option>" for label, v, _ in drift_rows if v)
    filters = (
        "<form id='filters' onsubmit='return false'>"
        "<fieldset><legend>severity</legend>"
        + "".join(f"<label><input type='checkbox' name='severity' value='{s.value}' checked> {s.value}</label>"
                  for s in SEVERITIES)
        + "</fieldset><fieldset><legend>status</legend>"
        + "".join(f"<label><input type='checkbox' name='status' value='{st}' checked> {st}</label>"
                  for st in summary.by_status)
        + f"</fieldset><label>check <select name='check'><option value=''>all</option>{checks}</select></label>"
        f"<label>drift <select name='drift'><option value=''>all</option>{drifts}</select></label>"
        "<label>search <input type='search' name='q' placeholder='code, path, name'></label>"
        "<button type='button' id='show-all'>show all</button><span>shown: <span id='shown'></span></span></form>")
    sections = []
    ports: dict[tuple[str, str], str] = {}
    titles = {"drift": "Drift: introduced by the move", "latent": "Latent: already broken on OLD"}
    for status, groups in triage_order(result.findings):
        sections.append(f"<h2>{escape(titles.get(status, status))}</h2>")
        for path, findings in groups:
            sections.append(f"<section class='group'><h3><code>{escape(path or 'host-wide')}</code> "
                            f"<span class='mute'>({len(findings)})</span></h3>"
                            + "".join(_finding(f, ctx, ports) for f in findings) + "</section>")
    if not result.findings:
        sections.append("<p>No findings.</p>")
    accepted = accepted_line(summary)
    data = json.dumps({"plugin": result.plugin_label, "old": result.old_label, "new": result.new_label,
                       "total": summary.total}, ensure_ascii=False).replace("</", "<\\/")
    return "\n".join([
        "<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; img-src data:\">",
        f"<title>pinport: {escape(result.plugin_label)}, {escape(result.old_label)} → {escape(result.new_label)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<header><h1>pinport: {escape(result.plugin_label)}</h1>"
        f"<div>OLD <code>{escape(result.old_label)}</code> → NEW <code>{escape(result.new_label)}</code> · "
        f"{summary.total} findings · {summary.files_scanned} plugin files"
        + (f" · {escape(accepted)}" if accepted else "") + f" · pinport {escape(pinport.__version__)}</div></header>",
        f"<h2>Summary</h2><div class='summary'>{severity_table}{check_table}{drift_table}</div>",
        "<p class='mute'>Click a row to show only those findings.</p>",
        filters, *sections,
        f"<script type='application/json' id='scan'>{data}</script>",
        f"<script>{_JS}</script></body></html>", ""])
