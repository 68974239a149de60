"""A cache that cannot lie or run code: poisoned rows execute nothing and are rebuilt; damaged files
(cached sources, the text corpus) are found and replaced, not analysed."""

from __future__ import annotations

import json
import os
import pickle
import sqlite3
from pathlib import Path

from pinport.model import index as index_module
from pinport.model.index import DATABASE, IndexCache, load_index
from pinport.sources import Cache, fetch_release
from pinport.sources.tree import SourceTree, scan_files

from .conftest import make_wheel

FILES = {
    "host/__init__.py": "from .runner import Runner\n",
    "host/runner.py": "class Runner:\n    def step(self, a, *, is_profiling=False):\n        self.steps = 0\n",
    "host/envs.py": "def __getattr__(name):\n    if name == 'VLLM_FLAG':\n        return 1\n",
}


class Payload:
    """What a pickle-reading cache would run: it writes a marker file when unpickled."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _tree(root: Path) -> SourceTree:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return SourceTree(root, "host 1.0", "host", "1.0", scan_files(root, ("host",)))


def _rows(db: Path) -> dict[str, bytes]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT key, blob FROM summaries"))


def _facts(index) -> tuple:
    return dict(index.modules), index.definitions, index.flags, index.grep("is_profiling")


def test_poisoned_rows_execute_nothing_and_are_rebuilt(tmp_path):
    db = tmp_path / "cache" / "index.sqlite"
    tree = _tree(tmp_path / "tree")
    clean = load_index(tree, IndexCache(db), workers=1, eager=True)
    expected = _facts(clean)
    clean.flush()
    rows = _rows(db)
    assert {key.split(":")[0] for key in rows} >= {"catalog", "corpus"}  # every kind of row is stored
    assert all(not blob.startswith(b"\x80") for blob in rows.values())  # no pickle protocol header

    marker = tmp_path / "EXECUTED"
    poison = pickle.dumps(Payload(marker))
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE summaries SET blob = ?", (poison,))
    poisoned = load_index(tree, IndexCache(db), workers=1)
    assert _facts(poisoned) == expected
    poisoned.flush()
    assert not marker.exists()  # the payload never ran
    healed = _rows(db)
    assert set(healed) == set(rows) and poison not in healed.values()
    def without_mtime(stored: dict[str, bytes]) -> dict[str, object]:  # a rewritten corpus has a new mtime
        return {k: (json.loads(v)[:2] + json.loads(v)[3:]) if k.startswith("corpus:") else v
                for k, v in stored.items()}

    assert without_mtime(healed) == without_mtime(rows)  # every row rebuilt to what a clean index writes


def test_rows_of_the_wrong_shape_are_rebuilt(tmp_path, monkeypatch):
    db = tmp_path / "index.sqlite"
    tree = _tree(tmp_path / "tree")
    expected = _facts(load_index(tree, IndexCache(db), workers=1, eager=True))
    for bad in (b"[]", b'{"a": 1}', b"[1, 2, 3]", b"null", b'"text"', b"\xff\xfe", b"[" * 100_000):
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE summaries SET blob = ? WHERE key NOT LIKE 'corpus:%'", (bad,))
        again = load_index(tree, IndexCache(db), workers=1)
        assert _facts(again) == expected, bad
        again.flush()


def test_a_truncated_or_edited_corpus_is_rebuilt(tmp_path):
    db = tmp_path / "index.sqlite"
    tree = _tree(tmp_path / "tree")
    first = load_index(tree, IndexCache(db), workers=1)
    assert first.grep("is_profiling") == ("host.runner",)
    corpus = next((tmp_path / "corpus").glob("*.bin"))
    corpus.write_bytes(corpus.read_bytes()[:10])  # truncated: the size no longer matches
    assert load_index(tree, IndexCache(db), workers=1).grep("is_profiling") == ("host.runner",)
    stat = corpus.stat()
    corpus.write_bytes(corpus.read_bytes().replace(b"is_profiling", b"is_xxxxxxxxx"))  # same size
    os.utime(corpus, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and the mtime put back
    assert load_index(tree, IndexCache(db, verify=True), workers=1).grep("is_profiling") == ("host.runner",)
    assert b"is_profiling" in corpus.read_bytes()  # rewritten


def test_older_pickled_database_is_never_read(tmp_path):
    """Older pinport code shares the cache directory with its own pickled file; this code opens its own."""
    cache = Cache(tmp_path)
    older = tmp_path / "index" / "summaries.sqlite"
    older.parent.mkdir(parents=True)
    marker = tmp_path / "EXECUTED"
    with sqlite3.connect(older) as conn:
        conn.execute("CREATE TABLE summaries (key TEXT PRIMARY KEY, blob BLOB)")
        conn.execute("INSERT INTO summaries VALUES (?, ?)", ("anything", pickle.dumps(Payload(marker))))
    index_cache = IndexCache.in_cache(cache)
    assert index_cache.path == tmp_path.joinpath(*DATABASE) != older
    load_index(_tree(tmp_path / "tree"), index_cache, workers=1, eager=True)
    assert not marker.exists()


def test_a_truncated_cached_release_file_is_extracted_again(tmp_path, fake_index, pip_settings):
    fake_index.add(make_wheel(fake_index.folder, "host", "1.0", {**FILES}))
    pip_settings["index-url"] = fake_index.url
    cache = Cache(tmp_path / "cache")
    tree = fetch_release("host", "1.0", cache=cache, packages=("host",))
    runner = tree.root / "host" / "runner.py"
    runner.write_bytes(runner.read_bytes()[:12])
    again = fetch_release("host", "1.0", cache=cache, packages=("host",))
    assert (again.root / "host" / "runner.py").read_text(encoding="utf-8") == FILES["host/runner.py"]
    index = load_index(again, IndexCache.in_cache(cache), workers=1)
    assert "step" in index.modules["host.runner"].classes["Runner"].methods


def test_the_parser_source_is_part_of_every_key(tmp_path, monkeypatch):
    db = tmp_path / "index.sqlite"
    tree = _tree(tmp_path / "tree")
    load_index(tree, IndexCache(db), workers=1, eager=True)
    keys = [key for key in _rows(db) if not key.startswith("corpus:")]  # the corpus is text, no parser in it
    assert len(keys) == 3 and all(key.endswith(f":{index_module.MODEL_VERSION}") for key in keys)
    monkeypatch.setattr(index_module, "MODEL_VERSION", "a-changed-parser")
    built: list[str] = []
    real = index_module._summary_of
    monkeypatch.setattr(index_module, "_summary_of", lambda job: built.append(job[1]) or real(job))
    load_index(tree, IndexCache(db), workers=1, eager=True)
    assert sorted(built) == ["host", "host.envs", "host.runner"]  # re-indexed under the new parser
