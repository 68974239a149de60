"""Stops: every release between OLD and NEW judged, each finding marked with its first release."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pinport.findings import Finding, Kind, Location, Severity
from pinport.rebase import RebaseOptions, run_rebase
from pinport.rebase.stops import Step, judge_releases, propose, render_stops
from pinport.sources import load_directory

from .synthetic import HOST_OLD, _write, build

# 0.3.0: `helper` already moved (as in 0.4.0); `Runner` and `gone` still as in 0.2.0
HOST_MID = {**{k: v for k, v in HOST_OLD.items() if "dist-info" not in k},
            "hostlib/utils.py": "def kept():\n    return 1\n\n\ndef gone():\n    return 2\n",
            "hostlib/helpers.py": "def helper(x):\n    return x\n"}


def test_each_finding_is_marked_with_the_release_it_first_holds_in(tmp_path: Path) -> None:
    s = build(tmp_path)
    rebase = run_rebase(RebaseOptions(str(s.root), new_spec="0.4.0", old_tree=str(s.old_host),
                                      new_tree=str(s.new_host), cache_dir=tmp_path / "cache"))
    assert rebase.stops is None  # directories carry no release list: nothing to walk
    mid = replace(load_directory(_write(tmp_path / "host-0.3.0", HOST_MID), "hostlib"), version="0.3.0")
    stops = judge_releases(rebase, [mid], None)
    assert [step.version for step in stops.steps] == ["0.3.0", "0.4.0"]
    by_code = {(f.code, f.args.get("name") or f.args.get("param")): stops.first_seen[f.fingerprint]
               for f in rebase.scan.findings}
    assert by_code[("PP0402", "helper")] == "0.3.0"  # moved in 0.3.0
    assert by_code[("PP0601", "gone")] == "0.4.0"  # removed in 0.4.0
    assert by_code[("PP0101", "budget")] == "0.4.0"
    first_mid = {(f.code, f.args.get("name")) for f in stops.steps[0].first}
    assert ("PP0402", "helper") in first_mid and ("PP0601", "gone") not in first_mid
    assert stops.proposed[-1] == "0.4.0"
    table = "\n".join(render_stops(stops))
    assert "| 0.3.0 | " in table and "Proposed path: 0.2.0 → " in table


KIND = Kind("PP9999", "Demo", "demo", Severity.ERROR, None, "demo")


def _findings(n: int, tag: str) -> tuple[Finding, ...]:
    return tuple(Finding(KIND, {"name": f"{tag}{i}"}, Location("p.py", i)) for i in range(n))


def test_stops_where_breaks_cluster_new_always_last() -> None:
    steps = [Step("0.27.0", _findings(1, "a"), 1), Step("0.28.0", (), 1), Step("0.29.0", _findings(6, "b"), 7),
             Step("0.30.0", _findings(1, "c"), 8), Step("0.33.0", _findings(2, "d"), 10)]
    assert propose(steps, "0.33.0") == ["0.29.0", "0.33.0"]
    assert propose([Step("0.33.0", _findings(3, "d"), 3)], "0.33.0") == ["0.33.0"]
    # an even spread has no cluster: go straight to NEW
    even = [Step(v, _findings(1, v), 1) for v in ("0.27.0", "0.28.0", "0.29.0", "0.30.0", "0.31.0")]
    assert propose([*even, Step("0.33.0", _findings(1, "n"), 1)], "0.33.0") == ["0.33.0"]


def _judgements(monkeypatch) -> list[str]:
    """The host versions the checks run on from here on (each `_run_checks` call of the scan)."""
    import pinport.scan as scan_module

    judged: list[str] = []
    real = scan_module._run_checks
    monkeypatch.setattr(scan_module, "_run_checks", lambda checks, ctx, strict: judged.append(
        str(ctx.host.index.tree.version)) or real(checks, ctx, strict))
    return judged


def _stored_keys(index_cache, prefix: str) -> list[str]:
    import sqlite3

    with sqlite3.connect(index_cache.path) as db:
        return [k for (k,) in db.execute("SELECT key FROM summaries WHERE key LIKE ?", (prefix + "%",))]


def _table(stops) -> list[tuple[str, list[str], int]]:
    return [(s.version, [repr(f) for f in s.first], s.holding) for s in stops.steps]


def test_a_release_judged_once_is_read_back_on_the_next_run_and_judged_again_when_it_changes(
        tmp_path: Path, monkeypatch) -> None:
    """Each release's findings are kept in the index cache (`scan.judged`): judging the same
    releases again reads them back whole (every field of every finding), a release whose files
    changed is judged again (not served from the row of its old content), and a damaged row is
    judged again."""
    from pinport.model.index import IndexCache
    from pinport.sources import Cache

    s = build(tmp_path)
    rebase = run_rebase(RebaseOptions(str(s.root), new_spec="0.4.0", old_tree=str(s.old_host),
                                      new_tree=str(s.new_host), cache_dir=tmp_path / "cache"))
    index_cache = IndexCache.in_cache(Cache(tmp_path / "cache"))
    mid = replace(load_directory(_write(tmp_path / "host-0.3.0", HOST_MID), "hostlib"), version="0.3.0")
    judged = _judgements(monkeypatch)
    first = judge_releases(rebase, [mid], index_cache)
    assert judged == ["0.3.0"]
    again = judge_releases(rebase, [mid], index_cache)
    assert judged == ["0.3.0"]  # read back: no check ran
    assert _table(again) == _table(first) and again.first_seen == first.first_seen
    helper = next(f.fingerprint for f in rebase.scan.findings if f.code == "PP0402")
    assert first.first_seen[helper] == "0.3.0"

    # the same release with `helper` not moved yet: judged again, the move now first holds at NEW
    unmoved = {**HOST_MID, "hostlib/utils.py": HOST_OLD["hostlib/utils.py"]}
    unmoved.pop("hostlib/helpers.py")
    changed = replace(load_directory(_write(tmp_path / "host-0.3.0b", unmoved), "hostlib"), version="0.3.0")
    assert judge_releases(rebase, [changed], index_cache).first_seen[helper] == "0.4.0"
    assert judged == ["0.3.0", "0.3.0"]

    # a damaged row does not read: judged again, the same findings
    keys = _stored_keys(index_cache, "judged-1:")
    assert len(keys) >= 2  # one per content of 0.3.0 (and the merge verification's copy)
    index_cache.put_many([(key, b'{"imports": [["x"]]}') for key in keys])
    repaired = judge_releases(rebase, [mid], index_cache)
    assert judged == ["0.3.0", "0.3.0", "0.3.0"] and _table(repaired) == _table(first)
