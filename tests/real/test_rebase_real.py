"""`pinport rebase` on real arctic-inference releases and real vLLM wheels (cached)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pinport.findings import Severity
from pinport.rebase import RebaseOptions, run_rebase, write_rebase_documents
from pinport.rebase.documents import HTML, NAMES

_GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]


def _git_repo(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "the release"]):
        subprocess.run([*_GIT, "-C", str(dest), *args], check=True, capture_output=True)
    return dest


def test_previous_rebase_0_2_0_to_0_24_0(tmp_path: Path) -> None:
    rebase = run_rebase(RebaseOptions("arctic-inference==0.2.0", new_spec="0.24.0", stops=False))
    assert (rebase.old, rebase.new, rebase.base) == ("0.18.0", "0.24.0", None)  # a release: its own pin
    written = write_rebase_documents(rebase, tmp_path)
    assert sorted(p.name for p in written) == sorted((*NAMES, HTML)) and all(p.stat().st_size > 200 for p in written)

    edits = {(e.path, e.finding.code, e.before.strip(), e.after.strip()) for e in rebase.pins.edits}
    assert ("pyproject.toml", "PP0020", "'vllm==0.18.0',", "'vllm==0.24.0',") in edits
    # vLLM 0.24.0's METADATA requires torch==2.11.0 and protobuf>=5.29.6 (minus some 6.3x series)
    assert ("pyproject.toml", "PP0021", '"torch==2.10.0", # need to be same as user env.',
            '"torch==2.11.0", # need to be same as user env.') in edits
    assert ("pyproject.toml", "PP0021", '"protobuf==5.29.5",', '"protobuf==5.29.6",') in edits
    torch = next(e.finding for e in rebase.pins.edits if e.package == "torch")
    assert (torch.args["required"], torch.level) == ("==2.11.0", Severity.ERROR)
    separate = [e for e in rebase.pins.edits if not e.changes]
    assert [(e.what, e.before.strip()) for e in separate] == [
        ("[project.optional-dependencies] embedding", '"vllm==0.9.2",')]

    plan = (tmp_path / "REBASE_PLAN.md").read_text()
    errors = [f for f in rebase.scan.findings if f.level is Severity.ERROR]
    assert len(errors) > 20
    for f in errors:  # every error finding has its own checkbox line
        assert any(line.startswith("- [") and f"`{f.code}`" in line and f"{f.plugin.path}:{f.plugin.line}" in line
                   for line in plan.splitlines()), f.message
    report = (tmp_path / "REBASE_REPORT.md").read_text()
    assert "https://github.com/vllm-project/vllm/blob/v0.24.0/vllm/" in report  # evidence linked
    html = (tmp_path / HTML).read_text()  # every finding and pin, each with its code beside it
    assert html.count("<article class='finding'") == len(rebase.findings)
    assert all(f"data-fingerprint='{f.fingerprint}'" in html for f in rebase.findings)


def test_current_job_0_3_0_to_0_33_0_applied_on_a_git_repo(plugin_tree, tmp_path: Path) -> None:
    tree = plugin_tree("0.3.0")
    repo = _git_repo(tree.project_root or tree.root, tmp_path / "ArcticInference")
    options = RebaseOptions(str(repo), new_spec="0.33.0", apply=True)
    rebase = run_rebase(options)
    assert rebase.base is not None and rebase.base.chosen.branch == "main" and rebase.old == "0.26.0"

    # the stops cover every release in between, each finding marked with its first release
    steps = [s.version for s in rebase.stops.steps]
    assert steps == ["0.27.0", "0.27.1", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0"]
    assert rebase.stops.proposed[-1] == "0.33.0"
    assert set(rebase.stops.first_seen) == {f.fingerprint for f in rebase.scan.findings}
    moved = [f for f in rebase.scan.findings if f.code == "PP0402"]
    assert {rebase.stops.first_seen[f.fingerprint] for f in moved} <= set(steps)

    # every moved name is rewritten, or stays a finding with the reason it was not
    assert {f.args["name"] for f in moved} >= {"is_quantized_kv_cache", "cp_lse_ag_out_rs"}
    for f in moved:
        assert f.fingerprint in rebase.done or f.fingerprint in rebase.fixes.refused, f.message
    # after --apply no import-resolution error is left without the reason no safe fix covers it
    left = [f for f in rebase.after.findings if f.kind.check in ("imports", "aliases") and f.level is Severity.ERROR]
    assert {f.code for f in left} >= {"PP0401", "PP0601"} and "PP0402" not in {f.code for f in left}
    for f in left:
        assert rebase.fixes.refused.get(f.fingerprint), f.message
    cascade = (repo / "arctic_inference/vllm/attention/flash_attn_forest_cascade.py").read_text()
    assert "from vllm.v1.kv_cache_interface import is_quantized_kv_cache\n" in cascade
    assert "from vllm.v1.attention.ops.dcp import cp_lse_ag_out_rs\n" in cascade
    runner = (repo / "arctic_inference/vllm/model_runner.py").read_text()
    assert "self._orig_initialize_kv_cache(kv_cache_config, is_profiling, " \
           "kv_cache_allocation_context=kv_cache_allocation_context)" in runner
    assert 'VLLM_PATCH_VERSION = "0.33.0"' in (repo / "arctic_inference/utils.py").read_text()
    assert "'vllm==0.33.0'," in (repo / "pyproject.toml").read_text()
    assert any(a.what.startswith("clean three-way merge of `UlyssesEngineCore.step_with_batch_queue`")
               for a in rebase.applied)

    # committed, a second --apply changes nothing
    subprocess.run([*_GIT, "-C", str(repo), "commit", "-qam", "rebase"], check=True, capture_output=True)
    again = run_rebase(RebaseOptions(str(repo), old_spec="0.26.0", new_spec="0.33.0", apply=True, stops=False))
    assert again.applied == []
    status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                            capture_output=True, text=True, check=True).stdout
    assert status == ""


@pytest.mark.parametrize("spec", ["arctic-inference==0.3.0"])
def test_plan_only_on_a_release_refuses_apply(spec: str) -> None:
    from pinport.errors import ConfigError

    with pytest.raises(ConfigError, match="need a plugin checkout"):
        run_rebase(RebaseOptions(spec, new_spec="0.33.0", apply=True))
