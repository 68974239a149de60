"""Options every command shares, declared once so `--cache-dir` and `--no-progress` read the same everywhere.

Commands that take the three inputs get `--cache-dir` through `input_options`; `common_options`
adds `--no-progress`, and `cache_options` gives `--cache-dir` to a command without those inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

cache_dir_option = click.option(
    "--cache-dir", type=click.Path(file_okay=False, path_type=Path),
    help="where releases and the index are cached [default: the user cache, or $PINPORT_CACHE_DIR]")
no_progress_option = click.option("--no-progress", is_flag=True, help="no progress bars")
docs_url_option = click.option(
    "--docs-url", metavar="URL",
    help="sarif: a published copy of pinport's docs/ for helpUri/informationUri "
         "[default: setting docs-url, else the docs shipped with pinport, as file://]")


def common_options(func: Callable) -> Callable:
    return no_progress_option(func)


def cache_options(func: Callable) -> Callable:
    return cache_dir_option(no_progress_option(func))
