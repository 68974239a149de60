"""The safe fixes' plan is kept in the index cache across runs, under everything it depends on."""

from __future__ import annotations

from pathlib import Path

import pinport.rebase.fixes as fixes_module
from pinport.rebase import RebaseOptions, run_rebase
from pinport.rebase.fixes import plan_fixes

from .synthetic import build


def test_the_safe_fixes_are_planned_once_across_runs_and_again_for_other_texts(tmp_path: Path, monkeypatch) -> None:
    """A second plan of the same findings, files, NEW tree and settings reads the plan back whole
    (every fix with its finding, every refusal, every file's new text) instead of re-running the
    libcst edits; a file that reads differently is planned afresh; a damaged row is planned again."""
    s = build(tmp_path)
    rebase = run_rebase(RebaseOptions(str(s.root), new_spec="0.4.0", old_tree=str(s.old_host),
                                      new_tree=str(s.new_host), cache_dir=tmp_path / "cache", stops=False))
    findings, host, read, settings = rebase.scan.findings, rebase.models.new, rebase.snapshot.read, rebase.settings
    planned: list[int] = []
    real = fixes_module._plan_fixes
    monkeypatch.setattr(fixes_module, "_plan_fixes", lambda *a: planned.append(1) or real(*a))
    first = plan_fixes(findings, host, read, settings)  # the rebase planned these already: read back
    assert planned == [] and first == rebase.fixes and sorted(f.what for f in first.fixes) == [
        "add `budget=None` to `RunnerPatch.step` and forward it",
        "drop `strict` from `MyRunner.load` (NEW's base no longer takes it)",
        "import `helper` from `hostlib.helpers`"]
    assert all(a.finding is b.finding for a, b in zip(first.fixes, rebase.fixes.fixes, strict=True))  # the same findings
    assert first.refused and first.texts
    assert plan_fixes(findings, host, read) == first and planned == [1]  # no settings: not kept

    path = next(f.path for f in first.fixes if "helper" in f.what)
    edited = read(path).replace("from hostlib.utils import helper, kept  # helpers",
                                "from hostlib.utils import kept, helper  # helpers")
    other = plan_fixes(findings, host, lambda p: edited if p == path else read(p), settings)
    assert planned == [1, 1] and other.texts[path][0] == edited
    assert "from hostlib.utils import kept  # helpers" in other.texts[path][1]

    import sqlite3

    with sqlite3.connect(host.index._cache.path) as db:
        keys = [k for (k,) in db.execute("SELECT key FROM summaries WHERE key LIKE 'fixes-1:%'")]
    assert len(keys) == 2
    host.index._cache.put_many([(key, b'[[[99, "x", 1, "a", "b", "c"]], {}, {}]') for key in keys])
    assert plan_fixes(findings, host, read, settings) == first and planned == [1, 1, 1]
