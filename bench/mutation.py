"""Mutation score: how many small changes to the checks and the models under them the tests notice.

    python bench/mutation.py [--budget 900] [--per-module 16] [--module checks/imports.py ...]

cosmic-ray provides the mutation operators and finds every place each one applies (flipped
comparisons, `and`/`or` swaps, added `not`, changed numbers, emptied loops, removed
decorators, ...). This script samples mutants per module (one operator per source position,
positions chosen with a seed derived from the module's path, so a run is repeatable), and
runs each mutant against the tests that execute the mutated line: one coverage run of the
synthetic suite first records, per test, the lines it runs (checks run in-process there, so none
hide in the forked check worker); a line run only at import time counts every test of its
module. Each mutant runs in a forked child that imports the mutated source from memory, so the
files on disk are never touched and a crash or a hang (timeout) costs only the child. A mutant
on a line no test runs survives. A module stops when its share of the time budget is spent.

Mutants inside annotations (never evaluated under `from __future__ import annotations`) and in
`cost = ...` scheduling hints are not made: they cannot change what the tests see. A mutant is
killed when the tests fail (or hang), survived when they pass. Mutants listed in
bench/mutation_equivalents.md (same behaviour as the original, with the reason) are not
counted. The last line is `mutation score: K/N killed`.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib.abc
import importlib.util
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import coverage
import pytest
from cosmic_ray.ast import ast_nodes, get_ast
from cosmic_ray.mutating import mutate_code
from cosmic_ray.plugins import get_operator, operator_names

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "pinport"
EQUIVALENTS = ROOT / "bench" / "mutation_equivalents.md"

# The synthetic tests: fast, and no release downloads. Which of them a mutant runs is decided per line.
TESTS = ("checks", "idioms", "model", "plugin", "test_scan.py", "test_architecture.py", "test_facts.py",
         "port/test_origins.py")  # the last two: the facts module's own tests, and copies lagging OLD

# Operators whose mutants are near-duplicates of others, or mostly incompetent (a name replaced by
# a random other name), are left out: the score should say something about the tests.
SKIPPED_OPERATORS = ("core/VariableInserter", "core/VariableReplacer")


@dataclass(frozen=True)
class Mutant:
    module: str  # path relative to src/pinport, e.g. "checks/imports.py"
    operator: str
    occurrence: int
    line: int
    before: str  # the original line, stripped
    after: str  # the mutated line, stripped

    @property
    def key(self) -> tuple[str, str, str, str]:
        """Stable across line shifts: which module, which operator, which line became what."""
        return self.module, self.operator, self.before, self.after


# Beside checks/: the resolver, and the host facts and selection sites the checks share.
MODEL = ("model/resolve.py", "model/host.py", "model/selection.py")


def targets() -> list[str]:
    """Every module the benchmark covers: checks/, the model modules above, the facts modules."""
    found = [f"checks/{p.name}" for p in sorted((SRC / "checks").glob("*.py"))]
    found += [m for m in MODEL if (SRC / m).exists()]
    found += [p.relative_to(SRC).as_posix() for p in sorted(SRC.rglob("*facts*.py"))]
    return list(dict.fromkeys(found))


def _operators() -> list[tuple[str, object]]:
    ops = []
    for name in operator_names():
        cls = get_operator(name)
        if cls.arguments() or name.startswith(SKIPPED_OPERATORS):
            continue
        ops.append((name, cls()))
    return ops


def enumerate_mutants(module: str, source: str) -> list[tuple[str, int, tuple[int, int]]]:
    """(operator, occurrence, (line, column)) for every place every operator applies."""
    nodes = list(ast_nodes(get_ast(source)))
    found = []
    for name, op in _operators():
        positions = [start for node in nodes for start, _ in op.mutation_positions(node)]
        found.extend((name, occurrence, start) for occurrence, start in enumerate(positions))
    return found


def _inert_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Source ranges whose mutants cannot change behaviour, by construction: annotations in a module
    with `from __future__ import annotations` (never evaluated), and `cost = ...` scheduling hints
    (they only decide which process runs a check)."""
    tree = ast.parse(source)
    future = any(isinstance(n, ast.ImportFrom) and n.module == "__future__" and
                 any(a.name == "annotations" for a in n.names) for n in tree.body)
    spans = []
    for node in ast.walk(tree):
        notes: list[ast.AST] = []
        if future and isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            notes.append(node.annotation)
        if future and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
            notes.append(node.returns)
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["cost"]:
            notes.append(node)
        spans += [((n.lineno, n.col_offset), (n.end_lineno, n.end_col_offset)) for n in notes]
    return spans


def sample(module: str, source: str, size: int) -> list[Mutant]:
    """Up to `size` mutants at distinct source positions, one operator each, chosen reproducibly."""
    rng = random.Random(hashlib.sha256(module.encode()).hexdigest())
    inert = _inert_spans(source)
    by_position: dict[tuple[int, int], list[tuple[str, int]]] = {}
    for name, occurrence, start in enumerate_mutants(module, source):
        if any(a <= start < b for a, b in inert):
            continue
        by_position.setdefault(start, []).append((name, occurrence))
    positions = sorted(by_position)
    rng.shuffle(positions)
    lines = source.splitlines()
    chosen: list[Mutant] = []
    for position in positions:
        if len(chosen) >= size:
            break
        name, occurrence = rng.choice(sorted(by_position[position]))
        mutated = mutate_code(source, get_operator(name)(), occurrence)
        if mutated is None:
            continue
        try:
            compile(mutated, module, "exec")
        except SyntaxError:
            continue  # incompetent: not a program, nothing to test
        line = position[0]
        after_lines = mutated.splitlines()
        after = after_lines[line - 1] if line - 1 < len(after_lines) else ""
        chosen.append(Mutant(module, name, occurrence, line, lines[line - 1].strip(), after.strip()))
    return chosen


class _MutantFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves one module's mutated source from memory; everything else imports as usual."""

    def __init__(self, fullname: str, path: Path, source: str) -> None:
        self.fullname, self.path, self.source = fullname, path, source

    def find_spec(self, fullname, path, target=None):
        if fullname != self.fullname:
            return None
        package = [str(self.path.parent)] if self.path.name == "__init__.py" else None
        return importlib.util.spec_from_file_location(fullname, self.path, loader=self,
                                                      submodule_search_locations=package)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(compile(self.source, str(self.path), "exec"), module.__dict__)


def _module_name(module: str) -> str:
    parts = ["pinport", *module.removesuffix(".py").split("/")]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _in_child(body, timeout: float) -> int | None:
    """body() in a forked child (output silenced, this tree's sources first): its exit code, None on timeout."""
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 3
        try:
            os.setpgid(0, 0)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            sys.dont_write_bytecode = True
            sys.path.insert(0, str(ROOT / "src"))  # this tree's sources, whichever checkout is installed
            code = body()
        finally:
            os._exit(int(code))
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.05)


def _pytest(args: list[str]) -> int:
    return pytest.main([*args, "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "--rootdir", str(ROOT)])


class _PerTest:
    """A pytest plugin naming each test's coverage context after its node id, and timing it."""

    def __init__(self, cov: coverage.Coverage, times: Path) -> None:
        self.cov, self.times, self.seconds = cov, times, {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.cov.switch_context(item.nodeid)
        started = time.perf_counter()
        yield
        self.seconds[item.nodeid] = time.perf_counter() - started
        self.cov.switch_context("")

    def pytest_sessionfinish(self, session):
        self.times.write_text(json.dumps(self.seconds), encoding="utf-8")


def lines_to_tests(modules: list[str], timeout: float) -> tuple[dict[str, dict[int, list[str]]], dict[str, float]] | None:
    """For each line of each module, the test node ids that run it, and each test's seconds
    (None when the tests fail unmutated)."""
    data_file = Path(tempfile.mkdtemp(prefix="pinport-mutation-")) / "coverage"
    times = data_file.with_name("times.json")

    def body() -> int:
        os.cpu_count = lambda: 1  # every check in this process, where the test context is known
        cov = coverage.Coverage(data_file=str(data_file), include=[str(SRC / m) for m in modules],
                                config_file=False)  # not the project's settings: one plain data file
        cov.start()
        code = pytest.main([*(str(ROOT / "tests" / t) for t in TESTS), "-q", "-p", "no:cacheprovider",
                            "-o", "addopts=", "--rootdir", str(ROOT)], plugins=[_PerTest(cov, times)])
        cov.stop()
        cov.save()
        return code

    try:
        if _in_child(body, timeout) != 0:
            return None
        data = coverage.CoverageData(basename=str(data_file))
        data.read()
        seconds = json.loads(times.read_text(encoding="utf-8"))
        registry = sorted(t for t in seconds if t.startswith("tests/checks/test_registry.py::"))
        lines: dict[str, dict[int, list[str]]] = {}
        for m in modules:
            by_line = data.contexts_by_lineno(str(SRC / m))
            anywhere = sorted({c for contexts in by_line.values() for c in contexts if c})
            # a line run only while the module is imported (a constant, a decorator, a class body)
            # shapes everything in it: every test that runs any of the module is its test
            # ... and the registry tests, which read what import time defines (kinds, drift numbers)
            lines[m] = {line: sorted(c for c in contexts if c) or sorted({*anywhere, *registry})
                        for line, contexts in by_line.items()}
        return lines, seconds
    finally:
        shutil.rmtree(data_file.parent, ignore_errors=True)


def run_mutant(mutant: Mutant, source: str, tests: list[str], timeout: float) -> str:
    """'killed', 'survived' or 'timeout': the given tests in a forked child importing the mutant."""
    if not tests:
        return "survived"  # no test runs the line

    def body() -> int:
        sys.meta_path.insert(0, _MutantFinder(_module_name(mutant.module), SRC / mutant.module, source))
        return _pytest(tests)

    code = _in_child(body, timeout)
    return "timeout" if code is None else "survived" if code == 0 else "killed"


def equivalents() -> set[tuple[str, str, str, str]]:
    """Mutants the table in bench/mutation_equivalents.md names as behaving like the original."""
    if not EQUIVALENTS.exists():
        return set()
    keys = set()
    for line in EQUIVALENTS.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and cells[0].startswith("`"):
            keys.add(tuple(c.strip("`") for c in cells[:4]))
    return keys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=900.0, help="seconds for the whole run (default 900)")
    parser.add_argument("--per-module", type=int, default=16, help="mutants sampled per module (default 16)")
    parser.add_argument("--module", action="append", default=[], help="only this module (e.g. checks/imports.py)")
    parser.add_argument("--show-survivors", action="store_true", help="print every surviving mutant")
    args = parser.parse_args(argv)

    chosen = [m for m in targets() if not args.module or m in args.module]
    if not chosen:
        print(f"no such module: {', '.join(args.module)}", file=sys.stderr)
        return 2
    known = equivalents()
    measured = lines_to_tests(chosen, timeout=900.0)
    if measured is None:
        print("the synthetic tests fail (or time out) unmutated: no score", file=sys.stderr)
        return 2
    covered_by, seconds = measured
    share = args.budget / len(chosen)
    killed = counted = 0
    survivors: list[Mutant] = []
    for module in chosen:
        started = time.monotonic()
        source = (SRC / module).read_text(encoding="utf-8")
        covered = covered_by[module]
        stats = {"killed": 0, "survived": 0, "equivalent": 0}
        for mutant in sample(module, source, args.per_module):
            if time.monotonic() - started > share:
                break
            if mutant.key in known:
                stats["equivalent"] += 1
                continue
            mutated = mutate_code(source, get_operator(mutant.operator)(), mutant.occurrence)
            tests = covered.get(mutant.line, [])
            # a hang is a kill, so the limit must leave room for a slow machine: 5x the unmutated run
            timeout = 20.0 + 5 * sum(seconds.get(t, 1.0) for t in tests)
            outcome = run_mutant(mutant, mutated, tests, timeout)
            if outcome == "survived":
                stats["survived"] += 1
                survivors.append(mutant)
            else:
                stats["killed"] += 1
        run = stats["killed"] + stats["survived"]
        killed += stats["killed"]
        counted += run
        print(f"{module:34} killed {stats['killed']:3}  survived {stats['survived']:3}  "
              f"equivalent {stats['equivalent']:2}  ({time.monotonic() - started:5.0f} s)", flush=True)
    if survivors and args.show_survivors:
        print("\nsurviving mutants (add a test, or list them in bench/mutation_equivalents.md):")
        for m in survivors:
            print(f"| `{m.module}` | `{m.operator}` | `{m.before}` | `{m.after}` | line {m.line} |")
    print(f"mutation score: {killed}/{counted} killed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
