"""Phase 6, the GPU runbook's raw material: which of the plugin's own tests exercise which unit.

Tests are read, never run: each test file's imports, the names it references and the strings
it mentions are matched against a plugin unit (its module, its class and function names, the
host member it patches). The phase a test belongs to comes from its path and contents.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

ReadFile = Callable[[str], str | None]

# Phases of the runbook, in the order they are run, with the words that put a test in one.
PHASES = ("smoke", "CPU unit", "GPU unit", "spec-decode", "sequence parallel", "other features", "server")
_PHASE_WORDS = (
    ("server", re.compile(r"\b(server|openai|api_server|http|grpc|serve)\b|server", re.I)),
    ("spec-decode", re.compile(r"spec(ulative)?_?dec|speculat|draft|suffix|mtp|eagle|mlp_speculator", re.I)),
    ("sequence parallel", re.compile(r"ulysses|sequence_parallel|seq_parallel|shift_parallel|\bsp\b", re.I)),
)
_GPU = re.compile(r"\bcuda\b|\.cuda\(|device=['\"]cuda|requires_gpu|skipif\(.*cuda|torch\.cuda", re.I)
_ENGINE = re.compile(r"\b(LLM|AsyncLLMEngine|LLMEngine|EngineArgs)\b")


@dataclass(frozen=True)
class TestFile:
    """One test file: what it imports and references, and the runbook phase it belongs to."""

    path: str
    modules: frozenset[str]  # modules imported (absolute dotted)
    names: frozenset[str]  # identifiers and attribute names referenced, and imported names
    phase: str


@dataclass(frozen=True)
class Unit:
    """A plugin unit the rebase changed or flagged, with what identifies it in a test."""

    path: str  # plugin file
    module: str  # dotted plugin module
    qualname: str  # "Cls.meth", "<module>"
    host_names: tuple[str, ...] = ()  # names of host members it patches


def is_test_file(path: str) -> bool:
    name = PurePosixPath(path).name
    parts = PurePosixPath(path).parts
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")
                                     or any(p in ("tests", "test") for p in parts[:-1])) \
        and name != "__init__.py" and name != "conftest.py"


def _phase(path: str, text: str, engine: bool) -> str:
    for phase, pattern in _PHASE_WORDS:
        if pattern.search(path):
            return phase
    gpu = bool(_GPU.search(text))
    for phase, pattern in _PHASE_WORDS:
        if pattern.search(text) and gpu:
            return phase
    if engine and gpu:
        return "other features"
    return "GPU unit" if gpu else "CPU unit"


def read_test(path: str, text: str) -> TestFile | None:
    """The references of one test file, or None when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    modules: set[str] = set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module)
            for alias in node.names:
                modules.add(f"{node.module}.{alias.name}")
                names.add(alias.name)
        elif isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 200:
            modules.update(m for m in re.findall(r"[A-Za-z_][\w.]+", node.value) if "." in m)
    engine = bool(names & {"LLM", "AsyncLLMEngine", "LLMEngine", "EngineArgs"})
    return TestFile(path, frozenset(modules), frozenset(names), _phase(path, text, engine))


def read_tests(files: Iterable[str], read: ReadFile) -> list[TestFile]:
    out = []
    for path in sorted(files):
        if not is_test_file(path):
            continue
        text = read(path)
        test = read_test(path, text) if text is not None else None
        if test is not None:
            out.append(test)
    return out


def tests_for(unit: Unit, tests: Iterable[TestFile]) -> list[tuple[TestFile, str]]:
    """The tests that exercise a unit, each with why: imports its module, names it, or its target."""
    parts = [p for p in unit.qualname.split(".") if p != "<module>"]
    out = []
    for test in tests:
        imported = any(m == unit.module or m.startswith(unit.module + ".") for m in test.modules)
        named = [p for p in parts if p in test.names]
        host = [h for h in unit.host_names if h in test.names and not h.startswith("__")]
        if imported and (named or not parts):
            why = f"imports {unit.module}" + (f", uses {'.'.join(named)}" if named else "")
        elif named and (imported or len(named[-1]) > 3 and named[-1] not in ("forward", "__init__", "run")):
            why = f"references {'.'.join(named)}"
        elif imported:
            why = f"imports {unit.module}"
        elif host:
            why = f"exercises patched {', '.join(host)}"
        else:
            continue
        out.append((test, why))
    return out
