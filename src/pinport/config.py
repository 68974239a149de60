"""Settings: built-in defaults, then a profile, then `[tool.pinport]`, then command-line flags.

Every setting is declared once, as a field of `Settings` whose `setting(default, rule)` says
what a value must be; the same rule checks a profile, `[tool.pinport]` and a flag, before any
work starts, so a wrong value is one line `pinport: error: ...`, not a crash mid-scan. Adding a
setting is one line: `name: type = setting(default, rule)`. A sub-table (`[tool.pinport.gate]`)
is a frozen dataclass of its own settings, declared with `setting(Sub(), table(Sub))`.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from packaging.utils import canonicalize_name

from .errors import ConfigError

# A rule turns a raw TOML (or flag) value into the setting's typed value, or raises ConfigError
# naming `where` ("pyproject.toml [tool.pinport] 'host'"); it never sees other settings.
Rule = Callable[[Any, str], Any]

_SEVERITIES = ("error", "warning", "info")  # findings.Severity's values (config sits below findings)
_CODE = re.compile(r"^[A-Z]+[0-9]*$")  # a finding code or code prefix (PP0101, PP01, PP)
_DISTRIBUTION = re.compile(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$", re.IGNORECASE)  # PEP 508 names


def setting(default: Any, rule: Rule) -> Any:
    """A `Settings` field: its default and the rule every value given for it must pass."""
    if isinstance(default, list | dict | set):
        raise TypeError("settings are frozen: give a tuple, not a list")
    return field(default=default, metadata={"rule": rule})


# -- rules -------------------------------------------------------------------------------------
def text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be a string, not {_kind(value)}")
    if "\0" in value or any(ord(c) < 32 and c not in "\t" for c in value):
        raise ConfigError(f"{where} holds control characters")
    return value


def url(value: Any, where: str) -> str:
    """An absolute http(s):// or file:// address, or "" for none; kept without a trailing slash."""
    value = text(value, where).strip()
    if not value:
        return ""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https", "file") or (parts.scheme != "file" and not parts.netloc) \
            or any(c.isspace() for c in value):
        raise ConfigError(f"{where} must be an absolute http(s):// or file:// address, not {value!r}")
    return value.rstrip("/")


def nonempty(value: Any, where: str) -> str:
    value = text(value, where)
    if not value.strip():
        raise ConfigError(f"{where} must not be empty")
    return value


def dotted_name(value: Any, where: str) -> str:
    """An importable dotted name (`vllm`, `arctic_inference.patches`): ASCII identifiers only."""
    value = nonempty(value, where)
    if not all(part.isidentifier() and part.isascii() for part in value.split(".")):
        raise ConfigError(f"{where} must be a Python package name like 'vllm' or 'pkg.sub', not {value!r}")
    return value


def _op_registrar(value: Any, where: str) -> str:
    """`"name(op_param, func_param)"`: a host function registering a custom op, and its two parameters."""
    value = nonempty(value, where)
    if not re.fullmatch(r"\s*[\w.]+\s*\(\s*\w+\s*,\s*\w+\s*\)\s*", value):
        raise ConfigError(f"{where} must look like 'register_op(op_name, op_func)', not {value!r}")
    return value


def _model_call(value: Any, where: str) -> str:
    """`"member(keyword, ..., **)"`: a member of a registered model and the keywords the host calls it with."""
    value = nonempty(value, where)
    if not re.fullmatch(r"\s*\w+\s*\(\s*(\*\*|\w+)?(\s*,\s*(\*\*|\w+))*\s*\)\s*", value):
        raise ConfigError(f"{where} must look like 'forward(input_ids, positions, **)', not {value!r}")
    return value


def optional(rule: Rule) -> Rule:
    """The rule, or "" for "not set"."""
    return lambda value, where: "" if value == "" else rule(value, where)


def distribution(value: Any, where: str) -> str:
    """A package-index project name (PEP 508: letters, digits, '.', '_', '-')."""
    value = nonempty(value, where)
    if not _DISTRIBUTION.match(value):
        raise ConfigError(f"{where} must be a distribution name like 'vllm' or 'arctic-inference', not {value!r}")
    return value


def one_of(*choices: str) -> Rule:
    def rule(value: Any, where: str) -> str:
        if text(value, where) not in choices:
            raise ConfigError(f"{where} must be one of {', '.join(choices)}, not {value!r}")
        return value
    return rule


def fraction(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise ConfigError(f"{where} must be a number in (0, 1], not {value!r}")
    return float(value)


def relative_path(value: Any, where: str) -> str:
    """A path inside the plugin tree: relative, no `..`, POSIX separators ("" = not set)."""
    value = text(value, where)
    if value and (value.startswith(("/", "\\", "~")) or ".." in PurePosixPath(value.replace("\\", "/")).parts
                  or re.match(r"^[A-Za-z]:", value)):
        raise ConfigError(f"{where} must be a path inside the plugin tree, not {value!r}")
    return value


def pattern(groups: int = 0) -> Rule:
    """A regular expression that compiles and has at least `groups` capturing groups."""
    def rule(value: Any, where: str) -> str:
        value = nonempty(value, where)
        try:
            compiled = re.compile(value)
        except re.error as exc:
            raise ConfigError(f"{where} is not a valid regular expression ({exc})") from None
        if compiled.groups < groups:
            raise ConfigError(f"{where} needs a capturing group ( ... ) around the version: {value!r}")
        return value
    return rule


def strings(item: Rule = text) -> Rule:
    """A list of values each passing `item`, kept as a tuple."""
    def rule(value: Any, where: str) -> tuple:
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{where} must be a list, not {_kind(value)}")
        return tuple(item(v, f"{where}[{i}]") for i, v in enumerate(value))
    return rule


def table(cls: type) -> Rule:
    """A TOML table read into the frozen dataclass `cls`, each key checked by its own rule."""
    def rule(value: Any, where: str) -> Any:
        if isinstance(value, cls):
            return value
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where} must be a table, not {_kind(value)}")
        return cls(**_coerce(cls, value, where))
    return rule


def records(cls: type) -> Rule:
    """An array of tables (`[[pin-sources]]`), each read into `cls` by `table(cls)`."""
    one = table(cls)

    def rule(value: Any, where: str) -> tuple:
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{where} must be an array of tables, not {_kind(value)}")
        return tuple(one(v, f"{where}[{i}]") for i, v in enumerate(value))
    return rule


def codes(value: Any, where: str) -> tuple[str, ...]:
    """Finding codes or code prefixes, upper-cased (`pp01` -> `PP01`)."""
    if not isinstance(value, list | tuple):
        raise ConfigError(f"{where} must be a list of finding codes, not {_kind(value)}")
    return check_codes(strings(text)(value, where), where)


def check_codes(items: Iterable[str], origin: str) -> tuple[str, ...]:
    """Codes or code prefixes, upper-cased (`pp01` -> `PP01`); anything else is a one-line ConfigError."""
    out = []
    for code in items:
        code = code.strip().upper()
        if not _CODE.match(code):
            raise ConfigError(f"{origin}: '{code}' is not a finding code or code prefix (like PP0101 or PP01)")
        out.append(code)
    return tuple(out)


def _per_file_ignores(value: Any, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a table of glob = [codes]")
    return tuple((text(glob, where), codes(items, f"{where} {glob!r}")) for glob, items in value.items())


def _kind(value: Any) -> str:
    return {str: "a string", bool: "true/false", int: "a number", float: "a number", list: "a list",
            dict: "a table"}.get(type(value), type(value).__name__)


# -- the settings ------------------------------------------------------------------------------
@dataclass(frozen=True)
class PinSource:
    """Where the plugin states its exact host pin.

    kind "requirement": a `host==X` requirement in pyproject.toml; `extra` picks an
    optional-dependencies group ("" = [project].dependencies, "*" = any group, first match).
    kind "regex": group 1 of `pattern` in `file` (e.g. a VLLM_PATCH_VERSION constant).
    """

    kind: str = setting("", one_of("requirement", "regex"))
    extra: str = setting("", text)
    file: str = setting("", relative_path)
    pattern: str = setting("", optional(pattern(groups=1)))

    def __post_init__(self) -> None:
        if self.kind == "regex" and not (self.file and self.pattern):
            raise ConfigError("a pin source of kind 'regex' needs 'file' and 'pattern'")


@dataclass(frozen=True)
class DeclaredFork:
    """A plugin file declared to be a fork of a host file (both relative to their trees)."""

    plugin: str = setting("", relative_path)
    host: str = setting("", relative_path)


def _forks(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    declared = records(DeclaredFork)(value, where)
    for i, fork in enumerate(declared):
        if not (fork.plugin and fork.host):
            raise ConfigError(f"{where}[{i}] needs 'plugin' and 'host'")
    return tuple((fork.plugin, fork.host) for fork in declared)


def _class_hosts(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    """A table of class-path setting name = host class its class is mixed into."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a table of NAME = \"host.module.Class\"")
    return tuple(sorted((nonempty(name, where), dotted_name(item, f"{where} {name!r}"))
                        for name, item in value.items()))


_ENTRY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def entry_reference(value: Any, where: str) -> str:
    """A "module:attribute.path" reference, as in an entry point."""
    value = nonempty(value, where)
    if not _ENTRY.match(value):
        raise ConfigError(f"{where} must be 'module:function' (like 'pkg.plugin:register'), not {value!r}")
    return value


def _environment(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    """A table of environment variables; numbers and true/false become their text ("1", "0")."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a table of NAME = \"value\"")
    out = []
    for name, item in value.items():
        if isinstance(item, bool):
            item = "1" if item else "0"
        elif isinstance(item, int | float):
            item = str(item)
        out.append((nonempty(name, where), text(item, f"{where} {name!r}")))
    return tuple(sorted(out))


def _seconds(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"{where} must be a positive number of seconds, not {value!r}")
    return float(value)


@dataclass(frozen=True)
class GateSettings:
    """`[tool.pinport.gate]`: how the no-GPU gate bootstraps the plugin in a real host environment.

    `env` is set in the gate's subprocess before anything is imported (the plugin's own switches
    for its platform and version checks); `stub` names modules to stand in for up front, whether
    or not they exist; `entry-point` ("module:function") overrides the plugin's registered entry
    point in `entry-point-group`; `apply` lists functions ("module:Class.method") called after it,
    for patches the plugin applies later than its bootstrap (when a host worker starts, say);
    `tests` is the plugin's test directory, relative to its project.
    """

    env: tuple[tuple[str, str], ...] = setting((), _environment)
    stub: tuple[str, ...] = setting((), strings(dotted_name))
    entry_point: str = setting("", optional(entry_reference))
    entry_point_group: str = setting("", optional(dotted_name))  # empty: the first of `plugin-groups`
    apply: tuple[str, ...] = setting((), strings(entry_reference))
    tests: str = setting("tests", relative_path)
    timeout: float = setting(900.0, _seconds)  # seconds for one gate subprocess


@dataclass(frozen=True)
class Settings:
    """Everything a scan needs to know about the plugin and its host; frozen once loaded."""

    host: str = setting("vllm", dotted_name)  # the host package (import name)
    host_distribution: str = setting("", optional(distribution))  # its registry name when it differs
    plugin_package: str = setting("", optional(dotted_name))  # the plugin's package; found when empty
    skip: tuple[str, ...] = setting((), strings(dotted_name))  # plugin sub-packages not scanned
    extend_skip: tuple[str, ...] = setting((), strings(dotted_name))  # more sub-packages, added to `skip`
    select: tuple[str, ...] = setting((), codes)  # finding codes or prefixes reported (empty: all)
    extend_select: tuple[str, ...] = setting((), codes)  # codes added to `select`
    ignore: tuple[str, ...] = setting((), codes)  # codes or prefixes never reported
    # (plugin path glob, codes) accepted
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = setting((), _per_file_ignores)
    # generic base classes whose `class P(Helper[Target])` subclasses patch Target (a plugin's own idiom)
    patch_helpers: tuple[str, ...] = setting((), strings(dotted_name))
    # host functions that load the plugins: the load-timing check looks for host code running before them
    plugin_loaders: tuple[str, ...] = setting((), strings(dotted_name))
    # class-path settings whose class the host mixes into one of its own classes (a worker extension
    # becomes a base of the worker): that class is judged as a member of the host class
    class_path_hosts: tuple[tuple[str, str], ...] = setting((), _class_hosts)
    env_module: str = setting("", optional(dotted_name))  # the last name of the host's environment-flag modules
    # host modules (prefixes) whose code runs only for some models or features: a break only they
    # reach is a warning, not an error
    optional_paths: tuple[str, ...] = setting((), strings(dotted_name))
    # host methods the host runs without naming them (`forward` through torch's `Module.__call__`):
    # an ordinary subclass's override of one is always reachable
    called_implicitly: tuple[str, ...] = setting((), strings(nonempty))
    # host objects standing for the platform the host runs on (`vllm.platforms.current_platform`): a
    # dispatcher route guarded by one's predicate (`is_xpu()`) is judged with the plugin's platform class
    platform_instances: tuple[str, ...] = setting((), strings(dotted_name))
    # host functions registering a function as a torch custom op, with the parameters naming the op and
    # the function (`"direct_register_custom_op(op_name, op_func)"`): the function runs where
    # `torch.ops.<ns>.<op>` is called (the caller graph of `plugin.host_paths`)
    op_registrars: tuple[str, ...] = setting((), strings(_op_registrar))
    # host functions registering a model class, with the parameter naming the class (`"register_model(model_arch,
    # model_cls)"`), and how the host calls the members of a class so registered, only by these keywords
    # (`"forward(input_ids, positions, **)"`, `**`: and further keywords): `plugin.registered_models`
    model_registrars: tuple[str, ...] = setting((), strings(_op_registrar))
    registered_model_calls: tuple[str, ...] = setting((), strings(_model_call))
    # how host expressions that build plain values (tensors), not host objects, start
    plain_values: tuple[str, ...] = setting((), strings(nonempty))
    # type names of single values in host annotations (`torch.Tensor`): a call declared to return one
    # unpacks into one value
    plain_types: tuple[str, ...] = setting((), strings(nonempty))
    # the host's plugin entry-point groups (its host profile names them); the first is the group of the
    # general plugins, whose entry point the gate runs
    plugin_groups: tuple[str, ...] = setting((), strings(dotted_name))
    # plugin entry-point groups besides `plugin_groups`
    entry_point_groups: tuple[str, ...] = setting((), strings(dotted_name))
    # how the host's own environment flags are spelt (`VLLM_`): the flags the gate sets, the
    # variables whose effect the plugin may lose ("": every variable)
    flag_prefix: str = setting("", text)
    pin_sources: tuple[PinSource, ...] = setting((PinSource("requirement", extra="*"),), records(PinSource))
    fail_on: str = setting("error", one_of(*_SEVERITIES))  # lowest severity that makes the exit code 1
    mirror_threshold: float = setting(0.6, fraction)
    fork_threshold: float = setting(0.5, fraction)
    forks: tuple[tuple[str, str], ...] = setting((), _forks)  # declared (plugin file, host file) pairs
    rebase_branch_pattern: str = setting("rebase/*", nonempty)
    # requirements the rebase keeps in step with the host's own at NEW (`torch` for vLLM): a plugin
    # pinning another version than its host needs does not install
    aligned_requirements: tuple[str, ...] = setting((), strings(nonempty))
    # a rebase branch whose tree holds one of these files (anywhere) is a completed, validated rebase
    validation_records: tuple[str, ...] = setting(("REBASE_TEST.md", "REBASE_REPORT.md"), strings(nonempty))
    # where the rebase documents link host evidence: a template with {version}, {path} and {line}
    host_source_url: str = setting("", text)
    # where SARIF's helpUri and informationUri point: a published copy of pinport's docs/ folder
    # ("" = the copy shipped inside the installed package, as file:// addresses)
    docs_url: str = setting("", url)
    probes_file: str = setting("", relative_path)
    profile: str = setting("", optional(dotted_name))
    gate: GateSettings = setting(GateSettings(), table(GateSettings))  # [tool.pinport.gate]

    def __post_init__(self) -> None:
        if not self.host_distribution and not _DISTRIBUTION.match(self.host):
            raise ConfigError(f"host {self.host!r} is not a package-index name; set host-distribution too")

    @property
    def host_dist(self) -> str:
        return self.host_distribution or self.host

    @property
    def skipped(self) -> tuple[str, ...]:
        """Every sub-package left out of the scan: `skip` (the profile's unless replaced) and `extend-skip`."""
        return (*self.skip, *self.extend_skip)


def _rules(cls: type) -> dict[str, Rule]:
    return {f.name: f.metadata["rule"] for f in fields(cls) if "rule" in f.metadata}


def _coerce(cls: type, raw: Mapping, origin: str) -> dict:
    """Each raw key checked by its field's rule; unknown keys are errors (a typo must not pass)."""
    rules = _rules(cls)
    out: dict = {}
    for key, value in raw.items():
        name = str(key).replace("-", "_")
        if name not in rules:
            known = ", ".join(sorted(n.replace("_", "-") for n in rules))
            raise ConfigError(f"{origin}: unknown setting '{key}' (known: {known})")
        out[name] = rules[name](value, f"{origin} '{key}'")
    return out


def _build(cls: type, values: dict, origin: str) -> Any:
    try:
        return cls(**values)
    except ConfigError as exc:
        raise ConfigError(f"{origin}: {exc}") from None


def available_profiles() -> list[str]:
    folder = resources.files("pinport") / "profiles"
    return sorted(p.name[:-5] for p in folder.iterdir()
                  if p.name.endswith(".toml") and not p.name.endswith(".probes.toml"))


def load_host_profile(host: str) -> dict:
    """What pinport knows about a host (`profiles/hosts/<host>.toml`: its plugin loaders, flag
    modules, ...); {} for a host it has no profile for."""
    path = resources.files("pinport") / "profiles" / "hosts" / f"{host}.toml"
    return tomllib.loads(path.read_text(encoding="utf-8-sig")) if path.is_file() else {}


def load_profile(name: str) -> dict:
    """The raw settings table of a built-in profile (`profiles/<name>.toml`)."""
    dotted_name(name, "profile")
    path = resources.files("pinport") / "profiles" / f"{name}.toml"
    if not path.is_file():
        raise ConfigError(f"unknown profile '{name}' (known: {', '.join(available_profiles())})")
    return tomllib.loads(path.read_text(encoding="utf-8-sig"))


def read_toml(path: Path) -> dict:
    """A TOML file's table; unreadable, not UTF-8 or not TOML is a ConfigError naming the file."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        return tomllib.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 (byte {exc.start}: {data[exc.start:exc.start + 1]!r})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None


def read_pyproject(plugin_root: Path) -> dict:
    path = plugin_root / "pyproject.toml"
    return read_toml(path) if path.exists() else {}


def guess_profile(pyproject: dict, plugin_root: Path) -> str:
    """Pick a built-in profile by the plugin's distribution or package name."""
    project = pyproject.get("project", {})
    name = project.get("name", "") if isinstance(project, dict) else ""
    name = canonicalize_name(name).replace("-", "_") if isinstance(name, str) else ""
    for profile in available_profiles():
        if name == profile or (plugin_root / profile).is_dir():
            return profile
    return ""


# command-line flag -> setting; their values pass the same rules as the settings themselves
FLAG_NAMES = {"host": "--host", "profile": "--profile", "fail_on": "--fail-on"}


def load_settings(plugin_root: Path | None, overrides: dict | None = None) -> Settings:
    """Defaults < the host's profile < the plugin's profile < the plugin's `[tool.pinport]` < `overrides`
    (command-line flags)."""
    pyproject = read_pyproject(plugin_root) if plugin_root else {}
    tool = pyproject.get("tool", {})
    table_ = tool.get("pinport", {}) if isinstance(tool, dict) else {}
    if not isinstance(table_, dict):
        raise ConfigError("pyproject.toml: [tool.pinport] must be a table")
    origin = "pyproject.toml [tool.pinport]"
    overrides = {k: v for k, v in (overrides or {}).items() if v is not None and v != ()}
    rules = _rules(Settings)
    flags = {name: rules[name](value, FLAG_NAMES.get(name, name)) for name, value in overrides.items()}
    ours = _coerce(Settings, table_, origin)
    profile = flags.get("profile") or ours.get("profile") or (
        guess_profile(pyproject, plugin_root) if plugin_root else "")
    merged: dict = {}
    raw_profile = load_profile(profile) if profile else {}
    chosen = _coerce(Settings, raw_profile, f"profile {profile}") if profile else {}
    host = flags.get("host") or ours.get("host") or chosen.get("host") or Settings().host
    merged.update(_coerce(Settings, load_host_profile(host), f"host profile {host}"))
    if profile:
        merged.update(chosen)
        merged["profile"] = profile
        if isinstance(raw_profile.get("gate"), dict) and isinstance(table_.get("gate"), dict):
            # the plugin's [tool.pinport.gate] keys win one by one over the profile's
            ours["gate"] = table(GateSettings)({**raw_profile["gate"], **table_["gate"]}, f"{origin} 'gate'")
    merged.update(ours)
    merged.update({k: v for k, v in flags.items() if k != "profile"})
    return _build(Settings, {**{f.name: getattr(Settings(), f.name) for f in fields(Settings)}, **merged},
                  origin if not flags else "settings")



def parse_per_file_ignores(entries: Iterable[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Command-line `GLOB:CODE[,CODE...]` entries, as in `--per-file-ignores 'tests/*:PP0101'`."""
    out = []
    for entry in entries:
        glob, sep, items = entry.rpartition(":")
        if not sep or not glob or not items:
            raise ConfigError(f"--per-file-ignores {entry!r}: expected GLOB:CODE[,CODE...]")
        out.append((glob, check_codes(items.split(","), f"--per-file-ignores {entry!r}")))
    return tuple(out)


def with_code_flags(settings: Settings, *, select: Iterable[str] = (), extend_select: Iterable[str] = (),
                    ignore: Iterable[str] = (), per_file_ignores: Iterable[str] = ()) -> Settings:
    """Command-line code selection over the loaded settings: `--select` replaces the configured list,
    the other flags add to theirs (as ruff's do)."""
    select, extend_select = check_codes(select, "--select"), check_codes(extend_select, "--extend-select")
    return replace(settings, select=select or settings.select,
                   extend_select=(*settings.extend_select, *extend_select),
                   ignore=(*settings.ignore, *check_codes(ignore, "--ignore")),
                   per_file_ignores=(*settings.per_file_ignores, *parse_per_file_ignores(per_file_ignores)))
