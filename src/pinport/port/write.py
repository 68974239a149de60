"""`pinport port --write DIR`: the proposed files and one patch, written outside the plugin tree."""

from __future__ import annotations

from pathlib import Path

from ..errors import PinportError
from .plan import FileProposal

PATCH_NAME = "port.patch"


def write_proposals(proposals: list[FileProposal], plugin_root: Path, write_dir: Path) -> tuple[str, ...]:
    """Write each proposed file at `DIR/<its plugin path>` and all diffs to `DIR/port.patch`.

    The plugin tree is never touched: a DIR inside it is refused. Returns the paths written,
    relative to DIR.
    """
    target = write_dir.expanduser().resolve()
    root = plugin_root.resolve()
    if target == root or target.is_relative_to(root):
        raise PinportError(f"{write_dir}: --write must name a directory outside the plugin tree ({root})")
    written = []
    try:
        for proposal in proposals:
            path = target / proposal.path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(x + "\n" for x in proposal.after), encoding="utf-8")
            written.append(proposal.path)
        target.mkdir(parents=True, exist_ok=True)
        (target / PATCH_NAME).write_text("".join(line for p in proposals for line in p.diff()), encoding="utf-8")
    except OSError as exc:
        raise PinportError(f"{write_dir}: cannot write ({exc.strerror})") from None
    written.append(PATCH_NAME)
    return tuple(written)
