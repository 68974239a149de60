"""The one place `pinport rebase --apply` writes a plugin file: through the byte-exact edit module."""

from __future__ import annotations

from pathlib import Path

from ..edits import SourceFile, edit_file, line_edits
from ..errors import PinportError


def write_text(root: Path, rel: str, before: str, after: str) -> None:
    """Turn `rel` from `before` into `after` with whole-line edits, only if it still holds `before`.

    Every byte outside the changed lines stays as it was (line endings, encoding); the edit
    module re-reads and verifies the file, and restores it when the result is not the plan.
    """
    path = root / rel
    lines = SourceFile.parse(path, before.encode("utf-8")).lines
    new = SourceFile.parse(path, after.encode("utf-8")).lines
    result = edit_file(path, line_edits(lines, new, label=rel), label=rel,
                       expect_bytes=lambda data: data.decode("utf-8", "replace") == before)
    if result.refused:
        raise PinportError(f"{rel}: {result.refused}")
