"""The progress callback sources report through; the CLI turns it into a progress bar."""

from collections.abc import Callable

# (description, completed, total or None when unknown)
ProgressFn = Callable[[str, int, int | None], None]


def no_progress(description: str, completed: int, total: int | None) -> None:
    """The default: report nothing."""
