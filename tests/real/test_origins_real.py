"""Real copies and the release they came from (#15 part 1): the forest-cascade fork in
arctic-inference 0.3.0 (pinned to vLLM 0.26.0) says in its own header that it forks vLLM 0.14.1's
flash-attention backend; pinport finds that from the code alone and reports the lag."""

import pytest
from packaging.version import Version

from pinport.checks.forks import ForksCheck
from pinport.checks.mirrors import MirrorsCheck
from pinport.config import load_settings
from pinport.findings import Severity, Status
from pinport.model.index import IndexCache
from pinport.port import CLEAN, plan_port, run_port
from pinport.port.plan import lost_plugin_lines
from pinport.port.refine import sound
from pinport.scan import load_models, scan_models
from pinport.sources import Cache, cached_releases
from real.test_all_releases import VERSIONS

FORK = "arctic_inference/vllm/attention/flash_attn_forest_cascade.py"


@pytest.fixture(scope="module")
def with_history(plugin_tree, vllm_tree):
    for version in VERSIONS:  # every release before the pin, fetched once into the cache
        if Version(version) < Version("0.26.0"):
            vllm_tree(version)
    plugin = plugin_tree("0.3.0")
    settings = load_settings(plugin.project_root or plugin.root)
    cache = Cache()
    history = tuple(cached_releases("vllm", cache=cache, below="0.26.0", packages=("vllm",)))
    models = load_models(plugin, vllm_tree("0.26.0"), vllm_tree("0.33.0"), settings,
                         cache=IndexCache(cache.path("index", "summaries.sqlite")), history=history)
    return models, settings


def test_the_fork_is_found_to_come_from_0_14(with_history):
    models, settings = with_history
    result = scan_models(models, settings, extra_checks=(ForksCheck(), MirrorsCheck()))
    [lag] = [f for f in result.findings if f.code == "PP0807"]
    assert lag.plugin.path == FORK and lag.subject == "vllm.v1.attention.backends.flash_attn"
    assert (lag.status, lag.level) == (Status.LATENT, Severity.WARNING)
    assert lag.args["origin"].startswith("copied from vllm 0.14.0 (the same code through 0.14.1) and not updated "
                                         "since: upstream changed it in 0.15.0, 0.15.1, 0.16.0")
    assert lag.extra["origin"] == "0.14.0" and lag.extra["through"] == "0.14.1"
    assert lag.old.path == lag.new.path == "vllm/v1/attention/backends/flash_attn.py"
    assert lag.args["pending"] > 0 and any(d.endswith("not in the plugin copy") for d in lag.details)
    mirrors = {f.plugin.unit: f for f in result.findings if f.code == "PP1204"}
    assert mirrors["GPUModelRunnerPatch._sample"].extra["origin"] == "0.15.0"


def test_the_port_merges_the_fork_from_its_release(with_history):
    models, settings = with_history
    items = {i.copy.plugin.path: i for i in plan_port(models, settings)}
    fork = items[FORK]
    assert fork.base_label == "vllm 0.14.0" and fork.merge is not None
    assert "||||||| vllm 0.14.0" in fork.merge.text or fork.conflicts == 0


def test_merging_from_the_origins_halves_the_conflicts_and_loses_no_plugin_line(with_history):
    """#15's bar with the right bases: git's line merge leaves 60 blocks, the finer merges at most 25;
    every clean proposal is verified; no proposal drops a line of the plugin's own; every merge keeps
    the code's structure whichever way each remaining conflict is resolved."""
    models, settings = with_history
    report = run_port(models, settings)
    assert report.line_conflicts == 60 and report.conflicts <= 25
    clean = [i for i in report.items if i.status == CLEAN and i.changes]
    assert clean and all(i.verified for i in clean) and report.counts()["unverified"] == 0
    assert {i.copy.unit for i in report.items if i.base_label} >= {
        "arctic_inference.vllm.attention.flash_attn_forest_cascade", "GPUModelRunnerPatch._dummy_run"}
    for item in report.items:
        if item.merge is None:
            continue
        base = item.origin.text if item.base_label else item.copy.base
        refined = item.refined
        extra = (refined.rewritten, refined.reflowed) if refined is not None and item.merge.text == refined.text \
            else (None, ())
        assert not item.refused and lost_plugin_lines(item.copy.ours, base, item.merge.text, item.renames, *extra) == ()
        assert sound(item.merge.text.split("\n"), item.copy.ours, item.copy.theirs), item.copy.unit
