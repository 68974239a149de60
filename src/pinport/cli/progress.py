"""Progress bars on standard error for downloads, extraction and indexing (rich, only here).

Each bar counts in its own unit: a download in bytes with its transfer speed, extracting and
indexing in files; the description is shortened so a bar fits an 80-column terminal.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.filesize import decimal
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Column
from rich.text import Text

from ..sources.progress import NOTICE, ProgressFn

DESCRIPTION_WIDTH = 26
BYTES_PREFIXES = ("downloading",)  # sources describe byte streams so; everything else counts files


class AmountColumn(ProgressColumn):
    """ "12.3 MB/45.6 MB 8.1 MB/s" for bytes, "1,204/1,866 files" for files."""

    def __init__(self) -> None:
        super().__init__(table_column=Column(no_wrap=True, min_width=27))

    def render(self, task: Task) -> Text:
        done, total = int(task.completed), int(task.total) if task.total is not None else None
        if task.fields.get("unit") == "bytes":
            size = f"{decimal(done)}/{decimal(total)}" if total else decimal(done)
            speed = f" {decimal(int(task.speed))}/s" if task.speed else ""
            return Text(size + speed, style="progress.download")
        return Text(f"{done:,}/{total:,} files" if total is not None else f"{done:,} files",
                    style="progress.download")


def _unit(description: str) -> str:
    return "bytes" if description.startswith(BYTES_PREFIXES) else "files"


def _short(description: str) -> str:
    if len(description) <= DESCRIPTION_WIDTH:
        return description
    return description[: DESCRIPTION_WIDTH - 1] + "…"


def make_bars(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}", table_column=Column(width=DESCRIPTION_WIDTH, no_wrap=True)),
        BarColumn(bar_width=12),
        AmountColumn(),
        TimeRemainingColumn(),
        console=console, transient=True)


@contextmanager
def progress_reporter(*, enabled: bool = True, console: Console | None = None) -> Iterator[ProgressFn]:
    """A ProgressFn that draws one bar per description; silent when disabled or not on a terminal."""
    interactive = console.is_terminal if console is not None else sys.stderr.isatty()
    if not enabled or not interactive:
        yield lambda description, completed, total: (
            print(f"pinport: {description}", file=sys.stderr, flush=True) if completed == NOTICE else None)
        return
    bars = make_bars(console or Console(stderr=True))
    tasks: dict[str, TaskID] = {}

    def report(description: str, completed: int, total: int | None) -> None:
        if completed == NOTICE:
            bars.console.print(f"pinport: {description}", markup=False, highlight=False)
            return
        if description not in tasks:
            tasks[description] = bars.add_task(_short(description), total=total, unit=_unit(description))
        bars.update(tasks[description], completed=completed, total=total)

    with bars:
        yield report
