"""scan.py: drift vs latent, and call-site evidence folded into the signature finding it confirms."""

import os

from harness import codes, only, run_scan

HOST = {"host/runner.py": "class Runner:\n    def load(self, a, model=None):\n        return a\n\n"
                          "    def start(self):\n        return self.load(1, model=2)\n"}
PLUGIN = {"plug/patching.py": "class ArcticPatch:\n    pass\n",
          "plug/patch.py": "from plug.patching import ArcticPatch\nfrom host.runner import Runner\n\n"
                           "class RunnerPatch(ArcticPatch[Runner]):\n    def load(self, a):\n        return a\n"}
OLD = {"host/runner.py": "class Runner:\n    def load(self, a):\n        return a\n\n"
                         "    def start(self):\n        return self.load(1)\n"}


def test_one_break_one_finding_with_its_call_sites():
    result = run_scan(OLD, HOST, PLUGIN, names=("signatures", "callers"))
    assert codes(result) == ["PP0101"]
    finding = only(result, "PP0101")
    assert finding.level.value == "error" and finding.status.value == "drift"
    assert any(d.startswith("host/runner.py:6 ") for d in finding.details)


def test_call_sites_alone_without_the_signature_check():
    assert codes(run_scan(OLD, HOST, PLUGIN, names=("callers",))) == ["PP0110"]


def test_optional_parameter_nobody_passes_stays_a_warning():
    quiet = {"host/runner.py": HOST["host/runner.py"].replace("self.load(1, model=2)", "self.load(1)")}
    finding = only(run_scan(OLD, quiet, PLUGIN, names=("signatures", "callers")), "PP0101")
    assert finding.level.value == "warning"


def test_forked_and_serial_runs_agree(monkeypatch):
    """Checks spread over two processes give the same findings, in the same order, as one process."""
    import pinport.scan as scan_mod

    parallel = run_scan(OLD, HOST, PLUGIN)
    monkeypatch.setattr(scan_mod.os, "cpu_count", lambda: 1)
    serial = run_scan(OLD, HOST, PLUGIN)
    assert [f.as_dict() for f in parallel.findings] == [f.as_dict() for f in serial.findings]
    assert parallel.checks == serial.checks


def test_split_balances_cost_and_keeps_registry_order():
    from pinport.checks import CHECKS
    from pinport.scan import _split

    here, there = _split(CHECKS)
    assert sorted(c.name for c in here + there) == sorted(c.name for c in CHECKS)
    order = [c.name for c in CHECKS]
    for group in (here, there):
        assert [c.name for c in group] == [n for n in order if n in {c.name for c in group}]
    cost = lambda group: sum(getattr(c, "cost", 1) for c in group)  # noqa: E731
    assert abs(cost(here) - cost(there)) <= max(getattr(c, "cost", 1) for c in CHECKS)


def _die() -> None:
    os._exit(1)


def test_a_dead_worker_does_not_lose_its_checks(monkeypatch):
    import pinport.scan as scan_mod

    expected = [f.as_dict() for f in run_scan(OLD, HOST, PLUGIN).findings]
    monkeypatch.setattr(scan_mod, "_run_forked", _die)
    assert [f.as_dict() for f in run_scan(OLD, HOST, PLUGIN).findings] == expected
