"""Trees from an installed package, located by the interpreter that has it, never imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ..errors import SourceNotFound
from .tree import SourceTree, scan_files

# Run by the target interpreter (this one or another): find_spec on a top-level name consults
# the finders only, so nothing of the package is imported. The working directory is dropped
# from sys.path so that a checkout under it does not shadow what is installed.
_PROBE = r"""
import importlib.metadata as md, importlib.util, json, os, sys
sys.path[:] = [p for p in sys.path if p not in ("", ".", os.getcwd())]
name = sys.argv[1]
try:
    spec = importlib.util.find_spec(name)
except (ImportError, ValueError):
    spec = None
out = {"found": spec is not None}
if spec is not None:
    out["locations"] = list(spec.submodule_search_locations or [])
    out["origin"] = spec.origin or ""
    dist = (md.packages_distributions().get(name) or [name])[0]
    try:
        meta = md.distribution(dist)
        out["version"], out["metadata"] = meta.version, meta.read_text("METADATA") or ""
    except md.PackageNotFoundError:
        out["version"], out["metadata"] = None, ""
print(json.dumps(out))
"""


def _probe(package: str, python: str) -> dict:
    try:
        done = subprocess.run(
            [python, "-c", _PROBE, package],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SourceNotFound(
            f"cannot run {python}: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        error = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise SourceNotFound(f"{python} could not look up {package}: {error}")
    try:
        return json.loads(lines[-1])
    except ValueError:
        raise SourceNotFound(f"{python} could not look up {package}: unexpected output") from None


def load_installed(package: str, python: str | None = None) -> SourceTree:
    """The installed `package` of `python` (default: this one), with version and METADATA."""
    interpreter = python or sys.executable
    found = _probe(package, interpreter)
    if not found.get("found"):
        raise SourceNotFound(f"{package} is not installed for {interpreter}")
    if found["locations"]:
        root = Path(found["locations"][0]).parent
    elif found["origin"].endswith(".py"):
        root = Path(found["origin"]).parent
    else:
        raise SourceNotFound(
            f"{package} for {interpreter} has no Python sources ({found['origin']})"
        )
    if not ((root / package).is_dir() or (root / f"{package}.py").is_file()):
        raise SourceNotFound(
            f"{package} for {interpreter} lives outside a '{package}' directory: {root}"
        )
    version = found.get("version")
    where = python or "installed"
    return SourceTree(
        root=root,
        label=f"{package} {version} ({where})" if version else f"{package} ({where})",
        package=package,
        version=version,
        files=scan_files(root, (package,)),
        metadata=found.get("metadata", ""),
    )
