"""`pinport ledger`: every past pin side by side, probe values per pin, anomaly flags."""

from __future__ import annotations

from pathlib import Path

import click

from ..config import Settings, load_settings
from ..errors import PinportError
from ..ledger import Probe, build_ledger, default_probes, load_probes
from ..ledger.render import render_json, render_markdown, render_text

_RENDER = {"text": render_text, "json": render_json, "markdown": render_markdown}


def _probes(repo: Path, settings: Settings, probes_path: Path | None) -> tuple[Probe, ...]:
    """--probes FILE, else the settings' probes file (relative to the plugin), else the profile's."""
    if probes_path is not None:
        return load_probes(probes_path)
    if settings.probes_file:
        return load_probes(repo / settings.probes_file)
    return default_probes(settings.profile)


@click.command("ledger")
@click.argument("repo", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--probes",
    "probes_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Probes file (.toml or .json); default: probes-file setting, else the profile's set.",
)
@click.option(
    "--branches",
    "branch_pattern",
    metavar="PATTERN",
    help="Rebase branches to include, local and remote (default: rebase-branch-pattern).",
)
@click.option("--no-worktree", is_flag=True, help="Leave the working tree out.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(sorted(_RENDER)),
    default="text",
    show_default=True,
    help="Output format on stdout.",
)
@click.option(
    "--write",
    "write_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the Markdown ledger to this file (e.g. EVOLUTION.md).",
)
@click.option(
    "--cell-width",
    type=click.IntRange(min=4),
    default=18,
    show_default=True,
    help="Text format: longest value shown per cell.",
)
@click.pass_context
def ledger_command(
    ctx: click.Context,
    repo: Path,
    probes_path: Path | None,
    branch_pattern: str | None,
    no_worktree: bool,
    fmt: str,
    write_path: Path | None,
    cell_width: int,
) -> None:
    """Compare probe values across every pin the plugin had; exit 1 when a flag is raised."""
    try:
        settings = load_settings(repo) if repo.is_dir() else Settings()
        ledger = build_ledger(
            repo,
            settings,
            _probes(repo, settings, probes_path),
            branch_pattern=branch_pattern,
            include_worktree=not no_worktree,
        )
        if write_path is not None:
            try:
                write_path.write_text(render_markdown(ledger), encoding="utf-8")
            except OSError as exc:
                raise PinportError(f"{write_path}: cannot write ({exc.strerror})") from None
    except PinportError as exc:
        click.echo(f"pinport: error: {exc}", err=True)
        ctx.exit(2)
    output = render_text(ledger, cell_width=cell_width) if fmt == "text" else _RENDER[fmt](ledger)
    click.echo(output, nl=False)
    ctx.exit(1 if ledger.flags else 0)
