"""Three-way merge proposals: git's merge-file on method and file copies, and --write."""

import subprocess

import pytest

from pinport.errors import PinportError
from pinport.port import (
    CLEAN,
    CONFLICT,
    PATCH_NAME,
    UNCHANGED,
    merge3,
    plan_port,
    render_port,
    run_port,
)
from scenarios import ATTN as FORKED
from scenarios import ATTN_FORK as FORK
from scenarios import DRAINING_CONFIG as CONFIG
from scenarios import DRAINING_ENGINE as ENGINE
from scenarios import DRAINING_MIRRORS as MIRRORS
from scenarios import DRAINING_SCALED as SCALED
from scenarios import DRAINING_STEPS as STEPS
from scenarios import PATCHING


def test_merge3_clean_and_conflict():
    base = "a\nb\nc\nd\ne\n"
    clean = merge3("a\nB\nc\nd\ne\n", base, "a\nb\nc\nd\nE\n", labels=("plugin", "old", "new"))
    assert clean.clean and clean.text == "a\nB\nc\nd\nE\n"
    conflict = merge3("a\nX\nc\nd\ne\n", base, "a\nY\nc\nd\ne\n", labels=("plugin", "old", "new"))
    assert conflict.conflict_lines == (2,)
    assert conflict.text == "a\n<<<<<<< plugin\nX\n||||||| old\nb\n=======\nY\n>>>>>>> new\nc\nd\ne\n"


def items_by_unit(models, settings):
    return {i.copy.unit: i for i in plan_port(models, settings)}


def test_clean_merge_of_a_mirror_keeps_plugin_lines(load):
    models, settings, _ = load({"host/engine.py": ENGINE}, {"host/engine.py": STEPS},
                               {"plug/patch.py": MIRRORS, **PATCHING})
    items = items_by_unit(models, settings)
    assert items["EnginePatch.drain"].status == UNCHANGED and not items["EnginePatch.drain"].changes
    step = items["EnginePatch.step"]
    assert step.status == CLEAN and step.changes
    assert "\n".join(step.proposal) + "\n" == """    def step(self, batch):
        outputs = []
        for item in batch:
            if item is None:  # plugin: skip padding
                continue
            value = self.compute(item) + 1
            outputs.append(value)
        self.steps += len(batch)
        return outputs
"""
    assert step.delta.added and step.delta.changed and step.delta.kept


def test_conflicting_change_is_marked(load):
    models, settings, _ = load({"host/engine.py": ENGINE}, {"host/engine.py": SCALED},
                               {"plug/patch.py": MIRRORS, **PATCHING})
    step = items_by_unit(models, settings)["EnginePatch.step"]
    assert step.status == CONFLICT and step.conflicts == 1 and step.line_conflicts == 1
    text = "\n".join(step.proposal)
    # the plugin's padding check merges on its own: only the statement both sides changed is marked
    assert """            if item is None:  # plugin: skip padding
                continue
<<<<<<< plugin
            value = self.compute(item) + 1
||||||| host 1.0
            value = self.compute(item)
=======
            value = self.compute(item) * 2
>>>>>>> host 2.0
""" in text + "\n"


def test_a_line_conflict_on_different_tokens_merges_by_tokens(load):
    """git conflicts (the plugin edited the line upstream edited, and added lines above it); the
    statement merge keeps the padding check, the token merge puts `+ 1` after upstream's new call."""
    models, settings, _ = load({"host/engine.py": ENGINE}, {"host/engine.py": CONFIG},
                               {"plug/patch.py": MIRRORS, **PATCHING})
    step = items_by_unit(models, settings)["EnginePatch.step"]
    assert step.line_conflicts == 1 and step.status == CLEAN and step.conflicts == 0
    assert step.refined is not None and step.refined.token_merges == 1 and step.refused == ()
    assert "\n".join(step.proposal) + "\n" == """    def step(self, batch):
        outputs = []
        for item in batch:
            if item is None:  # plugin: skip padding
                continue
            value = self.compute(item, self.config) + 1
            outputs.append(value)
        self.steps += 1
        return outputs
"""


def test_fork_merge_carries_the_new_layout(load):
    new = FORKED.replace("kv_cache.unbind(0)", "kv_cache.transpose(1, 2).split(self.head_size, dim=-1)")
    models, settings, _ = load({"host/attn.py": FORKED}, {"host/attn.py": new}, {"plug/tree_attn.py": FORK})
    [item] = plan_port(models, settings)
    assert item.copy.kind == "fork" and item.status == CLEAN
    merged = item.merge.text
    assert merged.count("key_cache, value_cache = kv_cache.transpose(1, 2).split(self.head_size, dim=-1)") == 2
    assert "unbind(0)" not in merged and "return self.tree_attend(query, kv_cache, metadata)" in merged


def test_unchanged_twins_propose_nothing(load):
    models, settings, root = load({"host/engine.py": ENGINE, "host/attn.py": FORKED},
                                  {"host/engine.py": ENGINE, "host/attn.py": FORKED},
                                  {"plug/patch.py": MIRRORS, "plug/tree_attn.py": FORK, **PATCHING})
    report = run_port(models, settings)
    assert report.counts() == {"clean": 0, "conflict": 0, "unchanged": 3, "gone": 0, "unverified": 0,
                               "already_ported": 0, "verified": 0}
    assert report.proposals == () and report.conflicts == 0
    assert "3 unchanged upstream" in render_port(report)


def test_write_puts_files_and_a_patch_outside_the_plugin(load, tmp_path):
    models, settings, root = load({"host/engine.py": ENGINE}, {"host/engine.py": STEPS},
                                  {"plug/patch.py": MIRRORS, **PATCHING})
    before = (root / "plug/patch.py").read_text()
    out = tmp_path / "proposals"
    report = run_port(models, settings, write_dir=out)
    assert report.written == ("plug/patch.py", PATCH_NAME)
    assert (root / "plug/patch.py").read_text() == before  # the plugin tree is untouched
    assert "self.steps += len(batch)" in (out / "plug/patch.py").read_text()
    # the patch applies to the plugin tree as it is
    subprocess.run(["git", "apply", "--check", str(out / PATCH_NAME)], cwd=root, check=True)
    with pytest.raises(PinportError):
        run_port(models, settings, write_dir=root / "inside")


def test_public_api():
    import pinport.port as port

    assert sorted(port.__all__) == sorted(n for n in dir(port) if not n.startswith("_") and n not in (
        "annotations", "apply", "explain", "merge", "plan", "refine", "render", "run", "verify", "write"))
