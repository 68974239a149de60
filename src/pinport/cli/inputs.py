"""The three inputs every analysing command shares (plugin, OLD, NEW), with their defaults."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click
from packaging.version import Version

from ..config import Settings, load_settings
from ..errors import ConfigError, SourceNotFound
from ..model.index import IndexCache
from ..pins import no_pin_error, read_pin
from ..plugin.project import is_plugin_checkout
from ..scan import Models, host_history, load_models
from ..sources import (
    Cache,
    SourceTree,
    check_host_spec,
    check_plugin_spec,
    list_versions,
    load_host,
    load_plugin,
)
from ..sources.progress import ProgressFn
from .options import cache_dir_option

# The built-in default job: the newest ArcticInference release against the newest vLLM it was
# not yet ported to. Fixed versions, so the default run is reproducible.
DEFAULT_PLUGIN = "arctic-inference==0.3.0"
DEFAULT_NEW = "0.33.0"


@dataclass
class Inputs:
    plugin: SourceTree
    old: SourceTree
    new: SourceTree
    settings: Settings
    cache: Cache

    def index_cache(self) -> IndexCache:
        return IndexCache.in_cache(self.cache)

    def load_models(self, progress: ProgressFn) -> Models:
        return load_models(self.plugin, self.old, self.new, self.settings, cache=self.index_cache(),
                           progress=progress, history=host_history(self.old, self.settings, self.cache))


def input_options(func: Callable) -> Callable:
    """The options that choose the plugin, OLD and NEW, the settings profile and the cache."""
    options = [
        click.option("--plugin", "plugin_spec", metavar="SPEC",
                     help=f"plugin: a directory, REPO@REF or NAME==VERSION [default: {DEFAULT_PLUGIN}]"),
        click.option("--old", "old_spec", metavar="SPEC",
                     help="host OLD: a version, a directory, REPO@REF or 'installed' [default: the plugin's pin]"),
        click.option("--new", "new_spec", metavar="SPEC",
                     help="host NEW: same forms as --old [default: the newest release]"),
        click.option("--old-tree", "old_tree", type=click.Path(), help="host OLD from a directory (alias of --old DIR)"),
        click.option("--new-tree", "new_tree", type=click.Path(), help="host NEW from a directory (alias of --new DIR)"),
        click.option("--profile", help="built-in settings profile (e.g. arctic_inference)"),
        click.option("--host", "host", help="host package import name [default: vllm]"),
        cache_dir_option,
        click.option("--verify-cache", is_flag=True,
                     help="hash every cached file and corpus, not only those whose size or mtime changed"),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _newest(dist: str) -> str:
    versions = [v for v in list_versions(dist) if not Version(v).is_prerelease]
    if not versions:
        raise SourceNotFound(f"no releases of {dist} found on the package index")
    return versions[-1]


def resolve_inputs(*, plugin_spec: str | None, old_spec: str | None, new_spec: str | None,
                   old_tree: str | None, new_tree: str | None, profile: str | None, host: str | None,
                   cache_dir: Path | None, progress: ProgressFn, verify_cache: bool = False) -> Inputs:
    """Fetch or locate the three trees; OLD defaults to the plugin's own pin.

    Every spec and setting is checked before anything is fetched or indexed.
    """
    cache = Cache(cache_dir, verify=verify_cache)
    if plugin_spec is None and _in_plugin_checkout(host):
        plugin_spec = "."  # run inside a plugin's checkout: scan that checkout
    default_job = plugin_spec is None
    plugin_spec = plugin_spec or DEFAULT_PLUGIN
    if old_spec and old_tree or new_spec and new_tree:
        raise ConfigError("give --old or --old-tree (and --new or --new-tree), not both")
    old_spec = old_spec or old_tree
    new_spec = new_spec or new_tree
    check_plugin_spec(plugin_spec)
    for spec in (old_spec, new_spec):
        if spec:
            check_host_spec(spec)
    overrides = {"profile": profile, "host": host}
    local = Path(plugin_spec).expanduser()
    early = load_settings(local, overrides) if local.is_dir() else load_settings(None, overrides)
    plugin = load_plugin(plugin_spec, early if local.is_dir() else None, cache=cache, progress=progress)
    settings = load_settings(plugin.project_root or plugin.root, overrides)
    if not old_spec:
        root = plugin.project_root or plugin.root
        read, listing = (lambda rel: read_inside(root, rel)), (lambda: _listing(root))
        versions = functools.cache(lambda: tuple(list_versions(settings.host_dist)))  # one registry listing for both
        old_spec = read_pin(settings, read, listing, versions)
        if not old_spec:
            raise no_pin_error(plugin.label, settings, read, listing, versions)
    if not new_spec:
        new_spec = DEFAULT_NEW if default_job else _newest(settings.host_dist)
    old = load_host(old_spec, settings, cache=cache, progress=progress)
    new = load_host(new_spec, settings, cache=cache, progress=progress)
    return Inputs(plugin, old, new, settings, cache)


def _in_plugin_checkout(host: str | None) -> bool:
    here = Path.cwd()
    try:
        settings = load_settings(here, {"host": host} if host else None)
    except ConfigError:  # a broken pyproject.toml here is not a plugin checkout to scan
        return False
    return is_plugin_checkout(here, settings)


def _listing(root: Path) -> list[str]:
    """Files at the project root and one level down (requirements/, *.dist-info/), for pin reading."""
    out = []
    for pattern in ("*", "*/*"):
        out += [p.relative_to(root).as_posix() for p in root.glob(pattern)
                if p.is_file() and p.suffix in ("", ".txt", ".in", ".md", ".rst")]
    return sorted(out)


def read_inside(root: Path, rel: str) -> str | None:
    """A pin source's file, only when it lies inside the plugin tree (symlinks resolved)."""
    base = root.resolve()
    path = (base / rel).resolve()
    if not path.is_relative_to(base) or not path.is_file():
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
