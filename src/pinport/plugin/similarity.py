"""Layout-blind comparison of source text: line tokens, normalised lines, token ratios, line deltas,
and the forms of code as it runs (to tell an upstream change that computes the same from one to port).

Comments and layout are dropped before anything is compared, so a re-wrapped or re-commented
line still matches; shared by mirrors, forks and the port.
"""

from __future__ import annotations

import ast
import copy
import difflib
import io
import re
import textwrap
import tokenize
from collections import Counter
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


def runtime_form(text: str, *, speed: bool = False, debug: frozenset[str] = frozenset(),
                 refactor: bool = False, parameters: bool = True) -> str | None:
    """The code of `text` as it runs (layout, comments, docstrings, annotations, asserts, typing casts and
    log text left out; with `speed`, also memory pinning, dense copies, compile hints and the `with`
    blocks of the `debug` context managers; with `refactor`, guarded reads made plain and locals bound
    once to a pure read inlined; without `parameters`, the parameter lists of the defs left out), to compare
    two versions by; None when it does not parse."""
    try:
        tree = (_SpeedForm(debug) if speed else _RuntimeForm()).visit(ast.parse(textwrap.dedent(text)))
        if not parameters:
            for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
                refused = _refusals(fn)
                fn.body = [x for x in fn.body if id(x) not in refused] or [ast.Pass()]
                fn.args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                                        kwarg=None, defaults=[])
        return ast.dump(_refactored(tree) if refactor else tree)
    except (SyntaxError, ValueError, RecursionError):  # a nesting too deep to walk is never judged either
        return None


def _refusals(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[int, str]:
    """The statements (by identity) of a def's leading `if p is None: raise ...` for a parameter `p` that
    defaults to None, before anything else names `p`, each with `p`: such a parameter is required all the
    same (a call without it fails either way), only with another error."""
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    defaults = dict(zip((a.arg for a in positional[len(positional) - len(args.defaults):]), args.defaults,
                        strict=True))
    defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None)
    optional = {name for name, d in defaults.items() if isinstance(d, ast.Constant) and d.value is None}
    out: dict[int, str] = {}
    for stmt in fn.body:
        test = stmt.test if isinstance(stmt, ast.If) else None
        if isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id in optional \
                and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is) \
                and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None \
                and all(isinstance(x, ast.Raise) for x in stmt.body) and not stmt.orelse:
            out[id(stmt)] = test.left.id
            optional.discard(test.left.id)
            continue
        optional -= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
    return out


def parameter_defaults(text: str) -> list[dict[str, str]] | None:
    """Per def of `text` (in walk order), each parameter's kind and default (its source, "" for none, as for
    a None default the def refuses: `_refusals`); None when it does not parse. Two versions whose kept
    parameters agree here bind a call the same way."""
    try:
        tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError, RecursionError):
        return None
    out = []
    for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
        required = set(_refusals(fn).values())
        args = fn.args
        positional = [*args.posonlyargs, *args.args]
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        params = {a.arg: f"{kind} {ast.unparse(d) if d is not None and a.arg not in required else ''}" for kind, group in (
            ("positional-only", zip(args.posonlyargs, defaults, strict=False)),
            ("positional", zip(args.args, defaults[len(args.posonlyargs):], strict=True)),
            ("keyword-only", zip(args.kwonlyargs, args.kw_defaults, strict=True))) for a, d in group}
        params.update({a.arg: kind for kind, a in (("*", args.vararg), ("**", args.kwarg)) if a is not None})
        out.append(params)
    return out


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def prose_words(text: str) -> set[str]:
    """The words of a text's comments and string literals (docstrings, a patch's stated reason): where a
    copy says in words what it does differently from upstream."""
    parts: list[str] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(textwrap.dedent(text)).readline):
            if tok.type in (tokenize.COMMENT, tokenize.STRING) or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                parts.append(tok.string)
    except (tokenize.TokenError, SyntaxError, ValueError):  # an unterminated construct: line by line
        parts = [m.group() for line in text.splitlines() for m in _TOKEN.finditer(line)
                 if m.lastgroup in ("str", "comment")]
    return {w for part in parts for w in _IDENTIFIER.findall(part)}


def code_like(word: str) -> bool:
    """Whether a word reads as an identifier, not as English: an inner `_`, a digit or an inner capital
    (`forward_qkv`, `MultiHeadAttention`), so prose naming it names the code."""
    core = word.strip("_")
    return "_" in core or any(c.isdigit() for c in core) or any(c.isupper() for c in core[1:])


def code_names(text: str) -> set[str] | None:
    """The identifiers a text's code uses or defines (names, attributes, defs, parameters, imports), not
    its prose; None when it does not parse."""
    try:
        tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError, RecursionError):
        return None
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(n.name)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, ast.keyword) and n.arg:
            out.add(n.arg)
        elif isinstance(n, ast.alias):
            out.update(_IDENTIFIER.findall(n.asname or n.name))
    return out


def debugging_module(path: str) -> bool:
    """A module for debugging (a dotted path with a `debug` part, as `vllm.utils.gpu_sync_debug`): what
    it offers checks or reports running code, never changes what it computes."""
    return any("debug" in part for part in path.split("."))


# -- refactors: the same values, computed through a local or read without a guard -------------------
def _plain_getattr(node: ast.AST) -> ast.Call | None:
    """`getattr(obj, "name")` or `getattr(obj, "name", default)` (a literal identifier, no unpacking)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
            and 2 <= len(node.args) <= 3 and not node.keywords \
            and not any(isinstance(a, ast.Starred) for a in node.args) \
            and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str) \
            and node.args[1].value.isidentifier():
        return node
    return None


class _Unguarded(ast.NodeTransformer):
    """`getattr(obj, "name"[, default])` read as `obj.name`: the same value whenever `obj` has it."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        call = _plain_getattr(node)
        if call is None:
            return node
        name = call.args[1]
        assert isinstance(name, ast.Constant)
        return ast.Attribute(value=call.args[0], attr=name.value, ctx=ast.Load())


def getattr_guards(text: str) -> Counter[str] | None:
    """The guarded reads of a text, `getattr(obj, "name", default)`, each as its source; None when it does
    not parse. A guard upstream adds is a fix (the attribute may be missing); one it drops is not."""
    try:
        tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError, RecursionError):
        return None
    return Counter(ast.unparse(n) for n in ast.walk(tree) if (call := _plain_getattr(n)) is not None
                   and len(call.args) == 3)


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# what may change a value read through attributes, or rebind a name: a read moved across one can differ
_EFFECTS = (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.AugAssign, ast.Delete, ast.Global,
            ast.Nonlocal, ast.Import, ast.ImportFrom, ast.With, ast.AsyncWith, ast.Match, *_SCOPES)


def _read_root(node: ast.expr) -> str | None:
    """The name a pure read (`x`, `obj.attr`, `self.foo.bar`) starts from; None for anything else."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _effect(node: ast.AST, root: str) -> bool:
    """Whether evaluating `node` itself (not its parts) may change what a read from `root` gives."""
    if isinstance(node, _EFFECTS):
        return True
    if isinstance(node, (ast.Attribute, ast.Subscript)):
        return not isinstance(node.ctx, ast.Load)
    return isinstance(node, ast.Name) and node.id == root and not isinstance(node.ctx, ast.Load)


def _evaluation_order(node: ast.AST) -> list[ast.AST]:
    """`node` and everything in it, each after its parts, in the order Python evaluates them (an
    assignment's value before its targets and its store, a conditional's test first, a dict's keys beside their values,
    a comprehension's loops before its element); a `with` enters before its body runs."""
    if isinstance(node, ast.Assign):
        parts: list[ast.AST] = [node.value, *node.targets]
    elif isinstance(node, ast.AnnAssign):
        parts = [node.value, node.target] if node.value is not None else []
    elif isinstance(node, ast.AugAssign):  # the target's object and index, the value, then the store
        target = node.target
        held = [] if isinstance(target, ast.Name) else [target.value, *(
            [target.slice] if isinstance(target, ast.Subscript) else [])]
        return [x for part in (*held, node.value) for x in _evaluation_order(part)] + [target, node]
    elif isinstance(node, ast.IfExp):
        parts = [node.test, node.body, node.orelse]
    elif isinstance(node, ast.Dict):
        parts = [x for k, v in zip(node.keys, node.values, strict=True) for x in (k, v) if x is not None]
    elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        parts = [*node.generators, node.elt]
    elif isinstance(node, ast.DictComp):
        parts = [*node.generators, node.key, node.value]
    elif isinstance(node, ast.comprehension):
        parts = [node.iter, node.target, *node.ifs]
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        parts = [node.iter, node.target, *node.body, *node.orelse]
    elif isinstance(node, (ast.With, ast.AsyncWith, ast.Match)):
        head = [*node.items] if not isinstance(node, ast.Match) else [node.subject]
        rest = [*node.body] if not isinstance(node, ast.Match) else [*node.cases]
        return [x for part in head for x in _evaluation_order(part)] + [node] + [
            x for part in rest for x in _evaluation_order(part)]
    else:
        parts = list(ast.iter_child_nodes(node))
    return [x for part in parts for x in _evaluation_order(part)] + [node]


def _repeated(loop: ast.AST) -> list[ast.AST]:
    """The parts of a loop that run again after later parts ran (all but a `for`'s first iterable)."""
    if isinstance(loop, (ast.For, ast.AsyncFor)):
        return [loop.target, *loop.body, *loop.orelse]
    if isinstance(loop, ast.While):
        return [loop]
    assert isinstance(loop, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp))
    first, *more = loop.generators
    rest: list[ast.AST] = [first.target, *first.ifs, *more]
    return rest + ([loop.key, loop.value] if isinstance(loop, ast.DictComp) else [loop.elt])


def _inlinable(body: list[ast.stmt], at: int, root: str, uses: list[ast.Name]) -> bool:
    """Whether every use of a local (bound by `body[at]` to a read from `root`) reads what the read gave:
    they lie in the statements after it, and nothing runs between the binding and the last use that
    may change the read (a call, a store to an attribute or an item, a new binding of `root`)."""
    inside = {id(n) for n in uses}
    last = at
    for i in range(at + 1, len(body)):
        if any(id(n) in inside for n in ast.walk(body[i])):
            last = i
    if sum(isinstance(n, ast.Name) and id(n) in inside for s in body[at + 1:last + 1] for n in ast.walk(s)) \
            != len(uses):
        return False  # a use outside the statements that follow
    if any(_effect(n, root) for s in body[at + 1:last] for n in ast.walk(s)):
        return False
    if last == at:
        return True
    final = body[last]
    for loop in (n for n in ast.walk(final) if isinstance(n, _LOOPS)):
        again = [n for part in _repeated(loop) for n in ast.walk(part)]
        if any(id(n) in inside for n in again) and any(_effect(n, root) for n in again):
            return False  # a use read again after an effect of the iteration before
    seen = 0
    for n in _evaluation_order(final):
        if id(n) in inside:
            seen += 1
            if seen == len(uses):
                return True
        elif _effect(n, root):
            return False
    return True


def _blocks(node: ast.AST) -> list[list[ast.stmt]]:
    return [block for field in ("body", "orelse", "finalbody") if isinstance(block := getattr(node, field, None), list)
            and block and isinstance(block[0], ast.stmt)] + [h.body for h in getattr(node, "handlers", ())] + [
        c.body for c in getattr(node, "cases", ())]


def _bound_elsewhere(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names a function binds otherwise than by a plain `name = ...` store: parameters, `except ... as`,
    nested definitions, imports, global and nonlocal declarations, match captures."""
    args = fn.args
    out = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a}
    for n in ast.walk(fn):
        if n is fn:
            continue
        if isinstance(n, ast.ExceptHandler | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name:
            out.add(n.name)
        elif isinstance(n, ast.Global | ast.Nonlocal):
            out.update(n.names)
        elif isinstance(n, ast.alias):
            out.add((n.asname or n.name).partition(".")[0])
        elif isinstance(n, ast.MatchAs | ast.MatchStar) and n.name:
            out.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            out.add(n.rest)
    return out


class _Inlined(ast.NodeTransformer):
    """The uses (by node identity) replaced by copies of the read."""

    def __init__(self, uses: set[int], read: ast.expr) -> None:
        self.uses = uses
        self.read = read

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return copy.deepcopy(self.read) if id(node) in self.uses else node


def _inline_one(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Replace one local bound once to a pure read by that read at its uses (dropping the binding);
    whether there was one."""
    names: dict[str, list[ast.Name]] = {}
    nested: set[str] = set()
    for stmt in fn.body:
        for n in ast.walk(stmt):
            if isinstance(n, _SCOPES):
                nested.update(x.id for x in ast.walk(n) if isinstance(x, ast.Name))
            elif isinstance(n, ast.Name):
                names.setdefault(n.id, []).append(n)
    skip = nested | _bound_elsewhere(fn)
    pending = [fn.body]
    while pending:
        body = pending.pop()
        for at, stmt in enumerate(body):
            if not isinstance(stmt, _SCOPES):
                pending.extend(_blocks(stmt))
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                continue
            name = stmt.targets[0].id
            root = _read_root(stmt.value)
            found = names.get(name, [])
            uses = [n for n in found if isinstance(n.ctx, ast.Load)]
            if root is None or root == name or name in skip or len(found) != len(uses) + 1 \
                    or not _inlinable(body, at, root, uses):
                continue
            inlined = _Inlined({id(n) for n in uses}, stmt.value)
            body[at + 1:] = [inlined.visit(s) for s in body[at + 1:]]
            body[at:at + 1] = [] if len(body) > 1 else [ast.Pass()]
            return True
    return False


def _refactored(tree: ast.AST) -> ast.AST:
    """`tree` with guarded reads made plain and every local bound once to a pure read inlined (each
    inlining drops a statement, so this ends)."""
    tree = _Unguarded().visit(tree)
    for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]:
        while _inline_one(fn):
            pass
    return tree


# -- imports: where a name comes from, apart from what the code computes ------------------------------
class _Unimported(ast.NodeTransformer):
    """Drops import statements, and `if`/`try` blocks left with nothing else (a platform's choice of module)."""

    def visit_Import(self, node: ast.Import) -> None:
        return None

    visit_ImportFrom = visit_Import

    def generic_visit(self, node: ast.AST) -> ast.AST | None:
        super().generic_visit(node)
        if isinstance(node, ast.If | ast.Try) and not any(
                getattr(node, f, None) for f in ("body", "orelse", "handlers", "finalbody")):
            return None
        if isinstance(node, ast.ExceptHandler) and not node.body:
            node.body = [ast.Pass()]  # an `except` of a try that keeps other parts
        return node


def import_bindings(text: str) -> set[tuple[str, str]] | None:
    """(bound name, dotted source) of every import in a text (`from a import b as c` -> ("c", "a.b"));
    None when it does not parse."""
    try:
        tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError, RecursionError):
        return None
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            out.update(((a.asname or a.name.partition(".")[0]), a.name if a.asname else a.name.partition(".")[0])
                       for a in n.names)
        elif isinstance(n, ast.ImportFrom):
            base = "." * n.level + (n.module or "")
            out.update((a.asname or a.name, f"{base}.{a.name}") for a in n.names if a.name != "*")
    return out


def read_names(text: str) -> set[str] | None:
    """The plain names a text's code reads or binds (not its imports' own aliases); None when it does not parse."""
    try:
        tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError, RecursionError):
        return None
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def imports_only(before: str, after: str) -> tuple[set[tuple[str, str]], set[tuple[str, str]]] | None:
    """The import bindings `after` drops and adds, when that is all that differs between the two texts (their
    code without imports runs the same); None otherwise."""
    try:
        forms = [ast.dump(_Unimported().visit(_RuntimeForm().visit(ast.parse(textwrap.dedent(t)))))
                 for t in (before, after)]
    except (SyntaxError, ValueError, RecursionError):
        return None
    old, new = import_bindings(before), import_bindings(after)
    if forms[0] != forms[1] or old is None or new is None or old == new:
        return None
    return old - new, new - old

