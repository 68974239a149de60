"""`--apply`: in-place edits one copy at a time, only on a clean git tree, with what changed reported."""

from dataclasses import replace

import pytest
from click.testing import CliRunner

from pinport.cli.port import port_command
from pinport.port import CLEAN, CONFLICT, DirtyTree, run_port
from pinport.port.apply import apply_proposals
from pinport.port.plan import file_proposals
from port.gitrepo import git
from scenarios import ATTN as FORKED
from scenarios import ATTN_FORK as FORK
from scenarios import DRAINING_ENGINE as ENGINE
from scenarios import DRAINING_MIRRORS as MIRRORS
from scenarios import DRAINING_SCALED as SCALED
from scenarios import PATCHING

# drain: a clean merge that adds a line; step: a conflict
BOTH = SCALED.replace("        results = []\n", "        results = []\n        queue = list(queue)\n")
LAYOUT = FORKED.replace("kv_cache.unbind(0)", "kv_cache.unbind(1)")
OLD = {"host/engine.py": ENGINE, "host/attn.py": FORKED}
NEW = {"host/engine.py": BOTH, "host/attn.py": LAYOUT}
PLUGIN = {"plug/patch.py": MIRRORS, "plug/tree_attn.py": FORK, **PATCHING}


def test_apply_edits_each_copy_and_reports_conflicts(load):
    models, settings, root = load(OLD, NEW, PLUGIN, git_repo=True)
    report = run_port(models, settings, apply=True)
    assert {i.copy.unit: i.status for i in report.items} == {
        "plug.tree_attn": CLEAN, "EnginePatch.drain": CLEAN, "EnginePatch.step": CONFLICT}
    changes = {c.unit: c for c in report.applied}
    assert list(changes) == ["EnginePatch.drain", "EnginePatch.step", "<module>"]
    drain, step, fork = changes["EnginePatch.drain"], changes["EnginePatch.step"], changes["<module>"]
    assert (drain.path, drain.edit.start, drain.edit.end, drain.edit.new_end) == ("plug/patch.py", 6, 13, 14)
    assert "+        queue = list(queue)" in drain.edit.diff() and drain.conflict_lines == ()
    assert drain.edit.describe() == ["plug/patch.py:8 (nothing) -> queue = list(queue)"]
    # step moved down by the line drain gained, and grew by its conflict block
    assert (step.edit.start, step.edit.end, step.edit.new_start) == (15, 23, 16)
    text = (root / "plug/patch.py").read_text()
    lines = text.splitlines()
    assert [lines[n - 1] for n in step.conflict_lines] == ["<<<<<<< plugin"]
    assert lines[step.edit.new_end - 1] == "        return outputs" and text.endswith("return outputs\n")
    assert "queue = list(queue)" in text and "print(\"drained\", len(results))" in text
    assert fork.conflict_lines == () and "kv_cache.unbind(1)" in (root / "plug/tree_attn.py").read_text()
    assert "unbind(0)" not in (root / "plug/tree_attn.py").read_text()
    assert git(root, "status", "--porcelain").split() == ["M", "plug/patch.py", "M", "plug/tree_attn.py"]


def test_apply_refuses_a_dirty_tree_unless_allowed(load):
    models, settings, root = load(OLD, NEW, PLUGIN, git_repo=True)
    (root / "plug/patching.py").write_text("class ArcticPatch:\n    x = 1\n")
    with pytest.raises(DirtyTree):
        run_port(models, settings, apply=True)
    assert (root / "plug/patch.py").read_text() == MIRRORS.lstrip("\n")  # nothing edited
    report = run_port(models, settings, apply=True, allow_dirty=True)
    assert len(report.applied) == 3


def test_apply_refuses_a_tree_outside_git(load):
    models, settings, root = load(OLD, NEW, PLUGIN)
    with pytest.raises(DirtyTree):
        run_port(models, settings, apply=True)
    assert len(run_port(models, settings, apply=True, allow_dirty=True).applied) == 3


def test_apply_never_edits_a_downloaded_release(load):
    models, settings, _ = load(OLD, NEW, PLUGIN)
    proposals = file_proposals(run_port(models, settings).items, models.plugin.index)
    release = replace(models.plugin.index.tree, version="1.0")
    with pytest.raises(DirtyTree):
        apply_proposals(proposals, release, allow_dirty=True)


def test_apply_skips_a_file_changed_since_analysis(load):
    models, settings, root = load(OLD, NEW, PLUGIN, git_repo=True)
    proposals = file_proposals(run_port(models, settings).items, models.plugin.index)
    (root / "plug/patch.py").write_text(MIRRORS + "\n# edited\n")
    git(root, "commit", "-qam", "edit")
    changes, skipped = apply_proposals(proposals, models.plugin.index.tree)
    assert [c.path for c in changes] == ["plug/tree_attn.py"]
    assert skipped == ["plug/patch.py: changed on disk since it was analysed; run again"]


def cli(root, *args):
    base = root.parent
    return CliRunner().invoke(port_command, ["--plugin", str(base / "plugin"), "--old", str(base / "old"),
                                             "--new", str(base / "new"), "--host", "host", "--cache-dir",
                                             str(base / "cache"), "--no-progress", *args])


def test_cli_dry_run_write_and_usage(load, tmp_path):
    plugin = {**PLUGIN, "pyproject.toml": '[tool.pinport]\npatch-helpers = ["ArcticPatch"]\n'}  # what the CLI reads
    _, _, root = load(OLD, NEW, plugin, git_repo=True)
    dry = cli(root)
    assert dry.exit_code == 1, dry.output  # conflicts remain
    assert "3 copies: 2 clean merges (2 verified, 0 already ported), 0 failing verification, 1 with conflicts " \
        "(1 blocks; 1 from the line merge alone)" in dry.output
    # the conflict explained: the plugin's line, upstream's change of it
    assert """  conflict plug/patch.py:20 in EnginePatch.step: both sides changed these lines: merge by hand (upstream's \
change is shown as a diff)
    plugin:
                  value = self.compute(item) + 1
    upstream OLD -> NEW:
      @@ -1 +1 @@
      -            value = self.compute(item)
      +            value = self.compute(item) * 2
""" in dry.output
    as_json = cli(root, "--format", "json")
    assert as_json.exit_code == 1 and '"line_conflict_blocks": 1' in as_json.output
    written = cli(root, "--write", str(tmp_path / "out"))
    assert written.exit_code == 1 and (tmp_path / "out" / "port.patch").is_file()
    assert git(root, "status", "--porcelain") == ""
    assert cli(root, "--write", str(tmp_path / "x"), "--apply").exit_code == 2
    (root / "plug/patching.py").write_text("# dirty\n")
    refused = cli(root, "--apply")
    assert refused.exit_code == 2 and "uncommitted changes" in refused.output
    git(root, "checkout", "--", "plug/patching.py")
    applied = cli(root, "--apply")
    assert applied.exit_code == 1, applied.output
    assert "applied mirror EnginePatch.step: plug/patch.py:15-23 -> lines 16-30; conflicts remain at lines 21" \
        in applied.output
    assert "    plug/patch.py:8 (nothing) -> queue = list(queue)" in applied.output

    assert "conflicts remain at lines" in applied.output
