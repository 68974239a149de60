"""Rule documentation: one entry per finding code, for `pinport rule`, SARIF help and docs/rules/.

The texts live in `rules.toml` beside this module (shipped with the package, so an installed
pinport can explain its codes); `docs/rules/` in the repository is generated from them:
`pinport rule --write-docs docs` rewrites it, and a test fails when it is out of date.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from pinport.checks import CHECKS
from pinport.errors import ConfigError
from pinport.findings import Kind
from pinport.scan import CHECK_CRASHED, PLUGIN_SYNTAX_ERROR


@dataclass(frozen=True)
class Rule:
    """A finding code's documentation: the Kind it belongs to and the four texts."""

    kind: Kind
    summary: str  # one filled sentence, no {placeholders}
    why: str
    example: str
    fix: str

    @property
    def drift_text(self) -> str:
        return f"#{self.kind.drift}" if self.kind.drift is not None else "none (not a drift; a gap or an internal finding)"


def all_kinds() -> list[Kind]:
    """Every finding code pinport can emit, ordered by code: the checks', the scan's and the gate's."""
    # late: the gate package imports the report
    from pinport.gate.findings import KINDS as GATE_KINDS

    kinds = {k.code: k for check in CHECKS for k in check.kinds}
    kinds.update({k.code: k for k in (PLUGIN_SYNTAX_ERROR, CHECK_CRASHED, *GATE_KINDS)})
    return [kinds[c] for c in sorted(kinds)]


@cache
def _texts() -> dict[str, dict[str, str]]:
    return tomllib.loads((resources.files("pinport.report") / "rules.toml").read_text(encoding="utf-8"))


@cache
def rules() -> dict[str, Rule]:
    """Code -> Rule for every code that has documentation."""
    texts = _texts()
    return {k.code: Rule(k, **{f: texts[k.code][f].strip() for f in ("summary", "why", "example", "fix")})
            for k in all_kinds() if k.code in texts}


def rule(code: str) -> Rule:
    """The documentation of one code (case-insensitive); ConfigError for an unknown code."""
    found = rules().get(code.strip().upper())
    if found is None:
        raise ConfigError(f"unknown finding code '{code}' (see `pinport checks` for every code)")
    return found


def docs_base(docs_url: str = "") -> str:
    """The address of pinport's docs folder: `docs_url` (the `docs-url` setting, a published copy)
    when given, else the copy shipped inside the installed package as a file:// address ("" when
    the package does not live on a file system). pinport has no public home to point at."""
    if docs_url:
        return docs_url.rstrip("/")
    shipped = resources.files("pinport") / "docs"
    if not isinstance(shipped, Path) or not (shipped / "rules").is_dir():
        return ""
    return shipped.absolute().as_uri()


def rule_url(code: str, docs_url: str = "") -> str:
    """The code's page, docs/rules/<code>.md, under `docs_base` ("" when there is none)."""
    base = docs_base(docs_url)
    return f"{base}/rules/{code}.md" if base else ""


def rules_index_url(docs_url: str = "") -> str:
    """The page listing every code, docs/rules/README.md, under `docs_base` ("" when there is none)."""
    base = docs_base(docs_url)
    return f"{base}/rules/README.md" if base else ""


def rule_markdown(r: Rule, *, title: bool = True) -> str:
    """The Markdown page of one rule (docs/rules/<code>.md and SARIF help.markdown)."""
    k = r.kind
    lines = [f"# {k.code} {k.name}", ""] if title else []
    lines += [
        f"Drift: {r.drift_text} · check: `{k.check}` · default severity: {k.severity.value}",
        "",
        r.summary,
        "",
        "## Why it breaks",
        "",
        r.why,
        "",
        "## Example",
        "",
        "```python",
        r.example,
        "```",
        "",
        "## How to fix",
        "",
        r.fix,
        "",
        f"Accept it where it is intended: `# pinport: ignore[{k.code}]` on the plugin line, or `ignore` /",
        "`per-file-ignores` in `[tool.pinport]` (see the README).",
    ]
    if title:
        lines += ["", "[All rules](README.md) · [The drift catalogue](../drift.md)"]
    return "\n".join(lines) + "\n"


def rule_text(r: Rule) -> str:
    """One rule for a terminal (`pinport rule CODE`)."""
    k = r.kind
    return "\n".join([
        f"{k.code} {k.name}",
        f"drift: {r.drift_text}   check: {k.check}   default severity: {k.severity.value}",
        "",
        r.summary,
        "",
        "Why it breaks:",
        f"  {r.why}",
        "",
        "Example:",
        *(f"  {line}" if line else "" for line in r.example.splitlines()),
        "",
        "How to fix:",
        f"  {r.fix}",
        "",
        f"Accept it: `# pinport: ignore[{k.code}]` on the plugin line, or `ignore`/`per-file-ignores`.",
    ]) + "\n"


def rules_index() -> str:
    """docs/rules/README.md: every code in one table."""
    lines = ["# Finding codes", "",
             "One page per code pinport reports. `pinport rule CODE` prints the same text in a terminal.",
             "Codes are `PP` + the drift number (two digits, `00` for gaps and internal findings) + a serial;",
             "a code never changes meaning. The drift numbers are explained in [the drift catalogue](../drift.md).",
             "", "| Code | Name | Drift | Check | Severity | Meaning |", "|---|---|---|---|---|---|"]
    for r in rules().values():
        k = r.kind
        drift = f"#{k.drift}" if k.drift is not None else "—"
        summary = r.summary.replace("|", "\\|")
        lines.append(f"| [{k.code}]({k.code}.md) | {k.name} | {drift} | `{k.check}` | {k.severity.value} | {summary} |")
    lines += ["", "_Generated from `src/pinport/report/rules.toml` by `pinport rule --write-docs docs`._"]
    return "\n".join(lines) + "\n"


def generated_docs() -> dict[str, str]:
    """Relative path under docs/ -> content, for every generated page."""
    pages = {f"rules/{code}.md": rule_markdown(r) for code, r in rules().items()}
    pages["rules/README.md"] = rules_index()
    return pages


def write_docs(docs: Path) -> list[str]:
    """Rewrite the generated pages under `docs`; returns the paths that changed."""
    changed = []
    for rel, text in generated_docs().items():
        path = docs / rel
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            changed.append(rel)
    return changed

