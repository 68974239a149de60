"""Phase 3, automated: three-way merge proposals for every mirrored method and forked file.

`run_port` takes the already-loaded models of a scan, merges each upstream OLD -> NEW change
into the plugin's copy (`git merge-file`), and optionally writes the proposals to a directory
(`--write DIR`, the plugin tree untouched) or edits the plugin in place (`--apply`, only on a
clean git tree). It returns a PortReport and prints nothing; `render_port` words it.
"""

from __future__ import annotations

from ..edits import DirtyTree
from .apply import AppliedChange
from .merge import MergeResult, MergeUnavailable, merge3
from .plan import CLEAN, CONFLICT, GONE, UNCHANGED, FileProposal, PortItem
from .render import render_port
from .run import PortReport, plan_port, run_port
from .write import PATCH_NAME

__all__ = [
    "CLEAN", "CONFLICT", "GONE", "PATCH_NAME", "UNCHANGED", "AppliedChange", "DirtyTree", "FileProposal",
    "MergeResult", "MergeUnavailable", "PortItem", "PortReport", "merge3", "plan_port", "render_port",
    "run_port",
]
