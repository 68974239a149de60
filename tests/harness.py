"""Scan inline sources: an OLD host, a NEW host and a plugin, written to a temporary tree.

Like pyflakes' `flakes()` and griffe's temporary packages: tests state the three versions
as small dicts of `{relative path: source}` and assert finding codes and evidence lines.
The host package is called `host` and the plugin package `plug` unless a test says otherwise.
"""

from __future__ import annotations

import tempfile
import textwrap
from dataclasses import replace
from pathlib import Path

from pinport.checks.base import Check
from pinport.config import Settings
from pinport.findings import Finding, ScanResult
from pinport.scan import load_models, scan_models
from pinport.sources.tree import SourceTree, scan_files

HOST = "host"
PLUGIN = "plug"


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def _tree(root: Path, package: str, label: str, files: dict[str, str]) -> SourceTree:
    write_tree(root, files)
    for rel in list(files):  # every folder on the way is a package
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            init = root.joinpath(*parts[:i], "__init__.py")
            if not init.exists():
                init.write_text("", encoding="utf-8")
    return SourceTree(root, label, package, None, scan_files(root, (package,)))


def run_scan(old: dict[str, str], new: dict[str, str], plugin: dict[str, str], *,
             checks: tuple[Check, ...] = (), names: tuple[str, ...] = (), **settings: object) -> ScanResult:
    """Scan plugin against OLD and NEW host sources; keys are paths like 'host/mod.py'."""
    config = replace(Settings(host=HOST, plugin_package=PLUGIN, pin_sources=()), **settings)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        trees = [_tree(base / "old", HOST, "host 1.0", old), _tree(base / "new", HOST, "host 2.0", new),
                 _tree(base / "plugin", PLUGIN, "plugin", plugin)]
        models = load_models(trees[2], trees[0], trees[1], config)
        return scan_models(models, config, checks=names, strict=True, extra_checks=checks)


def codes(result: ScanResult) -> list[str]:
    """Sorted finding codes, the thing tests assert (never wording)."""
    return sorted(f.code for f in result.findings)


def only(result: ScanResult, code: str) -> Finding:
    """The single finding with this code (fails the test when there are none or several)."""
    found = [f for f in result.findings if f.code == code]
    assert len(found) == 1, f"expected one {code}, got {[(f.code, f.message) for f in result.findings]}"
    return found[0]


def find(result: ScanResult, code: str, subject_end: str, **args: str) -> Finding:
    """The first finding with this code whose subject ends so and whose args match (fails if none)."""
    hits = [f for f in result.findings if f.code == code and f.subject.endswith(subject_end)
            and all(f.args.get(k) == v for k, v in args.items())]
    assert hits, f"no {code} for {subject_end} {args}: {[(f.code, f.subject, f.args) for f in result.findings]}"
    return hits[0]
