"""Where host and plugin source trees come from: a release, a directory, a git ref, an install."""

from __future__ import annotations

from pathlib import Path

from packaging.version import InvalidVersion, Version

from ..config import Settings, distribution
from ..errors import SourceNotFound
from .cache import Cache
from .directory import load_directory
from .git import is_git_spec, load_git, read_file_at
from .installed import load_installed
from .progress import ProgressFn, no_progress
from .registry import fetch_release, list_versions
from .tree import SourceTree

__all__ = [
    "Cache",
    "ProgressFn",
    "SourceTree",
    "check_host_spec",
    "check_plugin_spec",
    "fetch_release",
    "list_versions",
    "load_directory",
    "load_git",
    "load_host",
    "load_installed",
    "load_plugin",
    "no_progress",
    "read_file_at",
]

_HOST_SPECS = "a version, 'installed[:PYTHON]', a directory or REPO@REF"
_PLUGIN_SPECS = "a directory, REPO@REF or NAME==VERSION"


def _is_version(spec: str) -> bool:
    try:
        Version(spec)
    except InvalidVersion:
        return False
    return True


def check_host_spec(spec: str) -> None:
    """Raise the error `load_host` would for a spec of no known form, fetching nothing."""
    if spec == "installed" or spec.startswith("installed:"):
        python = spec.partition(":")[2]
        if python and not Path(python).expanduser().exists():
            raise SourceNotFound(f"host '{spec}': no interpreter {python}")
        return
    if not (is_git_spec(spec) or _is_version(spec) or Path(spec).expanduser().is_dir()):
        raise SourceNotFound(f"host '{spec}' is not {_HOST_SPECS}")


def check_plugin_spec(spec: str) -> None:
    """Raise the error `load_plugin` would for a malformed spec, fetching nothing."""
    if is_git_spec(spec) or Path(spec).expanduser().is_dir():
        return
    name, sep, version = (part.strip() for part in spec.partition("=="))
    if not (sep and name and version):
        raise SourceNotFound(f"plugin '{spec}' is not {_PLUGIN_SPECS}")
    distribution(name, f"plugin '{spec}': the name")
    if not _is_version(version):
        raise SourceNotFound(f"plugin '{spec}': '{version}' is not a valid version")


def load_host(
    spec: str, settings: Settings, *, cache: Cache, progress: ProgressFn = no_progress
) -> SourceTree:
    """The host tree a command-line spec names: "0.26.0", "installed[:PYTHON]", DIR or REPO@REF."""
    check_host_spec(spec)
    if spec == "installed" or spec.startswith("installed:"):
        return load_installed(settings.host, spec.partition(":")[2] or None)
    if is_git_spec(spec):
        return load_git(spec, settings.host, cache, progress)
    if _is_version(spec):
        return fetch_release(
            settings.host_dist,
            spec,
            cache=cache,
            prefer="wheel",
            packages=(settings.host,),
            progress=progress,
        )
    if Path(spec).expanduser().is_dir():
        return load_directory(Path(spec), settings.host)
    raise SourceNotFound(f"host '{spec}' is not {_HOST_SPECS}")


def load_plugin(
    spec: str, settings: Settings | None, *, cache: Cache, progress: ProgressFn = no_progress
) -> SourceTree:
    """The plugin tree a spec names: its repo directory, REPO@REF, or NAME==VERSION (sdist first).

    The package is `settings.plugin_package`, else discovered (tests, docs … excluded).
    """
    check_plugin_spec(spec)
    package = settings.plugin_package if settings else ""
    if is_git_spec(spec):
        return load_git(spec, package or None, cache, progress)
    if Path(spec).expanduser().is_dir():
        return load_directory(Path(spec), package or None)
    name, sep, version = spec.partition("==")
    if sep and name.strip() and version.strip():
        return fetch_release(
            name.strip(),
            version.strip(),
            cache=cache,
            prefer="sdist",
            packages=(package,) if package else None,
            progress=progress,
        )
    raise SourceNotFound(f"plugin '{spec}' is not {_PLUGIN_SPECS}")
