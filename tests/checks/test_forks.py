"""Forked files and copied lines (#8): a positive and a negative case per kind."""

import pytest

from harness import codes, only, run_scan
from pinport.checks.copied_lines import CopiedLinesCheck
from pinport.checks.forks import ForksCheck
from pinport.findings import Severity

BACKEND = """
import math

from host.base import ImplBase


class BackendOptions:
    def __init__(self, block_size, num_heads):
        self.block_size = block_size
        self.num_heads = num_heads


class AttentionBackend:
    name = "FLASH"

    @staticmethod
    def get_kv_cache_shape(num_blocks, block_size, num_heads, head_size):
        return (2, num_blocks, block_size, num_heads, head_size)

    @staticmethod
    def supports_head_size(head_size):
        return head_size % 8 == 0 and head_size <= 256


class AttentionImpl(ImplBase):
    def __init__(self, num_heads, head_size, scale):
        self.num_heads = num_heads
        self.head_size = head_size
        self.scale = scale
        self.sliding_window = (-1, -1)

    def forward(self, query, key, value, kv_cache, metadata):
        if metadata is None:
            return query.fill_(0)
        self.reset()
        key_cache, value_cache = kv_cache.unbind(0)
        output = self.attend(query, key_cache, value_cache, metadata)
        return output * self.scale

    def attend(self, query, key_cache, value_cache, metadata):
        lengths = metadata.seq_lens
        blocks = metadata.block_table
        scores = query @ key_cache[blocks].transpose(-1, -2)
        scores = scores / math.sqrt(self.head_size)
        weights = scores.softmax(dim=-1)
        return weights @ value_cache[blocks][:lengths]
"""
BASE = "class ImplBase:\n    def reset(self):\n        return None\n"
LAYOUT = BACKEND.replace("kv_cache.unbind(0)", "kv_cache.unbind(1)")
FORK = BACKEND.replace("""        key_cache, value_cache = kv_cache.unbind(0)
""", """        if metadata.tree is not None:
            return self.tree_attend(query, kv_cache, metadata)
        key_cache, value_cache = kv_cache.unbind(0)
""").replace("head_size <= 256", "head_size <= 128") + """
    def tree_attend(self, query, kv_cache, metadata):
        return self.attend(query, kv_cache[0], kv_cache[1], metadata.tree)
"""
SECOND_SITE = """
from host.backend import AttentionBackend


def write_kv(layer, key, value, slots):
    kv_cache = layer.kv_cache
    k_cache, v_cache = kv_cache.unbind(0)
    k_cache.index_copy_(0, slots, key)
    return AttentionBackend.get_kv_cache_shape(1, 16, 8, 64)
"""
FORK_PATH, SITE_PATH = "plug/tree_backend.py", "plug/kv.py"
CHECKS = (ForksCheck(), CopiedLinesCheck())


def scan(new_backend, fork=FORK, site=SECOND_SITE, new_base=BASE, **settings):
    old = {"host/backend.py": BACKEND, "host/base.py": BASE}
    new = {"host/base.py": new_base, **({"host/backend.py": new_backend} if new_backend else {})}
    return run_scan(old, new, {FORK_PATH: fork, SITE_PATH: site}, checks=CHECKS, **settings)


@pytest.mark.parametrize(("new_backend", "new_base", "expected"), [
    (LAYOUT, BASE, ["PP0801", "PP0805"]),  # 8: the fork and the second site both carry the old layout
    (BACKEND, BASE, []),  # unchanged twin
    (None, BASE, ["PP0803"]),  # 8: the forked host file is gone from NEW
    (BACKEND, BASE.replace("reset", "reset_state"), ["PP0802"]),  # 8: an inherited member is gone
])
def test_fork_kinds(new_backend, new_base, expected):
    assert codes(scan(new_backend, new_base=new_base)) == expected


def test_changed_fork_evidence_and_pending_hunk():
    finding = only(scan(LAYOUT), "PP0801")
    assert (finding.plugin.path, finding.plugin.line) == (FORK_PATH, 1)
    assert (finding.old.path, finding.new.path) == ("host/backend.py", "host/backend.py")
    assert finding.subject == "host.backend" and finding.args["name"] == FORK_PATH
    assert finding.args["pending"] == "1" and finding.level is Severity.WARNING
    assert "-        key_cache, value_cache = kv_cache.unbind(0)" in finding.details
    assert "+        key_cache, value_cache = kv_cache.unbind(1)" in finding.details


def test_fork_already_carrying_the_change_is_info():
    ported = FORK.replace("kv_cache.unbind(0)", "kv_cache.unbind(1)")
    finding = only(scan(LAYOUT, fork=ported), "PP0801")
    assert finding.level is Severity.INFO and finding.args["pending"] == "0"


def test_second_site_reports_the_new_form():
    finding = only(scan(LAYOUT), "PP0805")
    assert (finding.plugin.path, finding.plugin.line, finding.plugin.unit) == (SITE_PATH, 6, "write_kv")
    assert finding.plugin.snippet == "k_cache, v_cache = kv_cache.unbind(0)"
    assert finding.old.path == "host/backend.py" and finding.old.snippet.endswith("unbind(0)")
    assert finding.new.snippet == "key_cache, value_cache = kv_cache.unbind(1)"
    assert "kv_cache.unbind(1)" in finding.suggestion


@pytest.mark.parametrize("site", [
    SECOND_SITE.replace("unbind(0)", "unbind(1)"),  # already ported
    SECOND_SITE.replace("k_cache, v_cache = kv_cache.unbind(0)", "k_cache = v_cache = kv_cache"),  # no copy
])
def test_second_site_twins(site):
    assert codes(scan(LAYOUT, site=site)) == ["PP0801"]


def test_removed_line_copied_exactly():
    removed = LAYOUT.replace("        weights = scores.softmax(dim=-1)\n", "")
    site = SECOND_SITE + "\n\ndef norm(scores):\n    weights = scores.softmax(dim=-1)\n    return weights\n"
    finding = only(scan(removed, site=site), "PP0806")
    assert finding.plugin.unit == "norm" and finding.new is None


def test_fork_threshold_and_declared_fork():
    # below the threshold the file is no fork, so its own copy of the changed line is a copied line
    unforked = scan(LAYOUT, fork_threshold=0.99)
    assert sorted((f.code, f.plugin.path) for f in unforked.findings) == [("PP0805", SITE_PATH),
                                                                          ("PP0805", FORK_PATH)]
    declared = scan(LAYOUT, fork_threshold=0.99, forks=((FORK_PATH, "host/backend.py"),))
    assert codes(declared) == ["PP0801", "PP0805"]
    assert only(declared, "PP0801").args["name"] == FORK_PATH


def test_declared_fork_that_does_not_exist():
    finding = only(scan(BACKEND, forks=(("plug/nope.py", "host/backend.py"),)), "PP0804")
    assert finding.args["name"] == "plug/nope.py" and finding.level is Severity.WARNING


def test_removed_inherited_member_evidence():
    finding = only(scan(BACKEND, new_base=BASE.replace("reset", "reset_state")), "PP0802")
    assert finding.args["name"] == "reset" and "reset_state" in finding.args["rename"]
    assert finding.plugin.path == FORK_PATH and finding.plugin.unit == "AttentionImpl.forward"
    assert finding.old.path == "host/base.py" and finding.new.path == "host/base.py"
