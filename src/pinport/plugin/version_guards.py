"""Branches the plugin keeps for other host versions (`if vllm_version_is("0.29.0"): ...`).

Maintainers port by adding a branch for the new host beside the old one and dropping the old
one later. A branch whose host-version test is false for a side's version does not run there:
what it calls or reads on that host cannot fail. Only tests whose outcome is certain from the
text are decided: a helper named `<host>_version_is(...)`/`is_<host>_version(...)` with a
literal version, and comparisons of the host's version (`<host>.__version__`, a name such as
`VLLM_VERSION`, `version("<host>")`), parsed or not, with a literal; `not`, `and`, `or` of those.
Anything else (another library's version, a variable) decides nothing.
"""

from __future__ import annotations

import ast
import json
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import NamedTuple

from packaging.version import InvalidVersion, Version

from ..model.index import CodeIndex

# a test as plain data (no AST node is kept): ("is", literal) / ("cmp", op, literal, parsed) /
# ("not", test) / ("and"|"or", (test, ...)) / ("?",): a part no version decides
Test = tuple


class Branch(NamedTuple):
    """Lines first..last run only when `test` is `taken_when` (an `if` body: True, its `else`: False)."""

    first: int
    last: int
    test: Test
    taken_when: bool
    text: str  # the test as written, and its line: for the finding's details
    line: int


# comparisons by the name of their `ast` node: a test is plain data (the index cache keeps gates)
_OPS: dict[str, Callable[[object, object], bool]] = {
    "Eq": operator.eq, "NotEq": operator.ne, "Lt": operator.lt, "LtE": operator.le, "Gt": operator.gt,
    "GtE": operator.ge}
_MIRRORED = {"Lt": "Gt", "LtE": "GtE", "Gt": "Lt", "GtE": "LtE", "Eq": "Eq", "NotEq": "NotEq"}
_PARSERS = ("Version", "parse", "parse_version", "LooseVersion")


def version_branches(index: CodeIndex, module: str, host: str) -> tuple[Branch, ...]:
    """The branches of a plugin module decided by a host-version test (memoised per module)."""
    return index.module_memo(module, ("version-branches", host), lambda: _branches(index.parsed(module), host))


def branch_not_taken(index: CodeIndex, module: str, line: int, host: str, version: str | None) -> Branch | None:
    """The innermost version branch holding `line` that does not run on host `version`, if any."""
    if not version:
        return None
    found = None
    for branch in version_branches(index, module, host):
        if branch.first <= line <= branch.last and evaluate(branch.test, version) is (not branch.taken_when):
            if found is None or branch.first >= found.first:
                found = branch
    return found


def evaluate(test: Test, version: str) -> bool | None:
    """A test's value on host `version`; None when it is not certain."""
    kind = test[0]
    if kind == "?":  # a part that is no host-version test (`flag and vllm_version_is(...)`)
        return None
    if kind == "not":
        inner = evaluate(test[1], version)
        return None if inner is None else not inner
    if kind in ("and", "or"):
        values = [evaluate(t, version) for t in test[1]]
        decisive = kind == "or"  # True decides an `or`, False an `and`
        if decisive in values:
            return decisive
        return None if None in values else not decisive
    mine, theirs = _public(version), _public(test[2] if kind == "cmp" else test[1])
    if mine is None or theirs is None:
        return None
    if kind == "is":
        return mine == theirs
    op, parsed = test[1], test[3]
    if parsed:
        return _OPS[op](mine, theirs)
    return _OPS[op](version, test[2])  # two strings compare as Python compares them


def _public(text: str) -> Version | None:
    try:
        return Version(Version(text).public)
    except InvalidVersion:
        return None


def _branches(tree: ast.Module | None, host: str) -> tuple[Branch, ...]:
    if tree is None:
        return ()
    out = []
    for _qualname, scope in _scopes(tree):
        env = _bound_once(scope)
        for node in _own_nodes(scope):
            if not isinstance(node, ast.If):
                continue
            test = _test(node.test, host, env)
            if test is None:
                continue
            text = ast.unparse(node.test)
            for body, taken in ((node.body, True), (node.orelse, False)):
                if body:
                    out.append(Branch(body[0].lineno, body[-1].end_lineno or body[-1].lineno, test, taken, text,
                                      node.lineno))
    return tuple(sorted(out))


class Gate(NamedTuple):
    """A refusal of some host versions: `if <host-version test>: raise ...` (or `assert <test>`), after
    which nothing of `qualname` runs on a version the test refuses."""

    module: str
    qualname: str  # "" at module level: importing the module raises
    line: int
    test: str  # the Test as JSON: gates are kept in the index cache from one run to the next
    refuses_when: bool  # the test's value that raises (an `if`: True; an `assert`: False)
    text: str
    raised: str  # what is raised ("RuntimeError"; "AssertionError" for an assert)


_TESTS = ("if ", "if(", "assert ", "assert(", "elif ")
_ASSIGNED = re.compile(r"([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)")


def _may_gate(source: str) -> bool:
    """The text prefilter (most modules are never parsed): a gate's `if`/`assert` line names a version
    (`Version(...)`, `current_version`, `vllm_version_is(...)`) or a name a line naming one binds
    (`current = Version(vllm.__version__)`; `if current >= newest:`)."""
    if "raise" not in source and "assert" not in source:
        return False
    bound = []
    for line in _lines_with(source, "ersion"):  # Version, version
        if line.startswith(_TESTS):
            return True
        if assigned := _ASSIGNED.match(line):
            bound.append(assigned.group(1))
    return any(line.startswith(_TESTS) and re.search(rf"\b{name}\b", line)
               for name in dict.fromkeys(bound) for line in _lines_with(source, name))


def _lines_with(source: str, text: str) -> Iterator[str]:
    """The lines holding `text`, each once, stripped of their indentation."""
    at = source.find(text)
    while at >= 0:
        start = source.rfind("\n", 0, at) + 1
        end = source.find("\n", at)
        end = len(source) if end < 0 else end
        yield source[start:end].lstrip()
        at = source.find(text, end)


def version_gates(index: CodeIndex, modules: Iterable[str], host: str) -> tuple[Gate, ...]:
    """The version gates of the plugin's modules, in module and line order; kept in the index cache,
    so a warm scan parses no module for them."""
    chosen = tuple(modules)

    def build() -> tuple[Gate, ...]:
        out: list[Gate] = []
        for module in chosen:
            if _may_gate(index.source(module)) and (tree := index.parsed(module)) is not None:
                out += sorted(_gates(tree, module, host))
        return tuple(out)
    return index.stored("version-gates-1", tuple[Gate, ...], build, host, *chosen)


def refuses(gate: Gate, version: str | None) -> bool:
    """Whether the gate raises on host `version` (only when its test is certain there)."""
    return bool(version) and evaluate(json.loads(gate.test), version) is gate.refuses_when


def _gates(tree: ast.Module, module: str, host: str) -> list[Gate]:
    out = []
    for qualname, scope in _scopes(tree):
        env = _bound_once(scope)
        for stmt in scope.body:  # the scope's own statements: a gate nested in a branch is a branch
            if isinstance(stmt, ast.If) and not stmt.orelse and isinstance(stmt.body[-1], ast.Raise) \
                    and stmt.body[-1].exc is not None:
                test, refuses_when, raised = _test(stmt.test, host, env), True, _raised(stmt.body[-1].exc)
            elif isinstance(stmt, ast.Assert):
                test, refuses_when, raised = _test(stmt.test, host, env), False, "AssertionError"
            else:
                continue
            if test is not None and _decided(test):
                out.append(Gate(module, qualname, stmt.lineno, json.dumps(test), refuses_when, ast.unparse(stmt.test),
                                raised))
    return out


def _decided(test: Test) -> bool:
    """Whether some part of the test is a host-version test (a gate of `?` alone decides nothing)."""
    return test[0] in ("is", "cmp") or test[0] == "not" and _decided(test[1]) or \
        test[0] in ("and", "or") and any(_decided(t) for t in test[1])


def _raised(exc: ast.expr) -> str:
    return _name(exc.func) if isinstance(exc, ast.Call) else _name(exc)


Scope = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef


def _scopes(tree: ast.Module) -> list[tuple[str, Scope]]:
    """The module ("") and every def in it, by qualified name: the scopes whose locals a test reads."""
    out: list[tuple[str, Scope]] = [("", tree)]

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                out.append((f"{prefix}{child.name}", child))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)
    visit(tree, "")
    return out


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a scope, not those of the defs and lambdas nested in it (their own scopes)."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))


def _bound_once(scope: ast.AST) -> dict[str, ast.expr]:
    """Names a scope binds exactly once, by a plain assignment, to their value: a test reading
    `current >= max_supported` reads what they were set to (`Version(vllm.__version__)`, a literal)."""
    values: dict[str, ast.expr] = {}
    stores: dict[str, int] = {}
    shared: set[str] = set()
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        a = scope.args
        shared.update(p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p is not None)
    for node in _own_nodes(scope):
        if isinstance(node, ast.Global | ast.Nonlocal):
            shared.update(node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            stores[node.id] = stores.get(node.id, 0) + 1  # loops, `with ... as`, tuple targets count too
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            values[node.target.id] = node.value
    return {name: value for name, value in values.items() if stores.get(name) == 1 and name not in shared}


def _test(node: ast.expr, host: str, env: Mapping[str, ast.expr]) -> Test | None:
    node = _through(node, env)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _test(node.operand, host, env)
        return None if inner is None else ("not", inner)
    if isinstance(node, ast.BoolOp):
        parts = tuple(_test(v, host, env) for v in node.values)
        if all(p is None for p in parts):
            return None
        return ("and" if isinstance(node.op, ast.And) else "or", tuple(p or ("?",) for p in parts))
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        name = _name(node.func).lower()
        literal = _literal(node.args[0], env)
        if literal is not None and not literal[1] and host in name and re.search(
                r"version_is$|^is_\w*version$", name):
            return ("is", literal[0])
        return None
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]).__name__ in _OPS:
        op, left, right = type(node.ops[0]).__name__, node.left, node.comparators[0]
        if _literal(left, env) is not None:
            op, left, right = _MIRRORED[op], right, left
        value, literal = _host_version(left, host, env), _literal(right, env)
        if value is None or literal is None:
            return None
        return ("cmp", op, literal[0], value or literal[1])
    return None


def _through(node: ast.expr, env: Mapping[str, ast.expr]) -> ast.expr:
    """What a name bound once in the scope was set to (followed a few steps); else the node itself."""
    for _ in range(4):
        if not (isinstance(node, ast.Name) and node.id in env):
            break
        node = env[node.id]
    return node


def _host_version(node: ast.expr, host: str, env: Mapping[str, ast.expr]) -> bool | None:
    """Whether `node` is the host's version: None when not; else whether it is parsed (a Version)."""
    value = _through(node, env)
    if value is not node:
        found = _host_version(value, host, {})
        if found is not None:
            return found  # `current = Version(vllm.__version__)`: what it was set to decides
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        name = _name(node.func)
        if name in _PARSERS:
            inner = _host_version(node.args[0], host, env)
            return None if inner is None else True
        arg = node.args[0]
        if name == "version" and isinstance(arg, ast.Constant) and arg.value == host:
            return False  # importlib.metadata.version("<host>"): a string
        return None
    if isinstance(node, ast.Attribute) and node.attr == "__version__":
        return False if _name(node.value).lower() == host else None
    word = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return False if host in word.lower() and "version" in word.lower() else None


def _literal(node: ast.expr, env: Mapping[str, ast.expr]) -> tuple[str, bool] | None:
    """A literal version: ("0.29.0", parsed?) for `"0.29.0"` or `Version("0.29.0")` (or a name bound
    once to one)."""
    node = _through(node, env)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, False
    if isinstance(node, ast.Call) and len(node.args) == 1 and _name(node.func) in _PARSERS:
        inner = _literal(node.args[0], env)
        return (inner[0], True) if inner is not None and not inner[1] else None
    return None


def _name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
