"""A rebase plans the same merges and verifies the same proposals on every run: both are kept in
the index cache across runs, under everything they depend on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from harness import HOST, PLUGIN, SYNTHETIC, inline_tree
from pinport.config import Settings
from pinport.model.index import IndexCache
from pinport.port import CLEAN, verified_port
from pinport.port import plan as plan_module
from pinport.scan import load_models, scan_models
from scenarios import DRAINING_ENGINE, DRAINING_MIRRORS, DRAINING_STEPS, PATCHING

SETTINGS = Settings(host=HOST, plugin_package=PLUGIN, pin_sources=(), **SYNTHETIC)


def _models(tmp: Path, name: str, plugin: str, cache: IndexCache):
    old = inline_tree(tmp / name / "old", HOST, "host 1.0", {"host/engine.py": DRAINING_ENGINE})
    new = inline_tree(tmp / name / "new", HOST, "host 2.0", {"host/engine.py": DRAINING_STEPS})
    tree = inline_tree(tmp / name / "plugin", PLUGIN, "plugin", {"plug/patch.py": plugin, **PATCHING})
    models = load_models(tree, old, new, SETTINGS, cache=cache)
    return models, scan_models(models, SETTINGS).findings


def _keys(cache: IndexCache, prefix: str) -> list[str]:
    with sqlite3.connect(cache.path) as db:
        return [k for (k,) in db.execute("SELECT key FROM summaries WHERE key LIKE ?", (prefix + "%",))]


def _counting(monkeypatch, module, name: str) -> list[int]:
    calls: list[int] = []
    real = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


def test_a_merge_is_made_once_across_runs_and_again_for_other_texts(tmp_path, monkeypatch):
    """The three-way merge of a copy (`port.plan.stored_merge`) is read back on the next run of the
    same texts (the whole result: text, conflicts, finer merges, renames); a plugin copy that reads
    differently is merged afresh; a damaged row is merged again."""
    cache = IndexCache(tmp_path / "index.sqlite")
    merged = _counting(monkeypatch, plan_module, "merge_copy")
    models, findings = _models(tmp_path, "a", DRAINING_MIRRORS, cache)
    first = {i.copy.unit: i for i in verified_port(models, SETTINGS, findings)}
    assert first["EnginePatch.step"].status == CLEAN and first["EnginePatch.step"].verified
    count = len(merged)
    assert count >= 1
    models, findings = _models(tmp_path, "b", DRAINING_MIRRORS, cache)  # the same texts elsewhere: a new run
    again = {i.copy.unit: i for i in verified_port(models, SETTINGS, findings)}
    assert len(merged) == count and again == first  # read back, equal in every field
    edited = DRAINING_MIRRORS.replace("outputs.append(value)", "outputs.append(value)  # kept")
    models, findings = _models(tmp_path, "c", edited, cache)
    other = {i.copy.unit: i for i in verified_port(models, SETTINGS, findings)}
    assert len(merged) > count and "# kept" in other["EnginePatch.step"].merge.text
    cache.put_many([(key, b'[["not a merge"]]') for key in _keys(cache, "merge-1:")])
    count = len(merged)
    models, findings = _models(tmp_path, "d", DRAINING_MIRRORS, cache)
    repaired = {i.copy.unit: i for i in verified_port(models, SETTINGS, findings)}
    assert len(merged) > count and repaired == first


def test_a_proposal_is_verified_by_a_scan_kept_across_runs(tmp_path, monkeypatch):
    """The verification scan of the plugin with the clean proposals in place (`scan.judged`, NEW's
    side) is read back on the next run; another proposal (the plugin copy changed) is scanned."""
    import pinport.scan as scan_module

    cache = IndexCache(tmp_path / "index.sqlite")
    models, findings = _models(tmp_path, "a", DRAINING_MIRRORS, cache)
    scanned = _counting(monkeypatch, scan_module, "_run_checks")
    first = verified_port(models, SETTINGS, findings)
    assert len(scanned) == 1 and [i.copy.unit for i in first if i.verified] == ["EnginePatch.step"]
    models, findings = _models(tmp_path, "b", DRAINING_MIRRORS, cache)
    scanned.clear()
    assert verified_port(models, SETTINGS, findings) == first and scanned == []
    edited = DRAINING_MIRRORS.replace("outputs.append(value)", "outputs.append(value)  # kept")
    models, findings = _models(tmp_path, "c", edited, cache)
    scanned.clear()
    assert [i.verified for i in verified_port(models, SETTINGS, findings)] == [i.verified for i in first]
    assert len(scanned) == 1
