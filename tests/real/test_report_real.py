"""Reports of real scans: unique fingerprints, acceptance and the machine-readable formats."""

from __future__ import annotations

from collections import Counter

import pytest

from harness import find
from pinport.findings import Severity, Status

# (plugin, OLD, NEW): the default job, an older plugin across a long move, and the plugin on its own pin.
SCANS = [("0.3.0", "0.26.0", "0.33.0"), ("0.2.0", "0.18.0", "0.26.0"), ("0.3.0", "0.26.0", "0.26.0")]


@pytest.mark.parametrize("scan", SCANS, ids=["-".join(s) for s in SCANS])
def test_no_two_findings_share_a_fingerprint(real_scan, scan):
    result = real_scan(*scan, ())
    assert len(result.findings) > 10
    shared = {p: n for p, n in Counter(f.fingerprint for f in result.findings).items() if n > 1}
    assert shared == {}
    fixed = Counter(f.fingerprint for f in result.fixed)
    assert all(n == 1 for n in fixed.values())


def test_findings_that_used_to_collide_are_told_apart(real_scan):
    """vLLM 0.33.0's LlamaAttention.forward takes neither `k` nor `v`: two findings on one override
    (neither does 0.26.0's: latent)."""
    result = real_scan("0.3.0", "0.26.0", "0.33.0", ())
    k = find(result, "PP0201", "LlamaAttention.forward", param="k")
    v = find(result, "PP0201", "LlamaAttention.forward", param="v")
    for f in (k, v):
        assert f.plugin.path == "arctic_inference/vllm/swiftkv/llama_swiftkv.py"
        assert f.plugin.unit == "LlamaSwiftKVAttention.forward"
        assert f.status is Status.LATENT and f.level is Severity.WARNING  # broken on 0.26.0 already
        assert f.new.path == "vllm/model_executor/models/llama.py"
    assert k.fingerprint != v.fingerprint and k.occurrence == v.occurrence == 0
    copies = [f for f in result.findings if f.code == "PP0805" and f.plugin.unit == "VocabParallelEmbedding.weight_loader"
              and "param.data.copy_(tmp_param)" in f.message]
    assert [f.occurrence for f in copies] == [1, 2] and copies[0].plugin.line < copies[1].plugin.line
    assert copies[0].fingerprint != copies[1].fingerprint


def test_fingerprints_do_not_depend_on_the_versions(real_scan):
    """A latent finding keeps its fingerprint from one NEW to another, so a baseline survives a bump."""
    on_own_pin = {f.fingerprint for f in real_scan("0.3.0", "0.26.0", "0.26.0", ()).findings}
    moved = real_scan("0.3.0", "0.26.0", "0.33.0", ())
    latent = [f for f in moved.findings if f.status is Status.LATENT]
    assert latent and all(f.fingerprint in on_own_pin for f in latent)
