"""A read-only source tree: where a host or plugin version's files live, and what they hash to."""

from __future__ import annotations

import codecs
import hashlib
import io
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class SourceTree:
    """Files of one version of a package, ready to parse; never parsed here.

    `root` is the directory that contains the top-level package directory (so
    `root / "vllm" / "config.py"` exists for a vLLM tree). `files` maps each
    `.py`/`.pyi` path relative to `root` (POSIX separators, sorted) to the
    hex blake2b digest of its bytes. `label` is what users see ("vllm 0.26.0",
    "~/vllm@v0.24.0"); `version` is the package version when known.
    """

    root: Path
    label: str
    package: str
    version: str | None = None
    files: dict[str, str] = field(default_factory=dict)
    metadata: str = ""  # the wheel's METADATA text (Requires-Dist lines), when available
    # the directory holding pyproject.toml / setup.py when known: `root` itself for a flat
    # layout, root's parent for a `src/` layout
    project_root: Path | None = None

    def read_text(self, rel: str) -> str:
        """A file's text as Python reads it: its BOM or PEP 263 encoding (else UTF-8), newlines as `\\n`."""
        return decode_source((self.root / rel).read_bytes())


def decode_source(data: bytes) -> str:
    """Source bytes as text: the encoding a BOM or a PEP 263 cookie names (else UTF-8), the BOM
    dropped, undecodable bytes replaced, every line ending turned into `\\n`."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        codecs.lookup(encoding)
    except (SyntaxError, LookupError):
        encoding = "utf-8"
    return normalise_newlines(data.decode("utf-8" if encoding == "utf-8-sig" else encoding, errors="replace"))


def normalise_newlines(text: str) -> str:
    """Text as Python's tokenizer sees it: no BOM, every line ending (CRLF, CR, LF) a `\\n`."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


_TEXT_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def python_lines(text: str) -> list[str]:
    """A source's lines without endings, split where Python's tokenizer splits them (CRLF,
    CR, LF; not at form feeds as `str.splitlines` does), so they are numbered as `ast` numbers them."""
    return [line.rstrip("\r\n") for line in _TEXT_LINE.findall(text)]


def hash_bytes(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def scan_all(root: Path) -> dict[str, str]:
    """Hash every .py/.pyi file anywhere under root (a cached archive's whole tree)."""
    out = {
        path.relative_to(root).as_posix(): hash_bytes(path.read_bytes())
        for path in root.rglob("*.py*")
        if path.suffix in (".py", ".pyi") and not path.is_symlink() and path.is_file()
    }
    return dict(sorted(out.items()))


def scan_files(root: Path, packages: tuple[str, ...]) -> dict[str, str]:
    """Hash every .py/.pyi file under root/<package> for each package, skipping symlinks."""
    out: dict[str, str] = {}
    for pkg in packages:
        base = root / pkg
        candidates = [base.with_suffix(".py")] if not base.is_dir() else sorted(base.rglob("*.py*"))
        for path in candidates:
            if path.suffix not in (".py", ".pyi") or path.is_symlink() or not path.is_file():
                continue
            out[path.relative_to(root).as_posix()] = hash_bytes(path.read_bytes())
    return dict(sorted(out.items()))
