"""`pinport ledger`: every past pin side by side, probe values per pin, anomaly flags."""

from __future__ import annotations

from pathlib import Path

import click

from ..config import Settings, load_settings
from ..errors import NetworkUnavailable, PinportError, VersionNotFound
from ..ledger import AutoProbes, Column, Probe, build_ledger, default_probes, load_probes
from ..ledger.auto import SurfaceProbes
from ..ledger.host import HostSources, registry_host
from ..ledger.render import render_json, render_markdown, render_text
from ..model.index import IndexCache
from ..pins import ReadFile
from ..sources import Cache
from .options import cache_options
from .progress import progress_reporter

_RENDER = {"text": render_text, "json": render_json, "markdown": render_markdown}


def _probes(repo: Path, settings: Settings, probes_path: Path | None) -> tuple[Probe, ...]:
    """--probes FILE, else the settings' probes file (relative to the plugin), else the profile's."""
    if probes_path is not None:
        return load_probes(probes_path)
    if settings.probes_file:
        return load_probes(repo / settings.probes_file)
    return default_probes(settings.profile)


def _auto_probes(derive: SurfaceProbes) -> AutoProbes:
    """The derivation, with its errors saying which part failed and how to leave it out."""

    def run(column: Column, read: ReadFile) -> list[Probe]:
        try:
            return derive(column, read)
        except (VersionNotFound, NetworkUnavailable):
            raise  # the host check's own failure, already worded for the user
        except PinportError as exc:
            raise type(exc)(f"auto probes: {exc} (or pass --no-auto)") from None

    return run


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
    "--auto/--no-auto",
    default=True,
    show_default=True,
    help="Add probes derived from the patch surface at the newest pin (signatures, aliases, imports).",
)
@click.option(
    "--host-check",
    is_flag=True,
    help="Compare the upstream counterpart of each probe that has one (auto signatures, "
    "host-file probes) at the last two pins; may download host releases once into the cache.",
)
@click.option(
    "--cell-width",
    type=click.IntRange(min=4),
    default=18,
    show_default=True,
    help="Text format: longest value shown per cell.",
)
@cache_options
@click.pass_context
def ledger_command(
    ctx: click.Context,
    repo: Path,
    probes_path: Path | None,
    branch_pattern: str | None,
    no_worktree: bool,
    fmt: str,
    write_path: Path | None,
    auto: bool,
    host_check: bool,
    cell_width: int,
    cache_dir: Path | None,
    no_progress: bool,
) -> None:
    """Compare probe values across every pin the plugin had; exit 1 when a flag is raised."""
    try:
        settings = load_settings(repo if repo.is_dir() else None)
        cache = Cache(cache_dir)
        index_cache = IndexCache.in_cache(cache)
        with progress_reporter(enabled=not no_progress) as progress:
            host: HostSources | None = None
            if host_check:
                host = registry_host(
                    settings, cache=cache, index_cache=index_cache, progress=progress
                )
            derive = SurfaceProbes(repo, settings, host=host, index_cache=index_cache)
            ledger = build_ledger(
                repo,
                settings,
                _probes(repo, settings, probes_path),
                branch_pattern=branch_pattern,
                include_worktree=not no_worktree,
                auto_probes=_auto_probes(derive) if auto else None,
                host=host,
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
