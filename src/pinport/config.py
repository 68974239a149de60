"""Settings: built-in defaults, then a profile, then `[tool.pinport]`, then command-line flags."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields, replace
from importlib import resources
from pathlib import Path

from .errors import ConfigError


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


_LIST_FIELDS = {"skip", "patch_helpers", "entry_point_groups"}


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
