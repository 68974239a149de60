"""One root cause, one finding: evidence that confirms a finding is folded into it.

Checks judge independently, so one break can surface several times: a signature finding and the
host call sites that confirm it, a missing module and the patch target or alias inside it, one
call that passes several arguments NEW rejects. The scan folds each group into one finding (the
summary) that carries the others as details and sites, and keeps the summary's identity, so the
fingerprint does not depend on how many pieces of evidence there were.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from .findings import Finding, Severity

# A call-site finding (callers check) that confirms a signature finding for the same plugin unit
# is folded into it: the parameter the call sites pass (or omit), or, for too many positional
# arguments, the first positional parameter the override lacks.
_CONFIRMS = {"PP0110": ("PP0101", "name"), "PP0112": ("PP0201", "name"), "PP0111": ("PP0101", "")}
# A patch target or alias inside a module NEW no longer has: the missing module says it all.
_INSIDE_MODULE = ("PP0003", "PP0001")
# Per-argument findings of one plugin call: one finding listing every mismatched argument.
_PER_ARGUMENT = ("PP0301", "PP0302", "PP0303", "PP0304", "PP0701", "PP0702", "PP0703", "PP0704")


_REASONS = ("error: ", "warning: ")  # an evidence finding's severity reason travels with it


def fold_root_causes(findings: list[Finding]) -> list[Finding]:
    """Fold confirming evidence into the finding it confirms (see the module docstring)."""
    return _fold_call_arguments(_fold_into_missing_module(_fold_confirmations(findings)))


def _unit(f: Finding) -> tuple[str, str]:
    return (f.plugin.path, f.plugin.unit) if f.plugin else ("", "")


def _merge(summary: Finding, evidence: Finding, *, error: bool, lead: str) -> Finding:
    cited = {site.cited() for site in evidence.sites}  # the call-site lines among its details
    severity = summary.severity
    if error and summary.level is not Severity.ERROR:
        severity = Severity.ERROR
    return replace(summary, severity=severity,
                   details=(*summary.details, f"{lead} {evidence.code}: {evidence.message}",
                            *(d for d in evidence.details if d in cited or d.startswith(_REASONS))),
                   sites=(*summary.sites, *evidence.sites))


def _fold_by(findings: list[Finding], summary_of: Callable[[Finding], int | None], *, error: bool,
             lead: str) -> list[Finding]:
    out = list(findings)
    dropped: set[int] = set()
    for i, f in enumerate(findings):
        target = summary_of(f)
        if target is None or target == i or target in dropped:
            continue
        out[target] = _merge(out[target], f, error=error and f.level is Severity.ERROR, lead=lead)
        dropped.add(i)
    return [f for i, f in enumerate(out) if i not in dropped]


def _fold_confirmations(findings: list[Finding]) -> list[Finding]:
    by_param: dict[tuple, int] = {}
    first: dict[tuple, int] = {}
    for i, f in enumerate(findings):
        if f.code in ("PP0101", "PP0201"):
            by_param.setdefault((f.code, *_unit(f), f.args.get("param", "")), i)
            first.setdefault((f.code, *_unit(f)), i)

    def summary_of(f: Finding) -> int | None:
        if f.code not in _CONFIRMS:
            return None
        code, arg = _CONFIRMS[f.code]
        return by_param.get((code, *_unit(f), f.args.get(arg, ""))) if arg else first.get((code, *_unit(f)))
    return _fold_by(findings, summary_of, error=True, lead="confirmed by")


def _fold_into_missing_module(findings: list[Finding]) -> list[Finding]:
    missing = {f.args["module"]: i for i, f in enumerate(findings) if f.code == "PP0401" and "module" in f.args}

    def summary_of(f: Finding) -> int | None:
        if f.code not in _INSIDE_MODULE or not f.plugin:
            return None
        target = f.args.get("target", "")
        return next((i for module, i in missing.items() if target.startswith(module + ".")
                     and findings[i].plugin and findings[i].plugin.path == f.plugin.path), None)
    return _fold_by(findings, summary_of, error=False, lead="the same missing module:")


def _fold_call_arguments(findings: list[Finding]) -> list[Finding]:
    first: dict[tuple, int] = {}  # the summary of each call: its lowest code (a missing argument first)
    for i, f in enumerate(findings):
        if f.code in _PER_ARGUMENT and f.plugin:
            key = (f.plugin.path, f.plugin.line, f.args.get("callee", ""))
            if key not in first or f.code < findings[first[key]].code:
                first[key] = i

    def summary_of(f: Finding) -> int | None:
        if f.code not in _PER_ARGUMENT or not f.plugin:
            return None
        return first.get((f.plugin.path, f.plugin.line, f.args.get("callee", "")))
    return _fold_by(findings, summary_of, error=False, lead="the same call also:")
