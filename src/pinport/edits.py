"""Byte-exact file edits: every command that changes a user's files (`port --apply`, `rebase --apply`)
goes through this module, so each changes exactly the lines it reports and nothing else.

A file is read as bytes and split into lines the way Python's tokenizer splits them (`\\r\\n`,
`\\r` or `\\n`; a form feed or `\\x0b` is not a line break), so line numbers taken from `ast` land
on the intended lines. Each line keeps its own ending; text is decoded with the file's own
encoding (BOM, PEP 263 cookie) and encoded back with it, so a latin-1 file stays latin-1 and a
CRLF file stays CRLF. Edits replace whole line ranges; every byte outside them is written back
as read. After writing, the file is read again and compared with the plan (the text, and the
syntax tree when the plan parses); on a mismatch the original bytes are restored and the file
is reported as rolled back.
"""

from __future__ import annotations

import ast
import codecs
import difflib
import io
import os
import re
import shutil
import subprocess
import tempfile
import tokenize
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .errors import PinportError

_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_ENDINGS = (b"\r\n", b"\r", b"\n")


class DirtyTree(PinportError):
    """An edit on a tree with uncommitted changes, a tree git does not track, or a downloaded release."""


class EditError(PinportError):
    """A file that cannot be edited safely (undecodable, text its encoding cannot hold, a stale plan)."""


def split_lines(data: bytes) -> list[bytes]:
    """Lines with their endings, split where Python's tokenizer splits them (not at form feeds)."""
    return _LINE.findall(data)


def _ending(line: bytes) -> bytes:
    return next((e for e in _ENDINGS if line.endswith(e)), b"")


@dataclass(frozen=True)
class Edit:
    """Replace lines `start`..`end` (1-based, inclusive) by `lines`; `end == start - 1` inserts
    before `start`. `expect` is what the plan saw there: a file that now holds other text is refused."""

    start: int
    end: int
    lines: tuple[str, ...]
    expect: tuple[str, ...] | None = None
    label: str = ""  # what the edit is, for the report (a unit, a pin)


@dataclass(frozen=True)
class AppliedEdit:
    """One edit as made: its lines before (in the file as read) and after (in the file as written)."""

    path: str
    label: str
    start: int  # first line replaced, in the file as read
    before: tuple[str, ...]
    new_start: int  # first line of the replacement, in the file as written
    after: tuple[str, ...]

    @property
    def end(self) -> int:
        return self.start + len(self.before) - 1

    @property
    def new_end(self) -> int:
        return self.new_start + len(self.after) - 1

    def describe(self) -> list[str]:
        """Each changed run of lines as `path:line before -> after` (line in the file as read;
        a run of several lines shows its first and how many)."""
        def side(lines: list[str]) -> str:
            if not lines:
                return "(nothing)"
            first = lines[0].strip() or "(blank line)"
            return first if len(lines) == 1 else f"{first} [+{len(lines) - 1} lines]"
        out = []
        matcher = difflib.SequenceMatcher(None, list(self.before), list(self.after), autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op != "equal":
                out.append(f"{self.path}:{self.start + i1} {side(list(self.before[i1:i2]))} -> "
                           f"{side(list(self.after[j1:j2]))}")
        return out

    def diff(self, context: int = 2) -> tuple[str, ...]:
        """The unified diff of this edit in file line numbers."""
        lines = difflib.unified_diff([x + "\n" for x in self.before], [x + "\n" for x in self.after],
                                     f"a/{self.path}", f"b/{self.path}", n=context)
        return tuple(_shift_header(x.rstrip("\n"), self.start - 1, self.new_start - 1) for x in lines)


def _shift_header(line: str, by_old: int, by_new: int) -> str:
    if not line.startswith("@@ "):
        return line
    old, new = line.split(" ")[1:3]

    def moved(part: str, by: int) -> str:
        first, _, count = part[1:].partition(",")
        return f"{part[0]}{int(first) + by}" + (f",{count}" if count else "")

    return f"@@ {moved(old, by_old)} {moved(new, by_new)} @@"


@dataclass(frozen=True)
class FileEdits:
    """What happened to one file: the edits made, or why none were (and whether it was rolled back)."""

    path: str
    edits: tuple[AppliedEdit, ...] = ()
    refused: str = ""  # the file was left as it was, and why
    rolled_back: bool = False  # written, found different from the plan, restored

    @property
    def ok(self) -> bool:
        return not self.refused


@dataclass
class SourceFile:
    """A file's bytes as lines: the decoded text of each and its raw ending, plus the encoding."""

    path: Path
    data: bytes
    encoding: str
    bom: bytes
    raw: list[bytes] = field(repr=False)

    @classmethod
    def read(cls, path: Path) -> SourceFile:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise EditError(f"{path}: cannot read ({exc.strerror})") from None
        return cls.parse(path, data)

    @classmethod
    def parse(cls, path: Path, data: bytes) -> SourceFile:
        encoding = source_encoding(path, data)
        bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
        body = data[len(bom):]
        try:
            body.decode(encoding)
        except (UnicodeDecodeError, LookupError) as exc:
            raise EditError(f"{path}: not valid {encoding} ({exc})") from None
        return cls(path, data, encoding, bom, split_lines(body))

    @property
    def lines(self) -> list[str]:
        return [self._text(x) for x in self.raw]

    def _text(self, raw: bytes) -> str:
        return raw[:len(raw) - len(_ending(raw))].decode(self.encoding)

    def _dominant(self) -> bytes:
        endings = Counter(_ending(x) for x in self.raw if _ending(x))
        return endings.most_common(1)[0][0] if endings else b"\n"

    def render(self, edits: Sequence[Edit], name: str = "") -> tuple[bytes, list[AppliedEdit]]:
        """The file's bytes with `edits` (non-overlapping) in place, and each edit as made."""
        ordered = sorted(edits, key=lambda e: (e.start, e.end))
        for a, b in zip(ordered, ordered[1:], strict=False):
            if b.start <= a.end:
                raise EditError(f"{self.path}: edits at lines {a.start}-{a.end} and {b.start}-{b.end} overlap")
        current = self.lines
        out: list[bytes] = []
        made: list[AppliedEdit] = []
        cursor = 0  # index of the next original line to copy
        shift = 0
        dominant = self._dominant()
        for edit in ordered:
            if edit.start < 1 or edit.end < edit.start - 1 or edit.end > len(self.raw):
                raise EditError(f"{self.path}: lines {edit.start}-{edit.end} are outside the file "
                                f"({len(self.raw)} lines)")
            before = tuple(current[edit.start - 1:edit.end])
            if edit.expect is not None and tuple(edit.expect) != before:
                raise EditError(f"{self.path}:{edit.start}: the file no longer holds what was analysed there")
            out.extend(self.raw[cursor:edit.start - 1])
            out.extend(self._encode_lines(edit, dominant))
            cursor = edit.end
            made.append(AppliedEdit(name or str(self.path), edit.label, edit.start, before, edit.start + shift,
                                    tuple(edit.lines)))
            shift += len(edit.lines) - len(before)
        out.extend(self.raw[cursor:])
        return self.bom + b"".join(out), made

    def _encode_lines(self, edit: Edit, dominant: bytes) -> list[bytes]:
        """The replacement lines as bytes. Where a new line takes the place of an old one it keeps
        that line's ending (a mixed file stays mixed); the last new line keeps the last replaced
        line's ending (so a missing final newline stays missing); lines added in between take the
        ending of the replaced lines, else of the line above, else the file's usual one."""
        replaced = self.raw[edit.start - 1:edit.end]
        endings = [_ending(x) for x in replaced]
        if not replaced and edit.start > 1 and not _ending(self.raw[edit.start - 2]) and edit.lines:
            raise EditError(f"{self.path}:{edit.start}: cannot add lines after a last line without a newline")
        above = _ending(self.raw[edit.start - 2]) if edit.start > 1 else b""
        fill = next((e for e in reversed(endings) if e), above or dominant)
        out = []
        for i, text in enumerate(edit.lines):
            if "\r" in text or "\n" in text:
                raise EditError(f"{self.path}:{edit.start}: a replacement line holds a line break")
            if i == len(edit.lines) - 1 and endings:
                ending = endings[-1]
            else:
                ending = endings[i] if i < len(endings) - 1 else fill
            try:
                out.append(text.encode(self.encoding) + ending)
            except UnicodeEncodeError as exc:
                raise EditError(f"{self.path}:{edit.start + i}: {exc.object[exc.start:exc.end]!r} cannot be "
                                f"written in the file's encoding ({self.encoding})") from None
        return out


def source_encoding(path: Path, data: bytes) -> str:
    """The encoding Python reads the file with: a BOM, a PEP 263 cookie, else UTF-8 (not for .py
    files only: a `# -*- coding` line is honoured wherever it is, which is what editors do too)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise EditError(f"{path}: {exc}") from None
    return "utf-8" if encoding == "utf-8-sig" else encoding


def _syntax(text: str) -> str | None:
    """The syntax tree of a text as a string to compare, None when it does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.dump(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def edit_file(path: Path, edits: Sequence[Edit], *, label: str | None = None,
              expect_bytes: Callable[[bytes], bool] | None = None) -> FileEdits:
    """Apply `edits` to one file, byte-exact outside them, verified after writing; never raises.

    `label` names the file in the result (default: the path as given). `expect_bytes` may refuse
    a file that changed since it was analysed (e.g. a content-hash check).
    """
    name = label if label is not None else str(path)
    try:
        source = SourceFile.read(path)
        if expect_bytes is not None and not expect_bytes(source.data):
            return FileEdits(name, refused="changed on disk since it was analysed; run again")
        data, made = source.render(edits, name)
    except EditError as exc:
        return FileEdits(name, refused=str(exc).removeprefix(f"{path}: "))
    if data == source.data:
        return FileEdits(name, tuple(made))
    planned = _planned_text(source, edits)
    try:
        _write_atomic(path, data)
    except OSError as exc:
        return FileEdits(name, refused=f"cannot write ({exc.strerror})")
    problem = _verify(path, source.encoding, planned, data)
    if problem:
        try:
            _write_atomic(path, source.data)
        except OSError as exc:
            return FileEdits(name, refused=f"{problem}; and restoring it failed ({exc.strerror})",
                             rolled_back=False)
        return FileEdits(name, refused=f"{problem}; rolled back", rolled_back=True)
    return FileEdits(name, tuple(made))


def _planned_text(source: SourceFile, edits: Sequence[Edit]) -> list[str]:
    lines = source.lines
    for edit in sorted(edits, key=lambda e: -e.start):
        lines[edit.start - 1:edit.end] = list(edit.lines)
    return lines


def _verify(path: Path, encoding: str, planned: list[str], written: bytes) -> str:
    """Why the file on disk is not the plan ("" when it is): its lines, then its syntax tree."""
    try:
        data = path.read_bytes()
        now = SourceFile.parse(path, data)
    except EditError as exc:
        return f"re-reading after the edit failed ({exc})"
    if data != written:
        return "the file on disk differs from what was written"
    lines = now.lines
    if lines != planned:
        where = next((i for i, (a, b) in enumerate(zip(lines, planned, strict=False), 1) if a != b),
                     min(len(lines), len(planned)) + 1)
        return f"after the edit line {where} is not what was planned"
    plan_tree = _syntax("\n".join(planned) + "\n") if path.suffix in (".py", ".pyi") else None
    if plan_tree is not None and _syntax(data[len(now.bom):].decode(encoding)) != plan_tree:
        return "the edited file does not parse to the planned code"
    return ""


def _write_atomic(path: Path, data: bytes) -> None:
    """Replace the file's content in one step (a temporary file renamed over it), keeping its mode."""
    mode = path.stat().st_mode
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".pinport", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(tmp, mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def line_edits(before: Sequence[str], after: Sequence[str], *, label: str = "") -> list[Edit]:
    """The smallest whole-line edits turning `before` into `after` (e.g. from a TOML rewrite)."""
    out = []
    matcher = difflib.SequenceMatcher(None, list(before), list(after), autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "equal":
            out.append(Edit(i1 + 1, i2, tuple(after[j1:j2]), tuple(before[i1:i2]), label))
    return out


# -- the tree an edit may touch -------------------------------------------------------------------
def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    git = shutil.which("git")
    if git is None:
        return None
    try:
        return subprocess.run([git, "--no-optional-locks", "-C", str(root), *args], capture_output=True,
                              text=True, check=False)
    except OSError:
        return None


def require_clean_tree(root: Path, paths: Sequence[str], *, allow_dirty: bool = False) -> None:
    """Refuse to edit (unless allowed) a git tree with uncommitted changes, files git does not
    track, or no git at all: every edit must be reviewable with `git diff` and undoable."""
    root = root.resolve()
    if allow_dirty:
        return
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None or top.returncode != 0:
        raise DirtyTree(f"{root}: not a git work tree; editing needs one (or pass --allow-dirty)")
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    if status is None or status.returncode != 0 or status.stdout.strip():
        first = status.stdout.strip().splitlines()[0] if status and status.stdout.strip() else "git status failed"
        raise DirtyTree(f"{root}: uncommitted changes ({first.strip()}); commit or stash them first, or pass "
                        "--allow-dirty")
    untracked = _git(root, "ls-files", "--error-unmatch", "--", *paths) if paths else None
    if untracked is not None and untracked.returncode != 0:
        raise DirtyTree(f"{root}: a file to edit is not tracked by git ({untracked.stderr.strip()}); pass "
                        "--allow-dirty to edit it anyway")
