"""Per-release copies picked by version: which host releases a plugin's selector admits for each copy.

vllm-beam-search-plugin keeps one copy of vLLM's `Scheduler.schedule` per release
(`vendored_scheduler_v024.py`, `_v026.py`, `_v0261.py`, …; `project.version_specific_modules` finds the
siblings) and picks one in `_select_vendored_schedule` with branches such as
`if has_input_budget and release == (0, 26, 1): return ".vendored_scheduler_v0261", …`, raising
`RuntimeError` when none matches. Found by parsing: the plugin functions whose `if` branches name a
sibling (a module string, absolute or relative, or an import from it), each branch's test kept as a small
expression of host-version comparisons (`release == (0, 26, 1)`, `version >= "0.28"`,
`vllm_version_is("0.28.0")`; other terms unknown), and what the function does when no branch is taken.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace

from .model import PluginModel
from .project import version_specific_modules

# A test as data: ("cmp", op, (0, 26, 1)) compares the host version; ("and"|"or", (tests…)), ("not", (test,));
# ("?",) is a term about something else (a feature probe): unknown.
Test = tuple
_UNKNOWN: Test = ("?",)
_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_FLIP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_VERSIONISH = re.compile(r"version|release", re.IGNORECASE)
_NUMBERS = re.compile(r"\d+")


@dataclass(frozen=True)
class Branch:
    """One branch of a selector: the copy (module) it picks, its line, its test as text and as data."""

    module: str
    line: int
    text: str
    test: Test


@dataclass(frozen=True)
class Selector:
    """A plugin function picking one per-release copy by the host version."""

    module: str  # the plugin module defining it
    qualname: str
    line: int  # its def line
    stem: str  # the copies' common name ("pkg.vendored_scheduler")
    copies: tuple[str, ...]  # every sibling module, sorted
    branches: tuple[Branch, ...]
    fallthrough_line: int  # the statement run when no branch is taken (0: the function just ends)
    raises: bool  # that statement raises: no copy for the host version is an error at run time
    originals: tuple[str, ...] = ()  # host paths the copies may copy: `<imported host name>.<copied function>`


def version_of(text: str) -> tuple[int, ...]:
    """(0, 28, 0) for "0.28.0" (a local or pre-release suffix ignored past the numbers)."""
    return tuple(int(n) for n in _NUMBERS.findall(text.split("+")[0])[:3])


def admits(test: Test, version: tuple[int, ...]) -> bool | None:
    """Whether a branch's test holds for a host version: True, False, or None when it depends on
    something other than the version."""
    kind = test[0]
    if kind == "cmp":
        _, op, bound = test
        mine = (tuple(version) + (0,) * len(bound))[:len(bound)]
        return {"==": mine == bound, "!=": mine != bound, "<": mine < bound, "<=": mine <= bound,
                ">": mine > bound, ">=": mine >= bound}[op]
    if kind == "not":
        inner = admits(test[1][0], version)
        return None if inner is None else not inner
    if kind in ("and", "or"):
        values = [admits(t, version) for t in test[1]]
        if kind == "and":
            return False if False in values else None if None in values else True
        return True if True in values else None if None in values else False
    return None


def _literal_version(node: ast.AST) -> tuple[int, ...] | None:
    """(0, 26, 1) for `(0, 26, 1)`, `"0.26.1"`, `Version("0.26.1")`; None for anything else."""
    if isinstance(node, ast.Tuple) and node.elts and all(
            isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts):
        return tuple(e.value for e in node.elts)  # type: ignore[union-attr]
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"\d+(\.\d+)*", node.value):
        return version_of(node.value)
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        return _literal_version(node.args[0])
    return None


class _Tests:
    """Turns a selector's `if` tests into `Test` data; names assigned from the host version count too."""

    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.versions = {a.arg for a in function.args.args + function.args.kwonlyargs if _VERSIONISH.search(a.arg)}
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and self._is_version(node.value):
                self.versions.update(t.id for t in node.targets if isinstance(t, ast.Name))

    def _is_version(self, node: ast.AST) -> bool:
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and (n.id in self.versions or _VERSIONISH.search(n.id)):
                return True
            if isinstance(n, ast.Attribute) and _VERSIONISH.search(n.attr):
                return True
        return False

    def test(self, node: ast.AST) -> Test:
        if isinstance(node, ast.BoolOp):
            return ("and" if isinstance(node.op, ast.And) else "or", tuple(self.test(v) for v in node.values))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return ("not", (self.test(node.operand),))
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _OPS:
            op, left, right = _OPS[type(node.ops[0])], node.left, node.comparators[0]
            if (bound := _literal_version(right)) is not None and self._is_version(left):
                return ("cmp", op, bound)
            if (bound := _literal_version(left)) is not None and self._is_version(right):
                return ("cmp", _FLIP[op], bound)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute) and len(node.args) == 1:
            name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            bound = _literal_version(node.args[0])
            if _VERSIONISH.search(name) and bound is not None and isinstance(node.args[0], ast.Constant):
                return ("cmp", "==", bound)  # vllm_version_is("0.28.0")
        return _UNKNOWN


def _names_copy(body: list[ast.stmt], leaves: dict[str, str]) -> str:
    """The sibling module a branch body names (a module string or an import from it), '' when none."""
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Constant) and isinstance(n.value, str):
                leaf = n.value.lstrip(".").rpartition(".")[2]
                if leaf in leaves and n.value.lstrip(".") in (leaf, leaves[leaf]):
                    return leaves[leaf]
            if isinstance(n, ast.ImportFrom) and n.module:
                leaf = n.module.rpartition(".")[2]
                if leaf in leaves:
                    return leaves[leaf]
    return ""


def _originals(tree: ast.Module, host: str, copied: str) -> tuple[str, ...]:
    """`vllm.v1.core.sched.scheduler.Scheduler.schedule` for copies named `schedule_v…` in a module that
    imports `Scheduler` from the host: the host paths the copies' common function name may stand for."""
    if not copied:
        return ()
    out = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and \
                (node.module == host or node.module.startswith(host + ".")):
            out += [f"{node.module}.{a.name}.{copied}" for a in node.names]
    return tuple(out)


def _selector(module: str, qualname: str, function: ast.FunctionDef | ast.AsyncFunctionDef,
              groups: dict[str, dict[str, str]]) -> Selector | None:
    tests = _Tests(function)
    for stem, leaves in groups.items():
        branches, last = [], 0
        for i, stmt in enumerate(function.body):
            chain = stmt
            while isinstance(chain, ast.If):
                picked = _names_copy(chain.body, leaves)
                if picked:
                    branches.append(Branch(picked, chain.lineno, ast.unparse(chain.test), tests.test(chain.test)))
                    last = i
                chain = chain.orelse[0] if len(chain.orelse) == 1 and isinstance(chain.orelse[0], ast.If) else None
        if len(branches) < 2:
            continue
        after = function.body[last + 1:]
        fall = after[0] if after else None
        return Selector(module, qualname, function.lineno, stem, tuple(sorted(leaves.values())), tuple(branches),
                        fall.lineno if fall else 0, isinstance(fall, ast.Raise))
    return None


def _copied_name(plugin: PluginModel, copies: tuple[str, ...]) -> str:
    """The function every copy defines under its own tag (`schedule_v024`, `schedule_v026` -> "schedule")."""
    names = set()
    for module in copies:
        tree = plugin.index.parsed(module)
        tag = module.rpartition("_v")[2]
        names.add(next((n.name.removesuffix(f"_v{tag}") for n in (tree.body if tree else ())
                        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.endswith(f"_v{tag}")), ""))
    return names.pop() if len(names) == 1 else ""


def find_selectors(plugin: PluginModel, host: str) -> tuple[Selector, ...]:
    """The plugin functions that pick one of a group of per-release copies by the host version."""
    groups: dict[str, dict[str, str]] = {}
    for module in version_specific_modules(plugin.modules):
        stem = re.sub(r"_v\d+$", "", module)
        groups.setdefault(stem, {})[module.rpartition(".")[2]] = module
    if not groups:
        return ()
    out = []
    for module in plugin.modules:
        source = plugin.index.source(module)
        if not any(leaf in source for leaves in groups.values() for leaf in leaves):
            continue
        tree = plugin.index.parsed(module)
        for qualname, node in plugin.functions_in(module, nested=False):
            found = _selector(module, qualname, node, groups)
            if found is not None:
                originals = _originals(tree, host, _copied_name(plugin, found.copies))
                out.append(replace(found, originals=originals))
    return tuple(sorted(out, key=lambda s: (s.module, s.line)))


__all__ = ["Branch", "Selector", "Test", "admits", "find_selectors", "version_of"]
