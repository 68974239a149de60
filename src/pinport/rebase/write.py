"""The one place `pinport rebase --apply` writes a plugin file: through the byte-exact edit module."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ..edits import AppliedEdit, Edit, SourceFile, edit_file, line_edits
from ..errors import PinportError


def write_edits(root: Path, rel: str, edits: Sequence[Edit],
                expect: Callable[[bytes], bool] | None = None) -> tuple[AppliedEdit, ...]:
    """Make whole-line edits to `rel`; every byte outside them stays (line endings, encoding),
    the file is verified after writing and restored when it is not the plan."""
    result = edit_file(root / rel, edits, label=rel, expect_bytes=expect)
    if result.refused:
        raise PinportError(f"{rel}: {result.refused}")
    return result.edits


def write_text(root: Path, rel: str, before: str, after: str) -> tuple[AppliedEdit, ...]:
    """Turn `rel` from `before` into `after`, only if it still holds `before`."""
    path = root / rel
    lines = SourceFile.parse(path, before.encode("utf-8")).lines
    new = SourceFile.parse(path, after.encode("utf-8")).lines
    return write_edits(root, rel, line_edits(lines, new, label=rel),
                       lambda data: data.decode("utf-8", "replace") == before)
