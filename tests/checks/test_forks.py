"""Forked files and copied lines (#8): a positive and a negative case per kind."""

import pytest

from harness import expect, only, run_scan
from pinport.checks.copied_lines import CopiedLinesCheck
from pinport.checks.forks import ForksCheck
from pinport.findings import Severity
from scenarios import BASE, SECOND_SITE
from scenarios import RESETTING_BACKEND as BACKEND
from scenarios import RESETTING_FORK as FORK

LAYOUT = BACKEND.replace("kv_cache.unbind(0)", "kv_cache.unbind(1)")
FORK_PATH, SITE_PATH = "plug/tree_backend.py", "plug/kv.py"
CHECKS = (ForksCheck(), CopiedLinesCheck())


def scan(new_backend, fork=FORK, site=SECOND_SITE, new_base=BASE, **settings):
    old = {"host/backend.py": BACKEND, "host/base.py": BASE}
    new = {"host/base.py": new_base, **({"host/backend.py": new_backend} if new_backend else {})}
    return run_scan(old, new, {FORK_PATH: fork, SITE_PATH: site}, checks=CHECKS, **settings)


@pytest.mark.parametrize(("new_backend", "new_base", "expected"), [
    (LAYOUT, BASE, ["PP0801 warning drift", "PP0805 warning drift"]),  # 8: the fork and the second site both carry the old layout
    (BACKEND, BASE, ["no PP0801", "no PP0802", "no PP0803", "no PP0805"]),  # unchanged twin
    (None, BASE, ["PP0803 warning drift"]),  # 8: the forked host file is gone from NEW
    (BACKEND, BASE.replace("reset", "reset_state"), ["PP0802 error drift"]),  # 8: an inherited member is gone
])
def test_fork_kinds(new_backend, new_base, expected):
    expect(scan(new_backend, new_base=new_base), expected)


def test_fork_whose_host_file_is_gone_points_at_the_fork_itself():
    expect(scan(None), ["PP0803 warning drift <module>:1"], at=True)


def test_changed_fork_evidence_and_pending_hunk():
    result = scan(LAYOUT)
    expect(result, ["PP0801 warning drift", "PP0805 warning drift"])
    finding = only(result, "PP0801")
    assert (finding.plugin.path, finding.plugin.line) == (FORK_PATH, 1)
    assert (finding.old.path, finding.new.path) == ("host/backend.py", "host/backend.py")
    assert finding.subject == "host.backend" and finding.args["name"] == FORK_PATH
    assert finding.args["pending"] == 1 and finding.level is Severity.WARNING
    assert "-        key_cache, value_cache = kv_cache.unbind(0)" in finding.details
    assert "+        key_cache, value_cache = kv_cache.unbind(1)" in finding.details


def test_fork_already_carrying_the_change_is_info():
    ported = FORK.replace("kv_cache.unbind(0)", "kv_cache.unbind(1)")
    result = scan(LAYOUT, fork=ported)
    expect(result, ["PP0801 info drift", "PP0805 warning drift"])
    finding = only(result, "PP0801")
    assert finding.level is Severity.INFO and finding.args["pending"] == 0


def test_second_site_reports_the_new_form():
    result = scan(LAYOUT)
    expect(result, ["PP0801 warning drift", "PP0805 warning drift"])
    finding = only(result, "PP0805")
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
    expect(scan(LAYOUT, site=site), ["PP0801 warning drift"])


def test_removed_line_copied_exactly():
    removed = LAYOUT.replace("        weights = scores.softmax(dim=-1)\n", "")
    site = SECOND_SITE + "\n\ndef norm(scores):\n    weights = scores.softmax(dim=-1)\n    return weights\n"
    result = scan(removed, site=site)
    expect(result, ["PP0801 warning drift", "PP0805 warning drift", "PP0806 warning drift"])
    finding = only(result, "PP0806")
    assert finding.plugin.unit == "norm" and finding.new is None
    expect(scan(LAYOUT, site=site), ["PP0801 warning drift", "PP0805 warning drift", "no PP0806"])  # NEW keeps it


def test_fork_threshold_and_declared_fork():
    # below the threshold the file is no fork, so its own copy of the changed line is a copied line
    unforked = scan(LAYOUT, fork_threshold=0.99)
    expect(unforked, ["PP0805 warning drift AttentionImpl.forward:37", "PP0805 warning drift write_kv:6"], at=True)
    declared = scan(LAYOUT, fork_threshold=0.99, forks=((FORK_PATH, "host/backend.py"),))
    expect(declared, ["PP0801 warning drift", "PP0805 warning drift", "no PP0804"])
    assert only(declared, "PP0801").args["name"] == FORK_PATH


def test_declared_fork_that_does_not_exist():
    result = scan(BACKEND, forks=(("plug/nope.py", "host/backend.py"),))
    expect(result, ["PP0804 warning drift"])
    finding = only(result, "PP0804")
    assert finding.args["name"] == "plug/nope.py" and finding.level is Severity.WARNING


def test_removed_inherited_member_evidence():
    result = scan(BACKEND, new_base=BASE.replace("reset", "reset_state"))
    expect(result, ["PP0802 error drift"])
    finding = only(result, "PP0802")
    assert finding.args["name"] == "reset" and "reset_state" in finding.args["rename"]
    assert finding.plugin.path == FORK_PATH and finding.plugin.unit == "AttentionImpl.forward"
    assert finding.old.path == "host/base.py" and finding.new.path == "host/base.py"
