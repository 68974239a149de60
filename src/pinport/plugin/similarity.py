"""Layout-blind comparison of source text: line tokens, normalised lines, token ratios, line deltas.

Comments and layout are dropped before anything is compared, so a re-wrapped or re-commented
line still matches; shared by mirrors, forks and the port.
"""

from __future__ import annotations

import ast
import difflib
import re
import textwrap
from dataclasses import dataclass

_TOKEN = re.compile(r"""(?P<str>[rRbBuUfF]{0,2}(?:'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"))|(?P<comment>\#.*)"""
                    r"""|(?P<word>[A-Za-z_][A-Za-z0-9_]*)|(?P<num>\d[\w.]*)|(?P<op>\S)""")
_SIMPLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d[\w.]*|\S")


def line_tokens(line: str) -> list[str]:
    """The tokens of one source line, comments dropped (strings kept whole)."""
    if "#" not in line and "'" not in line and '"' not in line:
        return _SIMPLE.findall(line)  # the common case, without the per-token loop
    out = []
    for m in _TOKEN.finditer(line):
        if m.lastgroup == "comment":
            break
        out.append(m.group())
    return out


def normalise(line: str) -> str:
    """A line's tokens joined by one space: equal for lines that differ only in layout or comments."""
    return " ".join(line_tokens(line))


def token_ratio(a: list[str], b: list[str], floor: float = 0.0) -> float:
    """difflib's ratio over token lists; 0.0 as soon as a cheap upper bound falls below `floor`."""
    if not a or not b:
        return 0.0
    if 2 * min(len(a), len(b)) / (len(a) + len(b)) < floor:
        return 0.0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if floor and matcher.quick_ratio() < floor:
        return 0.0
    return matcher.ratio()


def block_ratio(a: list[list[str]], b: list[list[str]]) -> float:
    """Token similarity of two blocks of token lines: lines are aligned first, then tokens only
    inside replaced runs, which is difflib's token ratio at a fraction of its cost."""
    a = [x for x in a if x]
    b = [x for x in b if x]
    total = sum(map(len, a)) + sum(map(len, b))
    if not total:
        return 0.0
    matched = 0
    lines = difflib.SequenceMatcher(None, [" ".join(x) for x in a], [" ".join(x) for x in b], autojunk=False)
    for op, i1, i2, j1, j2 in lines.get_opcodes():
        if op == "equal":
            matched += sum(len(x) for x in a[i1:i2])
        elif op == "replace":
            ta = [t for x in a[i1:i2] for t in x]
            tb = [t for x in b[j1:j2] for t in x]
            matched += sum(m.size for m in difflib.SequenceMatcher(None, ta, tb, autojunk=False)
                           .get_matching_blocks())
    return 2 * matched / total


@dataclass(frozen=True)
class LineDelta:
    """Which upstream lines a copy kept, changed or dropped, and which lines it added (line numbers)."""

    kept: tuple[int, ...]  # upstream lines kept verbatim (modulo layout)
    changed: tuple[int, ...]  # upstream lines the plugin replaced
    dropped: tuple[int, ...]  # upstream lines the plugin removed
    added: tuple[int, ...]  # plugin lines with no upstream counterpart


def line_delta(upstream: list[str], plugin: list[str], upstream_start: int = 1,
               plugin_start: int = 1) -> LineDelta:
    """Compare two blocks line by line on normalised text; blank and comment-only lines are ignored."""
    a = [(i, normalise(x)) for i, x in enumerate(upstream, upstream_start)]
    b = [(i, normalise(x)) for i, x in enumerate(plugin, plugin_start)]
    a = [x for x in a if x[1]]
    b = [x for x in b if x[1]]
    kept: list[int] = []
    changed: list[int] = []
    dropped: list[int] = []
    added: list[int] = []
    matcher = difflib.SequenceMatcher(None, [x[1] for x in a], [x[1] for x in b], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            kept.extend(x[0] for x in a[i1:i2])
        elif op == "replace":
            changed.extend(x[0] for x in a[i1:i2])
            added.extend(x[0] for x in b[j1:j2])
        elif op == "delete":
            dropped.extend(x[0] for x in a[i1:i2])
        else:
            added.extend(x[0] for x in b[j1:j2])
    return LineDelta(tuple(kept), tuple(changed), tuple(dropped), tuple(added))


_LOG_CALLS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "debug_once",
                        "info_once", "warning_once"})


class _RuntimeForm(ast.NodeTransformer):
    """Drops what running code ignores: docstrings and other bare strings, parameter and return
    annotations, annotations of local names, asserts, `typing.cast(T, x)` (x remains), and the
    arguments of log calls (their text). Annotations in a class body stay: they make dataclass fields."""

    def __init__(self) -> None:
        self.in_function = 0

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        if getattr(node, "body", None) == []:
            node.body = [ast.Pass()]  # a block the removals emptied reads as `pass`, as one written so
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return None
        return self.generic_visit(node)

    def visit_Assert(self, node: ast.Assert) -> None:
        return None

    def visit_Assign(self, node: ast.Assign) -> ast.AST | None:
        self.generic_visit(node)
        [target, *more] = node.targets
        if not more and isinstance(target, ast.Name) and isinstance(node.value, ast.Name) and \
                target.id == node.value.id:
            return None  # `x = cast(T, x)` once the cast is gone
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST | None:
        if not self.in_function:
            return self.generic_visit(node)
        if node.value is None:
            return None
        return self.visit(ast.Assign(targets=[node.target], value=node.value))

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        node.returns = None
        self.in_function += 1
        try:
            return self.generic_visit(node)
        finally:
            self.in_function -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name == "cast" and len(node.args) == 2 and not node.keywords:
            return self.visit(node.args[1])
        if isinstance(func, ast.Attribute) and name in _LOG_CALLS and "log" in _receiver(func.value).lower():
            node.args, node.keywords = [], []
        return self.generic_visit(node)


def _receiver(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


# torch._dynamo's shape hints: how a compiled graph specialises on a size, never what it computes
_COMPILE_HINTS = frozenset({"mark_dynamic", "maybe_mark_dynamic", "mark_unbacked", "mark_static",
                            "mark_static_address"})
SPEED_WORDS = ("pin_memory", ".contiguous()", *_COMPILE_HINTS)  # a text without one has no speed-only change


class _SpeedForm(_RuntimeForm):
    """Also drops what decides only how fast code runs or what a debug mode checks, never the values it
    computes: `pin_memory=` arguments (page-locked host memory), `.contiguous()` (a dense copy of the
    same values), torch._dynamo's shape hints, and `with` blocks of `debug` context managers (names
    imported from the host's debugging modules: the block runs as without them)."""

    def __init__(self, debug: frozenset[str] = frozenset()) -> None:
        super().__init__()
        self.debug = debug

    def _debugging(self, item: ast.withitem) -> bool:
        call = item.context_expr
        root = call.func if isinstance(call, ast.Call) else None
        while isinstance(root, ast.Attribute):
            root = root.value
        return item.optional_vars is None and isinstance(root, ast.Name) and root.id in self.debug

    def visit_With(self, node: ast.With) -> ast.AST | list[ast.stmt]:
        self.generic_visit(node)
        if self.debug and all(self._debugging(item) for item in node.items):
            return node.body
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in _COMPILE_HINTS \
                and "_dynamo" in ast.unparse(call.func.value):
            return None
        return super().visit_Expr(node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        node.keywords = [k for k in node.keywords if k.arg != "pin_memory"]
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "contiguous" and not node.args and not node.keywords:
            return self.visit(func.value)
        return super().visit_Call(node)


def runtime_form(text: str, *, speed: bool = False, debug: frozenset[str] = frozenset()) -> str | None:
    """The code of `text` as it runs (layout, comments, docstrings, annotations, asserts, typing casts and
    log text left out; with `speed`, also memory pinning, dense copies, compile hints and the `with`
    blocks of the `debug` context managers), to compare two versions by; None when it does not parse."""
    try:
        tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError, RecursionError):
        return None
    return ast.dump((_SpeedForm(debug) if speed else _RuntimeForm()).visit(tree))


def debugging_module(path: str) -> bool:
    """A module for debugging (a dotted path with a `debug` part, as `vllm.utils.gpu_sync_debug`): what
    it offers checks or reports running code, never changes what it computes."""
    return any("debug" in part for part in path.split("."))
