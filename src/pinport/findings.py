"""The Finding record every stage shares: checks yield it, scan sorts it, reports render it."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import StrEnum


class Severity(StrEnum):
    """How bad a finding is; ERROR means it breaks at import or first call on NEW."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "info": 2}[self.value]


class Status(StrEnum):
    """Whether the move OLD -> NEW introduces a finding, it already holds on OLD, or the gate saw it happen."""

    DRIFT = "drift"  # introduced by the move: holds on NEW, not on OLD
    LATENT = "latent"  # already broken on the current pin, still broken on NEW
    FIXED = "fixed"  # held on OLD, the move fixes it (reported only on request)
    CONFIRMED = "confirmed"  # seen happen by the gate in a real host environment


@dataclass(frozen=True, slots=True)
class Kind:
    """A stable kind of finding: a code that never changes meaning, a template and a drift number."""

    code: str  # e.g. "PP0401": drift number (2 digits) + serial (2 digits); 00 = not drift-specific
    name: str  # states a fact: "ImportUnresolved", "ParameterAdded"
    template: str  # str.format template filled by Finding.args
    severity: Severity
    drift: int | None  # number in the drift catalogue, None for gaps and internal kinds
    check: str  # the check that emits it


@dataclass(frozen=True, slots=True)
class Location:
    """A place in a tree: a path relative to the tree root, 1-based line, and what sits there."""

    path: str
    line: int
    column: int = 0
    unit: str = ""  # qualified name of the enclosing unit ("Cls.meth", "<module>")
    snippet: str = ""  # source line or signature shown as evidence

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"

    def cited(self) -> str:
        """`path:line (unit): snippet`, how a site reads in a finding's details."""
        unit = f" ({self.unit})" if self.unit else ""
        return f"{self.path}:{self.line}{unit}: {self.snippet}" if self.snippet else f"{self.path}:{self.line}{unit}"


# A template argument: text, or a number (a line, a count) kept as a number so nothing parses it back.
Arg = str | int

# Template arguments that name what a finding is about; the others (version labels, counts,
# expressions) may differ between OLD and NEW or between runs and so stay out of its identity.
IDENTITY_ARGS = ("name", "param", "callee", "module", "cls", "target", "alias", "function", "owner")


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: kind, where in the plugin, the host evidence on OLD and NEW, and a fix."""

    kind: Kind
    args: dict[str, Arg]
    plugin: Location | None
    old: Location | None = None
    new: Location | None = None
    subject: str = ""  # the host path the finding is about ("vllm.x.Cls.meth")
    suggestion: str = ""
    details: tuple[str, ...] = ()  # extra evidence lines for people (diff hunks, call sites as text)
    sites: tuple[Location, ...] = ()  # host call sites (or construction sites) behind the finding, as data
    status: Status = Status.DRIFT
    severity: Severity | None = None  # overrides kind.severity when set
    extra: dict[str, object] = field(default_factory=dict, compare=False, hash=False)
    occurrence: int = 0  # 1, 2, ... among findings that would otherwise share a fingerprint

    @property
    def code(self) -> str:
        return self.kind.code

    @property
    def level(self) -> Severity:
        return self.severity or self.kind.severity

    @property
    def message(self) -> str:
        try:
            return self.kind.template.format(**self.args)
        except (KeyError, IndexError):  # a template/args mismatch must not lose the finding
            return f"{self.kind.template} {self.args}"

    def check_template(self) -> None:
        """Raise if the kind's template names an argument the finding lacks (strict scans call this:
        `message` itself falls back to the raw template so that a user's scan loses nothing)."""
        self.kind.template.format(**self.args)

    @property
    def identity(self) -> str:
        """What the finding is about, without lines or version labels: kind, plugin file and unit,
        host subject and the naming arguments (a parameter, a callee); equal for OLD and NEW."""
        unit = self.plugin.unit if self.plugin else ""
        path = self.plugin.path if self.plugin else ""
        names = (f"{k}={self.args[k]}" for k in IDENTITY_ARGS if k in self.args)
        return "\x1f".join((self.kind.code, path, unit, self.subject, *names))

    @property
    def fingerprint(self) -> str:
        """Stable identity across runs and versions, unique within one scan (lines never count:
        findings with one identity are told apart by their order in the file)."""
        key = self.identity + (f"\x1f#{self.occurrence}" if self.occurrence else "")
        return hashlib.sha1(key.encode()).hexdigest()[:16]

    def with_status(self, status: Status) -> Finding:
        return replace(self, status=status)

    def sort_key(self) -> tuple:
        p = self.plugin
        return (p.path if p else "", p.line if p else 0, self.level.rank, self.kind.code, self.subject,
                self.message)

    def as_dict(self) -> dict[str, object]:
        def loc(x: Location | None) -> dict[str, object] | None:
            if x is None:
                return None
            return {"path": x.path, "line": x.line, "column": x.column, "unit": x.unit,
                    "snippet": x.snippet}

        return {
            "code": self.kind.code,
            "kind": self.kind.name,
            "check": self.kind.check,
            "drift": self.kind.drift,
            "severity": self.level.value,
            "status": self.status.value,
            "message": self.message,
            "subject": self.subject,
            "plugin": loc(self.plugin),
            "old": loc(self.old),
            "new": loc(self.new),
            "suggestion": self.suggestion,
            "details": list(self.details),
            "sites": [loc(x) for x in self.sites],
            "fingerprint": self.fingerprint,
        }


@dataclass(frozen=True)
class ScanResult:
    """What one scan produced: the labels of its three inputs and the sorted findings."""

    plugin_label: str
    old_label: str
    new_label: str
    findings: tuple[Finding, ...]
    checks: tuple[str, ...] = ()  # names of the checks that ran, in registry order
    files_scanned: int = 0  # plugin files analysed
    seconds: float = 0.0
    fixed: tuple[Finding, ...] = ()  # held on OLD, gone on NEW (shown on request)
    suppressed: tuple[Finding, ...] = ()  # accepted by an inline comment or per-file-ignores
    baselined: tuple[Finding, ...] = ()  # accepted by a baseline file

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.level is severity)


def number_occurrences(findings: Iterable[Finding]) -> list[Finding]:
    """Give findings that share an identity an ordinal (by plugin line), so fingerprints are unique
    and a line moving up or down never changes one; a lone finding keeps occurrence 0."""
    findings = list(findings)
    groups: dict[str, list[int]] = {}
    for i, f in enumerate(findings):
        groups.setdefault(f.identity, []).append(i)
    out = list(findings)
    for members in groups.values():
        if len(members) < 2:
            continue
        ordered = sorted(members, key=lambda i: (findings[i].plugin.line if findings[i].plugin else 0,
                                                 findings[i].plugin.column if findings[i].plugin else 0,
                                                 findings[i].message))
        for n, i in enumerate(ordered, 1):
            out[i] = replace(findings[i], occurrence=n)
    return out
