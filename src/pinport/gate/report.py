"""The gate's report in every format: its steps (PASS/FAIL/SKIP with evidence), then the joined findings."""

from __future__ import annotations

import json

from ..report import render
from ..report.text import render_text
from .run import GateResult, GateStep

MAX_EVIDENCE = 40


def steps_as_data(result: GateResult) -> dict[str, object]:
    """The gate's own outcome as plain data, for the JSON and SARIF documents."""
    applied, classes = result.patch_classes
    return {
        "python": str(result.env.python), "python_version": result.env.python_version,
        "host_version": result.env.host_version, "env": str(result.env.path) if result.env.path else None,
        "env_built": result.env.built, "env_seconds": round(result.env.seconds, 1),
        "steps": [{"name": s.name, "result": s.label, "summary": s.summary, "evidence": list(s.evidence)}
                  for s in result.steps],
        "patch_classes": {"applied": applied, "total": classes},
        "patches": {status: sum(1 for c in result.patches if c.status == status)
                    for status in sorted({c.status for c in result.patches})},
        "stubbed": dict(sorted(result.stubbed.items())),
        "timings": dict(result.timings), "seconds": round(result.seconds, 2), "failed": result.failed,
    }


def step_lines(step: GateStep, limit: int = MAX_EVIDENCE) -> list[str]:
    lines = [f"{step.label} {step.name}: {step.summary}"]
    lines += [f"    {e}" for e in step.evidence[:limit]]
    if len(step.evidence) > limit:
        lines.append(f"    … {len(step.evidence) - limit} more")
    return lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_gate(result: GateResult, fmt: str, *, width: int | None = None, docs_url: str = "") -> str:
    """The whole gate report: steps first, then the findings (static and dynamic, joined);
    `width` folds the text report's long lines (the CLI passes the terminal's), `docs_url` is
    where SARIF's help addresses point, as in the scan's report."""
    if fmt == "text":
        head = [f"pinport gate: {result.env.python} ({result.report.new_label})"]
        for step in result.steps:
            head += step_lines(step)
        verdict = "FAIL" if result.failed else "PASS"
        head.append(f"gate: {verdict} in {result.seconds:.1f}s")
        return "\n".join(head) + "\n\n" + render_text(result.report, width=width)
    body = render(result.report, fmt, docs_url=docs_url)
    if fmt == "json":
        document = json.loads(body)
        document["gate"] = steps_as_data(result)
        return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if fmt == "sarif":
        document = json.loads(body)
        document["runs"][0]["properties"]["gate"] = steps_as_data(result)
        return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    rows = ["## No-GPU gate", "", f"Interpreter `{result.env.python}` ({result.report.new_label}).", "",
            "| Step | Result | Summary |", "|---|---|---|"]
    rows += [f"| {s.name} | **{s.label}** | {_cell(s.summary)} |" for s in result.steps]
    for step in result.steps:
        if step.evidence:
            rows += ["", f"<details><summary>{step.name}: evidence</summary>", "", "```"]
            rows += list(step.evidence[:MAX_EVIDENCE * 5])
            rows += ["```", "", "</details>"]
    return "\n".join(rows) + "\n\n" + body
