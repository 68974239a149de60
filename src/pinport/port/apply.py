"""`pinport port --apply`: edit the plugin in place, one method or file at a time, on a clean git tree.

A clean tree means every edit can be reviewed with `git diff` and undone with `git checkout`;
a dirty one is refused unless the caller allows it. The edits go through `pinport.edits`: each
replaces exactly the lines of one copy, every other byte of the file (encoding, line endings,
form feeds, final newline) stays as it was, the file is checked to still hold what was analysed,
and it is re-read and compared with the plan after writing (rolled back on a mismatch).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..edits import AppliedEdit, DirtyTree, Edit, edit_file, require_clean_tree
from ..sources.cache import default_root
from ..sources.tree import SourceTree, hash_bytes
from .merge import MARKERS
from .plan import FileProposal


@dataclass(frozen=True)
class AppliedChange:
    """One copy edited in place: which, and the edit as made (lines before and after, where)."""

    unit: str
    kind: str  # "mirror" or "fork"
    edit: AppliedEdit
    conflict_lines: tuple[int, ...]  # lines of `<<<<<<<` markers in the file as finally written

    @property
    def path(self) -> str:
        return self.edit.path


def check_clean(tree: SourceTree, paths: list[str], allow_dirty: bool) -> None:
    """Refuse a tree --apply must not edit: a downloaded release, or (unless allowed) a git tree
    with uncommitted changes, files git does not track, or no git at all."""
    root = tree.root.resolve()
    if tree.version is not None or root.is_relative_to(default_root().resolve()):
        raise DirtyTree(f"{tree.label}: a downloaded release, not a working copy; use --write DIR instead")
    require_clean_tree(root, paths, allow_dirty=allow_dirty)


def apply_proposals(proposals: list[FileProposal], tree: SourceTree, *,
                    allow_dirty: bool = False) -> tuple[list[AppliedChange], list[str]]:
    """Edit each proposal's copies into the plugin files; (changes made, files skipped with why)."""
    check_clean(tree, [p.path for p in proposals], allow_dirty)
    changes: list[AppliedChange] = []
    skipped: list[str] = []
    for proposal in proposals:
        edits = [Edit(i.copy.plugin.start, i.copy.plugin.end, i.proposal,
                      proposal.before[i.copy.plugin.start - 1:i.copy.plugin.end], i.copy.unit)
                 for i in proposal.items]
        known = tree.files.get(proposal.path)
        result = edit_file(tree.root / proposal.path, edits, label=proposal.path,
                           expect_bytes=(lambda data, h=known: hash_bytes(data) == h) if known else None)
        if not result.ok:
            skipped.append(f"{proposal.path}: {result.refused}")
            continue
        for item, made in zip(proposal.items, result.edits, strict=True):
            markers = tuple(made.new_start + n for n, line in enumerate(made.after) if line.startswith(MARKERS[0]))
            changes.append(AppliedChange(item.copy.unit if item.copy.kind == "mirror" else "<module>",
                                         item.copy.kind, made, markers))
    return changes, skipped
