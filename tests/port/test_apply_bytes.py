"""`port --apply` on files with CRLF endings, a latin-1 encoding, form feeds and no final newline:
`git diff` shows exactly the reported edits and every other byte stays as it was."""

import re

from harness import HOST, PLUGIN, SYNTHETIC, inline_tree
from pinport.config import Settings
from pinport.edits import split_lines
from pinport.port import CLEAN, CONFLICT, run_port
from pinport.scan import load_models
from pinport.sources.tree import SourceTree, scan_files
from port.gitrepo import git
from port.test_apply import NEW, OLD
from scenarios import ATTN_FORK, DRAINING_MIRRORS, PATCHING

# the mirrors file in CRLF, with a form-feed line between the two methods (str.splitlines sees two lines)
MIRRORS_CRLF = DRAINING_MIRRORS.lstrip("\n").replace("\n\n    def step", "\n\x0c\n    def step").replace("\n", "\r\n")
# the fork in latin-1, saying so, with a non-ASCII comment and no final newline
FORK_LATIN1 = ("# -*- coding: latin-1 -*-\n# fork of host/attn.py: café-grade tree attention\n"
               + ATTN_FORK.lstrip("\n")).rstrip("\n").encode("latin-1")


def plugin_tree(root):
    files = {"plug/patch.py": MIRRORS_CRLF.encode(), "plug/tree_attn.py": FORK_LATIN1,
             "plug/__init__.py": b"", **{k: v.encode() for k, v in PATCHING.items()}}
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "plugin")
    return SourceTree(root, "plugin", PLUGIN, None, scan_files(root, (PLUGIN,))), files


def hunks(root, path):
    """(old start, old count, new start, new count) of every hunk `git diff -U0` shows for a file."""
    out = git(root, "diff", "-U0", "--no-color", "--", path)
    found = []
    for m in re.finditer(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", out, re.M):
        a, b, c, d = m.groups()
        found.append((int(a), int(b or 1), int(c), int(d or 1)))
    return found


def test_apply_changes_only_the_reported_bytes(tmp_path):
    settings = Settings(host=HOST, plugin_package=PLUGIN, pin_sources=(), **SYNTHETIC)
    old = inline_tree(tmp_path / "old", HOST, "host 1.0", OLD)
    new = inline_tree(tmp_path / "new", HOST, "host 2.0", NEW)
    tree, before = plugin_tree(tmp_path / "plugin")
    models = load_models(tree, old, new, settings)
    report = run_port(models, settings, apply=True)
    assert {i.copy.unit: i.status for i in report.items} == {
        "plug.tree_attn": CLEAN, "EnginePatch.drain": CLEAN, "EnginePatch.step": CONFLICT}
    assert report.skipped == ()
    by_path = {}
    for change in report.applied:
        by_path.setdefault(change.path, []).append(change.edit)
    assert sorted(by_path) == ["plug/patch.py", "plug/tree_attn.py"]
    # the form-feed line did not move the second edit: it starts on `def step` as `ast` numbers it
    step = next(c.edit for c in report.applied if c.unit == "EnginePatch.step")
    assert step.before[0] == "    def step(self, batch):" and step.start == 15
    for path, edits in by_path.items():
        after = (tmp_path / "plugin" / path).read_bytes()
        old_lines, new_lines = split_lines(before[path]), split_lines(after)
        # every byte outside the reported spans is as it was, in order
        kept_old = [x for i, x in enumerate(old_lines, 1) if not any(e.start <= i <= e.end for e in edits)]
        kept_new = [x for i, x in enumerate(new_lines, 1) if not any(e.new_start <= i <= e.new_end for e in edits)]
        assert kept_old == kept_new
        # and git sees changes only inside them
        for a, n, c, m in hunks(tmp_path / "plugin", path):
            assert any(e.start <= a and a + max(n, 1) - 1 <= e.end + (n == 0) for e in edits), (path, a, n)
            assert any(e.new_start <= c and c + max(m, 1) - 1 <= e.new_end + (m == 0) for e in edits), (path, c, m)
    crlf = (tmp_path / "plugin/plug/patch.py").read_bytes()
    assert all(line.endswith(b"\r\n") for line in split_lines(crlf))
    assert b"\r\n\x0c\r\n    def step" in crlf.replace(b"<<<<<<<", b"")
    assert b"        queue = list(queue)\r\n" in crlf
    latin = (tmp_path / "plugin/plug/tree_attn.py").read_bytes()
    assert b"caf\xe9-grade" in latin and b"kv_cache.unbind(1)" in latin and b"unbind(0)" not in latin
    assert not latin.endswith(b"\n")  # no final newline before, none after
    # the reported edits are exactly what changed (the latin-1 file: the two unbind lines)
    fork = next(c.edit for c in report.applied if c.unit == "<module>")
    assert fork.describe() == [
        "plug/tree_attn.py:17 key_cache, value_cache = kv_cache.unbind(0) -> key_cache, value_cache = "
        "kv_cache.unbind(1)",
        "plug/tree_attn.py:30 key_cache, value_cache = kv_cache.unbind(0) -> key_cache, value_cache = "
        "kv_cache.unbind(1)"]
