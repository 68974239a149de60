"""Probes: a file plus a regular expression that pulls one salient expression out of it."""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass, field, fields
from importlib import resources
from pathlib import Path

from ..errors import ConfigError, SourceNotFound

MANUAL = "probes"  # probes a maintainer wrote
AUTO = "auto"  # probes derived from the plugin's patch surface
JOIN = " | "  # between the values of an all-matches probe


@dataclass(frozen=True)
class Probe:
    """One tracked surface; validated and compiled on construction, so a bad one fails early.

    `multiline` lets the match span lines (`.` matches a newline); `^`/`$` always match at
    line boundaries. `all_matches` joins every match with " | ". `group` is the capture
    group's number or name; None means group 1, or the whole match for a pattern without
    groups. `strip_comments` drops `# ...` up to each line end from the value (a signature
    whose comments changed did not change). `host_file`/`host_regex` name the upstream
    counterpart for the host cross-check.
    """

    label: str
    file: str
    regex: str
    multiline: bool = False
    all_matches: bool = False
    group: int | str | None = None
    strip_comments: bool = False
    digest: bool = False  # the value is a short hash of the (normalised) match: for whole files
    section: str = MANUAL
    host_file: str = ""
    host_regex: str = ""
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)
    host_pattern: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.label:
            raise ConfigError("a probe needs a non-empty 'label'")
        if not self.file:
            raise ConfigError(f"probe '{self.label}': missing 'file'")
        pattern = _compile(self, self.regex, "regex")
        object.__setattr__(self, "pattern", pattern)
        object.__setattr__(
            self,
            "host_pattern",
            _compile(self, self.host_regex, "host-regex") if self.host_regex else None,
        )
        if self.host_regex and not self.host_file:
            raise ConfigError(f"probe '{self.label}': 'host-regex' needs 'host-file'")
        if isinstance(self.group, bool) or not isinstance(self.group, int | str | None):
            raise ConfigError(f"probe '{self.label}': 'group' must be a number or a name")
        for compiled in (pattern, self.host_pattern):
            if compiled is not None and not _has_group(compiled, self.group):
                raise ConfigError(
                    f"probe '{self.label}': no capture group {self.group!r} in {compiled.pattern!r}"
                )

    def evaluate(self, text: str | None) -> str | None:
        """The probe's value in a file's text; None when the file is absent or nothing matches."""
        return _extract(self.pattern, self, text)

    def evaluate_host(self, text: str | None) -> str | None:
        """The value of the upstream counterpart in the host file's text."""
        return _extract(self.host_pattern, self, text) if self.host_pattern else None


def _compile(probe: Probe, regex: str, key: str) -> re.Pattern[str]:
    if not isinstance(regex, str) or not regex:
        raise ConfigError(f"probe '{probe.label}': missing '{key}'")
    flags = re.MULTILINE | (re.DOTALL if probe.multiline else 0)
    try:
        return re.compile(regex, flags)
    except re.error as exc:
        raise ConfigError(f"probe '{probe.label}': invalid {key} ({exc})") from None


def _has_group(pattern: re.Pattern[str], group: int | str | None) -> bool:
    if group is None:
        return True
    if isinstance(group, str):
        return group in pattern.groupindex
    return 0 <= group <= pattern.groups


def _group(pattern: re.Pattern[str], group: int | str | None) -> int | str:
    if group is None:
        return 1 if pattern.groups else 0
    return group


_SPACE = re.compile(r"\s+")
_AFTER_OPEN = re.compile(r"([(\[{]) ")
_BEFORE_CLOSE = re.compile(r",? ([)\]}])")


def normalize(value: str) -> str:
    """One line, single spaces, no padding inside brackets or trailing comma: reformatting is no change."""
    value = _SPACE.sub(" ", value).strip().removesuffix(",")
    return _BEFORE_CLOSE.sub(r"\1", _AFTER_OPEN.sub(r"\1", value))


_COMMENT = re.compile(r"#[^\n]*")


def _extract(pattern: re.Pattern[str], probe: Probe, text: str | None) -> str | None:
    if text is None:
        return None
    group = _group(pattern, probe.group)

    def value(match: re.Match[str]) -> str:
        found = match.group(group) or ""
        text = normalize(_COMMENT.sub("", found) if probe.strip_comments else found)
        return "#" + hashlib.blake2b(text.encode(), digest_size=6).hexdigest() if probe.digest else text

    if probe.all_matches:
        found = [value(m) for m in pattern.finditer(text)]
        return JOIN.join(found) if found else None
    match = pattern.search(text)
    return value(match) if match else None


_KEYS = {f.name for f in fields(Probe) if f.init and f.name != "section"}
# the procedure's own probe file (`evolution_probes.json`) says "dotall" for a match spanning lines
_ALIASES = {"all": "all_matches", "pattern": "regex", "dotall": "multiline"}


def _probe(entry: object, index: int, origin: str) -> Probe:
    if not isinstance(entry, dict):
        raise ConfigError(f"{origin}: probe #{index + 1} is not a table")
    label = entry.get("label") or f"#{index + 1}"
    values: dict = {}
    for key, value in entry.items():
        name = key.replace("-", "_")
        name = _ALIASES.get(name, name)
        if name not in _KEYS:
            raise ConfigError(f"{origin}: probe '{label}': unknown key '{key}'")
        values[name] = value
    for name in ("multiline", "all_matches", "strip_comments", "digest"):
        if not isinstance(values.get(name, False), bool):
            raise ConfigError(f"{origin}: probe '{label}': '{name}' must be true or false")
    for name in ("label", "file", "regex", "host_file", "host_regex"):
        if not isinstance(values.get(name, ""), str):
            raise ConfigError(f"{origin}: probe '{label}': '{name}' must be a string")
    try:
        return Probe(**{"label": "", "file": "", "regex": "", **values})
    except ConfigError as exc:
        raise ConfigError(f"{origin}: {exc}") from None


def parse_probes(text: str, origin: str, *, json_format: bool) -> tuple[Probe, ...]:
    """Probes from the text of a probes file: a `probe` list of tables (JSON may be a bare list)."""
    try:
        data = json.loads(text) if json_format else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(
            f"{origin}: not valid {'JSON' if json_format else 'TOML'} ({exc})"
        ) from None
    entries = (
        data
        if isinstance(data, list)
        else data.get("probe", data.get("probes")) if isinstance(data, dict) else None
    )
    if not isinstance(entries, list):
        raise ConfigError(f"{origin}: expected a 'probe' list of tables (or 'probes', as in evolution_probes.json)")
    probes = tuple(_probe(entry, i, origin) for i, entry in enumerate(entries))
    labels = [p.label for p in probes]
    if duplicate := next((x for x in labels if labels.count(x) > 1), None):
        raise ConfigError(f"{origin}: probe '{duplicate}' is defined twice")
    return probes


def load_probes(path: Path) -> tuple[Probe, ...]:
    """The probes of a `.json` or `.toml` file (any other suffix is read as TOML)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SourceNotFound(f"{path}: no such probes file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read probes file ({exc})") from None
    return parse_probes(text, str(path), json_format=path.suffix.lower() == ".json")


def default_probes(profile: str) -> tuple[Probe, ...]:
    """The probe set shipped for a built-in profile (`profiles/<profile>.probes.toml`), or none."""
    if not profile:
        return ()
    resource = resources.files("pinport") / "profiles" / f"{profile}.probes.toml"
    if not resource.is_file():
        return ()
    return parse_probes(
        resource.read_text(encoding="utf-8"), f"{profile}.probes.toml", json_format=False
    )
