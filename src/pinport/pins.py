"""Read the host version a plugin pins, and where each pin statement is written.

Pins are read (never executed) from every place plugins state them: `[project].dependencies` and
optional-dependencies in pyproject.toml, `install_requires`/`extras_require` in setup.py (parsed)
and setup.cfg, requirements files, `Requires-Dist` in PKG-INFO / a wheel's METADATA, and
`pip install host==X` lines in a README. Each statement carries its file, line and character span,
so a command that edits pins (rebase) can change exactly those characters.
"""

from __future__ import annotations

import ast
import fnmatch
import re
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import regex
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from .config import PinSource, Settings
from .errors import ConfigError

ReadFile = Callable[[str], str | None]  # path relative to the plugin root -> text, or None
ListFiles = Callable[[], Iterable[str]]  # every file path under the plugin root worth reading for pins

# Kinds of pin statement; "readme" lines are read last (prose can be stale).
DEPENDENCIES, EXTRA, INSTALL_REQUIRES, EXTRAS_REQUIRE, REQUIREMENTS, METADATA, README = (
    "dependencies", "extra", "install_requires", "extras_require", "requirements", "metadata", "readme")

PATTERN_SECONDS = 2.0  # what one pin pattern may spend on one file
_ALWAYS = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "PKG-INFO", "README.md", "README.rst")
_REQUIREMENTS_FILE = re.compile(r"(^|/)requirements[^/]*\.(txt|in)$|^requirements/[^/]+\.(txt|in)$")
_README = re.compile(r"^README(\.[A-Za-z]+)?$")
_INSTALL_LINE = re.compile(r"\b(pip3?|uv)\s+(pip\s+)?(install|add)\b")


@dataclass(frozen=True)
class PinStatement:
    """One requirement on the host, as written: `text[start:end]` of `file` is `requirement`.

    `extra` is the optional-dependencies group ("" for required dependencies).
    """

    file: str
    line: int  # 1-based
    start: int  # character offsets into the file's text
    end: int
    requirement: str
    kind: str
    extra: str = ""

    @property
    def specifier(self) -> SpecifierSet:
        return _requirement(self.requirement).specifier  # type: ignore[union-attr]

    @property
    def exact(self) -> str | None:
        """The version `==X` names, as written (a local label like `+cpu` kept), or None."""
        pins = [s.version for s in self.specifier if s.operator in ("==", "===") and "*" not in s.version]
        if len(pins) == 1:
            return pins[0]
        floors = {s.version for s in self.specifier if s.operator == ">="}
        ceilings = {s.version for s in self.specifier if s.operator == "<="}
        same = floors & ceilings  # ">=X,<=X" is an exact pin written as a range
        return same.pop() if len(same) == 1 and len(floors) == len(ceilings) == 1 else None

    @property
    def bounded(self) -> bool:
        """True when the statement has an upper bound (a narrow range picks the newest release in it)."""
        return any(s.operator in ("<", "<=", "==", "===", "~=") for s in self.specifier)


def _requirement(text: str) -> Requirement | None:
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None


def _is_host(text: str, dist: str) -> bool:
    req = _requirement(text)
    return req is not None and canonicalize_name(req.name) == canonicalize_name(dist)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


# --- pyproject.toml -------------------------------------------------------------------------

_TOML_HEADER = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+\s*(#.*)?$", re.MULTILINE)
_TOML_ARRAY_KEY = re.compile(r"(\"[^\"\n]+\"|'[^'\n]+'|[A-Za-z0-9_-]+)\s*=\s*\[")
_TOML_STRING = re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"|'([^'\n]*)'")


def _pyproject(text: str, dist: str) -> list[PinStatement]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    project = data.get("project", {})
    if not isinstance(project, dict):
        return []
    wanted: dict[tuple[str, str], set[str]] = {("project", "dependencies"): set(
        d for d in project.get("dependencies", []) if isinstance(d, str) and _is_host(d, dist))}
    extras = project.get("optional-dependencies", {})
    for extra, items in (extras.items() if isinstance(extras, dict) else ()):
        if isinstance(items, list):
            wanted[("project.optional-dependencies", extra)] = {
                d for d in items if isinstance(d, str) and _is_host(d, dist)}
    headers = [(m.start(), m.group(1).replace('"', "").replace("'", "")) for m in _TOML_HEADER.finditer(text)]
    arrays = [(m.end(), m.group(1).strip("\"'")) for m in _TOML_ARRAY_KEY.finditer(text)]
    out = []
    for match in _TOML_STRING.finditer(text):
        value = match.group(1) if match.group(1) is not None else match.group(2)
        table = next((name for pos, name in reversed(headers) if pos < match.start()), "")
        key = next((name for pos, name in reversed(arrays) if pos <= match.start()), "")
        if table not in ("project", "project.optional-dependencies"):
            continue
        groups = [g for g, values in wanted.items() if value in values]
        group = next((g for g in groups if g[1] == key), groups[0] if len(groups) == 1 else None)
        if group is not None:
            extra = group[1] if group[0] == "project.optional-dependencies" else ""
            out.append(PinStatement("pyproject.toml", _line_of(text, match.start()), match.start() + 1,
                                    match.end() - 1, value, EXTRA if extra else DEPENDENCIES, extra))
    return out


# --- setup.py (parsed, never run) -------------------------------------------------------------


def _char_offsets(text: str) -> list[int]:
    starts, pos = [0], 0
    for line in text.splitlines(keepends=True):
        pos += len(line)
        starts.append(pos)
    return starts


def _setup_py(text: str, dist: str, path: str) -> list[PinStatement]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    lines = text.splitlines(keepends=True)
    starts = _char_offsets(text)
    context: dict[int, tuple[str, str]] = {}  # id(Constant) -> (kind, extra)
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in ("install_requires", "extras_require"):
            if node.arg == "extras_require" and isinstance(node.value, ast.Dict):
                for key, value in zip(node.value.keys, node.value.values, strict=True):
                    extra = key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else "*"
                    for const in ast.walk(value):
                        context[id(const)] = (EXTRAS_REQUIRE, extra)
            else:
                for const in ast.walk(node.value):
                    context.setdefault(id(const), (INSTALL_REQUIRES, ""))
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str) and _is_host(node.value, dist)):
            continue
        if node.lineno != node.end_lineno:
            continue
        raw = lines[node.lineno - 1].encode("utf-8")
        col = len(raw[:node.col_offset].decode("utf-8", errors="replace"))
        end_col = len(raw[:node.end_col_offset].decode("utf-8", errors="replace"))
        segment = lines[node.lineno - 1][col:end_col]
        inner = segment.find(node.value)
        if inner < 0:  # escapes in the literal: the span cannot be stated exactly
            continue
        start = starts[node.lineno - 1] + col + inner
        kind, extra = context.get(id(node), (INSTALL_REQUIRES, ""))
        out.append(PinStatement(path, node.lineno, start, start + len(node.value), node.value, kind, extra))
    return out


# --- setup.cfg, requirements files, metadata, READMEs ----------------------------------------


def _setup_cfg(text: str, dist: str) -> list[PinStatement]:
    out, section, key, offset = [], "", "", 0
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        body = line.split("#", 1)[0].split(";", 1)[0] if line.lstrip().startswith(("#", ";")) else line
        stripped = body.strip()
        header = re.match(r"\[([^\]]+)\]", stripped)
        if header:
            section, key = header.group(1).strip(), ""
        elif stripped:
            value = stripped
            if not line[:1].isspace() and "=" in stripped:
                key, _, value = (part.strip() for part in stripped.partition("="))
            extra = key if section == "options.extras_require" else ""
            if (section == "options" and key == "install_requires" or extra) and value and _is_host(value, dist):
                start = offset + line.index(value)
                out.append(PinStatement("setup.cfg", number, start, start + len(value), value,
                                        EXTRAS_REQUIRE if extra else INSTALL_REQUIRES, extra))
        offset += len(line)
    return out


def _requirement_lines(text: str, dist: str, path: str, kind: str) -> list[PinStatement]:
    out, offset = [], 0
    prefix = "Requires-Dist:" if kind == METADATA else ""
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        if kind == METADATA and line in ("\n", "\r\n"):
            break  # the headers end at the first empty line (continuations start with blanks)
        content = line.rstrip("\r\n")
        if prefix:
            if not content.startswith(prefix):
                offset += len(line)
                continue
            content = content[len(prefix):]
        value = re.split(r"\s+#", content, maxsplit=1)[0].strip()
        extra = ""
        if kind == METADATA and (match := re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", value)):
            extra = match.group(1)
        if value and not value.startswith("-") and _is_host(value, dist):
            start = offset + line.index(value)
            out.append(PinStatement(path, number, start, start + len(value), value, kind, extra))
        offset += len(line)
    return out


def _readme(text: str, dist: str, path: str) -> list[PinStatement]:
    """`pip install HOST==X` (also uv) lines; only the host requirement on the line is a statement."""
    out, offset = [], 0
    word = re.compile(rf"(?<![\w.-])['\"]?({re.escape(dist)}(\[[^\]]*\])?\s*(==|~=|>=|<=)\s*[\w.+!*-]+"
                      rf"(\s*,\s*(<|<=|>|>=|!=)\s*[\w.+!*-]+)*)", re.IGNORECASE)
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        if _INSTALL_LINE.search(line):
            for match in word.finditer(line):
                value = match.group(1).rstrip(".,")
                if _is_host(value, dist):
                    start = offset + match.start(1)
                    out.append(PinStatement(path, number, start, start + len(value), value, README))
        offset += len(line)
    return out


def find_pins(read_file: ReadFile, dist: str, list_files: ListFiles | None = None) -> list[PinStatement]:
    """Every statement of a requirement on `dist`, in reading order (README lines last)."""
    paths = list(_ALWAYS)
    for rel in sorted(list_files() if list_files else ()):
        if (_REQUIREMENTS_FILE.search(rel) or rel.endswith(".dist-info/METADATA")
                or _README.match(rel)) and rel not in paths:
            paths.append(rel)
    found: list[PinStatement] = []
    readmes: list[PinStatement] = []
    for rel in paths:
        text = read_file(rel)
        if not text:
            continue
        bom = 1 if text.startswith("\ufeff") else 0  # spans index the text as read, BOM included
        text = text[bom:]
        name = rel.rsplit("/", 1)[-1]
        here: list[PinStatement] = []
        if name == "pyproject.toml" and rel == name:
            here = _pyproject(text, dist)
        elif rel == "setup.py":
            here = _setup_py(text, dist, rel)
        elif rel == "setup.cfg":
            here = _setup_cfg(text, dist)
        elif name in ("PKG-INFO", "METADATA"):
            here = _requirement_lines(text, dist, rel, METADATA)
            readmes += [replace(s, start=s.start + bom, end=s.end + bom) for s in _readme(text, dist, rel)]
        elif _README.match(name):
            readmes += [replace(s, start=s.start + bom, end=s.end + bom) for s in _readme(text, dist, rel)]
        elif _REQUIREMENTS_FILE.search(rel):
            here = _requirement_lines(text, dist, rel, REQUIREMENTS)
        found += [replace(s, start=s.start + bom, end=s.end + bom) for s in here]
    return found + readmes


def _matches_extra(statement: PinStatement, extra: str) -> bool:
    return extra == "*" or statement.extra == extra


def release_of(version: str) -> str:
    """The release a registry serves for a pinned version: `0.17.1+cpu` is a local build of 0.17.1."""
    try:
        return Version(version).public
    except InvalidVersion:
        return version


def newest_admitted(statement: PinStatement, versions: Iterable[str]) -> str | None:
    """The newest final release a bounded (narrow) range admits, or None."""
    spec = statement.specifier
    admitted = []
    for v in versions:
        try:
            parsed = Version(v)
        except InvalidVersion:
            continue
        if not parsed.is_prerelease and spec.contains(parsed):
            admitted.append(parsed)
    return str(max(admitted)) if admitted else None


def choose_pin(statements: Iterable[PinStatement], extra: str = "*",
               versions: Callable[[], Iterable[str]] | None = None) -> tuple[str, PinStatement] | None:
    """The host version to check against and the statement that decides it.

    An exact pin wins (the first, in reading order); else the first bounded range, resolved to the
    newest release it admits when `versions` can list them.
    """
    candidates = [s for s in statements if _matches_extra(s, extra)]
    for statement in candidates:
        if statement.exact:
            return release_of(statement.exact), statement
    if versions is not None:
        listed: list[str] | None = None
        for statement in candidates:
            if statement.bounded:
                listed = list(versions()) if listed is None else listed
                if version := newest_admitted(statement, listed):
                    return version, statement
    return None


def read_pin(settings: Settings, read_file: ReadFile, list_files: ListFiles | None = None,
             versions: Callable[[], Iterable[str]] | None = None) -> str | None:
    """The first version any of the settings' pin sources yields, or None."""
    statements: list[PinStatement] | None = None
    for source in settings.pin_sources:
        if source.kind == "requirement":
            if statements is None:
                statements = find_pins(read_file, settings.host_dist, list_files)
            if chosen := choose_pin(statements, source.extra, versions):
                return chosen[0]
        elif source.kind == "regex":
            if version := _regex_pin(source, read_file, list_files):
                return version
        else:
            raise ConfigError(f"pin source kind must be 'requirement' or 'regex', not {source.kind!r}")
    return None


def no_pin_error(label: str, settings: Settings, read_file: ReadFile, list_files: ListFiles | None = None,
                 versions: Callable[[], Iterable[str]] | None = None) -> ConfigError:
    """The one-line error for a plugin whose pin sources decide no version, saying what they hold: an
    open range (and the newest release it admits, the likeliest `--old`), or no requirement at all."""
    dist = settings.host_dist
    statements = find_pins(read_file, dist, list_files)
    if not statements:
        why = f"no requirement names {dist}"
    else:
        first = statements[0]
        where = f"`{first.requirement}` ({first.file}:{first.line})"
        listed = list(versions()) if versions is not None else []
        newest = newest_admitted(first, listed) if listed else None
        if not str(first.specifier):
            why = f"{where} names no version"
        elif first.bounded and listed:
            why = f"{where} admits no release of {dist}"
        else:
            why = f"{where} is an open range" + (f", the newest release it admits is {newest}" if newest else "")
    return ConfigError(f"{label}: no exact {dist} pin found: {why}; pass --old")


def _regex_pin(source: PinSource, read_file: ReadFile, list_files: ListFiles | None = None) -> str | None:
    """Group 1 of the source's pattern in its file (a glob such as `*.dist-info/METADATA` names the first
    listed file it matches); a pattern that backtracks for longer than PATTERN_SECONDS is cut off (the
    `regex` module can stop a match, `re` cannot)."""
    try:
        pattern = regex.compile(source.pattern, regex.MULTILINE)
    except regex.error as exc:
        raise ConfigError(f"pin source pattern {source.pattern!r}: {exc}") from None
    file = source.file
    if any(c in file for c in "*?[") and list_files is not None:
        file = next((rel for rel in sorted(list_files()) if fnmatch.fnmatchcase(rel, file)), "")
    text = read_file(file) if file else None
    if not text:
        return None
    try:
        match = pattern.search(text, timeout=PATTERN_SECONDS)
    except TimeoutError:
        raise ConfigError(f"pin source pattern {source.pattern!r} took over {PATTERN_SECONDS:g} s on "
                          f"{source.file}; simplify it") from None
    return match.group(1) if match else None
