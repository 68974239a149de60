"""Progress bars on standard error for downloads, extraction and indexing (rich, only here)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)

from ..sources.progress import NOTICE, ProgressFn


@contextmanager
def progress_reporter(*, enabled: bool = True) -> Iterator[ProgressFn]:
    """A ProgressFn that draws one bar per description; silent when disabled or not on a terminal."""
    console = Console(stderr=True)
    if not enabled or not sys.stderr.isatty():
        yield lambda description, completed, total: (
            print(f"pinport: {description}", file=sys.stderr, flush=True) if completed == NOTICE else None)
        return
    bars = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), DownloadColumn(),
                    TimeRemainingColumn(), console=console, transient=True)
    tasks: dict[str, TaskID] = {}

    def report(description: str, completed: int, total: int | None) -> None:
        if completed == NOTICE:
            bars.console.print(f"pinport: {description}", markup=False, highlight=False)
            return
        if description not in tasks:
            tasks[description] = bars.add_task(description, total=total)
        bars.update(tasks[description], completed=completed, total=total)

    with bars:
        yield report
