"""Phase 0, the pins: every statement of the host pin moves to NEW; torch and protobuf follow NEW.

The host pin is wherever the plugin states its exact host version: the configured pin sources
(a `host==OLD` requirement in pyproject.toml, a constant such as `VLLM_PATCH_VERSION`), and the
same requirement in setup.py, setup.cfg, requirements files and README lines. `torch` and
`protobuf` in `[build-system].requires` and the extras are checked against what host NEW itself
requires (its METADATA `Requires-Dist`). An extra that pins the host to some other version is a
separate install (ArcticInference's `embedding` extra pins an old vLLM of its own): left alone.

TOML is edited with tomlkit (comments, quoting and layout kept); other files get a minimal
text edit of the version characters only. Nothing here writes: `plan_pins` returns the edits.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import tomlkit
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version
from tomlkit.items import String, StringType

from ..config import Settings
from ..findings import Finding, Kind, Location, Severity
from ..pins import METADATA, PinStatement, find_pins

ReadFile = Callable[[str], str | None]

HOST_PIN_STALE = Kind("PP0020", "HostPinStale", "{what} states {dist}=={old}; the rebase moves it to "
                      "{dist}=={new}", Severity.ERROR, None, "rebase")
BUILD_PIN_MISMATCH = Kind("PP0021", "RequirementMismatch", "{what} has `{current}`; {host} {new} requires "
                          "`{required}`", Severity.ERROR, None, "rebase")
BUILD_PIN_LOOSE = Kind("PP0022", "RequirementNotAligned", "{what} has `{current}`, which admits but does not "
                       "state what {host} {new} requires (`{required}`)", Severity.WARNING, None, "rebase")
HOST_RANGE_EXCLUDES_NEW = Kind("PP0024", "HostRangeExcludesNew", "{what} has `{old}`, which excludes {dist} "
                               "{new}; the rebase moves its upper bound: `{widened}`", Severity.ERROR, None, "rebase")
SEPARATE_PIN = Kind("PP0023", "SeparateHostPin", "{what} pins {dist}=={version}, a separate install of its own; "
                    "left alone", Severity.INFO, None, "rebase")

KINDS = (HOST_PIN_STALE, BUILD_PIN_MISMATCH, BUILD_PIN_LOOSE, SEPARATE_PIN, HOST_RANGE_EXCLUDES_NEW)


@dataclass(frozen=True)
class PinEdit:
    """One pin statement: where, what it says, and the line it becomes (`after` "" = left alone)."""

    path: str
    line: int
    what: str  # "[project.optional-dependencies] vllm-26", "VLLM_PATCH_VERSION in arctic_inference/utils.py"
    package: str
    before: str  # the whole line as it is
    after: str
    finding: Finding

    @property
    def changes(self) -> bool:
        return bool(self.after) and self.after != self.before


@dataclass(frozen=True)
class PinPlan:
    """Every pin statement found, and each file's full text once all its edits are made."""

    edits: tuple[PinEdit, ...]
    texts: dict[str, tuple[str, str]]  # path -> (text before, text after), only files that change

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(e.finding for e in self.edits)


def host_requirements(metadata: str) -> dict[str, Requirement]:
    """The unconditional `Requires-Dist` of a METADATA text, by canonical name (extras skipped)."""
    out: dict[str, Requirement] = {}
    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        try:
            req = Requirement(line.partition(":")[2].strip())
        except InvalidRequirement:
            continue
        if req.marker is not None and "extra" in str(req.marker):
            continue
        out.setdefault(canonicalize_name(req.name), req)
    return out


def _exact(spec: SpecifierSet) -> str | None:
    pins = [s.version for s in spec if s.operator in ("==", "===") and "*" not in s.version]
    return pins[0] if len(pins) == 1 else None


def _widened(spec: SpecifierSet, old: str, new: str) -> tuple[str, str, str] | None:
    """For a narrow range that excludes NEW: (operator, bound, new bound) of the upper bound to move,
    in the style the plugin wrote it for OLD (the newest release it admitted): `<0.32.0` for 0.31.0
    (the next minor) becomes `<0.35.0` for 0.34.0, `<0.28.1` for 0.28.0 (the next patch) `<0.34.1`,
    `<=X` `<=NEW`. None when the range admits NEW, or has no single upper bound NEW passes (`~=`, `==X.*`)."""
    try:
        old_v, new_v = Version(old), Version(new)
    except InvalidVersion:
        return None
    if spec.contains(new_v, prereleases=True) or any(c.operator in ("~=", "==", "===") for c in spec):
        return None
    passed = [c for c in spec if c.operator in ("<", "<=") and not (new_v < Version(c.version) or (
        c.operator == "<=" and new_v == Version(c.version)))]
    if len(passed) != 1:
        return None
    (clause,) = passed
    bound = Version(clause.version)
    if clause.operator == "<=":
        upper = new
    elif bound.release[:2] == (old_v.major, old_v.minor + 1):  # the next minor after OLD
        upper = f"{new_v.major}.{new_v.minor + 1}.0"
    else:  # the next patch after OLD, or any other bound: admit NEW's own release
        upper = f"{new_v.major}.{new_v.minor}.{new_v.micro + 1}"
    moved = SpecifierSet(",".join(str(c) for c in spec if c is not clause) + f",{clause.operator}{upper}")
    return (clause.operator, clause.version, upper) if moved.contains(new_v, prereleases=True) else None


def _move_bound(text: str, operator: str, bound: str, upper: str) -> str | None:
    """`text` with the version characters of its `operator bound` clause replaced by `upper`."""
    match = re.search(re.escape(operator) + (r"(?!=)" if operator == "<" else "") + r"\s*(" + re.escape(bound) + ")",
                      text)
    return text[:match.start(1)] + upper + text[match.end(1):] if match else None


def _same(a: str, b: str) -> bool:
    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a == b


def _aligned_text(req: Requirement, required: Requirement) -> str | None:
    """The plugin's requirement rewritten to what the host needs, keeping its operator style."""
    exact = _exact(required.specifier)
    if exact is not None:
        ops = {s.operator for s in req.specifier}
        op = ">=" if ops == {">="} else "=="
        spec = f"{op}{exact}"
    else:
        floors = [s.version for s in required.specifier if s.operator == ">="]
        mine = _exact(req.specifier)
        # an exact plugin pin stays exact: the lowest version the host's range admits
        spec = f"=={floors[0]}" if mine is not None and len(floors) == 1 else str(required.specifier)
    extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    marker = f"; {req.marker}" if req.marker else ""
    return f"{req.name}{extras}{spec}{marker}"


def _judge_aligned(req: Requirement, required: Requirement) -> Kind | None:
    """None when the plugin states what the host requires; else how far it is off."""
    exact = _exact(required.specifier)
    mine = _exact(req.specifier)
    if exact is not None:
        if mine is not None and _same(mine, exact):
            return None
        if not req.specifier.contains(exact, prereleases=True):
            return BUILD_PIN_MISMATCH
        return BUILD_PIN_LOOSE
    if mine is not None:  # a range upstream: an exact plugin pin inside it is fine
        return None if required.specifier.contains(mine, prereleases=True) else BUILD_PIN_MISMATCH
    return None


def _line_of(text: str, needle_at: int) -> int:
    return text.count("\n", 0, needle_at) + 1


def _changed_line(before: str, after: str) -> tuple[int, str, str]:
    """The first line that differs between two texts: (1-based line, before, after)."""
    a, b = before.splitlines(), after.splitlines()
    for tag, i1, _i2, j1, _j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            return i1 + 1, a[i1] if i1 < len(a) else "", b[j1] if j1 < len(b) else ""
    return 0, "", ""


class _Planner:
    def __init__(self, settings: Settings, old: str, new: str, host_label: str, metadata: str) -> None:
        self.settings, self.old, self.new, self.host_label = settings, old, new, host_label
        self.dist = settings.host_dist
        self.required = host_requirements(metadata)
        self.aligned = {canonicalize_name(name) for name in settings.aligned_requirements}
        self.edits: list[PinEdit] = []

    def _edit(self, path: str, line: int, what: str, package: str, before: str, after: str,
              finding: Finding) -> None:
        finding = replace(finding, subject=f"{what} {package}")  # one identity per statement
        self.edits.append(PinEdit(path, line, what, package, before, after, finding))

    # -- pyproject.toml, through tomlkit ---------------------------------------------------
    def pyproject(self, path: str, text: str) -> str:
        try:
            doc = tomlkit.parse(text)
        except Exception:  # tomlkit raises its own ParseError family; an unparsable file is no pin
            return text
        groups: list[tuple[str, object, bool]] = []
        build = doc.get("build-system", {}).get("requires")
        if build is not None:
            groups.append(("[build-system].requires", build, True))
        project = doc.get("project", {})
        if "dependencies" in project:
            groups.append(("[project].dependencies", project["dependencies"], True))
        for extra, items in project.get("optional-dependencies", {}).items():
            groups.append((f"[project.optional-dependencies] {extra}", items, self._own_install(items) is None))
        for what, items, align in groups:
            text = self._group(path, text, doc, what, items, align)
        return text

    def _own_install(self, items: object) -> str | None:
        """The host version an extra pins when it is not OLD: a separate install of its own."""
        for item in items if isinstance(items, list) else ():
            req = _requirement(item)
            if req is not None and canonicalize_name(req.name) == canonicalize_name(self.dist):
                pin = _exact(req.specifier)
                if pin is not None and not _same(pin, self.old) and not _same(pin, self.new):
                    return pin
        return None

    def _group(self, path: str, text: str, doc: tomlkit.TOMLDocument, what: str, items: object,
               align: bool) -> str:
        if not isinstance(items, list):
            return text
        for i, item in enumerate(items):
            req = _requirement(item)
            if req is None:
                continue
            name = canonicalize_name(req.name)
            replacement: str | None = None
            if name == canonicalize_name(self.dist):
                pin = _exact(req.specifier)
                if pin is None:
                    widened = _widened(req.specifier, self.old, self.new) if align else None
                    if widened is None or (replacement := _move_bound(str(item), *widened)) is None:
                        continue
                    kind, args = HOST_RANGE_EXCLUDES_NEW, {"what": what, "dist": self.dist, "old": str(item),
                                                           "new": self.new, "widened": replacement}
                elif not align and not _same(pin, self.old):
                    line = _line_of(text, text.find(str(item)))
                    self._edit(path, line, what, self.dist, _line(text, line), "", Finding(
                        SEPARATE_PIN, {"what": what, "dist": self.dist, "version": pin},
                        Location(path, line, snippet=str(item))))
                    continue
                elif _same(pin, self.new):
                    continue
                else:
                    replacement = str(item).replace(pin, self.new, 1)
                    kind, args = HOST_PIN_STALE, {"what": what, "dist": self.dist, "old": pin, "new": self.new}
            elif align and name in self.aligned and name in self.required:
                required = self.required[name]
                kind = _judge_aligned(req, required)
                if kind is None:
                    continue
                replacement = _aligned_text(req, required)
                args = {"what": what, "current": str(item), "required": str(required.specifier),
                        "host": self.dist, "new": self.new}
            if replacement is None or replacement == str(item):
                continue
            literal = isinstance(item, String) and item.type in (StringType.SLL, StringType.MLL)
            items[i] = tomlkit.string(replacement, literal=literal)
            after_text = tomlkit.dumps(doc)
            line, before, after = _changed_line(text, after_text)
            self._edit(path, line, what, name, before, after, Finding(
                kind, args, Location(path, line, snippet=before.strip()),
                suggestion=f"set `{replacement}`"))
            text = after_text
        return text

    # -- a version constant (regex pin source) and plain-text requirement lines -------------
    def regex(self, path: str, text: str, pattern: re.Pattern[str], what: str) -> str:
        match = pattern.search(text)
        if match is None or match.lastindex is None or _same(match.group(1), self.new):
            return text
        if not _same(match.group(1), self.old):
            return text  # a constant stating another version is not the pin being moved
        start, end = match.span(1)
        after_text = text[:start] + self.new + text[end:]
        line = _line_of(text, start)
        self._edit(path, line, what, self.dist, _line(text, line), _line(after_text, line), Finding(
            HOST_PIN_STALE, {"what": what, "dist": self.dist, "old": match.group(1), "new": self.new},
            Location(path, line, snippet=_line(text, line).strip()), suggestion=f"set {self.new}"))
        return after_text

    def statements(self, path: str, text: str, found: list[PinStatement]) -> str:
        """Host requirements pins.py found in a non-TOML file (setup.py, setup.cfg, requirements,
        README lines): each `host==OLD` gets its version characters replaced, nothing else."""
        for statement in sorted(found, key=lambda s: -s.start):  # bottom-up keeps the spans valid
            pin = statement.exact
            if text[statement.start:statement.end] != statement.requirement:
                continue
            if pin is None and (widened := _widened(statement.specifier, self.old, self.new)) is not None:
                text = self._widen(path, text, statement, widened)
                continue
            if pin is None or not _same(pin, self.old):
                continue
            at = statement.start + statement.requirement.rfind(pin)
            after_text = text[:at] + self.new + text[at + len(pin):]
            line = _line_of(text, at)
            before, after = _line(text, line), _line(after_text, line)
            what = f"{path} line {line} ({statement.kind})"
            self._edit(path, line, what, self.dist, before, after, Finding(
                HOST_PIN_STALE, {"what": what, "dist": self.dist, "old": pin, "new": self.new},
                Location(path, line, snippet=before.strip()), suggestion=f"set {self.dist}=={self.new}"))
            text = after_text
        return text


    def _widen(self, path: str, text: str, statement: PinStatement, widened: tuple[str, str, str]) -> str:
        """A narrow range in a text file: its upper bound's version characters moved (`_widened`)."""
        moved = _move_bound(statement.requirement, *widened)
        if moved is None:
            return text
        after_text = text[:statement.start] + moved + text[statement.end:]
        line = _line_of(text, statement.start)
        before, after = _line(text, line), _line(after_text, line)
        what = f"{path} line {line} ({statement.kind})"
        self._edit(path, line, what, self.dist, before, after, Finding(
            HOST_RANGE_EXCLUDES_NEW, {"what": what, "dist": self.dist, "old": statement.requirement,
                                      "new": self.new, "widened": moved},
            Location(path, line, snippet=before.strip()), suggestion=f"set `{moved}`"))
        return after_text


def _requirement(item: object) -> Requirement | None:
    if not isinstance(item, str):
        return None
    try:
        return Requirement(str(item))
    except InvalidRequirement:
        return None


def _line_start(text: str, line: int) -> int:
    pos = 0
    for _ in range(line - 1):
        pos = text.index("\n", pos) + 1
    return pos


def _line(text: str, line: int) -> str:
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else ""


def _regex_sources(settings: Settings) -> Iterator[tuple[str, re.Pattern[str]]]:
    for source in settings.pin_sources:
        if source.kind == "regex" and source.file:
            try:
                yield source.file, re.compile(source.pattern, re.MULTILINE)
            except re.error:
                continue  # read_pin reports a bad pattern as a ConfigError


def plan_pins(settings: Settings, files: list[str], read: ReadFile, *, old: str, new: str,
              host_label: str, metadata: str) -> PinPlan:
    """Every pin statement in the plugin (files relative to the plugin project root) and its edit.

    `files` lists the project's files; pyproject.toml and the regex pin sources are read here, and
    the other statements of the host requirement come from `pinport.pins.find_pins` (setup.py,
    setup.cfg, requirements files, README install lines), with their character spans.
    """
    planner = _Planner(settings, old, new, host_label, metadata)
    texts: dict[str, tuple[str, str]] = {}
    constants = dict(_regex_sources(settings))
    by_file: dict[str, list[PinStatement]] = {}
    for statement in find_pins(read, settings.host_dist, lambda: files):
        if statement.file != "pyproject.toml" and statement.kind != METADATA:  # PKG-INFO is generated
            by_file.setdefault(statement.file, []).append(statement)
    for path in sorted(set(by_file) | {"pyproject.toml"} | set(constants)):
        text = read(path)
        if text is None:
            continue
        after = text
        if path == "pyproject.toml":
            after = planner.pyproject(path, after)
        if path in constants:
            name = constants[path].pattern.split("\\")[0].split("(")[0].strip() or "pin constant"
            after = planner.regex(path, after, constants[path], f"{name} in {path}")
        if path in by_file and after == text:
            after = planner.statements(path, after, by_file[path])
        if after != text:
            texts[path] = (text, after)
    return PinPlan(tuple(sorted(planner.edits, key=lambda e: (e.path, e.line))), texts)
