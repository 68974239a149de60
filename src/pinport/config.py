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
class GateSettings:
    """`[tool.pinport.gate]`: how the no-GPU gate bootstraps the plugin in a real host environment.

    `env` is set in the gate's subprocess before anything is imported (the plugin's own switches
    for its platform and version checks); `stub` names modules to stand in for up front, whether
    or not they exist; `entry-point` ("module:function") overrides the plugin's registered entry
    point in `entry-point-group`; `apply` lists functions ("module:Class.method") called after it, for
    patches the plugin applies later than its bootstrap (when a host worker starts, say); `tests` is
    the plugin's test directory, relative to its project.
    """

    env: tuple[tuple[str, str], ...] = ()
    stub: tuple[str, ...] = ()
    entry_point: str = ""
    entry_point_group: str = "vllm.general_plugins"
    apply: tuple[str, ...] = ()
    tests: str = "tests"
    timeout: float = 900.0  # seconds for one gate subprocess


def _coerce_gate(raw: object, origin: str) -> GateSettings:
    if not isinstance(raw, dict):
        raise ConfigError(f"{origin}: 'gate' must be a table")
    out: dict = {}
    for key, value in raw.items():
        name = key.replace("-", "_")
        if name == "env":
            if not isinstance(value, dict) or not all(isinstance(v, str | int | bool) for v in value.values()):
                raise ConfigError(f"{origin}: 'gate.env' must be a table of strings")
            value = tuple(sorted((str(k), str(int(v)) if isinstance(v, bool) else str(v)) for k, v in value.items()))
        elif name in ("stub", "apply"):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{origin}: 'gate.{key}' must be a list of strings")
            if name == "apply" and not all(":" in v for v in value):
                raise ConfigError(f"{origin}: 'gate.apply' entries must be 'module:function'")
            value = tuple(value)
        elif name in ("entry_point", "entry_point_group", "tests"):
            if not isinstance(value, str):
                raise ConfigError(f"{origin}: 'gate.{key}' must be a string")
            if name == "entry_point" and value and ":" not in value:
                raise ConfigError(f"{origin}: 'gate.entry-point' must be 'module:function'")
        elif name == "timeout":
            if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                raise ConfigError(f"{origin}: 'gate.timeout' must be a positive number")
            value = float(value)
        else:
            raise ConfigError(f"{origin}: unknown setting 'gate.{key}'")
        out[name] = value
    return replace(GateSettings(), **out)


@dataclass(frozen=True)
class Settings:
    """Everything a scan needs to know about the plugin and its host; frozen once loaded."""

    host: str = "vllm"  # the host package (import name)
    host_distribution: str = ""  # its registry name when it differs from `host`
    plugin_package: str = ""  # the plugin's import package; found from the tree when empty
    skip: tuple[str, ...] = ()  # plugin sub-packages not scanned (relative dotted names)
    patch_helpers: tuple[str, ...] = ("ArcticPatch",)  # class P(Helper[Target]) idiom
    pin_sources: tuple[PinSource, ...] = (PinSource("requirement", extra="*"),)
    fail_on: str = "error"  # lowest severity that makes the exit code 1
    mirror_threshold: float = 0.6
    fork_threshold: float = 0.5
    forks: tuple[tuple[str, str], ...] = ()  # declared (plugin file, host file) pairs
    rebase_branch_pattern: str = "rebase/vllm_v*"
    probes_file: str = ""
    profile: str = ""
    gate: GateSettings = GateSettings()

    @property
    def host_dist(self) -> str:
        return self.host_distribution or self.host


_LIST_FIELDS = {"skip", "patch_helpers"}


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
        elif name == "gate":
            value = _coerce_gate(value, origin)
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
    return tomllib.loads(path.read_text(encoding="utf-8"))


def read_pyproject(plugin_root: Path) -> dict:
    path = plugin_root / "pyproject.toml"
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
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
        raw_profile = load_profile(profile)
        merged.update(_coerce(raw_profile, f"profile {profile}"))
        merged["profile"] = profile
        if isinstance(raw_profile.get("gate"), dict) and isinstance(table.get("gate"), dict):
            # the plugin's [tool.pinport.gate] keys win one by one over the profile's
            table = {**table, "gate": {**raw_profile["gate"], **table["gate"]}}
    merged.update(_coerce(table, "pyproject.toml [tool.pinport]"))
    settings = replace(Settings(), **merged)
    typed = {k: v for k, v in overrides.items() if k != "profile"}
    return replace(settings, **typed) if typed else settings
