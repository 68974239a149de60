"""Which packages of a project are the plugin: entry points first, then the packages that import the host.

Read from the project's own files, never run: `[project.entry-points]` in pyproject.toml, the
`entry_points` argument of `setup()` in setup.py (parsed), `[options.entry_points]` in setup.cfg,
and a wheel's `entry_points.txt`. The host's plugin groups come from its host profile
(`plugin-groups`: `vllm.general_plugins`, `vllm.platform_plugins`), plus any the settings name.
"""

from __future__ import annotations

import ast
import configparser
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..config import Settings
from ..errors import ConfigError
from ..model.index import CodeIndex
from ..pins import README, find_pins

NOT_PLUGIN = frozenset({"tests", "test", "docs", "doc", "benchmarks", "benchmark", "examples", "example",
                        "setup", "conftest", "tools", "scripts", "build", "dist"})


@dataclass(frozen=True)
class EntryPoint:
    group: str
    name: str
    value: str  # "module:attr" or "module"
    file: str

    @property
    def module(self) -> str:
        return self.value.partition(":")[0].strip()


def _text(root: Path, rel: str) -> str:
    try:
        return (root / rel).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return ""


def _from_pyproject(text: str) -> list[EntryPoint]:
    try:
        groups = tomllib.loads(text).get("project", {}).get("entry-points", {})
    except tomllib.TOMLDecodeError:
        return []
    if not isinstance(groups, dict):
        return []
    return [EntryPoint(group, name, value, "pyproject.toml")
            for group, table in groups.items() if isinstance(table, dict)
            for name, value in table.items() if isinstance(value, str)]


def _parse_lines(group: str, lines: Iterable[str], file: str) -> list[EntryPoint]:
    out = []
    for line in lines:
        name, sep, value = line.partition("=")
        if sep and name.strip() and value.strip():
            out.append(EntryPoint(group, name.strip(), value.strip(), file))
    return out


def _from_setup_py(text: str) -> list[EntryPoint]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    out: list[EntryPoint] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "entry_points" and isinstance(node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                    continue
                items = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
                lines = [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
                out += _parse_lines(key.value, (part for line in lines for part in line.splitlines()), "setup.py")
    return out


def _from_ini(text: str, file: str, section_prefix: str) -> list[EntryPoint]:
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    out: list[EntryPoint] = []
    if section_prefix:  # setup.cfg: groups are keys of [options.entry_points], values are line lists
        if parser.has_section(section_prefix):
            for group, lines in parser.items(section_prefix):
                out += _parse_lines(group, lines.splitlines(), file)
        return out
    for group in parser.sections():  # entry_points.txt: one section per group
        out += [EntryPoint(group, name, value, file) for name, value in parser.items(group)]
    return out


def read_entry_points(root: Path) -> list[EntryPoint]:
    """Every entry point the project declares, from whichever build files it has."""
    out = _from_pyproject(_text(root, "pyproject.toml"))
    out += _from_setup_py(_text(root, "setup.py"))
    out += _from_ini(_text(root, "setup.cfg"), "setup.cfg", "options.entry_points")
    for info in sorted(root.glob("*.dist-info/entry_points.txt")) + sorted(root.glob("*.egg-info/entry_points.txt")):
        out += _from_ini(_text(root, info.relative_to(root).as_posix()), info.relative_to(root).as_posix(), "")
    return out


def host_groups(settings: Settings) -> tuple[str, ...]:
    """The entry-point groups that name the host's plugins: the host profile's, then the plugin's own."""
    return (*settings.plugin_groups, *settings.entry_point_groups)


def host_entry_points(root: Path | None, settings: Settings) -> list[EntryPoint]:
    if root is None:
        return []
    groups = host_groups(settings)
    return [e for e in read_entry_points(root) if e.group in groups]


def is_plugin_checkout(directory: Path, settings: Settings) -> bool:
    """A project whose build files declare one of the host's plugin entry points or require the host."""
    groups = host_groups(settings)
    host = settings.host
    if any(e.group in groups for e in read_entry_points(directory)):
        return True
    if not any((directory / f).is_file() for f in ("pyproject.toml", "setup.py", "setup.cfg")):
        return False
    statements = find_pins(lambda rel: _text(directory, rel) or None, host)
    return any(s.kind != README for s in statements)


@dataclass(frozen=True)
class PluginPackages:
    """The plugin's packages and why they were chosen (shown to the user)."""

    packages: tuple[str, ...]
    reason: str


def _tops(index: CodeIndex, single_modules: bool = False) -> list[str]:
    """Top-level packages (with single-file top-level modules when asked), minus tests, docs …"""
    return sorted({m.split(".")[0] for m in index.modules
                   if single_modules or m in index.packages or "." in m} - NOT_PLUGIN)


def _imports_host(index: CodeIndex, top: str, host: str) -> bool:
    return bool(index.grep(f"import {host}", top) or index.grep(f"from {host}", top))


def find_packages(index: CodeIndex, settings: Settings) -> PluginPackages:
    """The packages to scan: the setting, else those the host's entry points name, else those that
    import the host (a project with several top-level packages), else the only one. A package named
    as the host's own is a copy of the host (a fork shipped under another name), never the plugin."""
    if settings.plugin_package:
        return PluginPackages((settings.plugin_package,), "plugin-package setting")
    found = _found_packages(index, settings)
    own = tuple(p for p in found.packages if p != settings.host)
    if not own:
        raise ConfigError(f"{index.label}: its package `{settings.host}` is {settings.host} itself (a fork of "
                          f"the host, not a plugin of it); pinport compares a plugin with the host it patches")
    return found if own == found.packages else PluginPackages(own, f"{found.reason}; `{settings.host}`, a copy "
                                                                   f"of the host, left out")


def _found_packages(index: CodeIndex, settings: Settings) -> PluginPackages:
    tops = _tops(index)
    if not tops and not index.modules:
        raise ConfigError(f"{index.label}: no Python package found in the plugin tree")
    project = index.tree.project_root or index.tree.root
    everything = _tops(index, single_modules=True)
    named = [e for e in host_entry_points(project, settings) if e.module.split(".")[0] in everything]
    if named:
        packages = tuple(dict.fromkeys(e.module.split(".")[0] for e in named))
        groups = sorted({e.group for e in named})
        return PluginPackages(packages, f"entry points ({', '.join(groups)})")
    if not tops:
        raise ConfigError(f"{index.label}: no Python package found in the plugin tree")
    if len(tops) == 1:
        return PluginPackages((tops[0],), "the only package")
    importing = tuple(t for t in tops if _imports_host(index, t, settings.host))
    if importing:
        return PluginPackages(importing, f"the packages that import {settings.host}")
    raise ConfigError(f"{index.label}: several packages ({', '.join(tops)}) and none imports "
                      f"{settings.host}; set plugin-package in [tool.pinport]")


_VERSION_SUFFIX = re.compile(r"^(?P<stem>.+?)_v(?P<tag>\d{2,6})$")


def _compact(version: str) -> str:
    """0.26.1 -> "0261", 0.28.0 -> "028": how plugins name a module kept for one host release."""
    parts = [int(p) for p in re.findall(r"\d+", version)[:3]] + [0, 0]
    major, minor, patch = parts[:3]
    return f"{major}{minor:02d}{patch if patch else ''}"


def version_specific_modules(modules: Iterable[str]) -> dict[str, str]:
    """Modules kept for one host release each (`vendored_scheduler_v024`, `…_v0261`, …): module ->
    its version tag. Only stems with at least two such siblings count (one suffix may mean anything)."""
    by_stem: dict[str, list[tuple[str, str]]] = {}
    for module in modules:
        parent, _, leaf = module.rpartition(".")
        if match := _VERSION_SUFFIX.match(leaf):
            by_stem.setdefault(f"{parent}.{match['stem']}", []).append((module, match["tag"]))
    return {module: tag for group in by_stem.values() if len(group) >= 2 for module, tag in group}


def is_for_other_release(tag: str, version: str | None) -> bool:
    return bool(version) and tag != _compact(version)  # type: ignore[arg-type]
