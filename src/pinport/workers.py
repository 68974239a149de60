"""Forked worker processes that end with the run: they leave Ctrl-C to the parent and die with it.

A worker ignores SIGINT (the terminal sends it to the whole process group; the parent decides,
and no worker prints a traceback), holding it from the fork until it ignores it (a Ctrl-C in that
instant would otherwise end the new worker with a traceback), takes SIGTERM's default action, and asks the kernel to kill
it when its parent dies (PR_SET_PDEATHSIG on Linux; elsewhere a thread watches the parent).
When the parent stops early (an exception, Ctrl-C, SIGTERM), `fork_pool` kills its workers
instead of waiting for them to finish work nobody will read. `run_beside` runs one share of work
over loaded models in such a worker: forked, not spawned, so the worker gets the models and the
function by inheritance (nothing pickled on the way in) and only the result crosses back.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import current_process, get_all_start_methods, get_context
from multiprocessing.connection import Connection
from typing import TypeVar

log = logging.getLogger(__name__)
_PR_SET_PDEATHSIG = 1
_CAN_HOLD = hasattr(signal, "pthread_sigmask")
Here = TypeVar("Here")
There = TypeVar("There")


def _die_with(parent: int) -> None:
    """Run first in each worker (forked with SIGINT held, see `_forking`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if _CAN_HOLD:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # a held Ctrl-C is dropped: ignored
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        armed = ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL) == 0
    except (OSError, AttributeError):
        armed = False
    if os.getppid() != parent:  # the parent died before the wish was registered
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch, args=(parent,), daemon=True, name="parent-watch").start()


@contextmanager
def _forking() -> Iterator[None]:
    """Hold SIGINT in this thread while it forks: a child inherits the held signal and sees it only
    once `_die_with` ignores it; here a Ctrl-C that came meanwhile is delivered on leaving."""
    if not _CAN_HOLD or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


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
        with _forking():
            pool.submit(os.getpid)  # a fork pool starts every worker at its first task
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


def can_fork() -> bool:
    """Whether a forked worker would help: two cores or more, fork available, and this process not a
    worker itself (a worker's share runs in the worker; multiprocessing forbids it children)."""
    return (os.cpu_count() or 1) >= 2 and "fork" in get_all_start_methods() and not current_process().daemon


def _serve(conn: Connection, work: Callable[[], object], parent: int) -> None:
    _die_with(parent)
    try:
        conn.send(("done", work()))
    except Exception as exc:  # raised again in the parent
        try:
            conn.send(("raised", exc))
        except Exception:  # an exception that does not pickle: its text
            conn.send(("raised", RuntimeError(f"{type(exc).__name__}: {exc}")))
    finally:
        conn.close()


def shared_counter() -> Callable[[], int]:
    """A `take()` handing out 0, 1, 2, ... once each, across this process and the workers it forks
    afterwards: two processes pulling work items by number share them out as they finish."""
    value = get_context("fork").Value("i", 0)

    def take() -> int:
        with value.get_lock():
            taken = value.value
            value.value = taken + 1
        return taken
    return take


def run_beside(there: Callable[[], There], here: Callable[[], Here], *,
               fallback: Callable[[], There] | None = None) -> tuple[Here, There]:
    """(`here()`, `there()`), `there` in a forked worker while `here` runs in this process.

    An exception in either is raised here. If the worker dies (killed, out of memory), its share
    runs in this process after `here` (`fallback`, by default `there` itself): it is never lost.
    """
    fork = get_context("fork")
    receiving, sending = fork.Pipe(duplex=False)
    worker = fork.Process(target=_serve, args=(sending, there, os.getpid()), daemon=True)
    with _forking():
        worker.start()
    sending.close()
    try:
        try:
            mine = here()
        except BaseException:  # an early exit (Ctrl-C, SIGTERM, an error): the worker's work is not read
            worker.kill()
            raise
        try:
            status, payload = receiving.recv()
        except EOFError:
            log.debug("forked worker died; running its share in this process")
            status, payload = "done", (fallback or there)()
        if status == "raised":
            raise payload
        return mine, payload
    finally:
        receiving.close()
        worker.join(timeout=5)
        if worker.is_alive():
            worker.terminate()
            worker.join()
