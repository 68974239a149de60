"""EVOLUTION.md for the rebase: the ledger over every past pin, with NEW as its last column."""

from __future__ import annotations

from pathlib import Path

from ..errors import PinportError
from ..ledger import build_ledger, default_probes, load_probes
from ..ledger.render import render_markdown
from .run import Rebase

PROCEDURE_PROBES = "evolution_probes.json"  # the probe file the maintainers' procedure keeps


def _probes(rebase: Rebase, root: Path):
    settings = rebase.settings
    if settings.probes_file:
        return load_probes(root / settings.probes_file)
    if (root / PROCEDURE_PROBES).is_file():
        return load_probes(root / PROCEDURE_PROBES)
    return default_probes(settings.profile)


def render_evolution(rebase: Rebase) -> str:
    """The ledger in Markdown; outside git (or without any probe) a short note saying why not."""
    root = rebase.repo_root
    if root is None:
        return (f"# Evolution ledger\n\n{rebase.plugin_label} is not a git checkout: the ledger reads every past "
                "pin from git history and rebase branches. Run `pinport rebase` in a clone of the plugin.\n")
    try:
        ledger = build_ledger(root, rebase.settings, _probes(rebase, root), planned=rebase.new)
    except PinportError as exc:
        return f"# Evolution ledger\n\nNo ledger: {exc}.\n"
    return render_markdown(ledger)
