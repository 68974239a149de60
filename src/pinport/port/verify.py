"""Every proposal verified before it is offered as clean (#15 part 4).

The clean proposals are written into a copy of the plugin tree (outside it; the plugin is never
touched), which is indexed and scanned against the same OLD and NEW. A proposal is verified when
its file parses, the scan finds nothing new in the merged unit (a finding whose identity the
plugin as it is does not have), and the findings the merge was meant to fix are gone: the
upstream change still pending (PP1201, PP0801 at warning) and members the copy used that NEW
dropped (PP1202, PP0802). Anything else marks the proposal, with the reason, and it is not clean.
"""

from __future__ import annotations

import ast
import shutil
import tempfile
import warnings
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from ..config import Settings
from ..findings import Finding, Severity
from ..model.index import load_index
from ..plugin.model import load_plugin_model
from ..scan import Models, repository_prefix, scan_models
from ..sources.tree import SourceTree, scan_files
from .plan import CLEAN, UNVERIFIED, FileProposal, PortItem, file_proposals

# What a merge of a copy is meant to fix: upstream hunks still pending, members NEW dropped.
MEANT_TO_FIX = frozenset({"PP1201", "PP0801", "PP1202", "PP0802"})


def _parses(lines: Iterable[str]) -> str:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse("\n".join(lines) + "\n")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return f"the proposed file does not parse ({type(exc).__name__}: {getattr(exc, 'msg', exc)})"
    return ""


def _in_unit(finding: Finding, item: PortItem) -> bool:
    site = finding.plugin
    if site is None or site.path != item.copy.plugin.path:
        return False
    if item.copy.kind == "fork":
        return True
    return site.unit == item.copy.unit or site.unit.startswith(item.copy.unit + ".")


def verify_items(items: tuple[PortItem, ...], models: Models, settings: Settings,
                 before: tuple[Finding, ...] | None = None) -> tuple[PortItem, ...]:
    """The items with each clean, changing proposal verified (`verified=True`) or marked with why not."""
    candidates = [i for i in items if i.status == CLEAN and i.changes]
    if not candidates:
        return items
    if before is None:
        before = scan_models(models, settings).findings
    proposals = file_proposals(tuple(candidates), models.plugin.index)
    problems: dict[tuple[str, int], str] = {}
    for proposal in proposals:
        problem = _parses(proposal.after)
        for item in proposal.items:
            if problem:
                problems[_key(item)] = problem
    after = _rescan([p for p in proposals if not any(_key(i) in problems for i in p.items)], models, settings)
    prefix = repository_prefix(models.plugin.index.tree)  # the scan names files as the repository does
    old_ids = {_under_root(f, prefix).identity for f in before}
    for item in candidates:
        if _key(item) in problems:
            continue
        added = [f for f in after if _in_unit(f, item) and f.identity not in old_ids and f.level != Severity.INFO]
        unfixed = [f for f in after if _in_unit(f, item) and f.code in MEANT_TO_FIX and f.level != Severity.INFO]
        if added:
            problems[_key(item)] = f"the merged code gains {added[0].code} at line {added[0].plugin.line}: " \
                                   f"{added[0].message}"
        elif unfixed:
            problems[_key(item)] = f"still {unfixed[0].code} after the merge: {unfixed[0].message}"
    keys = {_key(i) for i in candidates}
    return tuple(i if _key(i) not in keys else
                 replace(i, verified=True) if _key(i) not in problems else
                 replace(i, status=UNVERIFIED, verification=problems[_key(i)]) for i in items)


def _under_root(finding: Finding, prefix: str) -> Finding:
    """The finding with its plugin path under the import root, as the copy of the tree scans it."""
    site = finding.plugin
    if not prefix or site is None or not site.path.startswith(prefix):
        return finding
    return replace(finding, plugin=replace(site, path=site.path.removeprefix(prefix)))


def _key(item: PortItem) -> tuple[str, int]:
    return item.copy.plugin.path, item.copy.plugin.start


def _rescan(proposals: list[FileProposal], models: Models, settings: Settings) -> tuple[Finding, ...]:
    """The scan of a copy of the plugin tree with these proposals written into it."""
    if not proposals:
        return ()
    tree = models.plugin.index.tree
    with tempfile.TemporaryDirectory(prefix="pinport-verify-") as tmp:
        root = Path(tmp) / "plugin"
        shutil.copytree(tree.root, root, ignore=shutil.ignore_patterns(".git", "__pycache__"), symlinks=True)
        for proposal in proposals:
            (root / proposal.path).write_text("".join(x + "\n" for x in proposal.after), encoding="utf-8")
        proposed = SourceTree(root, tree.label, tree.package, None, scan_files(root, (tree.package,)))
        index = load_index(proposed, models.index_cache, sharing=models.plugin.index)  # its decoded summaries
        index.lend_from(models.plugin.index)  # unchanged files: the plugin's parsed trees and facts
        plugin = load_plugin_model(index, settings)
        # identities are compared: NEW's side alone; kept across runs (the same proposals next time)
        return scan_models(Models(plugin, models.old, models.new, models.history, models.index_cache),
                           settings, judge_old=False, stored=True).findings
