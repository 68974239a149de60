"""Run the port: plan every merge, then write the proposals or apply them (see the package doc)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from ..config import Settings
from ..findings import Finding
from ..scan import Models
from .apply import AppliedChange, apply_proposals
from .plan import (
    CLEAN,
    CONFLICT,
    GONE,
    UNCHANGED,
    UNVERIFIED,
    FileProposal,
    PortItem,
    file_proposals,
    plan_item,
)
from .verify import verify_items
from .write import write_proposals


@dataclass(frozen=True)
class PortReport:
    """Every copy with its merge status, the files proposed, and what was written or applied."""

    plugin_label: str
    old_label: str
    new_label: str
    items: tuple[PortItem, ...]
    proposals: tuple[FileProposal, ...]
    write_dir: str = ""
    written: tuple[str, ...] = ()  # paths relative to write_dir
    applied: tuple[AppliedChange, ...] = ()
    skipped: tuple[str, ...] = ()  # files --apply left alone, with the reason
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict, compare=False)

    def counts(self) -> dict[str, int]:
        """clean / conflict / unchanged / gone, and how many clean merges change nothing (ported)."""
        out = {CLEAN: 0, CONFLICT: 0, UNCHANGED: 0, GONE: 0, UNVERIFIED: 0}
        for item in self.items:
            out[item.status] += 1
        out["already_ported"] = sum(1 for i in self.items if i.status == CLEAN and not i.changes)
        out["verified"] = sum(1 for i in self.items if i.verified)
        return out

    @property
    def conflicts(self) -> int:
        return sum(i.conflicts for i in self.items)

    @property
    def line_conflicts(self) -> int:
        """Conflict blocks git's line merge alone leaves (before the statement and token merges)."""
        return sum(i.line_conflicts for i in self.items)


def plan_port(models: Models, settings: Settings) -> tuple[PortItem, ...]:
    """Merge every mirror and fork of the plugin (found against OLD) with its upstream change."""
    facts = models.facts(settings)  # the scan's copies and origins, when these models were scanned
    copies, origins = facts.copies, facts.origins
    labels = ("plugin", models.old.label, models.new.label)
    return tuple(plan_item(c, models.plugin.index, models.old.index, labels,
                           origins.get((c.plugin.path, c.plugin.start)), models.index_cache) for c in copies.copies)


def verified_port(models: Models, settings: Settings,
                  findings: tuple[Finding, ...] | None = None) -> tuple[PortItem, ...]:
    """Every copy's proposal, each clean one verified or marked unverified with why (`port.verify`).
    `findings` (the scan of these models) spares one scan."""
    return verify_items(plan_port(models, settings), models, settings, before=findings)


def applicable_merges(items: tuple[PortItem, ...]) -> tuple[PortItem, ...]:
    """Of `verified_port`'s items, the ones `rebase --apply` may apply unreviewed: clean, changing
    something, and verified (the proposed file parses, and re-scanning it adds no finding to the
    merged unit and clears the ones the merge was meant to fix)."""
    return tuple(i for i in items if i.status == CLEAN and i.changes and i.verified)


def verified_merges(models: Models, settings: Settings,
                    findings: tuple[Finding, ...] | None = None) -> tuple[PortItem, ...]:
    """The proposals `rebase --apply` may apply unreviewed (see `applicable_merges`)."""
    return applicable_merges(verified_port(models, settings, findings))


def run_port(models: Models, settings: Settings, *, write_dir: Path | None = None, apply: bool = False,
             allow_dirty: bool = False, verify: bool = True,
             findings: tuple[Finding, ...] | None = None) -> PortReport:
    """Propose the port of every mirror and fork; write the proposals to `write_dir`, or apply them.

    `findings` (the scan of the plugin as it is) spares verification one scan. Raises PinportError (DirtyTree, MergeUnavailable, an unwritable DIR) below the CLI.
    """
    started = time.perf_counter()
    items = plan_port(models, settings)
    planned = time.perf_counter()
    if verify:
        items = verify_items(items, models, settings, before=findings)
    verified = time.perf_counter()
    proposals = file_proposals(items, models.plugin.index)
    tree = models.plugin.index.tree
    written: tuple[str, ...] = ()
    applied: list[AppliedChange] = []
    skipped: list[str] = []
    if write_dir is not None:
        written = write_proposals(proposals, tree.root, write_dir)
    if apply:
        applied, skipped = apply_proposals(proposals, tree, allow_dirty=allow_dirty)
    done = time.perf_counter()
    return PortReport(models.plugin.label, models.old.label, models.new.label, items, tuple(proposals),
                      str(write_dir) if write_dir is not None else "", written, tuple(applied), tuple(skipped),
                      done - started, {"merge": planned - started, "verify": verified - planned, "output": done - verified})
