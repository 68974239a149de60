"""Both cores for work over loaded models: one forked worker that inherits them.

The worker is forked, not spawned: it gets the models (and the function to run) by inheritance,
copy-on-write, so nothing is pickled on the way in and only the result crosses back.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from multiprocessing import get_all_start_methods, get_context
from multiprocessing.connection import Connection
from typing import TypeVar

log = logging.getLogger(__name__)

Here = TypeVar("Here")
There = TypeVar("There")


def can_fork() -> bool:
    """Whether a forked worker would help: two cores or more, and fork available."""
    return (os.cpu_count() or 1) >= 2 and "fork" in get_all_start_methods()


def _serve(conn: Connection, work: Callable[[], object]) -> None:
    try:
        conn.send(("done", work()))
    except Exception as exc:  # raised again in the parent
        try:
            conn.send(("raised", exc))
        except Exception:  # an exception that does not pickle: its text
            conn.send(("raised", RuntimeError(f"{type(exc).__name__}: {exc}")))
    finally:
        conn.close()


def run_beside(there: Callable[[], There], here: Callable[[], Here], *,
               fallback: Callable[[], There] | None = None) -> tuple[Here, There]:
    """(`here()`, `there()`), `there` in a forked worker while `here` runs in this process.

    An exception in either is raised here. If the worker dies (killed, out of memory), its share
    runs in this process after `here` (`fallback`, by default `there` itself): it is never lost.
    """
    fork = get_context("fork")
    receiving, sending = fork.Pipe(duplex=False)
    worker = fork.Process(target=_serve, args=(sending, there), daemon=True)
    worker.start()
    sending.close()
    try:
        mine = here()
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
