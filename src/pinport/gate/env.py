"""The environment the gate runs in: a cached venv per (host, version, Python), or the user's own.

A made environment lives at `<cache>/envs/<dist>-<version>-py<X.Y>/` and is built in place
(a venv cannot move): `python -m venv`, then that venv's own pip installs `dist==version`
with pip's own configuration (index, find-links, constraints), then `pinport-env.json` is
written last. A directory without that marker, or whose interpreter no longer runs or no
longer has the host at that version, is half-built or broken and is built again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import PinportError
from ..sources.cache import Cache

ENV_KIND = "envs"
MARKER = "pinport-env.json"
FORMAT = 1
Log = Callable[[str], None]

# Run by the environment's interpreter: its version and the host's, read from metadata only.
_PROBE = (
    "import importlib.metadata as m, json, sys\n"
    "try:\n    v = m.version(sys.argv[1])\nexcept m.PackageNotFoundError:\n    v = None\n"
    "print(json.dumps({'python': '%d.%d.%d' % sys.version_info[:3], 'host': v,"
    " 'executable': sys.executable}))\n"
)


class EnvError(PinportError):
    """The gate's environment cannot be made or used."""


@dataclass(frozen=True)
class GateEnv:
    """An interpreter to run the gate with, and what is known about it."""

    python: Path
    python_version: str
    host_version: str | None  # the host distribution's version installed there, None if absent
    path: Path | None = None  # the made venv, None for a user's interpreter
    built: bool = False  # built (or rebuilt) by this run
    seconds: float = 0.0  # spent making it


def probe_python(python: str | Path, dist: str) -> dict:
    """What an interpreter is and which version of `dist` it has; raises EnvError if it cannot run."""
    try:
        done = subprocess.run([str(python), "-c", _PROBE, dist], capture_output=True, text=True,
                              timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvError(f"cannot run {python}: {getattr(exc, 'strerror', None) or exc}") from None
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise EnvError(f"cannot run {python}: {last}")
    try:
        return json.loads(lines[-1])
    except ValueError:
        raise EnvError(f"cannot run {python}: unexpected output") from None


def use_python(python: str | Path, dist: str) -> GateEnv:
    """The user's own interpreter, unchanged; the gate only reads and runs in it."""
    path = Path(python).expanduser()
    if not path.exists() and shutil.which(str(python)):
        path = Path(shutil.which(str(python)))  # type: ignore[arg-type]
    info = probe_python(path, dist)
    return GateEnv(path, info["python"], info["host"])


def env_name(dist: str, version: str, python_version: str) -> str:
    major_minor = ".".join(python_version.split(".")[:2])
    return f"{dist}-{version}-py{major_minor}"


def _venv_python(root: Path) -> Path:
    return root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _read_marker(root: Path) -> dict | None:
    try:
        data = json.loads((root / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == FORMAT else None


def _usable(root: Path, dist: str, version: str, requirements: Sequence[str]) -> dict | None:
    """The marker of a complete environment that still works, else None (build it again)."""
    marker = _read_marker(root)
    if marker is None or marker.get("host") != dist or marker.get("version") != version:
        return None
    if not set(requirements) <= set(marker.get("requirements", ())):
        return None
    try:
        info = probe_python(_venv_python(root), dist)
    except EnvError:
        return None
    return marker if info["host"] == version else None


def make_env(dist: str, version: str, *, cache: Cache, extra: Sequence[str] = ("pytest",),
             base_python: str = sys.executable, log: Log = lambda line: None) -> GateEnv:
    """Reuse or build the cached venv with `dist==version` (and `extra`, e.g. pytest for collection)."""
    base = probe_python(base_python, dist)
    name = env_name(dist, version, base["python"])
    requirements = [f"{dist}=={version}", *extra]
    root = cache.entry_dir(ENV_KIND, name)
    started = time.perf_counter()
    with cache.lock(ENV_KIND, name, lambda description, done, total: log(description)):
        marker = _usable(root, dist, version, requirements)
        if marker is not None:
            return GateEnv(_venv_python(root), marker["python"], version, root)
        if root.exists():
            log(f"rebuilding {root} (half-built or broken)")
            shutil.rmtree(root, ignore_errors=True)
        log(f"creating {root}")
        _run([base_python, "-m", "venv", str(root)], f"cannot create a venv at {root}", log)
        python = _venv_python(root)
        _run([str(python), "-m", "pip", "install", "--progress-bar", "off", *requirements],
             f"pip could not install {' '.join(requirements)} into {root}", log)
        info = probe_python(python, dist)
        if info["host"] != version:
            raise EnvError(f"{root}: pip installed {dist} {info['host']}, not {version}")
        _write_marker(root, {"format": FORMAT, "host": dist, "version": version, "python": info["python"],
                             "requirements": requirements, "base": base["executable"],
                             "seconds": round(time.perf_counter() - started, 1)})
    return GateEnv(python, info["python"], version, root, built=True, seconds=time.perf_counter() - started)


def _write_marker(root: Path, data: dict) -> None:
    staging = root / f".{MARKER}.tmp"
    staging.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    os.replace(staging, root / MARKER)


def _run(command: list[str], failure: str, log: Log) -> None:
    """Run one step, passing its output to `log` line by line; the last error line on failure."""
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    except OSError as exc:
        raise EnvError(f"{failure}: {exc.strerror}") from None
    tail: list[str] = []
    assert process.stdout is not None
    for line in process.stdout:
        line = line.rstrip()
        if line:
            log(line)
            tail = [*tail[-40:], line]
    if process.wait() != 0:
        errors = [t for t in tail if t.startswith("ERROR")] or tail or ["no output"]
        raise EnvError(f"{failure}: {errors[-1].removeprefix('ERROR: ')}")
