"""Forked worker processes that end with the run: they leave Ctrl-C to the parent and die with it.

A worker ignores SIGINT (the terminal sends it to the whole process group; the parent decides,
and no worker prints a traceback), takes SIGTERM's default action, and asks the kernel to kill
it when its parent dies (PR_SET_PDEATHSIG on Linux; elsewhere a thread watches the parent).
When the parent stops early (an exception, Ctrl-C, SIGTERM), `fork_pool` kills its workers
instead of waiting for them to finish work nobody will read.
"""

from __future__ import annotations

import ctypes
import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import get_context

_PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> None:
    """Run first in each worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        armed = ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL) == 0
    except (OSError, AttributeError):
        armed = False
    if os.getppid() != parent:  # the parent died before the wish was registered
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch, args=(parent,), daemon=True, name="parent-watch").start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


@contextmanager
def fork_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A fork-based process pool whose workers end with this process, and at once on an early exit."""
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("fork"), initializer=_die_with,
                               initargs=(os.getpid(),))
    try:
        yield pool
    except BaseException:
        _kill(pool)
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _kill(pool: ProcessPoolExecutor) -> None:
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        if process.is_alive():
            process.kill()
    for process in processes:
        process.join(timeout=2)
