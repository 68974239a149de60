"""`pinport port`: three-way merge proposals for every mirrored method and forked file.

Exit codes: 0 every proposal merged cleanly and verified (or nothing to port), 1 conflicts remain
or a proposal failed verification,
2 bad input or a refused tree (`pinport: error: ...`).
"""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import PinportError
from ..port import UNVERIFIED, port_json, port_markdown, render_port, run_port
from .inputs import input_options, resolve_inputs
from .progress import progress_reporter


@click.command("port")
@input_options
@click.option("--write", "write_dir", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="write the proposed files and port.patch into DIR (outside the plugin tree)")
@click.option("--apply", "apply_", is_flag=True,
              help="edit the plugin in place, one method or file at a time (needs a clean git tree)")
@click.option("--allow-dirty", "--force", "allow_dirty", is_flag=True,
              help="with --apply: edit even with uncommitted changes or outside git")
@click.option("--no-diffs", is_flag=True, help="with --apply: list the edits without their diffs")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True,
              help="the report: text, Markdown (for the rebase PR) or JSON")
@click.option("--no-progress", is_flag=True, help="no progress bars")
@click.pass_context
def port_command(ctx: click.Context, write_dir: Path | None, apply_: bool, allow_dirty: bool, no_diffs: bool,
                 fmt: str, no_progress: bool, **inputs: object) -> None:
    """Merge each upstream OLD -> NEW change into the plugin's copies (git merge-file, diff3 markers).

    Without --write or --apply, only lists each copy with its merge status (a dry run).
    """
    if write_dir is not None and apply_:
        raise click.UsageError("give --write DIR or --apply, not both")
    if allow_dirty and not apply_:
        raise click.UsageError("--allow-dirty only makes sense with --apply")
    try:
        with progress_reporter(enabled=not no_progress) as progress:
            resolved = resolve_inputs(progress=progress, **inputs)  # type: ignore[arg-type]
            models = resolved.load_models(progress)
        report = run_port(models, resolved.settings, write_dir=write_dir, apply=apply_, allow_dirty=allow_dirty)
    except PinportError as exc:
        click.echo(f"pinport: error: {exc}", err=True)
        ctx.exit(2)
    text = port_json(report) if fmt == "json" else port_markdown(report) if fmt == "markdown" else \
        render_port(report, diffs=not no_diffs)
    click.echo(text, nl=False)
    ctx.exit(1 if report.conflicts or report.counts()[UNVERIFIED] else 0)
