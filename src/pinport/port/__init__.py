"""Phase 3, automated: three-way merge proposals for every mirrored method and forked file.

`run_port` takes the already-loaded models of a scan, merges each upstream change into the
plugin's copy (`git merge-file`, from the release the copy was made from, retried statement by
statement and token by token where lines conflict), verifies every clean proposal by re-scanning
it, and optionally writes the proposals to a directory (`--write DIR`, the plugin tree untouched)
or edits the plugin in place (`--apply`, only on a clean git tree). It returns a PortReport and
prints nothing; `render_port` words it. `verified_merges` is what `rebase --apply` applies.
"""

from __future__ import annotations

from ..edits import DirtyTree
from .apply import AppliedChange
from .explain import Explanation, explain_conflicts
from .merge import MergeResult, MergeUnavailable, merge3
from .plan import CLEAN, CONFLICT, GONE, UNCHANGED, UNVERIFIED, FileProposal, PortItem
from .render import port_json, port_markdown, render_port
from .run import PortReport, applicable_merges, plan_port, run_port, verified_merges, verified_port
from .write import PATCH_NAME

__all__ = [
    "CLEAN", "CONFLICT", "GONE", "PATCH_NAME", "UNCHANGED", "UNVERIFIED", "AppliedChange", "DirtyTree",
    "Explanation", "FileProposal", "MergeResult", "MergeUnavailable", "PortItem", "PortReport", "applicable_merges",
    "explain_conflicts", "merge3", "plan_port", "port_json", "port_markdown", "render_port", "run_port",
    "verified_merges", "verified_port",
]
