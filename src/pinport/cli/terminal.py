"""Printing reports to a terminal: rich's console decides colour and width, the renderers stay plain.

`--color auto` (the default) leaves the choice to rich, which honours NO_COLOR, FORCE_COLOR and
TERM=dumb and colours only a terminal; `always` and `never` override all of them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import click
from rich.console import Console
from rich.highlighter import RegexHighlighter
from rich.text import Text
from rich.theme import Theme

COLOR_CHOICES = ("auto", "always", "never")

_THEME = Theme({
    "pinport.error": "bold red", "pinport.warning": "yellow", "pinport.info": "blue",
    "pinport.code": "bold", "pinport.drift": "magenta", "pinport.latent": "dim",
    "pinport.heading": "bold underline", "pinport.host": "cyan", "pinport.fix": "green",
})


class ReportHighlighter(RegexHighlighter):
    """Styles the fixed parts of a text report: finding heads, section and file headings, evidence labels."""

    base_style = "pinport."
    highlights = [
        r"(?P<code>PP\d{4}) (?:(?P<error>error)|(?P<warning>warning)|(?P<info>info)) "
        r"\[(?:(?P<drift>drift)|(?P<latent>latent)|\w+)\]",
        r"(?m)^(?P<heading>(?:drift|latent): .*|\S+\.pyi?|host-wide)$",
        r"(?m)^ +(?P<host>(?:OLD|NEW) host:)",
        r"(?m)^ +(?P<fix>fix:)",
    ]


def make_console(color: str = "auto", *, stderr: bool = False) -> Console:
    """A console on standard output (or error) for the chosen `--color`."""
    file = sys.stderr if stderr else sys.stdout
    if color == "always":
        return Console(file=file, theme=_THEME, force_terminal=True, no_color=False,
                       color_system="standard", highlight=False)
    if color == "never":
        return Console(file=file, theme=_THEME, color_system=None, no_color=True, highlight=False)
    return Console(file=file, theme=_THEME, highlight=False)


def print_report(text: str, console: Console) -> None:
    """The plain report, highlighted when the console does colour; never re-wrapped (the renderer
    already folded it to `console.width` when that is a terminal)."""
    if console.color_system is None or console.no_color:  # NO_COLOR: no styling at all, not just no hues
        click.echo(text, nl=False, file=console.file)
        return
    styled = ReportHighlighter()(Text(text))
    console.print(styled, end="", soft_wrap=True)


def report_width(console: Console) -> int | None:
    """The width to fold a text report to: the terminal's, or none for files and pipes."""
    return console.width if console.is_terminal else None


def color_option(func: Callable) -> Callable:
    return click.option("--color", type=click.Choice(COLOR_CHOICES), default="auto", show_default=True,
                        help="colour the text report (auto honours NO_COLOR, FORCE_COLOR, TERM=dumb)")(func)
