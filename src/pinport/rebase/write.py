"""The one place `pinport rebase --apply` writes a plugin file (switchable to the byte-exact edit module)."""

from __future__ import annotations

from pathlib import Path

from ..errors import PinportError


def write_text(root: Path, rel: str, before: str, after: str) -> None:
    """Replace `rel`'s text, only if it still holds `before` (what was planned against)."""
    path = root / rel
    try:
        current = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PinportError(f"{rel}: cannot read ({exc})") from None
    if current != before:
        raise PinportError(f"{rel}: changed on disk while the rebase ran; run again")
    try:
        path.write_bytes(after.encode("utf-8"))
    except OSError as exc:
        raise PinportError(f"{rel}: cannot write ({exc.strerror})") from None
