"""scan.py: drift vs latent, and call-site evidence folded into the signature finding it confirms."""

import os
import time

from harness import expect, load_inline_models, only, run_scan
from pinport.findings import Severity, Status
from pinport.scan import scan_models

HOST = {"host/runner.py": "class Runner:\n    def load(self, a, model=None):\n        return a\n\n"
                          "    def start(self):\n        return self.load(1, model=2)\n"}
PLUGIN = {"plug/patching.py": "class ArcticPatch:\n    pass\n",
          "plug/patch.py": "from plug.patching import ArcticPatch\nfrom host.runner import Runner\n\n"
                           "class RunnerPatch(ArcticPatch[Runner]):\n    def load(self, a):\n        return a\n"}
OLD = {"host/runner.py": "class Runner:\n    def load(self, a):\n        return a\n\n"
                         "    def start(self):\n        return self.load(1)\n"}


def test_one_break_one_finding_with_its_call_sites():
    result = run_scan(OLD, HOST, PLUGIN, names=("signatures", "callers"))
    expect(result, ["PP0101 error drift"])
    finding = only(result, "PP0101")
    assert finding.level.value == "error" and finding.status.value == "drift"
    assert any(d.startswith("host/runner.py:6 ") for d in finding.details)


def test_call_sites_alone_without_the_signature_check():
    expect(run_scan(OLD, HOST, PLUGIN, names=("callers",)), ["PP0110 error drift"])


def test_optional_parameter_nobody_passes_stays_a_warning():
    quiet = {"host/runner.py": HOST["host/runner.py"].replace("self.load(1, model=2)", "self.load(1)")}
    result = run_scan(OLD, quiet, PLUGIN, names=("signatures", "callers"))
    expect(result, ["PP0101 warning drift"])
    finding = only(result, "PP0101")
    assert finding.level.value == "warning"


def test_judging_new_alone_reports_the_same_findings_all_as_drift():
    """`judge_old=False` (a merge's verification compares identities): NEW's findings as the full
    scan reports them, each labelled drift, none fixed; the full scan tells latent and fixed apart."""
    plugin = {**PLUGIN, "plug/other.py": "from host.runner import Gone\nfrom host.runner import Runner\n\n"
                                         "def go(r: Runner):\n    return r.start(1)\n"}
    old = {"host/runner.py": OLD["host/runner.py"] + "\n    def stop(self):\n        return 0\n"}
    with load_inline_models(old, HOST, plugin) as (models, config):
        full = scan_models(models, config)
    with load_inline_models(old, HOST, plugin) as (models, config):
        alone = scan_models(models, config, judge_old=False)
    assert {f.status for f in full.findings} == {Status.DRIFT, Status.LATENT}
    assert [f.with_status(Status.DRIFT).as_dict() for f in full.findings] == [f.as_dict() for f in alone.findings]
    assert alone.fixed == () and {f.status for f in alone.findings} == {Status.DRIFT}


def test_forked_and_serial_runs_agree(monkeypatch):
    """Checks spread over two processes give the same findings, in the same order, as one process."""

    parallel = run_scan(OLD, HOST, PLUGIN)
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    serial = run_scan(OLD, HOST, PLUGIN)
    assert [f.as_dict() for f in parallel.findings] == [f.as_dict() for f in serial.findings]
    assert parallel.checks == serial.checks


def test_bundles_keep_checks_sharing_a_fact_together_costliest_first():
    from pinport.checks import CHECKS
    from pinport.scan import _bundles

    bundles = _bundles(CHECKS)
    assert sorted(c.name for b in bundles for c in b) == sorted(c.name for c in CHECKS)
    order = [c.name for c in CHECKS]
    for bundle in bundles:
        assert [c.name for c in bundle] == [n for n in order if n in {c.name for c in bundle}]
    costs = [sum(getattr(c, "cost", 1) for c in b) for b in bundles]
    assert costs == sorted(costs, reverse=True)
    for fact in ("call_failures", "host_calls"):  # a shared fact of one side is built in one process only
        readers = {c.name for c in CHECKS if fact in getattr(c, "shares", ())}
        assert len(readers) >= 2
        assert any(readers <= {c.name for c in b} for b in bundles), fact
    # a fact built before the fork (of both sides: the two sides of a bundle may part) bundles nothing
    copies = {c.name for c in CHECKS if "copies" in getattr(c, "shares", ())}
    assert len(copies) >= 2 and not any(copies <= {c.name for c in b} for b in bundles)


def test_tasks_are_each_bundle_on_both_sides_costliest_first():
    from pinport.checks import CHECKS
    from pinport.scan import _bundles, _tasks

    bundles = _bundles(CHECKS)
    assert _tasks(CHECKS) == [(b, side) for b in bundles for side in (0, 1)]


def test_bundles_join_checks_sharing_a_fact_even_through_a_third():
    from pinport.scan import _bundles

    def check(name: str, cost: float, *shares: str):
        return type(name, (), {"name": name, "cost": cost, "shares": shares})()

    a, b, c, d = check("a", 1, "x"), check("b", 1, "y"), check("c", 1, "x", "y"), check("d", 2)
    assert [tuple(c.name for c in bundle) for bundle in _bundles((a, b, c, d))] == [("a", "b", "c"), ("d",)]


def test_both_processes_take_tasks_until_none_is_left(monkeypatch):
    """The worker and this process each take the next task (a bundle on one side) as they finish
    one: every check runs once on each side, in one of them, and the findings are those of one
    process alone."""
    import pinport.scan as scan_mod

    ran: list[tuple[int, tuple[str, ...], bool]] = []
    real, parent = scan_mod._run_checks, os.getpid()

    def noting(checks, ctx, strict):
        ran.append((os.getpid(), tuple(c.name for c in checks), ctx.judging_new))
        if os.getpid() == parent:
            time.sleep(0.3)  # this process is slow: the worker surely takes tasks meanwhile
        return real(checks, ctx, strict)
    monkeypatch.setattr(scan_mod, "_run_checks", noting)
    parallel = run_scan(OLD, HOST, PLUGIN)
    here = [(names, new) for pid, names, new in ran if pid == os.getpid()]
    assert here and len(here) < len(scan_mod._tasks(scan_mod.select_checks(())))  # the worker took some
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert [f.as_dict() for f in parallel.findings] == [f.as_dict() for f in run_scan(OLD, HOST, PLUGIN).findings]


def _die(*_args: object) -> None:
    os._exit(1)


def _die_after_taking(tasks, queues, *_args: object) -> None:
    for _, take in queues:
        take(), take()  # two tasks of each queue taken, never run
    os._exit(1)


def test_each_process_empties_its_own_first_queue_before_helping_with_the_other(monkeypatch):
    """The worker starts with the checks that read no copies while this process builds them, then takes
    what this process has not yet taken of the other queue."""
    import pinport.scan as scan_mod

    def counter(start: int = 0):
        taken = iter(range(start, 100))
        return lambda: next(taken)
    ran: list[str] = []
    monkeypatch.setattr(scan_mod, "_run_checks", lambda bundle, ctx, strict: ran.append(bundle[0] + ctx) or {})
    tasks = [(("copies-reader",), 0), (("copies-reader",), 1), (("other",), 0), (("other",), 1)]
    done: list[int] = []
    first_taken_elsewhere = counter(1)  # the other process has taken the first of its queue already
    scan_mod._run_taken(tasks, [([2, 3], counter()), ([0, 1], first_taken_elsewhere)], ("N", "O"), False, done)
    assert ran == ["otherN", "otherO", "copies-readerO"] and done == [2, 3, 1]


def test_a_dead_worker_does_not_lose_its_checks(monkeypatch):
    import pinport.scan as scan_mod

    expected = [f.as_dict() for f in run_scan(OLD, HOST, PLUGIN).findings]
    for dying in (_die, _die_after_taking):
        monkeypatch.setattr(scan_mod, "_run_forked", dying)
        assert [f.as_dict() for f in run_scan(OLD, HOST, PLUGIN).findings] == expected


def test_a_plugin_file_that_does_not_parse_is_reported_and_the_rest_analysed():
    plugin = {**PLUGIN, "plug/broken.py": "def oops(:\n    pass\n"}
    expect(run_scan(OLD, HOST, plugin, names=("signatures", "callers")),
           ["PP0005 error latent :1", "PP0101 error drift RunnerPatch.load:5"], at=True)
    expect(run_scan(OLD, HOST, PLUGIN, names=("signatures", "callers")), ["no PP0005", "PP0101 error drift"])


class _Crashing:
    """A check that raises judging either side, as a broken check would."""

    def __init__(self, name: str) -> None:
        self.name = name

    drift = ()
    kinds = ()
    description = "raises"

    def run(self, ctx):
        raise RuntimeError(f"boom in {ctx.host.label}")


def test_a_crashing_check_becomes_one_finding_and_the_scan_goes_on():
    from pinport.checks.override_signature import SignaturesCheck
    from pinport.scan import CHECK_CRASHED

    # two crashing checks and a working one: the forked worker runs some of them, this process the rest
    checks = (_Crashing("first"), SignaturesCheck(), _Crashing("second"))
    result = run_scan(OLD, HOST, PLUGIN, checks=checks, strict=False)
    expect(result, ["PP0099 warning latent", "PP0099 warning latent", "PP0101 warning drift"])
    crashed = sorted((f.subject, f.args["error"]) for f in result.findings if f.kind == CHECK_CRASHED)
    assert crashed == [("first", "RuntimeError: boom in host 2.0"), ("second", "RuntimeError: boom in host 2.0")]
    expect(run_scan(OLD, HOST, PLUGIN, checks=(SignaturesCheck(),), strict=False), ["no PP0099", "PP0101 warning drift"])


def test_strict_scans_raise_what_a_check_raises():
    import pytest

    with pytest.raises(RuntimeError, match="boom"):
        run_scan(OLD, HOST, PLUGIN, checks=(_Crashing("only"),))


class _Counted:
    """A check yielding one finding with the given `extra`, counting its runs."""

    def __init__(self, name: str, extra: dict) -> None:
        from pinport.findings import Kind, Severity

        self.name, self.extra, self.runs = name, extra, 0
        self.kind = Kind("PP9998", "Counted", "counted `{name}` ({count})", Severity.WARNING, None, "counted")
        self.kinds = (self.kind,)

    drift = ()
    description = "counts"

    def run(self, ctx):
        from pinport.findings import Finding, Location

        self.runs += 1
        site = Location("plug/patch.py", 3, 4, "RunnerPatch.step", "def step(self, a):")
        yield Finding(self.kind, {"name": "step", "count": 2}, site, None, Location("host/runner.py", 2), "host.x",
                      "fix it", ("detail",), (Location("host/a.py", 1, 0, "f", "f()"),), extra=self.extra)


def test_one_sides_findings_kept_across_runs_read_back_whole_unless_json_would_change_them(tmp_path, monkeypatch):
    """`scan_models(judge_old=False, stored=True)` keeps the checks' findings in the index cache:
    the next run of the same trees reads them back, equal in every field (`extra` too); findings
    JSON would not give back as they are (a tuple in `extra`) or a crashed check are not kept, nor
    a check from outside pinport (its code is not in the key)."""
    import pinport.scan as scan_module
    from harness import HOST as HOST_PKG
    from harness import PLUGIN as PLUGIN_PKG
    from harness import SYNTHETIC, inline_tree
    from pinport.config import Settings
    from pinport.model.index import IndexCache
    from pinport.scan import load_models

    settings = Settings(host=HOST_PKG, plugin_package=PLUGIN_PKG, pin_sources=(), **SYNTHETIC)
    trees = [inline_tree(tmp_path / "old", HOST_PKG, "host 1.0", OLD), inline_tree(tmp_path / "new", HOST_PKG, "host 2.0", HOST),
             inline_tree(tmp_path / "plugin", PLUGIN_PKG, "plugin", PLUGIN)]
    cache = IndexCache(tmp_path / "index.sqlite")

    def scan(check, stored=True):
        models = load_models(trees[2], trees[0], trees[1], settings, cache=cache)
        return scan_models(models, settings, extra_checks=(check,), judge_old=False, stored=stored).findings

    outside = _Counted("outside", {})
    assert repr(scan(outside)) == repr(scan(outside)) and outside.runs == 2
    monkeypatch.setattr(scan_module, "_in_code_digest", lambda check: True)  # these checks as if pinport's own
    kept = _Counted("kept", {"score": 0.25, "hunks": ["@@ -1 +1 @@"], "origin": "host 0.9"})
    first = scan(kept)
    assert kept.runs == 1 and repr(scan(kept)) == repr(first) and kept.runs == 1  # read back, every field
    assert first[0].extra == kept.extra and first[0].message == "counted `step` (2)"
    assert repr(scan(kept, stored=False)) == repr(first) and kept.runs == 2
    tupled = _Counted("tupled", {"hunks": ("@@ -1 +1 @@",)})
    assert repr(scan(tupled)) == repr(scan(tupled)) and tupled.runs == 2  # a tuple comes back a list: not kept
    crashing = _CountedCrash("crashing", {})
    crashed = [(f.code, f.level, f.status, f.args["error"]) for f in scan(crashing)]
    assert crashed == [("PP0099", Severity.WARNING, Status.DRIFT, "RuntimeError: boom")]
    assert [(f.code, f.level, f.status, f.args["error"]) for f in scan(crashing)] == crashed and crashing.runs == 2


class _CountedCrash(_Counted):
    def run(self, ctx):
        self.runs += 1
        raise RuntimeError("boom")


def test_both_sides_findings_read_back_on_an_unchanged_scan_and_judged_again_when_anything_changes(
        tmp_path, monkeypatch):
    """Judging both sides, a scan keeps each side's findings in the index cache (`judged-1` rows):
    scanning the same trees, settings and code again reads them back whole (no check runs; the
    drift/latent labels come out as before); a changed plugin file, `strict`, or a damaged row
    means judging again."""
    import sqlite3

    import pinport.scan as scan_module
    from harness import HOST as HOST_PKG
    from harness import PLUGIN as PLUGIN_PKG
    from harness import SYNTHETIC, inline_tree
    from pinport.config import Settings
    from pinport.model.index import IndexCache
    from pinport.plugin.project import EntryPoint
    from pinport.scan import load_models

    settings = Settings(host=HOST_PKG, plugin_package=PLUGIN_PKG, pin_sources=(), **SYNTHETIC)
    hosts = [inline_tree(tmp_path / "old", HOST_PKG, "host 1.0", OLD), inline_tree(tmp_path / "new", HOST_PKG, "host 2.0", HOST)]
    plugin = inline_tree(tmp_path / "plugin", PLUGIN_PKG, "plugin", PLUGIN)
    cache = IndexCache(tmp_path / "index.sqlite")
    monkeypatch.setattr(scan_module, "_in_code_digest", lambda check: True)  # the check as if pinport's own
    check = _Counted("kept", {"score": 0.25})

    def scan(tree=plugin, strict=False, entry_points=()):
        models = load_models(tree, hosts[0], hosts[1], settings, cache=cache)
        models.plugin.entry_points = entry_points or models.plugin.entry_points
        return scan_models(models, settings, extra_checks=(check,), strict=strict)

    first = scan()
    assert check.runs == 2 and [(f.code, f.level, f.status) for f in first.findings] == [("PP9998", Severity.WARNING, Status.LATENT)]
    again = scan()
    assert check.runs == 2 and repr(again.findings) == repr(first.findings)  # both sides read back
    assert repr(scan(strict=True).findings) == repr(first.findings) and check.runs == 4  # strict: judged

    edited = inline_tree(tmp_path / "plugin2", PLUGIN_PKG, "plugin",
                         {**PLUGIN, "plug/patch.py": PLUGIN["plug/patch.py"] + "\n# edited\n"})
    assert repr(scan(edited).findings) == repr(first.findings) and check.runs == 6  # another content: judged
    scan(edited)
    assert check.runs == 6
    declared = (EntryPoint("host.general_plugins", "plug", "plug.patch:register", "pyproject.toml"),)
    scan(edited, entry_points=declared)  # the project's files outside its modules changed: judged
    assert check.runs == 8

    with sqlite3.connect(cache.path) as db:
        keys = [k for (k,) in db.execute("SELECT key FROM summaries WHERE key LIKE 'judged-1:%'")]
    assert len(keys) == 6  # both sides of each plugin
    cache.put_many([(key, b'{"kept": [["x"]]}') for key in keys])
    assert repr(scan().findings) == repr(first.findings) and check.runs == 10  # damaged: judged again, repaired
    scan()
    assert check.runs == 10
