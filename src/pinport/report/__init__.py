"""Renderers from a ScanResult to text; the CLI picks one by name and decides where it goes."""

from __future__ import annotations

from collections.abc import Callable

from pinport.errors import ConfigError
from pinport.findings import ScanResult
from pinport.report.github import render_github
from pinport.report.html import render_html
from pinport.report.json import render_json
from pinport.report.markdown import render_markdown
from pinport.report.sarif import render_sarif
from pinport.report.text import render_text

__all__ = ["RENDERERS", "render", "render_github", "render_html", "render_json", "render_markdown", "render_sarif", "render_text"]

# Format name -> pure renderer. Each returns the whole document ending in a newline and prints nothing.
RENDERERS: dict[str, Callable[[ScanResult], str]] = {
    "text": render_text,
    "json": render_json,
    "sarif": render_sarif,
    "markdown": render_markdown,
    "github": render_github,
    "html": render_html,  # without the scan's models: snippets only (the CLI passes excerpts and ports)
}


def render(result: ScanResult, fmt: str, *, docs_url: str = "") -> str:
    """Render `result` in the named format, so callers never import a renderer module directly;
    `docs_url` is where SARIF's helpUri/informationUri point (the `docs-url` setting)."""
    try:
        renderer = RENDERERS[fmt]
    except KeyError:
        known = ", ".join(RENDERERS)
        raise ConfigError(f"unknown report format {fmt!r} (known: {known})") from None
    if renderer is render_sarif:
        return render_sarif(result, docs_url=docs_url)
    return renderer(result)
