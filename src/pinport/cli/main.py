"""The command line: arguments, progress bars, output files, exit codes. The only code that prints.

Exit codes: 0 no finding at or above the failing severity, 1 findings, 2 bad input or failure
(one line `pinport: error: ...`, never a traceback; `--debug` shows it for internal errors),
130 interrupted (SIGINT), 143 terminated (SIGTERM).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import click

from .. import __version__
from ..accept import Baseline, baseline_document
from ..api import run_scan
from ..checks import CHECKS, select_checks
from ..config import Settings, url, with_code_flags
from ..errors import ConfigError, PinportError, note_context
from ..findings import Finding, ScanResult, Severity
from ..port import MergeUnavailable
from ..report import RENDERERS, render
from ..report.excerpts import HtmlContext, build_html_context
from ..report.html import render_html
from ..report.markdown import render_markdown_summary
from ..report.rules import rule, rule_text, rules
from ..report.rules import write_docs as write_rule_docs
from ..report.text import render_statistics, render_text
from ..scan import Models
from .inputs import input_options
from .options import common_options, docs_url_option
from .progress import progress_reporter
from .terminal import color_option, make_console, print_report, report_width

EXIT_FINDINGS, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_TERMINATED = 1, 2, 130, 143


def _exit_code(result: ScanResult, fail_on: str) -> int:
    threshold = Severity(fail_on).rank
    return EXIT_FINDINGS if any(f.level.rank <= threshold for f in result.findings) else 0


def _codes(value: str) -> tuple[str, ...]:
    return tuple(c for c in (part.strip() for part in value.split(",")) if c)


def _accept_options(func: Callable) -> Callable:
    """Choosing which findings count: by code, by file, by inline comment (always on), by baseline."""
    options = [
        click.option("--select", default="", metavar="CODES",
                     help="report only these codes or prefixes, comma-separated (replaces `select`)"),
        click.option("--extend-select", default="", metavar="CODES", help="codes added to `select`"),
        click.option("--ignore", default="", metavar="CODES", help="codes or prefixes never reported"),
        click.option("--per-file-ignores", multiple=True, metavar="GLOB:CODES",
                     help="accept CODES in plugin files matching GLOB (repeatable)"),
        click.option("--baseline", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
                     help="accept the findings listed in FILE; report only new ones"),
        click.option("--write-baseline", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
                     help="write every reported finding to FILE as the accepted baseline"),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _output_options(func: Callable) -> Callable:
    func = _accept_options(func)
    options = [
        click.option("--format", "fmt", type=click.Choice(list(RENDERERS)), default="text", show_default=True,
                     help="report format"),
        click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
                     help="write the report to FILE instead of standard output"),
        click.option("--fail-on", type=click.Choice([s.value for s in Severity]),
                     help="lowest severity that makes the exit code 1 [default: error]"),
        click.option("--min-severity", type=click.Choice([s.value for s in Severity]),
                     help="show only findings at or above this severity (the exit code still counts all)"),
        click.option("--status", "statuses", type=click.Choice(["drift", "latent"]), multiple=True,
                     help="show only drift (introduced by the move) or latent findings (repeatable)"),
        click.option("--statistics", is_flag=True, help="counts by finding code instead of the findings"),
        click.option("--show-info", is_flag=True,
                     help="text/markdown/github: list context findings (plain additions, implementations on "
                          "platforms the plugin refuses) with the others instead of in an appendix"),
        click.option("--summary", "summary_only", is_flag=True,
                     help="markdown: a compact report that fits a PR comment (tables and one line per finding)"),
        click.option("--full-report", metavar="URL",
                     help="markdown --summary: where the full report is (linked from the summary)"),
        docs_url_option,
        color_option,
    ]
    for option in reversed(options):
        func = option(func)
    return common_options(func)


def _shown(result: ScanResult, min_severity: str | None, statuses: tuple[str, ...]) -> ScanResult:
    """The findings the reader asked to see; the exit code is decided before this."""
    keep = [f for f in result.findings
            if (min_severity is None or f.level.rank <= Severity(min_severity).rank)
            and (not statuses or f.status.value in statuses)]
    hidden = len(result.findings) - len(keep)
    if hidden:
        click.echo(f"pinport: {hidden} findings not shown (--min-severity/--status)", err=True)
    return replace(result, findings=tuple(keep))


_APPENDIX_FORMATS = ("text", "markdown", "github")  # the ones people read; machine formats keep everything


def _split_appendix(result: ScanResult) -> tuple[ScanResult, tuple[Finding, ...]]:
    """The main list, and the context findings a check marked for the appendix (info only)."""
    context = tuple(f for f in result.findings if f.extra.get("appendix") and f.level is Severity.INFO)
    return replace(result, findings=tuple(f for f in result.findings if f not in context)), context


def _markdown_appendix(findings: tuple[Finding, ...]) -> str:
    lines = ["", "## Appendix: context", "",
             "Info only: plain additions and implementations on platforms the plugin refuses.", ""]
    lines += [f"- `{f.plugin.path}:{f.plugin.line}` {f.code} {f.message} ({f.extra['appendix']})" if f.plugin
              else f"- {f.code} {f.message}" for f in findings]
    return "\n".join(lines) + "\n"


def check_output_path(output: Path | None) -> None:
    """Refuse an -o FILE that could not be written, before any work starts."""
    if output is None:
        return
    parent = output.parent if str(output.parent) else Path(".")
    if output.is_dir():
        raise PinportError(f"cannot write {output}: it is a directory")
    if not parent.is_dir():
        raise PinportError(f"cannot write {output}: no directory {parent}")
    if not os.access(output if output.exists() else parent, os.W_OK):
        raise PinportError(f"cannot write {output}: permission denied")


def _run(checks: tuple[str, ...], fmt: str, output: Path | None, fail_on: str | None, no_progress: bool,
         select: str, extend_select: str, ignore: str, per_file_ignores: tuple[str, ...],
         baseline: Path | None, write_baseline: Path | None, min_severity: str | None,
         statuses: tuple[str, ...], statistics: bool, summary_only: bool, full_report: str | None, color: str,
         docs_url: str | None = None, show_fixed: bool = False, show_info: bool = False,
         **inputs: object) -> int:
    # bad input is said before anything is fetched: output files, check names, codes, the baseline
    docs_url = url(docs_url or "", "--docs-url")
    check_output_path(output)
    check_output_path(write_baseline)
    select_checks(checks)
    code_flags = {"select": _codes(select), "extend_select": _codes(extend_select), "ignore": _codes(ignore),
                  "per_file_ignores": per_file_ignores}
    with_code_flags(Settings(), **code_flags)
    specs = dict(inputs)
    if specs.get("old_spec") and specs.get("old_tree") or specs.get("new_spec") and specs.get("new_tree"):
        raise ConfigError("give --old or --old-tree (and --new or --new-tree), not both")
    with progress_reporter(enabled=not no_progress) as progress:
        run = run_scan(specs["plugin_spec"], old=specs["old_spec"] or specs["old_tree"],
                       new=specs["new_spec"] or specs["new_tree"], cache_dir=specs["cache_dir"],
                       profile=specs["profile"], host=specs["host"], checks=checks, baseline=baseline,
                       show_fixed=show_fixed, verify_cache=bool(specs.get("verify_cache")), progress=progress,
                       **code_flags)
    result, models, settings = run.result, run.models, run.settings
    if write_baseline is not None:
        _write(write_baseline, baseline_document(result))
        click.echo(f"pinport: wrote baseline {write_baseline} "
                   f"({len(result.findings) + len(result.baselined)} findings accepted)", err=True)
        result = Baseline(frozenset(f.fingerprint for f in result.findings)).apply(result)
    code = _exit_code(result, fail_on or settings.fail_on)
    shown = _shown(result, min_severity, statuses)
    appendix: tuple[Finding, ...] = ()
    if fmt in _APPENDIX_FORMATS and not show_info and not statistics:
        shown, appendix = _split_appendix(shown)
    console = make_console(color)
    try:
        if statistics:
            text = render_statistics(shown)
        elif fmt == "text":
            text = render_text(shown, width=report_width(console) if output is None else None)
        elif fmt == "html":
            text = render_html(shown, _html_context(models, settings, shown))
        elif fmt == "markdown" and summary_only:
            text = render_markdown_summary(shown, full_report=full_report or "")
        else:
            text = render(shown, fmt, docs_url=docs_url or settings.docs_url)
        if appendix and fmt == "markdown":
            text += _markdown_appendix(appendix)
    except Exception as exc:
        note_context(exc, f"rendering the {fmt} report")
        raise
    if appendix and fmt != "markdown":
        click.echo(f"pinport: {len(appendix)} context findings (plain additions, implementations on platforms "
                   "the plugin refuses) not listed: --show-info lists them", err=True)
    if output is not None:
        _write(output, text)
        click.echo(f"pinport: wrote {fmt} report to {output} ({len(shown.findings)} findings)", err=True)
    elif fmt == "text" or statistics:
        print_report(text, console)
    else:
        click.echo(text, nl=False)
    return code


def _html_context(models: Models, settings: Settings, result: ScanResult) -> HtmlContext:
    try:
        return build_html_context(models, settings, result)
    except MergeUnavailable as exc:  # no git: the report still shows the code, without merge proposals
        click.echo(f"pinport: {exc}; the HTML report has no merge proposals", err=True)
        return build_html_context(models, settings, result, ports=False)


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise PinportError(f"cannot write {path}: {exc.strerror}") from None


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="pinport")
@click.option("--debug", is_flag=True, expose_value=False,
              help="show the traceback of an internal error (accepted after any command too)")
def cli() -> None:
    """Find where a monkeypatching plugin breaks when its pinned host library moves, before anything runs."""


@cli.command()
@input_options
@_output_options
@click.option("--checks", "check_names", metavar="NAMES", default="",
              help=f"comma-separated checks to run [default: all: {', '.join(c.name for c in CHECKS)}]")
@click.option("--show-fixed", is_flag=True, help="also list findings that held on OLD and the move fixes")
def scan(check_names: str, **options: object) -> None:
    """Run every check: the plugin against host OLD and NEW (no arguments: the built-in default job)."""
    names = tuple(n.strip() for n in check_names.split(",") if n.strip())
    sys.exit(_run(names, **options))  # type: ignore[arg-type]


def _single_check_command(name: str, description: str, drift: tuple[int, ...]) -> click.Command:
    numbers = ", ".join(f"#{d}" for d in drift)

    @input_options
    @_output_options
    def command(**options: object) -> None:
        sys.exit(_run((name,), **options))  # type: ignore[arg-type]

    command.__doc__ = f"Only the {name} check ({numbers or 'no drift number'}): {description}."
    return click.command(name)(command)


for _check in CHECKS:
    cli.add_command(_single_check_command(_check.name, _check.description, _check.drift))


@cli.command("checks")
def list_checks() -> None:
    """List the checks, the drift numbers they cover and the finding codes they emit."""
    for check in CHECKS:
        numbers = ", ".join(f"#{d}" for d in check.drift) or "-"
        click.echo(f"{check.name:<14} {numbers:<14} {check.description}")
        for kind in check.kinds:
            click.echo(f"    {kind.code}  {kind.severity.value:<7} {kind.name}")


@cli.command("rule")
@click.argument("code", required=False)
@click.option("--all", "all_", is_flag=True, help="every code, one line each")
@click.option("--write-docs", type=click.Path(file_okay=False, path_type=Path), metavar="DIR", hidden=True,
              help="regenerate DIR/rules/ (the repository's docs) from the rule texts")
def rule_command(code: str | None, all_: bool, write_docs: Path | None) -> None:
    """Explain a finding code: what it means, why it breaks, an example, how to fix it."""
    if write_docs is not None:
        for rel in write_rule_docs(write_docs):
            click.echo(f"pinport: wrote {write_docs / rel}", err=True)
        return
    if code is None or all_:
        for r in rules().values():
            click.echo(f"{r.kind.code}  {r.kind.name:<32} {r.summary}")
        return
    click.echo(rule_text(rule(code)), nl=False)


def _register_optional_commands() -> None:
    from .gate import gate_command
    from .ledger import ledger_command
    from .port import port_command
    from .rebase import rebase_command

    cli.add_command(gate_command, "gate")
    cli.add_command(ledger_command, "ledger")
    cli.add_command(port_command, "port")
    cli.add_command(rebase_command, "rebase")


_register_optional_commands()


class Terminated(BaseException):
    """SIGTERM arrived: unwinds like Ctrl-C, so workers and files are cleaned up on the way out."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated


@contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """While the CLI runs, SIGTERM raises Terminated (only the main thread may install handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _take_debug(argv: list[str]) -> bool:
    """`--debug` anywhere before `--` (every command takes it): show tracebacks of internal errors."""
    end = argv.index("--") if "--" in argv else len(argv)
    found = "--debug" in argv[:end]
    argv[:end] = [a for a in argv[:end] if a != "--debug"]
    return found or os.environ.get("PINPORT_DEBUG", "") not in ("", "0")


def _one_line(text: str) -> str:
    return "; ".join(part.strip() for part in text.strip().splitlines() if part.strip())


def _usage_error(exc: click.UsageError) -> str:
    message = _one_line(exc.format_message())
    command = exc.ctx.command_path if exc.ctx is not None else "pinport"
    return f"{message} (see '{command} --help')"


def _internal_error(exc: BaseException) -> str:
    """An unexpected exception, worded as one line: what broke, while doing what, where to look."""
    where = (getattr(exc, "__notes__", None) or [""])[0]
    detail = _one_line(str(exc)) or "(no message)"
    if isinstance(exc, RecursionError | MemoryError):
        detail = f"{detail} (an input too large or too deeply nested)"
    while_ = f" while {where}" if where else ""
    return (f"internal error{while_}: {type(exc).__name__}: {detail[:300]}; "
            "run again with --debug for the traceback")


def main(argv: list[str] | None = None) -> int:
    """Run the CLI in-process and return its exit code (tests call this).

    Every way out is here: a finding is exit 1, anything else that stops the run is one line
    `pinport: error: ...` and exit 2, an interruption 130 (SIGINT) or 143 (SIGTERM).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    debug = _take_debug(args)
    try:
        with _sigterm_unwinds():
            code = cli.main(args=args, prog_name="pinport", standalone_mode=False)
    except PinportError as exc:
        return _error(_one_line(str(exc)))
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("pinport: interrupted", err=True)
        return EXIT_INTERRUPTED
    except Terminated:
        click.echo("pinport: terminated", err=True)
        return EXIT_TERMINATED
    except click.UsageError as exc:
        return _error(_usage_error(exc))
    except click.ClickException as exc:
        return _error(_one_line(exc.format_message()))
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else _error(exc.code)
    except BrokenPipeError:  # `pinport scan | head`: the reader left; nothing more to say
        _silence_stdout()
        return EXIT_ERROR
    except Exception as exc:  # a bug or an input no rule foresaw: still one line and exit 2
        if debug:
            traceback.print_exc()
        return _error(_internal_error(exc))
    return code if isinstance(code, int) else 0  # a command's ctx.exit(N) comes back as its return


def _error(message: str) -> int:
    click.echo(f"pinport: error: {message}", err=True)
    return EXIT_ERROR


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def entry() -> None:
    """The console-script entry point."""
    sys.exit(main())
