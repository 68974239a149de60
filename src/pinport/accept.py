"""Accepting known findings: rule selection, inline `# pinport: ignore[...]`, per-file-ignores, baselines.

A finding a maintainer has accepted leaves the report but is still counted, so a summary never
hides how much was accepted. Codes are matched by prefix like ruff's (`PP01` covers `PP0101`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from pathlib import Path

from .config import Settings
from .errors import ConfigError
from .findings import Finding, ScanResult

BASELINE_FORMAT = "pinport-baseline"
BASELINE_VERSION = 1

# `# pinport: ignore` or `# pinport: ignore[PP0101, PP02]`, anywhere in a line's comment.
_INLINE = re.compile(r"#\s*pinport:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)


def _longest(code: str, prefixes: Iterable[str]) -> int:
    return max((len(p) for p in prefixes if code.startswith(p)), default=-1)


def is_selected(code: str, settings: Settings) -> bool:
    """Whether `code` is reported: the most specific matching prefix decides, ignore wins a tie."""
    chosen = _longest(code, (*(settings.select or ("PP",)), *settings.extend_select))
    return chosen >= 0 and chosen > _longest(code, settings.ignore)


def inline_codes(line: str) -> tuple[str, ...] | None:
    """The codes an inline comment on `line` accepts: () for a bare ignore, None without a comment."""
    match = _INLINE.search(line)
    if match is None:
        return None
    codes = match.group("codes")
    return tuple(c.strip().upper() for c in codes.split(",") if c.strip()) if codes is not None else ()


def _accepted_inline(f: Finding, line_of: Callable[[str, int], str]) -> bool:
    if f.plugin is None or f.plugin.line < 1:
        return False
    codes = inline_codes(line_of(f.plugin.path, f.plugin.line))
    return codes is not None and (not codes or any(f.code.startswith(c) for c in codes))


def _accepted_by_file(f: Finding, settings: Settings) -> bool:
    if f.plugin is None:
        return False
    return any(fnmatchcase(f.plugin.path, pattern) and any(f.code.startswith(c) for c in codes)
               for pattern, codes in settings.per_file_ignores)


def accept_findings(result: ScanResult, settings: Settings,
                    line_of: Callable[[str, int], str]) -> ScanResult:
    """Drop deselected codes; move inline- and per-file-accepted findings to `result.suppressed`.

    `line_of(path, line)` is the plugin's source line (the comment lives there)."""
    kept, suppressed = [], []
    for f in result.findings:
        if not is_selected(f.code, settings):
            continue
        (suppressed if _accepted_inline(f, line_of) or _accepted_by_file(f, settings) else kept).append(f)
    fixed = tuple(f for f in result.fixed if is_selected(f.code, settings))
    return replace(result, findings=tuple(kept), suppressed=(*result.suppressed, *suppressed), fixed=fixed)


@dataclass(frozen=True)
class Baseline:
    """Fingerprints of findings accepted as they stand; a finding not in it is new."""

    fingerprints: frozenset[str]

    @classmethod
    def read(cls, path: Path) -> Baseline:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read baseline {path}: {exc.strerror}") from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ConfigError(f"baseline {path} is not JSON; write one with --write-baseline") from None
        if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT:
            raise ConfigError(f"{path} is not a pinport baseline; write one with --write-baseline")
        if data.get("version") != BASELINE_VERSION:
            raise ConfigError(f"baseline {path} has version {data.get('version')!r}; "
                              f"this pinport reads version {BASELINE_VERSION}")
        entries = data.get("findings")
        if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("fingerprint"), str)
                                                    for e in entries):
            raise ConfigError(f"baseline {path}: 'findings' must be a list of objects with a 'fingerprint'")
        return cls(frozenset(e["fingerprint"] for e in entries))

    def apply(self, result: ScanResult) -> ScanResult:
        """Move the findings whose fingerprint is in the baseline to `result.baselined`."""
        kept = tuple(f for f in result.findings if f.fingerprint not in self.fingerprints)
        known = tuple(f for f in result.findings if f.fingerprint in self.fingerprints)
        return replace(result, findings=kept, baselined=(*result.baselined, *known))


def baseline_document(result: ScanResult) -> str:
    """A baseline accepting every finding of `result` (and those it already accepted by baseline).

    Code, path and message are there for a reviewer reading the file; only fingerprints count."""
    findings = sorted((*result.findings, *result.baselined), key=Finding.sort_key)
    document = {
        "format": BASELINE_FORMAT,
        "version": BASELINE_VERSION,
        "plugin": result.plugin_label,
        "findings": [{"fingerprint": f.fingerprint, "code": f.code,
                      "path": f.plugin.path if f.plugin else "", "message": f.message} for f in findings],
    }
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
