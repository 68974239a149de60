"""The gate's own finding kinds, and the join of what it saw with what the static checks predicted.

A break the gate recorded is a finding of its own (status **confirmed**: it happened). A static
finding at the same plugin place about the same missing name is marked confirmed too; a break
no static finding predicted says so, since those are the cases the static checks should learn.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ..findings import Finding, Kind, Location, Severity, Status

NAME = "gate"

MODULE_MISSING = Kind("PP0071", "GateModuleMissing", "importing the plugin on {label} fails: module `{name}` "
                      "does not exist{prediction}", Severity.ERROR, 4, NAME)
NAME_MISSING = Kind("PP0072", "GateNameMissing", "importing the plugin on {label} fails: `{name}` cannot be "
                    "imported ({error}){prediction}", Severity.ERROR, 4, NAME)
ATTRIBUTE_MISSING = Kind("PP0073", "GateAttributeMissing", "on {label}, `{name}` is missing at import time "
                         "({error}){prediction}", Severity.ERROR, None, NAME)
UNDEFINED_NAME = Kind("PP0074", "GateUndefinedName", "on {label}, name `{name}` is not defined at import time"
                      "{prediction}", Severity.ERROR, None, NAME)
IMPORT_FAILED = Kind("PP0075", "GateImportFailed", "importing the plugin on {label} fails: {error}{prediction}",
                     Severity.ERROR, None, NAME)
BOOTSTRAP_FAILED = Kind("PP0076", "GateBootstrapFailed", "the plugin's bootstrap `{entry}` fails on {label}: "
                        "{error}{prediction}", Severity.ERROR, None, NAME)
PATCH_NOT_APPLIED = Kind("PP0077", "GatePatchNotApplied", "after the bootstrap on {label}, `{name}` is not the "
                         "plugin's `{plugin_name}`: the patch did not apply ({detail})", Severity.ERROR, None, NAME)
COLLECTION_ERROR = Kind("PP0078", "GateTestCollectionError", "the plugin's tests do not collect on {label}: {error}",
                        Severity.ERROR, None, NAME)
COMPILE_ERROR = Kind("PP0079", "GateCompileError", "this plugin file does not compile on Python {python}: {error}",
                     Severity.ERROR, None, NAME)
STUBBED = Kind("PP0080", "GateStubbed", "`{name}` is absent from the environment ({why}); the gate stood a stub "
               "in its place", Severity.INFO, None, NAME)
SELECTION = Kind("PP0081", "GateSelection", "on {label}, with the environment as it stands, the host selects "
                 "{chosen} (`{test}` at {site})", Severity.INFO, 10, NAME)

KINDS = (MODULE_MISSING, NAME_MISSING, ATTRIBUTE_MISSING, UNDEFINED_NAME, IMPORT_FAILED, BOOTSTRAP_FAILED,
         PATCH_NOT_APPLIED, COLLECTION_ERROR, COMPILE_ERROR, STUBBED, SELECTION)

NOT_PREDICTED = "; no static finding predicted this"
_STUB_REASONS = {"extension": "a compiled extension the plugin's source tree lacks",
                 "optional": "an optional dependency not installed there",
                 "forced": "stubbed by the `gate.stub` setting",
                 "raises": "it raises on import in this environment",
                 "host": "a host module the plugin imports"}


def break_finding(entry: dict, label: str) -> Finding:
    """One recorded import-time or bootstrap break as a confirmed finding at its plugin frame."""
    message = re.sub(r" \((?:/|[A-Za-z]:\\)[^()]*\)$", "", entry["message"])  # the host file's path
    error = f"{entry['type']}: {message}"
    missing = entry.get("missing") or ""
    if entry["phase"] == "bootstrap":
        kind, args = BOOTSTRAP_FAILED, {"entry": entry["module"], "error": error}
    elif entry["type"] == "ModuleNotFoundError" and missing:
        kind, args = MODULE_MISSING, {"name": missing}
    elif entry["type"] == "ImportError" and entry.get("fix") == "stub name":
        kind, args = NAME_MISSING, {"name": missing, "error": message}
    elif entry["type"] == "AttributeError" and missing:
        kind, args = ATTRIBUTE_MISSING, {"name": missing, "error": message}
    elif entry["type"] == "NameError" and missing:
        kind, args = UNDEFINED_NAME, {"name": missing}
    else:
        kind, args = IMPORT_FAILED, {"error": error}
    args.update(label=label, prediction="")
    site = Location(entry["path"], entry["line"], 0, entry.get("function") or "<module>", entry.get("code", "")) \
        if entry.get("path") else None
    details = [f"{entry['type']}: {entry['message']}"]  # in full, with the path
    if entry.get("module"):
        details.append(f"while importing {entry['module']}" if entry["phase"] == "import"
                       else f"in the bootstrap ({entry['module']})")
    return Finding(kind, args, site, subject=missing or entry.get("module", ""), details=tuple(details),
                   status=Status.CONFIRMED)


def stub_findings(stubbed: dict[str, str], imported_by: dict[str, Location]) -> list[Finding]:
    """Modules the gate stood in for that are not breaks of the host: listed, as info."""
    out = []
    for name, why in sorted(stubbed.items()):
        if why == "host":
            continue  # a break: reported by break_finding with its plugin frame
        out.append(Finding(STUBBED, {"name": name, "why": _STUB_REASONS.get(why, why)}, imported_by.get(name),
                           subject=name, status=Status.CONFIRMED))
    return out


def _same_place(static: Finding, dynamic: Finding) -> bool:
    s, d = static.plugin, dynamic.plugin
    if s is None or d is None or s.path != d.path:
        return False
    if s.line == d.line:
        return True
    name = dynamic.subject.rpartition(".")[2]
    return bool(name) and abs(s.line - d.line) <= 12 and (
        name == static.subject.rpartition(".")[2] or name in static.message)


def join(static: Sequence[Finding], dynamic: Sequence[Finding]) -> tuple[list[Finding], list[Finding]]:
    """(static findings, each reproduced one marked confirmed; dynamic ones, each saying what predicted it)."""
    confirmed: dict[int, list[Finding]] = {}
    joined_dynamic = []
    for d in dynamic:
        if "prediction" not in d.args:
            joined_dynamic.append(d)
            continue
        matches = [i for i, s in enumerate(static) if s.level is not Severity.INFO and _same_place(s, d)]
        for i in matches:
            confirmed.setdefault(i, []).append(d)
        codes = sorted({static[i].code for i in matches})
        prediction = ("; predicted by " + ", ".join(codes)) if matches else NOT_PREDICTED
        joined_dynamic.append(replace(d, args={**d.args, "prediction": prediction},
                                      extra={**d.extra, "predicted_by": codes}))
    joined_static = []
    for i, s in enumerate(static):
        if i in confirmed:
            evidence = [f"confirmed by the gate: {d.code} {d.plugin} {d.details[0] if d.details else ''}".rstrip()
                        for d in confirmed[i]]
            s = replace(s, status=Status.CONFIRMED, details=(*s.details, f"static status: {s.status.value}",
                                                             *evidence))
        joined_static.append(s)
    return joined_static, joined_dynamic
