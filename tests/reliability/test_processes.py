"""Processes end together: Ctrl-C, SIGTERM or the death of `pinport` ends its check worker too.

Each case runs the real CLI in a child process on a small trio, with two registered checks that
sleep, so the scan is caught while one of them runs in the forked worker.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import scan_args

pytestmark = pytest.mark.skipif(sys.platform != "linux" or (os.cpu_count() or 1) < 2,
                                reason="the forked check worker runs on Linux with two or more cores")

RUNNER = """
import sys, time
import pinport.checks as registry
from pinport.cli.main import main


class Sleepy:
    drift, kinds, description, cost = (), (), "sleeps", 1

    def __init__(self, name):
        self.name = name

    def run(self, ctx):
        time.sleep(120)
        return iter(())


registry.CHECKS = (*registry.CHECKS, Sleepy("sleepy-a"), Sleepy("sleepy-b"))
sys.exit(main(sys.argv[1:]))
"""


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _start(trees: dict[str, Path]) -> tuple[subprocess.Popen, int]:
    """The scan, started in its own session, once its check worker is running: (process, worker pid)."""
    args = scan_args(trees, "--checks", "sleepy-a,sleepy-b")
    process = subprocess.Popen([sys.executable, "-c", RUNNER, *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        workers = [c for c in _children(process.pid) if _alive(c)]
        if workers:
            time.sleep(0.5)  # let it reach the check
            return process, workers[0]
        assert process.poll() is None, process.communicate()
        time.sleep(0.1)
    process.kill()
    raise AssertionError("the check worker never started")


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("how, code, says", [
    ("ctrl-c", 130, "pinport: interrupted"),
    ("sigterm", 143, "pinport: terminated"),
])
def test_interrupt_or_terminate_ends_the_worker_and_says_one_line(trees, how, code, says):
    process, worker = _start(trees)
    if how == "ctrl-c":
        os.killpg(process.pid, signal.SIGINT)  # what the terminal does: the whole process group
    else:
        process.send_signal(signal.SIGTERM)  # only the main process, as `kill` or a supervisor does
    try:
        _, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == code
    assert err.strip().splitlines() == [says]  # no traceback, from the worker or the main process
    assert _gone_within(worker, 5)


def test_the_worker_dies_with_a_killed_pinport(trees):
    process, worker = _start(trees)
    process.kill()  # SIGKILL: no handler runs in the main process
    process.wait(timeout=10)
    assert _gone_within(worker, 5), "the check worker outlived pinport (an orphan holding its memory)"
