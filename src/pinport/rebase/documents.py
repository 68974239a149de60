"""The four documents of a rebase: REBASE_REPORT.md, REBASE_PLAN.md, REBASE_TEST.md, EVOLUTION.md,
and the HTML report beside them (REBASE_REPORT.html).

Rendering is a pure function of the Rebase record (no clock, no absolute temp paths), so a
re-run over the same inputs writes the same bytes. `write_documents` replaces each document's
generated part and keeps whatever a maintainer wrote below the keep marker.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from ..errors import PinportError
from ..findings import Finding, Location, Severity, Status
from ..model.resolve import CLASS, MODULE
from ..port.plan import CONFLICT, UNVERIFIED
from .run import Rebase
from .runbook import PHASES, Unit, read_tests, tests_for

KEEP = "<!-- pinport: keep below -->"
NAMES = ("REBASE_REPORT.md", "REBASE_PLAN.md", "REBASE_TEST.md", "EVOLUTION.md")
HTML = "REBASE_REPORT.html"

# How surely a finding breaks, by the check that made it (REBASE_REPORT ranks by this after severity).
_SURETY = {"signatures": 0, "attributes": 0, "calls": 0, "callers": 0, "imports": 0, "aliases": 0,
           "host-kinds": 0, "undefined": 0, "load-timing": 0, "rebase": 0,
           "mirrors": 1, "forks": 1, "copied-lines": 1, "bypass": 2}

# The procedure's phases 1-4, by the checks whose findings belong there.
_PLAN_PHASES = (
    ("Phase 1 — imports", {"imports", "aliases"}),
    ("Phase 2 — signatures", {"signatures", "callers"}),
    ("Phase 3 — behaviour: mirrored methods and forked files", {"mirrors", "forks", "copied-lines"}),
    ("Phase 4 — lower-risk modules", None),  # everything else
)


def rank_key(finding: Finding) -> tuple:
    return (finding.level.rank, _SURETY.get(finding.kind.check, 1), finding.status is not Status.DRIFT,
            finding.sort_key())


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


class _Links:
    """Markdown links to plugin and host files, relative to the output folder where it can be."""

    def __init__(self, rebase: Rebase, out: Path) -> None:
        self.rebase, self.out = rebase, out.resolve()
        self.url = rebase.settings.host_source_url

    def plugin(self, loc: Location | None) -> str:
        """A link to a plugin location; findings name files from the repository root already."""
        if loc is None:
            return ""
        rel = loc.path
        text = f"{rel}:{loc.line}"
        root = self.rebase.repo_root
        if root is None:
            return f"`{text}`"
        target = os.path.relpath(root / rel, self.out).replace(os.sep, "/")
        return f"[{text}]({target}#L{loc.line})"

    def host(self, loc: Location | None, version: str) -> str:
        if loc is None:
            return "—"
        text = f"{loc.path}:{loc.line}"
        if not self.url:
            return f"`{text}`"
        return f"[{text}]({self.url.format(version=version, path=loc.path, line=loc.line)})"


def _finding_line(f: Finding, links: _Links, rebase: Rebase) -> str:
    drift = f" #{f.kind.drift}" if f.kind.drift else ""
    where = links.plugin(f.plugin)
    evidence = ""
    if f.old or f.new:
        evidence = f" (OLD {links.host(f.old, rebase.old)}, NEW {links.host(f.new, rebase.new)})"
    fix = f" Fix: {f.suggestion}" if f.suggestion else ""
    return f"**{f.level.value}** `{f.code}` [{f.status.value}]{drift} {where} — {_md(f.message)}{evidence}.{fix}"


# --- REBASE_REPORT.md -------------------------------------------------------------------------

def _host_file(rebase: Rebase, target: str, new: bool) -> tuple[str, str] | None:
    view = rebase.models.new if new else rebase.models.old
    sym = view.resolve(target)
    if sym is None or not sym.module or sym.module not in view.index.paths:
        return None
    return sym.module, view.index.paths[sym.module]


def _churn(rebase: Rebase, module: str, cache: dict[str, tuple[int, int]]) -> tuple[int, int] | None:
    if module in cache:
        return cache[module]
    old, new = rebase.models.old.index, rebase.models.new.index
    if module not in old.paths or module not in new.paths:
        return None
    # lines in one version and not the other (a moved line is no churn); linear in the file size
    a, b = Counter(old.lines(module)), Counter(new.lines(module))
    added, removed = sum((b - a).values()), sum((a - b).values())
    cache[module] = (added, removed)
    return cache[module]


def _modules(rebase: Rebase) -> dict[str, set[str]]:
    """Plugin file -> the host paths it patches (patch classes, subclasses, assignments)."""
    surface = rebase.models.plugin.surface
    out: dict[str, set[str]] = {}
    for target in surface.targets:
        out.setdefault(rebase.tree_prefix + target.site.path, set()).add(target.target)
    for patch in surface.patches:
        out.setdefault(rebase.tree_prefix + patch.site.path, set()).add(patch.owner)
    return out


def render_report(rebase: Rebase, links: _Links) -> str:
    r = rebase
    counts = {s: sum(1 for f in r.findings if f.level is s) for s in Severity}
    drift = sum(1 for f in r.scan.findings if f.status is Status.DRIFT)
    out = [f"# Rebase report: {r.plugin_label}, {r.host_label_old} → {r.new}", "",
           f"{len(r.findings)} findings ({counts[Severity.ERROR]} errors, {counts[Severity.WARNING]} warnings, "
           f"{counts[Severity.INFO]} info; {drift} introduced by the move, {len(r.scan.findings) - drift} "
           f"already true on {r.old}); {len(r.fixes.fixes)} safe fixes, {len(r.merges)} clean merges, "
           f"{sum(1 for e in r.pins.edits if e.changes)} pin edits.", ""]
    out += _base_section(r)
    out += _stops_section(r)
    out += ["## Pins (phase 0)", "", "| file:line | statement | before | after |", "|---|---|---|---|"]
    for e in r.pins.edits:
        after = f"`{_md(e.after.strip())}`" if e.changes else "left alone"
        out.append(f"| {links.plugin(e.finding.plugin)} | {_md(e.what)} | "
                   f"`{_md(e.before.strip())}` | {after} |")
    if not r.pins.edits:
        out.append("| — | no pin statement to move | | |")
    out += ["", "## Modules", ""]
    by_file: dict[str, list[Finding]] = {}
    for f in r.scan.findings:
        by_file.setdefault(f.plugin.path if f.plugin else "", []).append(f)
    targets = _modules(r)
    churn_cache: dict[str, tuple[int, int]] = {}
    ordered = sorted(set(by_file) | set(targets), key=lambda p: (
        min((rank_key(f) for f in by_file.get(p, [])), default=(9,)), p))
    for path in ordered:
        out += [f"### `{path}`", ""]
        for target in sorted(targets.get(path, ())):
            found = _host_file(r, target, True) or _host_file(r, target, False)
            if found is None:
                out.append(f"- patches `{target}` (not in {r.host_label_new})")
                continue
            module, host_path = found
            churn = _churn(r, module, churn_cache)
            moved = f"+{churn[0]} −{churn[1]} lines {r.old} → {r.new}" if churn else "file new or gone"
            out.append(f"- patches `{target}` — `{host_path}` ({moved})")
        findings = sorted(by_file.get(path, []), key=rank_key)
        if findings:
            out.append("")
            out += [f"{i}. {_finding_line(f, links, r)}" for i, f in enumerate(findings, 1)]
        out.append("")
    return "\n".join(out)


def _base_section(r: Rebase) -> list[str]:
    out = ["## Base (phase 0)", ""]
    if r.base is None:
        out += [f"Not a git checkout: OLD is the plugin's own pin, {r.old}.", ""]
        return out
    out += [f"Chosen: {r.base.reason()}.", ""]
    if r.base.chosen is not None and r.base.chosen.pin != r.old:
        out += [f"OLD given as {r.old} instead.", ""]
    out += [f"- warning: {w}" for w in r.base.warnings]
    if r.base.passed_over:
        out += ["| passed over | commit | pin | record | why |", "|---|---|---|---|---|"]
        out += [f"| `{c.branch}` | `{c.short}` | {c.pin or '—'} | {c.record or '—'} | {_md(c.reason)} |"
                for c in r.base.passed_over]
    out.append("")
    return out


def _stops_section(r: Rebase) -> list[str]:
    stops = r.stops
    if stops is None:
        return []
    from .stops import render_stops

    return render_stops(stops) + [""]


# --- REBASE_PLAN.md ---------------------------------------------------------------------------

def _check(f: Finding, r: Rebase, links: _Links, fixes: dict[str, str]) -> str:
    done = f.fingerprint in r.done
    if f.fingerprint in fixes:
        note = f" — safe fix: {fixes[f.fingerprint]}" + ("" if done else " (`--apply` makes it)")
    elif f.fingerprint in r.fixes.refused:
        note = f" — not a safe fix: {r.fixes.refused[f.fingerprint]}"
        note += "; resolved in the working tree" if done else ""
    else:
        note = " — resolved in the working tree" if done else ""
    return f"- [{'x' if done else ' '}] {_finding_line(f, links, r)}{note}"


def _by_file(findings: Iterable[Finding]) -> list[tuple[str, list[Finding]]]:
    groups: dict[str, list[Finding]] = {}
    for f in findings:
        groups.setdefault(f.plugin.path if f.plugin else "", []).append(f)
    return sorted(((p, sorted(fs, key=rank_key)) for p, fs in groups.items()),
                  key=lambda item: (rank_key(item[1][0]), item[0]))


def render_plan(r: Rebase, links: _Links) -> str:
    fixes = {f.finding.fingerprint: f"{f.what} ({f.path}:{f.line})" for f in r.fixes.fixes}
    remaining = sum(1 for f in r.findings if f.fingerprint not in r.done)
    out = [f"# Rebase plan: {r.plugin_label}, {r.host_label_old} → {r.new}", "",
           f"{len(r.findings)} items, {len(r.findings) - remaining} done, {remaining} open. "
           "Checked boxes are resolved in the working tree.", "",
           "## Phase 0 — pins and base", ""]
    if r.base is not None:
        out.append(f"- [x] base: {r.base.reason()}")
    for e in r.pins.edits:
        f = e.finding
        done = f.fingerprint in r.done or not e.changes
        change = f"`{_md(e.before.strip())}` → `{_md(e.after.strip())}`" if e.changes else "left alone"
        out.append(f"- [{'x' if done else ' '}] `{f.code}` {links.plugin(f.plugin)} "
                   f"{_md(f.message)}: {change}")
    out.append("")
    assigned: set[str] = set()
    for title, checks in _PLAN_PHASES:
        chosen = [f for f in r.scan.findings if (checks is None or f.kind.check in checks)
                  and f.fingerprint not in assigned]
        assigned |= {f.fingerprint for f in chosen}
        out += [f"## {title}", ""]
        if title.startswith("Phase 3"):
            out += _merge_items(r)
        for path, findings in _by_file(chosen):
            out.append(f"### `{path}`")
            out += [_check(f, r, links, fixes) for f in findings]
            out.append("")
        if not chosen:
            out += ["Nothing found.", ""]
    out += ["## Phase 5 — no-GPU gate", "",
            f"- [ ] `pinport scan --plugin . --old {r.old} --new {r.new}` reports no error",
            "- [ ] `python -m compileall -q .` and the plugin's imports resolve",
            f"- [ ] in an environment with {r.settings.host_dist}=={r.new}: load the plugin "
            "and `python -m pytest --collect-only`", "",
            "## Phase 6 — GPU runbook", "", "- [ ] every phase of REBASE_TEST.md passes", ""]
    return "\n".join(out)


def _merge_items(r: Rebase) -> list[str]:
    """One checkbox per copy whose upstream changed: the verified clean merges `--apply` makes, and
    the proposals it leaves to a person, with why (a failed verification, conflicts)."""
    out = []
    for item in r.port:
        copy = item.copy
        where = f"({copy.kind}, {r.tree_prefix}{copy.plugin.path}:{copy.plugin.start})"
        key = f"{copy.plugin.path}::{copy.unit}"
        if item in r.merges:
            out.append(f"- [{'x' if key in r.merged else ' '}] clean three-way merge of `{copy.unit}` {where}"
                       " — `--apply` makes it")
        elif item.status == UNVERIFIED:
            out.append(f"- [ ] merge of `{copy.unit}` {where} not applied: {_md(item.verification)}")
        elif item.status == CONFLICT:
            out.append(f"- [ ] merge of `{copy.unit}` {where} leaves {item.conflicts} conflict(s): "
                       "`pinport port --write DIR` writes the proposal with them marked")
    return out


# --- REBASE_TEST.md ---------------------------------------------------------------------------

def _units(r: Rebase) -> dict[tuple[str, str], list[str]]:
    """(plugin file from the repository root, unit) -> what changed or was flagged there."""
    out: dict[tuple[str, str], list[str]] = {}
    for f in sorted(r.scan.findings, key=rank_key):
        if f.plugin is not None and f.level is not Severity.INFO:
            out.setdefault((f.plugin.path, f.plugin.unit or "<module>"), []).append(f"{f.code} {f.kind.name}")
    for fix in r.fixes.fixes:
        out.setdefault((fix.path, fix.finding.plugin.unit or "<module>"), []).append(f"safe fix: {fix.what}")
    for item in r.merges:
        out.setdefault((r.tree_prefix + item.copy.plugin.path, item.copy.unit), []).append(
            "clean merge of upstream's change")
    return out


def render_runbook(r: Rebase) -> str:
    tests = read_tests(r.snapshot.files, r.snapshot.read)
    index = r.models.plugin.index
    modules = {r.tree_prefix + path: module for module, path in index.paths.items()}
    host_names: dict[tuple[str, str], set[str]] = {}
    for patch in r.models.plugin.surface.patches:
        site = (r.tree_prefix + patch.site.path, patch.site.unit or "<module>")
        host_names.setdefault(site, set()).add(patch.name)
        owner = r.models.new.resolve(patch.owner) or r.models.old.resolve(patch.owner)
        if owner is not None and owner.kind in (CLASS, MODULE):
            host_names[site].add(owner.path.rpartition(".")[2])
    out = [f"# GPU test runbook: {r.plugin_label} on {r.host_label_new}", "",
           f"Install {r.settings.host_dist}=={r.new} and the plugin, then run the phases in order; stop at the "
           "first failure and fix it before going on.", "",
           "## Change → test", "",
           "| plugin unit | changed / flagged | tests that exercise it | watch |", "|---|---|---|---|"]
    by_phase: dict[str, set[str]] = {p: set() for p in PHASES}
    units = _units(r)
    for (path, unit), why in sorted(units.items()):
        names = tuple(sorted(host_names.get((path, unit), ())))
        hits = tests_for(Unit(path, modules.get(path, ""), unit, names), tests)
        for test, _ in hits:
            by_phase[test.phase].add(test.path)
        listed = "<br>".join(f"`{t.path}` ({w})" for t, w in hits) or "none found: add one"
        watch = "; ".join(dict.fromkeys(why))
        out.append(f"| `{path}` `{unit}` | {_md(watch)} | {listed} | "
                   f"{_watch(why)} |")
    if not units:
        out.append("| — | nothing changed or flagged | | |")
    if not tests:
        out += ["", "No test files found in the plugin project (looked for `tests/`, `test_*.py`, `*_test.py`)."]
    out += ["", "## Phases", ""]
    out += _phase_commands(r, by_phase, tests)
    return "\n".join(out)


def _watch(why: list[str]) -> str:
    text = " ".join(why)
    if "PP01" in text or "PP02" in text:
        return "TypeError at the first call from the host (engine init, first step)"
    if "PP04" in text or "PP05" in text or "PP06" in text:
        return "ImportError / AttributeError when the plugin loads"
    if "PP08" in text or "PP12" in text or "merge" in text:
        return "wrong outputs or shape errors in the copied code path"
    if "PP09" in text:
        return "AttributeError on the first prefill / decode"
    if "PP10" in text:
        return "the patch silently not applying (compare with and without the plugin)"
    return "the unit's feature end to end"


def _phase_commands(r: Rebase, by_phase: dict[str, set[str]], tests: list) -> list[str]:
    all_by_phase: dict[str, list[str]] = {p: [] for p in PHASES}
    for test in tests:
        all_by_phase[test.phase].append(test.path)
    out = []
    smoke = ("engine init, first prefill, first decode, first speculative-decoding step: "
             f"`python -c \"import {r.settings.host}; from {r.settings.host} import LLM; "
             "llm = LLM(model='<a small model>', enforce_eager=True); print(llm.generate(['Hello'])[0].outputs[0].text)\"`"
             " — then the same with the plugin's speculative-decoding config")
    for number, phase in enumerate(PHASES, 1):
        out += [f"### {number}. {phase}", ""]
        if phase == "smoke":
            out += [f"- [ ] {smoke}", ""]
            continue
        targeted = sorted(by_phase[phase])
        rest = sorted(set(all_by_phase[phase]) - set(targeted))
        if targeted:
            out.append(f"- [ ] targeted: `python -m pytest -x {' '.join(targeted)}`")
        if rest:
            out.append(f"- [ ] the rest of the phase: `python -m pytest -x {' '.join(rest)}`")
        if not targeted and not rest:
            out.append("- [ ] no test of this phase in the plugin: exercise the feature by hand")
        out.append("")
    return out


# --- writing ----------------------------------------------------------------------------------

def render_documents(rebase: Rebase, out: Path, evolution: str) -> dict[str, str]:
    links = _Links(rebase, out)
    return {"REBASE_REPORT.md": render_report(rebase, links), "REBASE_PLAN.md": render_plan(rebase, links),
            "REBASE_TEST.md": render_runbook(rebase), "EVOLUTION.md": evolution}


def render_html_report(rebase: Rebase) -> str:
    """REBASE_REPORT.html: the HTML report of every finding, pins included (the renderer of
    `--format html`: one self-contained file, the code beside each finding, every copy's merge)."""
    from ..report.excerpts import build_html_context
    from ..report.html import render_html

    result = replace(rebase.scan, findings=tuple(sorted(rebase.findings, key=Finding.sort_key)))
    return render_html(result, build_html_context(rebase.models, rebase.settings, result, port_items=rebase.port))


def merge_kept(generated: str, existing: str | None) -> str:
    """The generated text, then the keep marker and whatever followed it in the existing file."""
    kept = existing.split(KEEP, 1)[1] if existing and KEEP in existing else "\n"
    return generated.rstrip("\n") + "\n\n" + KEEP + kept


def write_documents(documents: dict[str, str], out: Path) -> list[Path]:
    """Write each document into `out`, keeping what a maintainer wrote below the marker (in the
    Markdown ones; an HTML document is generated whole)."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name, text in documents.items():
            path = out / name
            existing = path.read_text(encoding="utf-8") if path.is_file() else None
            final = merge_kept(text, existing) if name.endswith(".md") else text
            if final != existing:
                path.write_text(final, encoding="utf-8")
            written.append(path)
    except OSError as exc:
        raise PinportError(f"{out}: cannot write the documents ({exc.strerror})") from None
    return written
