"""The progress callback sources report through; the CLI turns it into a progress bar."""

from collections.abc import Callable

# (description, completed, total or None when unknown)
ProgressFn = Callable[[str, int, int | None], None]


def no_progress(description: str, completed: int, total: int | None) -> None:
    """The default: report nothing."""


# `completed` of a one-off message rather than a step of a bar ("waiting for the lock held by ..."):
# shown even where no bar is drawn (not a terminal, --no-progress), since it explains a wait.
NOTICE = -1
