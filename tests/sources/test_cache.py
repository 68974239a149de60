import json
import os
import threading
import time
from pathlib import Path

import platformdirs
import pytest

from pinport.errors import CacheError
from pinport.sources import cache as cache_module
from pinport.sources.cache import Cache, default_root
from pinport.sources.progress import NOTICE
from pinport.sources.tree import SourceTree, scan_all


class Builder:
    """A build function that writes pkg/a.py and pkg/b.py and counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, staging: Path) -> SourceTree:
        self.calls += 1
        root = staging / "tree"
        (root / "pkg").mkdir(parents=True)
        (root / "pkg" / "a.py").write_text("a = 1\n")
        (root / "pkg" / "b.py").write_text("b = 2\n")
        return SourceTree(
            root=root,
            label="demo 1.0",
            package="pkg",
            version="1.0",
            files=scan_all(root),
            metadata="Name: demo\n",
            project_root=root,
        )


def _messages(calls: list[tuple]) -> list[str]:
    return [description for description, *_ in calls]


def test_builds_once_then_reuses(tmp_path):
    cache, build = Cache(tmp_path), Builder()
    first = cache.load("wheels", "demo-1.0", build)
    second = cache.load("wheels", "demo-1.0", build)
    assert build.calls == 1
    assert first == second
    assert first.root == tmp_path / "wheels" / "demo-1.0" / "tree"
    assert first.project_root == first.root
    assert sorted(first.files) == ["pkg/a.py", "pkg/b.py"]
    assert (first.label, first.package, first.version, first.metadata) == (
        "demo 1.0",
        "pkg",
        "1.0",
        "Name: demo\n",
    )
    manifest = json.loads((tmp_path / "wheels" / "demo-1.0" / "manifest.json").read_text())
    assert manifest["root"] == "tree" and manifest["files"] == first.files
    assert sorted(p.name for p in (tmp_path / "wheels").iterdir()) == ["demo-1.0", "demo-1.0.lock"]


def _corrupt_delete_file(entry: Path) -> None:
    (entry / "tree" / "pkg" / "b.py").unlink()


def _corrupt_garble_manifest(entry: Path) -> None:
    (entry / "manifest.json").write_text("{not json")


def _corrupt_drop_manifest(entry: Path) -> None:
    (entry / "manifest.json").unlink()


def _corrupt_escaping_root(entry: Path) -> None:
    manifest = json.loads((entry / "manifest.json").read_text())
    manifest["root"] = "../../elsewhere"
    (entry / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    "corrupt",
    [
        _corrupt_delete_file,
        _corrupt_garble_manifest,
        _corrupt_drop_manifest,
        _corrupt_escaping_root,
    ],
)
def test_corrupt_entry_is_rebuilt(tmp_path, corrupt):
    cache, build = Cache(tmp_path), Builder()
    cache.load("wheels", "demo-1.0", build)
    corrupt(tmp_path / "wheels" / "demo-1.0")
    seen: list[tuple] = []
    tree = cache.load("wheels", "demo-1.0", build, progress=lambda *a: seen.append(a))
    assert build.calls == 2
    assert (tree.root / "pkg" / "b.py").read_text() == "b = 2\n"
    assert "rebuilding corrupt cache entry wheels/demo-1.0 (damaged or edited since it was stored)" in _messages(seen)


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:3])


def _same_size_new_mtime(path: Path) -> None:
    path.write_bytes(path.read_bytes().replace(b"2", b"9"))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))


@pytest.mark.parametrize("edit", [_truncate, _same_size_new_mtime])
def test_an_edited_cached_file_is_extracted_again_not_analysed(tmp_path, edit):
    cache, build = Cache(tmp_path), Builder()
    tree = cache.load("wheels", "demo-1.0", build)
    edit(tree.root / "pkg" / "b.py")
    again = cache.load("wheels", "demo-1.0", build)
    assert build.calls == 2
    assert (again.root / "pkg" / "b.py").read_text() == "b = 2\n"


def test_an_edit_hiding_its_size_and_mtime_is_found_by_verify(tmp_path):
    cache, build = Cache(tmp_path), Builder()
    tree = cache.load("wheels", "demo-1.0", build)
    path = tree.root / "pkg" / "b.py"
    stat = path.stat()
    path.write_bytes(b"b = 9\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert cache.load("wheels", "demo-1.0", build).root == tree.root and build.calls == 1  # cheap check only
    Cache(tmp_path, verify=True).load("wheels", "demo-1.0", build)
    assert build.calls == 2 and path.read_text() == "b = 2\n"


def test_an_entry_stored_by_older_code_is_hashed_once_then_trusted(tmp_path, monkeypatch):
    cache, build = Cache(tmp_path), Builder()
    tree = cache.load("wheels", "demo-1.0", build)
    (tmp_path / "wheels" / "demo-1.0" / "verified.json").unlink()  # older pinport wrote no stats
    hashed: list[int] = []
    real = cache_module.hash_bytes
    monkeypatch.setattr(cache_module, "hash_bytes", lambda data: hashed.append(len(data)) or real(data))
    cache.load("wheels", "demo-1.0", build)
    assert len(hashed) == len(tree.files)
    cache.load("wheels", "demo-1.0", build)
    assert len(hashed) == len(tree.files) and build.calls == 1


def test_failed_build_leaves_nothing(tmp_path):
    cache = Cache(tmp_path)

    def broken(staging: Path) -> SourceTree:
        (staging / "partial.py").write_text("x")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        cache.load("git", "abc", broken)
    assert sorted(p.name for p in (tmp_path / "git").iterdir()) == ["abc.lock"]
    assert cache.load("git", "abc", Builder()).files


def test_stale_staging_is_removed(tmp_path):
    stale = tmp_path / "git" / ".abc.staging-zzz"
    stale.mkdir(parents=True)
    Cache(tmp_path).load("git", "abc", Builder())
    assert not stale.exists()


def test_entry_is_world_readable(tmp_path):
    tree = Cache(tmp_path).load("git", "abc", Builder())
    assert (tree.root.parent.stat().st_mode & 0o777) == 0o755


def test_unwritable_root_is_a_one_line_cache_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(CacheError) as caught:
        Cache(blocker / "cache").load("git", "abc", Builder())
    assert str(blocker / "cache") in str(caught.value)
    assert "\n" not in str(caught.value)


def test_disk_errors_while_building_become_cache_errors(tmp_path):
    def full(staging: Path) -> SourceTree:
        raise OSError(28, "No space left on device")

    with pytest.raises(CacheError, match="No space left on device"):
        Cache(tmp_path).load("git", "abc", full)


def test_concurrent_run_waits_for_the_lock(tmp_path):
    cache, build = Cache(tmp_path), Builder()
    seen: list[tuple] = []
    result: list[SourceTree] = []
    with cache.lock("git", "abc"):
        waiter = threading.Thread(
            target=lambda: result.append(
                cache.load("git", "abc", build, progress=lambda *a: seen.append(a))
            )
        )
        waiter.start()
        time.sleep(0.3)
        assert not result and build.calls == 0
    waiter.join(5)
    assert result and build.calls == 1
    assert f"waiting for pinport run {os.getpid()} (" in _messages(seen)[0]
    assert _messages(seen)[0].endswith(") to finish git/abc (up to 900 s)")
    assert [a[1] for a in seen] == [NOTICE]  # shown even where no progress bar is drawn


def test_a_lock_held_too_long_is_an_error_naming_its_holder(tmp_path):
    cache = Cache(tmp_path, lock_timeout=0.3)
    with cache.lock("git", "abc"):
        with pytest.raises(CacheError) as caught:
            with Cache(tmp_path, lock_timeout=0.3).lock("git", "abc"):
                pass
    message = str(caught.value)
    assert message.startswith(f"gave up after 0.3 s waiting for pinport run {os.getpid()} (")
    assert message.endswith(f"to finish git/abc; stop it, or remove {tmp_path / 'git' / 'abc.lock'} "
                            "if no such run is left")


def test_bad_entry_names_are_refused(tmp_path):
    with pytest.raises(CacheError, match="cannot name a cache entry"):
        Cache(tmp_path).entry_dir("git", "../escape")


def test_path_is_under_root(tmp_path):
    assert Cache(tmp_path).path("index", "db.sqlite") == tmp_path / "index" / "db.sqlite"


def test_default_root(monkeypatch, tmp_path):
    monkeypatch.delenv("PINPORT_CACHE_DIR", raising=False)
    assert default_root() == Path(platformdirs.user_cache_dir("pinport"))
    assert Cache().root == default_root()
    monkeypatch.setenv("PINPORT_CACHE_DIR", str(tmp_path))
    assert Cache().root == tmp_path


def test_intact_entry_is_read_without_the_lock(tmp_path):
    cache, build = Cache(tmp_path), Builder()
    cache.load("git", "abc", build)
    (tmp_path / "git" / "abc.lock").unlink()
    cache.load("git", "abc", build)
    assert build.calls == 1 and not (tmp_path / "git" / "abc.lock").exists()
