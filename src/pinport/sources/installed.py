"""Trees from an installed package, located by reading the environment's files: nothing of it runs.

Starting the analysed environment's interpreter would run its `.pth` files and site hooks, so the
package is found from files alone: `pyvenv.cfg` and the interpreter's place give the prefix and
`lib/pythonX.Y/site-packages`; `.pth` files are read as text (their path lines followed, their
`import` lines never run; setuptools' editable finders are read for their path mapping);
`*.dist-info` gives the version and METADATA.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import sys
from pathlib import Path

from packaging.utils import canonicalize_name

from ..errors import SourceNotFound
from .tree import SourceTree, scan_files

_VERSION = re.compile(r"python(\d+\.\d+)$")
_MAX_PTH_BYTES = 1 << 20


def load_installed(package: str, python: str | None = None) -> SourceTree:
    """The installed `package` of `python` (default: this interpreter), with version and METADATA."""
    interpreter = python or sys.executable
    paths = _search_paths(python)
    root = _locate(package, paths)
    if root is None:
        raise SourceNotFound(f"{package} is not installed for {interpreter}")
    version, metadata = _distribution(package, root, paths)
    where = python or "installed"
    return SourceTree(
        root=root,
        label=f"{package} {version} ({where})" if version else f"{package} ({where})",
        package=package,
        version=version,
        files=scan_files(root, (package,)),
        metadata=metadata,
    )


def _search_paths(python: str | None) -> list[Path]:
    """Where the interpreter imports from, in order: PYTHONPATH, then its site directories."""
    here = {"", ".", os.getcwd()}  # a checkout in the working directory must not shadow the install
    extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p not in here]
    if python is None:  # this interpreter: its own path, already expanded by its site module
        return _unique([Path(p) for p in (*extra, *sys.path) if p not in here])
    located = shutil.which(python) if os.sep not in python else python  # `installed:python3.11`
    return _unique([*map(Path, extra), *_with_pth(_site_dirs(Path(located or python).expanduser()))])


def _site_dirs(python: Path) -> list[Path]:
    if not python.exists():
        raise SourceNotFound(f"no interpreter at {python}")
    prefix = python.parent.parent if python.parent.name in ("bin", "Scripts") else python.parent
    config = _pyvenv(prefix)
    version = _python_version(python, prefix, config)
    dirs = _prefix_site(prefix, version, venv=bool(config))
    if config and config.get("include-system-site-packages", "").lower() == "true" and config.get("home"):
        dirs += _prefix_site(Path(config["home"]).parent, version, venv=False)
    found = [d for d in dirs if d.is_dir()]
    if not found:
        raise SourceNotFound(f"no site-packages found for {python} (looked in {prefix})")
    return found


def _pyvenv(prefix: Path) -> dict[str, str]:
    try:
        text = (prefix / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    pairs = (line.partition("=") for line in text.splitlines() if "=" in line)
    return {key.strip().lower(): value.strip() for key, _, value in pairs}


def _python_version(python: Path, prefix: Path, config: dict[str, str]) -> str:
    """X.Y from pyvenv.cfg, the interpreter's name (python3.11), or the one lib/pythonX.Y there."""
    for text in (config.get("version_info", ""), config.get("version", "")):
        if match := re.match(r"(\d+\.\d+)", text):
            return match.group(1)
    for name in (python.name, python.resolve().name):
        if match := _VERSION.search(name):
            return match.group(1)
    candidates = sorted(p.name[6:] for p in (prefix / "lib").glob("python[0-9]*.[0-9]*") if p.is_dir())
    if len(candidates) == 1:
        return candidates[0]
    raise SourceNotFound(f"cannot tell which Python {python} is (no pyvenv.cfg, no pythonX.Y in its name)")


def _prefix_site(prefix: Path, version: str, *, venv: bool) -> list[Path]:
    dirs = [prefix / lib / f"python{version}" / "site-packages" for lib in ("lib", "lib64")]
    if not venv:  # a system interpreter (Debian's dist-packages, /usr/local)
        dirs += [prefix / "lib" / f"python{version}" / "dist-packages", prefix / "lib" / "python3" / "dist-packages",
                 prefix / "local" / "lib" / f"python{version}" / "dist-packages"]
    return dirs


def _with_pth(site_dirs: list[Path]) -> list[Path]:
    """Each site directory followed by the directories its `.pth` files name (read, never run)."""
    out: list[Path] = []
    for site in site_dirs:
        out.append(site)
        for pth in sorted(site.glob("*.pth")):
            out.extend(_pth_paths(site, pth))
        for finder in sorted(site.glob("__editable___*_finder.py")):
            out.extend(_finder_paths(finder))
    return out


def _pth_paths(site: Path, pth: Path) -> list[Path]:
    try:
        text = pth.read_bytes()[:_MAX_PTH_BYTES].decode("utf-8", errors="replace")
    except OSError:
        return []
    lines = (line.strip() for line in text.splitlines())
    paths = [Path(os.path.abspath(site / line)) for line in lines
             if line and not line.startswith(("#", "import ", "import\t"))]  # `import` lines: never run
    return [p for p in paths if p.is_dir()]


def _finder_paths(finder: Path) -> list[Path]:
    """The package directories a setuptools editable finder maps to: its MAPPING literal, parsed."""
    try:
        tree = ast.parse(finder.read_bytes()[:_MAX_PTH_BYTES])
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and target.id == "MAPPING" and node.value is not None:
            try:
                mapping = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                return []
            if isinstance(mapping, dict):
                return [Path(v).parent for v in mapping.values() if isinstance(v, str) and Path(v).is_dir()]
    return []


def _locate(package: str, paths: list[Path]) -> Path | None:
    """The first search directory holding `package/` (with sources) or `package.py`."""
    for base in paths:
        candidate = base / package
        if candidate.is_dir() and not candidate.is_symlink() and (
                (candidate / "__init__.py").is_file() or any(candidate.glob("*.py"))):
            return base
        if (base / f"{package}.py").is_file():
            return base
    return None


def _distribution(package: str, root: Path, paths: list[Path]) -> tuple[str | None, str]:
    """(version, METADATA text) of the distribution that installed `package` at `root`, if any."""
    wanted = canonicalize_name(package)
    infos = [info for base in _unique([root, *paths]) for info in sorted(base.glob("*.dist-info"))]
    named = [i for i in infos if canonicalize_name(i.name.removesuffix(".dist-info").rpartition("-")[0]) == wanted]
    for info in [*named, *(i for i in infos if i not in named)]:
        metadata = _read(info / "METADATA")
        if not metadata:
            continue
        owns = info in named or package in _read(info / "top_level.txt").split() or any(
            line.startswith((f"{package}/", f"{package}.py,")) for line in _read(info / "RECORD").splitlines())
        if owns:
            return _field(metadata, "Version") or None, metadata
    return None, ""


def _field(metadata: str, key: str) -> str:
    for line in metadata.splitlines():
        if not line.strip():
            break  # the headers end at the first blank line
        if line.lower().startswith(f"{key.lower()}:"):
            return line.split(":", 1)[1].strip()
    return ""


def _read(path: Path) -> str:
    try:
        return path.read_bytes()[: 8 << 20].decode("utf-8", errors="replace")
    except OSError:
        return ""


def _unique(paths: list[Path]) -> list[Path]:
    return list(dict.fromkeys(paths))
