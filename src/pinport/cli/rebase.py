"""`pinport rebase`: the whole rebase that needs no GPU — base, stops, pins, safe fixes, documents.

Exit codes: 0 no error finding left open, 1 error findings remain, 2 bad input or a refused
tree (`pinport: error: ...`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from ..findings import Severity
from ..rebase import RebaseOptions, render_summary, run_rebase, write_rebase_documents
from .progress import progress_reporter


@click.command("rebase")
@click.option("--plugin", "plugin_spec", metavar="SPEC",
              help="plugin: a checkout, REPO@REF or NAME==VERSION [default: the checkout here, else the "
                   "built-in job]")
@click.option("--old", "old_spec", metavar="VERSION", help="host OLD [default: the chosen base's pin]")
@click.option("--new", "new_spec", metavar="VERSION", help="host NEW [default: the newest release]")
@click.option("--old-tree", metavar="DIR", help="host OLD's sources from a directory or REPO@REF")
@click.option("--new-tree", metavar="DIR", help="host NEW's sources from a directory or REPO@REF (with --new)")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="where the four documents go [default: ./rebase/ in a checkout, else a temporary folder]")
@click.option("--apply", "apply_", is_flag=True,
              help="edit the checkout: pins, safe fixes, clean merges (needs a clean git tree)")
@click.option("--branch", is_flag=True, help="first create and check out rebase/<host>_v<NN> at the chosen base")
@click.option("--allow-dirty", is_flag=True, help="with --apply: edit even with uncommitted changes or outside git")
@click.option("--gate", is_flag=True, help="with --apply: then run the no-GPU gate on the edited tree "
              "(`pinport gate`; a cached env with the host at NEW unless --gate-python)")
@click.option("--gate-python", metavar="PATH", help="with --gate: run it with this interpreter (nothing installed)")
@click.option("--allow-downgrade", is_flag=True, help="plan a move to a NEW older than OLD (refused otherwise)")
@click.option("--no-stops", is_flag=True, help="skip scanning the releases between OLD and NEW")
@click.option("--profile", help="built-in settings profile (e.g. arctic_inference)")
@click.option("--host", "host", help="host package import name [default: vllm]")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path),
              help="where releases and the index are cached [default: the user cache]")
@click.option("--no-progress", is_flag=True, help="no progress bars")
@click.pass_context
def rebase_command(ctx: click.Context, plugin_spec: str | None, old_spec: str | None, new_spec: str | None,
                   old_tree: str | None, new_tree: str | None, out_dir: Path | None, apply_: bool, branch: bool, allow_dirty: bool, gate: bool,
                   gate_python: str | None, allow_downgrade: bool, no_stops: bool,
                   profile: str | None, host: str | None, cache_dir: Path | None, no_progress: bool) -> None:
    """Plan the rebase to NEW (and with --apply, start it): base choice, stops, pins, safe fixes,
    REBASE_REPORT.md, REBASE_PLAN.md, REBASE_TEST.md and EVOLUTION.md."""
    if allow_dirty and not apply_:
        raise click.UsageError("--allow-dirty only makes sense with --apply")
    if gate_python and not gate:
        raise click.UsageError("--gate-python only makes sense with --gate")
    options = RebaseOptions(plugin_spec, old_spec, new_spec, old_tree, new_tree, apply_, branch, allow_dirty,
                            gate or bool(gate_python), gate_python, not no_stops, profile, host, cache_dir,
                            allow_downgrade=allow_downgrade)
    with progress_reporter(enabled=not no_progress) as progress:
        rebase = run_rebase(options, progress)
    if out_dir is None:
        out_dir = rebase.repo_root / "rebase" if rebase.repo_root is not None and not rebase.default_job else \
            Path(tempfile.mkdtemp(prefix="pinport-rebase-"))
    written = write_rebase_documents(rebase, out_dir)
    click.echo(render_summary(rebase, written), nl=False)
    open_errors = [f for f in rebase.findings if f.level is Severity.ERROR and f.fingerprint not in rebase.done]
    gate_failed = False
    if rebase.gate is not None:
        from ..gate import render_gate

        click.echo(render_gate(rebase.gate, "text"), nl=False)
        gate_failed = rebase.gate.failed
    ctx.exit(1 if open_errors or gate_failed else 0)
