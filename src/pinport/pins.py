"""Read the exact host version a plugin pins, from its pyproject.toml or a source constant."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from .config import PinSource, Settings
from .errors import ConfigError

ReadFile = Callable[[str], str | None]  # path relative to the plugin root -> text, or None


def _exact(req_text: str, dist: str) -> str | None:
    try:
        req = Requirement(req_text)
    except InvalidRequirement:
        return None
    if canonicalize_name(req.name) != canonicalize_name(dist):
        return None
    pins = [s.version for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version]
    return pins[0] if len(pins) == 1 else None


def _from_requirements(pyproject: dict, source: PinSource, dist: str) -> str | None:
    project = pyproject.get("project", {})
    groups: list[list] = []
    if source.extra == "":
        groups.append(project.get("dependencies", []))
    else:
        extras = project.get("optional-dependencies", {})
        if source.extra == "*":
            groups.extend(extras.values())
        elif source.extra in extras:
            groups.append(extras[source.extra])
    for group in groups:
        for item in group:
            if isinstance(item, str) and (version := _exact(item, dist)):
                return version
    return None


def read_pin(settings: Settings, read_file: ReadFile) -> str | None:
    """The first version any of the settings' pin sources yields, or None."""
    pyproject: dict | None = None
    for source in settings.pin_sources:
        if source.kind == "requirement":
            if pyproject is None:
                text = read_file("pyproject.toml") or ""
                try:
                    pyproject = tomllib.loads(text)
                except tomllib.TOMLDecodeError:
                    pyproject = {}
            if version := _from_requirements(pyproject, source, settings.host_dist):
                return version
        elif source.kind == "regex":
            try:
                pattern = re.compile(source.pattern, re.MULTILINE)
            except re.error as exc:
                raise ConfigError(f"pin source pattern {source.pattern!r}: {exc}") from None
            text = read_file(source.file)
            if text and (match := pattern.search(text)):
                return match.group(1)
        else:
            raise ConfigError(f"pin source kind must be 'requirement' or 'regex', not {source.kind!r}")
    return None
