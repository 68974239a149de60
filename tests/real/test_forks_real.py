"""Forks, mirrors and copied lines on real releases: the forest-cascade fork of flash_attn.py, and
the KV-cache layout change walked 0.18.0 -> 0.24.0 -> 0.26.0 in the fork and in SwiftKV."""

from __future__ import annotations

import shutil

import pytest

from pinport.checks.copied_lines import CopiedLinesCheck
from pinport.checks.forks import ForksCheck
from pinport.checks.mirrors import MirrorsCheck
from pinport.config import load_settings
from pinport.model.index import IndexCache
from pinport.plugin.forks import find_copies
from pinport.port import CLEAN, CONFLICT, GONE, UNCHANGED, plan_port, run_port
from pinport.scan import load_models, scan_models
from pinport.sources import Cache, load_directory

FORK = "arctic_inference/vllm/attention/flash_attn_forest_cascade.py"
FLASH_ATTN = "vllm/v1/attention/backends/flash_attn.py"
SWIFTKV = "arctic_inference/vllm/swiftkv/llama_swiftkv.py"
CHECKS = (ForksCheck(), MirrorsCheck(), CopiedLinesCheck())
UNBIND_0 = "key_cache, value_cache = kv_cache.unbind(0)"
UNBIND_1 = "key_cache, value_cache = kv_cache.unbind(1)"
SPLIT = "key_cache, value_cache = kv_cache.transpose(1, 2).split(self.head_size, dim=-1)"


def outside_conflicts(text: str) -> list[str]:
    """Stripped lines of a merge result that no conflict block holds (the merge's settled text)."""
    out, depth = [], 0
    for line in text.splitlines():
        if line.startswith("<<<<<<< "):
            depth = 1
        elif line.startswith(">>>>>>> "):
            depth = 0
        elif not depth:
            out.append(line.strip())
    return out


def keep_plugin_side(text: str) -> str:
    """Resolve every conflict to the plugin's side, as a maintainer keeping their code would."""
    out, skip = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("<<<<<<< "):
            continue
        if line.startswith("||||||| "):
            skip = True
        elif line.startswith(">>>>>>> "):
            skip = False
        elif not skip:
            out.append(line)
    return "".join(out)


def replaced_by(details: tuple[str, ...], old: str) -> list[str]:
    """The `+` lines of the diff block in which `-old` is removed."""
    at = details.index(f"-        {old}")
    out = []
    for line in details[at + 1:]:
        if line.startswith("-"):
            continue
        if not line.startswith("+"):
            break
        out.append(line[1:].strip())
    return out


def scan(models, settings):
    return scan_models(models, settings, strict=True, extra_checks=CHECKS)


def only(result, code: str, path: str, text: str):
    hits = [f for f in result.findings if f.code == code and f.plugin and f.plugin.path == path
            and text in (f.plugin.snippet + "\n" + "\n".join(f.details))]
    assert len(hits) == 1, [(f.code, f.plugin, f.message) for f in result.findings if f.code == code]
    return hits[0]


@pytest.mark.parametrize(("plugin", "old", "new"), [("0.2.0", "0.18.0", "0.24.0"), ("0.3.0", "0.26.0", "0.33.0")])
def test_forest_cascade_fork_is_found(real_models, plugin, old, new):
    models, settings = real_models(plugin, old, new)
    copies = find_copies(models.plugin, models.old.index, models.old.resolver, models.new.index,
                         models.new.resolver, settings)
    forks = {f.plugin_path: f.host_path for f in copies.forks}
    assert forks[FORK] == FLASH_ATTN
    assert "UlyssesEngineCore.step_with_batch_queue" in {m.plugin.qualname for m in copies.mirrors}


@pytest.fixture(scope="module")
def move_18_24(real_models):
    models, settings = real_models("0.2.0", "0.18.0", "0.24.0")
    return models, settings, scan(models, settings)


def test_layout_change_18_24_in_the_fork(move_18_24):
    _, _, result = move_18_24
    finding = only(result, "PP0801", FORK, "")
    assert finding.old.path == FLASH_ATTN and finding.new.path == FLASH_ATTN
    assert UNBIND_1 in replaced_by(finding.details, UNBIND_0)
    hunk = finding.details.index(f"-        {UNBIND_0}")
    header = max(i for i, d in enumerate(finding.details[:hunk]) if d.startswith("@@ "))
    assert finding.details[header].endswith("not in the plugin copy")


def test_layout_change_18_24_in_the_swiftkv_second_site(move_18_24):
    _, _, result = move_18_24
    finding = only(result, "PP0805", SWIFTKV, "kv_cache.unbind(0)")
    assert finding.plugin.snippet == "k_cache, v_cache = kv_cache.unbind(0)"
    assert finding.plugin.unit == "LlamaSwiftKVModel.swiftkv_select"
    assert (finding.old.path, finding.old.snippet) == (FLASH_ATTN, UNBIND_0)
    assert (finding.new.path, finding.new.snippet) == (FLASH_ATTN, UNBIND_1)


def test_mirror_calling_a_renamed_helper(real_models):
    # 0.26.0 replaced EngineCore.log_iteration_details by capture_iteration_details (#12).
    models, settings = real_models("0.2.0", "0.18.0", "0.26.0")
    result = scan(models, settings)
    hits = [f for f in result.findings if f.code == "PP1202" and f.args["name"] == "log_iteration_details"]
    assert hits and "capture_iteration_details" in hits[0].args["rename"]
    assert hits[0].plugin.unit == "UlyssesEngineCore.step_with_batch_queue"


def test_layout_walk_18_24_26_merges_the_new_layout_into_the_fork(move_18_24, vllm_tree, tmp_path):
    models, settings, result = move_18_24
    items = {i.copy.plugin.path: i for i in plan_port(models, settings)}
    merged = items[FORK].merge.text
    assert UNBIND_1 in outside_conflicts(merged)  # the fork's forward() now reads the 0.24 layout
    # The maintainer keeps the plugin's side of each conflict and follows the second-site finding.
    ported = tmp_path / "arctic-inference"
    shutil.copytree(models.plugin.index.tree.project_root or models.plugin.index.tree.root, ported)
    (ported / FORK).write_text(keep_plugin_side(merged), encoding="utf-8")
    site = only(result, "PP0805", SWIFTKV, "kv_cache.unbind(0)")
    lines = (ported / SWIFTKV).read_text(encoding="utf-8").splitlines(keepends=True)
    lines[site.plugin.line - 1] = lines[site.plugin.line - 1].replace("unbind(0)", "unbind(1)")
    (ported / SWIFTKV).write_text("".join(lines), encoding="utf-8")
    # Next bump, 0.24.0 -> 0.26.0: the packed layout.
    tree = load_directory(ported, "arctic_inference")
    settings = load_settings(ported)
    index = IndexCache.in_cache(Cache())
    models = load_models(tree, vllm_tree("0.24.0"), vllm_tree("0.26.0"), settings, cache=index)
    result = scan(models, settings)
    fork = only(result, "PP0801", FORK, "")
    assert SPLIT in replaced_by(fork.details, UNBIND_1)
    [second] = [f for f in result.findings if f.code == "PP0805" and f.plugin.path == SWIFTKV
                and f.plugin.line == site.plugin.line]
    assert second.plugin.snippet == "k_cache, v_cache = kv_cache.unbind(1)" and second.new.snippet == SPLIT
    proposal = {i.copy.plugin.path: i for i in plan_port(models, settings)}[FORK]
    assert SPLIT in outside_conflicts(proposal.merge.text)
    assert proposal.status in (CLEAN, CONFLICT) and proposal.changes


def test_unchanged_layout_26_33_is_not_reported(real_models):
    models, settings = real_models("0.3.0", "0.26.0", "0.33.0")
    result = scan(models, settings)
    assert not [f for f in result.findings if f.code == "PP0805" and f.plugin.path == SWIFTKV
                and "split(" in f.plugin.snippet]
    fork = only(result, "PP0801", FORK, "")
    assert f"-        {SPLIT}" not in fork.details


def test_merge_proposals_for_0_3_0_on_0_33_cover_every_copy(real_models):
    """Every copy gets a status (their speed is bench/merge_counts.py's bar, not a timed test)."""
    models, settings = real_models("0.3.0", "0.26.0", "0.33.0")
    report = run_port(models, settings, verify=False)  # the merges alone; verification is a re-scan
    counts = report.counts()
    assert counts[CLEAN] + counts[CONFLICT] + counts[UNCHANGED] + counts[GONE] == len(report.items)
    assert any(i.copy.plugin.path == FORK and i.status in (CLEAN, CONFLICT) for i in report.items)


def test_conflicts_halved_and_every_clean_proposal_verified_on_0_3_0_to_0_33(real_models):
    """#15's bar: git's line merge leaves 51 conflict blocks; the statement/token merges at most 25;
    every clean proposal passes verification (parses, re-scans without new findings)."""
    models, settings = real_models("0.3.0", "0.26.0", "0.33.0")
    report = run_port(models, settings)
    assert report.line_conflicts == 51 and report.conflicts <= 25
    clean = [i for i in report.items if i.status == CLEAN and i.changes]
    assert clean and all(i.verified for i in clean) and report.counts()["unverified"] == 0
    assert all(not i.refused for i in report.items)  # no finer merge lost a plugin line
