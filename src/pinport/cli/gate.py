"""`pinport gate`: the no-GPU gate with the real host installed (a cached venv, or the user's own).

Exit codes: 0 every step passed (or could not run, and said why) and no finding at or above the
failing severity, 1 a step failed or findings, 2 bad input or no usable environment.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..config import url
from ..errors import ConfigError, PinportError
from ..findings import Severity
from ..gate import environment, render_gate, run_gate
from ..report import RENDERERS
from ..scan import scan_models
from .inputs import input_options, resolve_inputs
from .options import docs_url_option
from .progress import progress_reporter
from .terminal import make_console, print_report, report_width

_PIP_SHOWN = ("Collecting", "Downloading", "Installing", "Successfully", "creating", "rebuilding", "waiting")


@click.command("gate")
@input_options
@click.option("--make-env", "make_env_", is_flag=True,
              help="create (or reuse) a cached venv with the host at NEW, installed by pip with its own configuration")
@click.option("--python", "python", metavar="PATH",
              help="run the gate with this interpreter (an environment you already have); nothing is installed")
@click.option("--format", "fmt", type=click.Choice(sorted(RENDERERS)), default="text", show_default=True,
              help="report format")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="write the report to FILE instead of standard output")
@click.option("--fail-on", type=click.Choice([s.value for s in Severity]),
              help="lowest severity that makes the exit code 1 [default: error]")
@click.option("--no-progress", is_flag=True, help="no progress output")
@docs_url_option
@click.pass_context
def gate_command(ctx: click.Context, make_env_: bool, python: str | None, fmt: str, output: Path | None,
                 fail_on: str | None, no_progress: bool, docs_url: str | None, **inputs: object) -> None:
    """Import every plugin module, bootstrap it and verify its patches in a real host environment.

    The plugin runs only in a subprocess of that environment's interpreter, from its own tree
    (never installed); each missing module, name or attribute is stubbed so one run lists them all.
    """
    if make_env_ == (python is not None):
        raise click.UsageError("give --make-env or --python PATH (one of them)")
    if python is not None and not inputs.get("new_spec") and not inputs.get("new_tree"):
        inputs["new_spec"] = f"installed:{python}"

    def log(line: str) -> None:
        if not no_progress and line.startswith(_PIP_SHOWN + ("gate:",)):
            click.echo(f"pinport: {line}", err=True)

    try:
        docs_url = url(docs_url or "", "--docs-url")  # bad input is said before anything is fetched
        with progress_reporter(enabled=not no_progress) as progress:
            resolved = resolve_inputs(progress=progress, **inputs)  # type: ignore[arg-type]
            models = resolved.load_models(progress)
        settings = resolved.settings
        static = scan_models(models, settings)
        if make_env_ and not resolved.new.version:
            raise ConfigError("--make-env needs NEW as a release version (--new 0.33.0)")
        env = environment(settings.host_dist, cache=resolved.cache, version=resolved.new.version, python=python,
                          log=log)
        plugin = resolved.plugin
        result = run_gate(plugin.root, env, settings, models.plugin, static=static,
                          project_root=plugin.project_root or plugin.root, new_label=resolved.new.label, log=log)
    except PinportError as exc:
        click.echo(f"pinport: error: {exc}", err=True)
        ctx.exit(2)
    console = make_console()
    text = render_gate(result, fmt, width=report_width(console) if fmt == "text" and output is None else None,
                       docs_url=docs_url or settings.docs_url)
    if output is not None:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            click.echo(f"pinport: error: cannot write {output}: {exc.strerror}", err=True)
            ctx.exit(2)
        click.echo(f"pinport: wrote {fmt} gate report to {output} ({len(result.report.findings)} findings)", err=True)
    elif fmt == "text":
        print_report(text, console)  # colour as rich decides (NO_COLOR, FORCE_COLOR, TERM=dumb)
    else:
        click.echo(text, nl=False)
    threshold = Severity(fail_on or settings.fail_on).rank
    ctx.exit(1 if result.failed or any(f.level.rank <= threshold for f in result.report.findings) else 0)
