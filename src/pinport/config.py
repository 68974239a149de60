"""Settings: built-in defaults, then a profile, then `[tool.pinport]`, then command-line flags."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from importlib import resources
from pathlib import Path

from .errors import ConfigError

_CODE = re.compile(r"^[A-Z]+[0-9]*$")


@dataclass(frozen=True)
class PinSource:
    """Where the plugin states its exact host pin.

    kind "requirement": a `host==X` requirement in pyproject.toml; `extra` picks an
    optional-dependencies group ("" = [project].dependencies, "*" = any group, first match).
    kind "regex": group 1 of `pattern` in `file` (e.g. a VLLM_PATCH_VERSION constant).
    """

    kind: str
    extra: str = ""
    file: str = ""
    pattern: str = ""


@dataclass(frozen=True)
class Settings:
    """Everything a scan needs to know about the plugin and its host; frozen once loaded."""

    host: str = "vllm"  # the host package (import name)
    host_distribution: str = ""  # its registry name when it differs from `host`
    plugin_package: str = ""  # the plugin's import package; found from the tree when empty
    skip: tuple[str, ...] = ()  # plugin sub-packages not scanned (relative dotted names)
    extend_skip: tuple[str, ...] = ()  # more sub-packages not scanned, added to `skip`
    select: tuple[str, ...] = ()  # finding codes or prefixes reported (empty: all)
    extend_select: tuple[str, ...] = ()  # codes added to `select`
    ignore: tuple[str, ...] = ()  # codes or prefixes never reported
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (plugin path glob, codes) accepted
    patch_helpers: tuple[str, ...] = ("ArcticPatch",)  # class P(Helper[Target]) idiom
    entry_point_groups: tuple[str, ...] = ()  # plugin entry-point groups besides <host>.general/platform_plugins
    pin_sources: tuple[PinSource, ...] = (PinSource("requirement", extra="*"),)
    fail_on: str = "error"  # lowest severity that makes the exit code 1
    mirror_threshold: float = 0.6
    fork_threshold: float = 0.5
    forks: tuple[tuple[str, str], ...] = ()  # declared (plugin file, host file) pairs
    rebase_branch_pattern: str = "rebase/vllm_v*"
    probes_file: str = ""
    profile: str = ""

    @property
    def host_dist(self) -> str:
        return self.host_distribution or self.host

    @property
    def skipped(self) -> tuple[str, ...]:
        """Every sub-package left out of the scan: `skip` (the profile's unless replaced) and `extend-skip`."""
        return (*self.skip, *self.extend_skip)


_LIST_FIELDS = {"skip", "extend_skip", "patch_helpers", "entry_point_groups"}
_CODE_FIELDS = {"select", "extend_select", "ignore"}


def _coerce(raw: dict, origin: str) -> dict:
    known = {f.name for f in fields(Settings)}
    out: dict = {}
    for key, value in raw.items():
        name = key.replace("-", "_")
        if name not in known:
            raise ConfigError(f"{origin}: unknown setting '{key}'")
        if name in _LIST_FIELDS:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{origin}: '{key}' must be a list of strings")
            value = tuple(value)
        elif name in _CODE_FIELDS:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{origin}: '{key}' must be a list of finding codes")
            value = check_codes(value, f"{origin} '{key}'")
        elif name == "per_file_ignores":
            value = _per_file_ignores(value, origin)
        elif name == "pin_sources":
            try:
                value = tuple(PinSource(**{k.replace("-", "_"): v for k, v in item.items()})
                              for item in value)
            except (TypeError, AttributeError) as exc:
                raise ConfigError(f"{origin}: bad 'pin-sources' entry ({exc})") from None
        elif name == "forks":
            try:
                value = tuple((str(item["plugin"]), str(item["host"])) for item in value)
            except (TypeError, KeyError):
                raise ConfigError(f"{origin}: 'forks' entries need 'plugin' and 'host'") from None
        elif name in ("mirror_threshold", "fork_threshold"):
            if not isinstance(value, int | float) or not 0 < value <= 1:
                raise ConfigError(f"{origin}: '{key}' must be a number in (0, 1]")
            value = float(value)
        elif not isinstance(value, str):
            raise ConfigError(f"{origin}: '{key}' must be a string")
        out[name] = value
    return out


def _per_file_ignores(value: object, origin: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict) or not all(
            isinstance(codes, list) and all(isinstance(c, str) for c in codes) for codes in value.values()):
        raise ConfigError(f"{origin}: 'per-file-ignores' must be a table of glob = [codes]")
    return tuple((glob, check_codes(codes, f"{origin} 'per-file-ignores' {glob!r}"))
                 for glob, codes in value.items())


def parse_per_file_ignores(entries: Iterable[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Command-line `GLOB:CODE[,CODE...]` entries, as in `--per-file-ignores 'tests/*:PP0101'`."""
    out = []
    for entry in entries:
        glob, sep, codes = entry.rpartition(":")
        if not sep or not glob or not codes:
            raise ConfigError(f"--per-file-ignores {entry!r}: expected GLOB:CODE[,CODE...]")
        out.append((glob, check_codes(codes.split(","), f"--per-file-ignores {entry!r}")))
    return tuple(out)


def check_codes(codes: Iterable[str], origin: str) -> tuple[str, ...]:
    """Codes or code prefixes, upper-cased (`pp01` -> `PP01`); anything else is a one-line ConfigError."""
    out = []
    for code in codes:
        code = code.strip().upper()
        if not _CODE.match(code):
            raise ConfigError(f"{origin}: '{code}' is not a finding code or code prefix (like PP0101 or PP01)")
        out.append(code)
    return tuple(out)


def available_profiles() -> list[str]:
    folder = resources.files("pinport") / "profiles"
    return sorted(p.name[:-5] for p in folder.iterdir()
                  if p.name.endswith(".toml") and not p.name.endswith(".probes.toml"))


def load_profile(name: str) -> dict:
    """The raw settings table of a built-in profile (`profiles/<name>.toml`)."""
    path = resources.files("pinport") / "profiles" / f"{name}.toml"
    if not path.is_file():
        raise ConfigError(f"unknown profile '{name}' (known: {', '.join(available_profiles())})")
    return tomllib.loads(path.read_text(encoding="utf-8-sig"))


def read_pyproject(plugin_root: Path) -> dict:
    path = plugin_root / "pyproject.toml"
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None


def guess_profile(pyproject: dict, plugin_root: Path) -> str:
    """Pick a built-in profile by the plugin's distribution or package name."""
    name = str(pyproject.get("project", {}).get("name", "")).replace("-", "_").lower()
    for profile in available_profiles():
        if name == profile or (plugin_root / profile).is_dir():
            return profile
    return ""


def load_settings(plugin_root: Path | None, overrides: dict | None = None) -> Settings:
    """Defaults < profile < the plugin's `[tool.pinport]` < `overrides` (command-line flags)."""
    pyproject = read_pyproject(plugin_root) if plugin_root else {}
    table = pyproject.get("tool", {}).get("pinport", {})
    if not isinstance(table, dict):
        raise ConfigError("pyproject.toml: [tool.pinport] must be a table")
    overrides = {k: v for k, v in (overrides or {}).items() if v not in (None, (), "")}
    profile = overrides.get("profile") or table.get("profile") or (
        guess_profile(pyproject, plugin_root) if plugin_root else "")
    merged: dict = {}
    if profile:
        merged.update(_coerce(load_profile(profile), f"profile {profile}"))
        merged["profile"] = profile
    merged.update(_coerce(table, "pyproject.toml [tool.pinport]"))
    settings = replace(Settings(), **merged)
    typed = {k: v for k, v in overrides.items() if k != "profile"}
    return replace(settings, **typed) if typed else settings


def with_code_flags(settings: Settings, *, select: Iterable[str] = (), extend_select: Iterable[str] = (),
                    ignore: Iterable[str] = (), per_file_ignores: Iterable[str] = ()) -> Settings:
    """Command-line code selection over the loaded settings: `--select` replaces the configured list,
    the other flags add to theirs (as ruff's do)."""
    select, extend_select = check_codes(select, "--select"), check_codes(extend_select, "--extend-select")
    return replace(settings, select=select or settings.select,
                   extend_select=(*settings.extend_select, *extend_select),
                   ignore=(*settings.ignore, *check_codes(ignore, "--ignore")),
                   per_file_ignores=(*settings.per_file_ignores, *parse_per_file_ignores(per_file_ignores)))
