"""`pinport rebase`: carry out every step of a rebase that needs no GPU.

base.py chooses the base (and creates the working branch), pins.py plans phase 0, fixes.py the
safe libcst fixes, stops.py scans the releases between OLD and NEW, run.py puts it together
(and applies it), documents.py and evolution.py write the four documents and the HTML report,
summary.py words the terminal output.
"""

from __future__ import annotations

from pathlib import Path

from .documents import HTML, KEEP, render_documents, render_html_report, write_documents
from .evolution import render_evolution
from .run import Rebase, RebaseOptions, run_rebase
from .summary import render_summary

__all__ = ["KEEP", "Rebase", "RebaseOptions", "render_summary", "run_rebase", "write_rebase_documents"]


def write_rebase_documents(rebase: Rebase, out: Path) -> list[Path]:
    """Render the four documents and the HTML report and write them into `out` (the kept parts survive)."""
    documents = render_documents(rebase, out, render_evolution(rebase))
    return write_documents({**documents, HTML: rebase.html or render_html_report(rebase)}, out)
