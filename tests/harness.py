"""Scan inline sources: an OLD host, a NEW host and a plugin, written to a temporary tree.

Like pyflakes' `flakes()` and griffe's temporary packages: tests state the three versions
as small dicts of `{relative path: source}` and assert whole findings: `expect` compares every
finding of a scan, NEW side and the OLD side it fixes, as "CODE severity status" (never wording),
and evidence lines on the finding `only` returns.
The host package is called `host` and the plugin package `plug` unless a test says otherwise.
Tests of one stage load the same inline trees without scanning: `load_inline_models` for the
plugin and host models, `load_inline_resolver` for one host tree, `inline_tree` for a bare tree.
"""

from __future__ import annotations

import ast
import tempfile
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from pinport.checks.base import Check
from pinport.config import Settings
from pinport.findings import Finding, ScanResult
from pinport.model.index import load_index
from pinport.model.parse import signature_of
from pinport.model.resolve import Resolver
from pinport.model.summary import Param
from pinport.scan import Models, load_models, scan_models
from pinport.sources.tree import SourceTree, scan_files

HOST = "host"
PLUGIN = "plug"
# What the synthetic trees follow, stated here rather than left to defaults: plugins patch through
# `class P(ArcticPatch[Target])` (the tests' PATCHING defines the helper) and hosts keep their
# environment flags in an `envs` module, as the arctic_inference and vllm profiles say.
SYNTHETIC: dict = {"patch_helpers": ("ArcticPatch",), "env_module": "envs"}


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def inline_tree(root: Path, package: str, label: str, files: dict[str, str]) -> SourceTree:
    """Write files under root, every folder on the way a package, and return the tree of `package`."""
    write_tree(root, files)
    for rel in list(files):
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            init = root.joinpath(*parts[:i], "__init__.py")
            if not init.exists():
                init.write_text("", encoding="utf-8")
    return SourceTree(root, label, package, None, scan_files(root, (package,)))


# The CLI tests' host: `Runner.step` gains a parameter from OLD to NEW (one PP0101 for an override).
RUNNER_OLD = "class Runner:\n    def step(self, a):\n        pass\n"
# NEW's host calls `step` with the new keyword, so an override without it can be reached (a warning)
RUNNER_NEW = ("class Runner:\n    def step(self, a, is_profiling=False):\n        pass\n\n\n"
              "def drive(runner: Runner):\n    runner.step(1, is_profiling=True)\n")


def cli_trees(root: Path, plugin: dict[str, str]) -> dict[str, Path]:
    """OLD and NEW host trees (`host.runner.Runner.step` gains `is_profiling`) and a plugin tree from
    `plugin`'s files, under root: the paths `old`, `new`, `plugin`, `tmp` (root) and `cache`."""
    old, new, plugin_root = root / "old", root / "new", root / "plugin"
    write_tree(old, {"host/__init__.py": "", "host/runner.py": RUNNER_OLD})
    write_tree(new, {"host/__init__.py": "", "host/runner.py": RUNNER_NEW})
    write_tree(plugin_root, plugin)
    return {"old": old, "new": new, "plugin": plugin_root, "tmp": root, "cache": root / "cache"}


def scan_argv(trees: dict[str, Path], *extra: str) -> list[str]:
    """`pinport scan` over `cli_trees`, with their own cache and no progress bars."""
    return ["scan", "--plugin", str(trees["plugin"]), "--old", str(trees["old"]), "--new", str(trees["new"]),
            "--cache-dir", str(trees["cache"]), "--no-progress", *extra]


def load_inline_resolver(root: Path, files: dict[str, str]) -> Resolver:
    """A resolver over one host tree ('host 1.0') written from inline sources under root."""
    return Resolver(load_index(inline_tree(root, HOST, "host 1.0", files), workers=1), HOST)


@contextmanager
def load_inline_models(old: dict[str, str], new: dict[str, str], plugin: dict[str, str],
                       versions: tuple[str, str] | None = None,
                       **settings: object) -> Iterator[tuple[Models, Settings]]:
    """The Models of OLD, NEW and plugin sources, and their Settings; the files live until the block ends.
    With `versions`, the two host trees carry those versions (as a release's tree does)."""
    config = replace(Settings(host=HOST, plugin_package=PLUGIN, pin_sources=(), **SYNTHETIC), **settings)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        trees = [inline_tree(base / "old", HOST, "host 1.0", old), inline_tree(base / "new", HOST, "host 2.0", new),
                 inline_tree(base / "plugin", PLUGIN, "plugin", plugin)]
        if versions is not None:
            trees[:2] = [replace(t, version=v) for t, v in zip(trees[:2], versions, strict=True)]
        yield load_models(trees[2], trees[0], trees[1], config), config


def run_scan(old: dict[str, str], new: dict[str, str], plugin: dict[str, str], *,
             checks: tuple[Check, ...] = (), names: tuple[str, ...] = (), strict: bool = True,
             versions: tuple[str, str] | None = None, **settings: object) -> ScanResult:
    """Scan plugin against OLD and NEW host sources; keys are paths like 'host/mod.py'.

    Strict by default: a check that raises fails the test instead of becoming a PP0099 finding.
    """
    with load_inline_models(old, new, plugin, versions, **settings) as (models, config):
        return scan_models(models, config, checks=names, strict=strict, extra_checks=checks)


def signature(text: str) -> tuple[Param, ...]:
    """Parameters of `def f<text>: pass`, via the model's own parser."""
    node = ast.parse(f"def f{text}: pass").body[0]
    return signature_of(node.args, None, [f"def f{text}: pass"]).params


def outcomes(result: ScanResult, *, at: bool = False) -> list[str]:
    """Every finding as "CODE severity status", the OLD side's fixed ones included, sorted.

    With `at`, each also names the plugin unit and line ("... RunnerPatch.step:7").
    """
    def outcome(f: Finding) -> str:
        text = f"{f.code} {f.level.value} {f.status.value}"
        if at:
            text += f" {f.plugin.unit}:{f.plugin.line}" if f.plugin else " -"
        return text

    return sorted(outcome(f) for f in (*result.findings, *result.fixed))


def expect(result: ScanResult, expected: list[str], *, at: bool = False) -> None:
    """Assert a scan's whole outcome: `expected` lists every finding ("PP0101 error drift"), and may
    name codes the case shows absent ("no PP0101", the negative twin of a positive case)."""
    absent = [e.removeprefix("no ") for e in expected if e.startswith("no ")]
    wanted = sorted(e for e in expected if not e.startswith("no "))
    got = outcomes(result, at=at)
    assert got == wanted, f"expected {wanted}, got {got}: {[(f.code, f.message) for f in result.findings]}"
    assert not any(g.split()[0] in absent for g in got)


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
