"""Trees from a directory on disk: a repo root, a `src/` layout, or the package directory itself."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path

from packaging.utils import canonicalize_name

from ..errors import SourceNotFound
from .tree import SourceTree, scan_files

# top-level directories that are never the plugin's own package, even with an __init__.py
NOT_PACKAGES = frozenset(
    {
        "tests",
        "test",
        "docs",
        "doc",
        "benchmarks",
        "benchmark",
        "examples",
        "example",
        "build",
        "dist",
    }
)


def _project_name(base: Path) -> str:
    try:
        data = tomllib.loads((base / "pyproject.toml").read_text(encoding="utf-8-sig"))
    except (OSError, tomllib.TOMLDecodeError):
        return ""
    name = data.get("project", {}).get("name", "")
    return name if isinstance(name, str) else ""


def _is_namespace_package(path: Path) -> bool:
    """A PEP 420 namespace package: no __init__.py, but packages or modules a level or two below.

    (A folder of loose scripts is not one.)"""
    return any(p.is_file() for pattern in ("*/*.py", "*/*/*.py") for p in path.glob(pattern))


def discover_packages(base: Path, dist: str = "") -> tuple[str, ...]:
    """Top-level packages of a project (flat or `src/`), the one named like the project first.

    Namespace packages (PEP 420, no __init__.py) count too. `dist` is the distribution name when
    the caller knows it; otherwise pyproject.toml's.
    """
    wanted = canonicalize_name(dist or _project_name(base)).replace("-", "_")
    for root in (base, base / "src"):
        if not root.is_dir():
            continue
        names = sorted(
            p.name
            for p in root.iterdir()
            if p.is_dir()
            and not p.is_symlink()
            and p.name.isidentifier()
            and ((p / "__init__.py").is_file() or (p.name != "src" and _is_namespace_package(p)))
            and p.name not in NOT_PACKAGES
        )
        if names:
            return tuple(sorted(names, key=lambda n: n.lower() != wanted))
    return ()


def find_import_root(base: Path, package: str) -> Path | None:
    """The directory under which `package` imports: base itself or base/src."""
    for root in (base, base / "src"):
        if (root / package).is_dir() or (root / f"{package}.py").is_file():
            return root
    return None


def _locate(
    base: Path, package: str | None, label: str, dist: str = ""
) -> tuple[Path, tuple[str, ...]]:
    packages = (package,) if package else discover_packages(base, dist)
    if not packages:
        raise SourceNotFound(
            f"{label}: no Python package found (a top-level directory with __init__.py)"
        )
    root = find_import_root(base, packages[0])
    if root is None:
        raise SourceNotFound(f"{label}: no package '{packages[0]}' (looked in . and src/)")
    return root, packages


def load_directory(path: Path, package: str | None = None) -> SourceTree:
    """A tree read in place: `path` may be a repo root, hold `src/<package>`, or be the package.

    Without `package`, the project's own packages are discovered (tests, docs … excluded),
    or `path` itself is the package when it holds an `__init__.py`.
    """
    base = path.expanduser().resolve()
    if not base.is_dir():
        raise SourceNotFound(f"{path}: no such directory")
    if package in (None, "", base.name) and (base / "__init__.py").is_file():
        root, packages = base.parent, (base.name,)
    else:
        root, packages = _locate(base, package, str(path))
    return SourceTree(
        root=root,
        label=str(path),
        package=packages[0],
        files=scan_files(root, packages),
        project_root=base if root in (base, base / "src") else root,
    )


def select_packages(
    tree: SourceTree, packages: tuple[str, ...] | None, label: str, dist: str = ""
) -> SourceTree:
    """Narrow a cached whole-project tree to its package(s), reusing the stored hashes.

    `tree.root` is the project directory; the result's root is its import root (`src/` or itself),
    and its `project_root` stays what the cache stored.
    """
    if packages:
        root, _ = _locate(tree.root, packages[0], label)
    else:
        root, packages = _locate(tree.root, None, label, dist)
    prefix = root.relative_to(tree.root).as_posix()
    prefix = "" if prefix == "." else prefix + "/"
    files = {}
    for rel, digest in tree.files.items():
        if not rel.startswith(prefix):
            continue
        sub = rel[len(prefix) :]
        if sub.split("/", 1)[0] in packages or sub in {f"{p}.py" for p in packages}:
            files[sub] = digest
    return replace(tree, root=root, label=label, package=packages[0], files=files)
