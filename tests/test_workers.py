"""Forked workers: Ctrl-C is the parent's; a worker ignores it from its first instant."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from pinport.workers import _forking, fork_pool, run_beside

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="signal masks and fork: Linux")


def _sigint_state() -> tuple[bool, bool]:
    """(SIGINT ignored, SIGINT held) in the calling process."""
    return (signal.getsignal(signal.SIGINT) == signal.SIG_IGN,
            signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []))


def test_a_ctrl_c_during_a_fork_reaches_the_parent_once_the_fork_is_done():
    reached = []
    with pytest.raises(KeyboardInterrupt):
        with _forking():
            os.kill(os.getpid(), signal.SIGINT)
            reached.append("after the signal")  # held: nothing raised inside
    assert reached == ["after the signal"]
    assert _sigint_state() == (False, False)


def test_a_forked_worker_ignores_ctrl_c_and_holds_nothing():
    mine, theirs = run_beside(_sigint_state, _sigint_state)
    assert theirs == (True, False)
    assert mine == (False, False)  # the parent: its own handler, nothing left held


def test_pool_workers_ignore_ctrl_c_and_the_parent_holds_nothing():
    with fork_pool(2) as pool:
        states = list(pool.map(_sigint_state_after, range(4)))
    assert states == [(True, False)] * 4
    assert _sigint_state() == (False, False)


def _sigint_state_after(_: int) -> tuple[bool, bool]:
    return _sigint_state()
