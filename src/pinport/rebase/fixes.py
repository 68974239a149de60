"""Safe fixes: the mechanical edits a finding fully determines, made with libcst (layout kept).

- #4 a name that moved: the import is rewritten to the one public module of NEW defining it;
- #1 a parameter the NEW base gained: added to the override with the base's default and
  forwarded in the `_orig_*` / `super()` call (only when the override calls the original,
  since a full copy must decide what the value means);
- #2 a parameter the NEW base dropped: removed from the override and its forwarding call,
  when nothing else in the body reads it.

Anything else stays a finding; each refusal carries its reason, and so does every import that
does not resolve in NEW without having simply moved. Nothing here writes.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import libcst as cst

from ..config import Settings
from ..findings import Finding, Severity
from ..model.host import HostView
from ..model.resolve import FUNCTION, METHOD
from ..model.summary import FunctionInfo, Param, ParamKind

ReadFile = Callable[[str], str | None]

MOVED, ADDED, DROPPED = "PP0402", "PP0101", {"PP0201", "PP0202"}

# Why an import that does not resolve in NEW (and did not simply move) has no safe fix: the plan says so.
_NO_REWRITE = {
    "PP0401": "the module is gone from NEW; where each of its names went is a decision the finding informs",
    "PP0501": "`{candidate}` is a rename found by similarity, a guess: confirm it, then rename by hand",
    "PP0601": "`{name}` is defined nowhere in NEW: what replaces it is a decision, not an import rewrite",
    "PP0602": "`{name}` is gone from `{base}` in NEW: what replaces it is a decision, not an import rewrite",
    "PP0403": "`{name}` exists only for type checkers in NEW: import it under TYPE_CHECKING or use another name",
    "PP0001": "`{target}` is gone from NEW: the alias and the override using it must be ported by hand",
    "PP0003": "the patch target is gone from NEW: port the patch to what replaced it",
}


@dataclass(frozen=True)
class SafeFix:
    """One edit and the finding it resolves: file:line and the lines before -> after."""

    finding: Finding
    path: str
    line: int
    before: str
    after: str
    what: str


@dataclass
class FixPlan:
    fixes: list[SafeFix] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)  # finding fingerprint -> why not fixed
    texts: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (before, after)


class _Refused(Exception):
    pass


class _Args(dict):
    """A finding's template arguments; one it lacks reads as `?` instead of failing the plan."""

    def __missing__(self, key: str) -> str:
        return "?"


def public_homes(host: HostView, name: str) -> list[str]:
    """The public modules of a host version that define `name` at top level (no `_private` part)."""
    homes = []
    for module, _kind in host.index.definitions.get(name, ()):
        if any(part.startswith("_") for part in module.split(".")):
            continue
        if host.resolve(f"{module}.{name}") is not None:
            homes.append(module)
    return sorted(set(homes))


# --- CST helpers ------------------------------------------------------------------------------

def _dotted(node: cst.BaseExpression | None) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def _module_expr(dotted: str) -> cst.Attribute | cst.Name:
    return cst.parse_expression(dotted)  # type: ignore[return-value]


class _MoveImport(cst.CSTTransformer):
    """`from OLD import a, name, b` -> `from OLD import a, b` + `from NEW import name`."""

    def __init__(self, old: str, name: str, new: str) -> None:
        self.old, self.name, self.new, self.count = old, name, new, 0

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine,
                                  updated: cst.SimpleStatementLine):
        if len(updated.body) != 1 or not isinstance(updated.body[0], cst.ImportFrom):
            return updated
        node = updated.body[0]
        if node.relative or _dotted(node.module) != self.old or isinstance(node.names, cst.ImportStar):
            return updated
        hit = [a for a in node.names if _dotted(a.name) == self.name]
        if not hit:
            return updated
        self.count += 1
        if len(hit) == len(node.names):
            return updated.with_changes(body=[node.with_changes(module=_module_expr(self.new))])
        rest = [a for a in node.names if _dotted(a.name) != self.name]
        if _dotted(node.names[-1].name) == self.name:  # the new last name keeps the old one's (trailing) comma
            rest[-1] = rest[-1].with_changes(comma=node.names[-1].comma)
        kept = node.with_changes(names=rest)
        moved = cst.ImportFrom(module=_module_expr(self.new),
                               names=[hit[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)])
        return cst.FlattenSentinel([updated.with_changes(body=[kept]),
                                    cst.SimpleStatementLine(body=[moved],
                                                            leading_lines=[])])


def _forward_calls(body: cst.CSTNode, name: str) -> list[cst.Call]:
    """Calls in a body that hand over to the original: `_orig_*(...)`, `self._orig_*(...)`, `super().name(...)`."""
    found: list[cst.Call] = []

    class Visitor(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(
                func, cst.Name) else ""
            is_super = isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call) and \
                _dotted(func.value.func) == "super" and last == name
            if last.startswith("_orig") or is_super:
                found.append(node)

    body.visit(Visitor())
    return found


class _EditFunction(cst.CSTTransformer):
    """Apply `edit` to the function with qualified name `qualname` (classes nest with dots)."""

    def __init__(self, qualname: str, edit: Callable[[cst.FunctionDef], cst.FunctionDef]) -> None:
        self.target, self.edit, self.stack, self.count = qualname, edit, [], 0

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.stack.append(node.name.value)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self.stack.pop()
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.append(node.name.value)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        qual = ".".join(self.stack)
        self.stack.pop()
        if qual != self.target:
            return updated
        self.count += 1
        return self.edit(updated)


_SPACE_COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _insert(items: list, index: int, new: cst.Param | cst.Arg) -> list:
    """`new` put into a comma-separated list at `index`, keeping the list's layout: it takes the
    separator of its neighbour, and a trailing comma (one item per line) stays trailing."""
    if not items:
        return [new]
    if index < len(items):
        before = items[index - 1].comma if index > 0 else cst.MaybeSentinel.DEFAULT
        return [*items[:index], new.with_changes(comma=before if isinstance(before, cst.Comma) else _SPACE_COMMA),
                *items[index:]]
    last = items[-1]
    if isinstance(last, cst.Param):  # the space before `)` follows the new last parameter
        new = new.with_changes(whitespace_after_param=last.whitespace_after_param)
        last = last.with_changes(whitespace_after_param=cst.SimpleWhitespace(""))
    if isinstance(last.comma, cst.Comma):  # trailing comma: the new item keeps it, the old last one
        between = items[-2].comma if len(items) > 1 and isinstance(items[-2].comma, cst.Comma) else _SPACE_COMMA
        return [*items[:-1], last.with_changes(comma=between), new.with_changes(comma=last.comma)]
    return [*items[:-1], last.with_changes(comma=_SPACE_COMMA), new]


def _literal(default: str) -> bool:
    try:
        ast.literal_eval(default)
    except (ValueError, SyntaxError):
        return default in ("None", "True", "False")
    return True


def _add_param(fn: cst.FunctionDef, param: Param, base_names: Sequence[str]) -> cst.FunctionDef:
    params = fn.params
    if any(p.name.value == param.name for p in (*params.posonly_params, *params.params, *params.kwonly_params)):
        raise _Refused(f"the override already has `{param.name}`")
    default = cst.parse_expression(param.default) if param.default is not None else None
    new = cst.Param(name=cst.Name(param.name), default=default,
                    equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")) if default else
                    cst.MaybeSentinel.DEFAULT)
    if param.kind is ParamKind.KEYWORD_ONLY:
        star = params.star_arg if params.star_arg is not cst.MaybeSentinel.DEFAULT else cst.ParamStar()
        updated = params.with_changes(star_arg=star, kwonly_params=_insert(list(params.kwonly_params),
                                                                             len(params.kwonly_params), new))
    elif param.kind is ParamKind.POSITIONAL_OR_KEYWORD:
        # after the override's last parameter that comes before it in the base
        earlier = set(base_names[:list(base_names).index(param.name)])
        position = 0
        for i, p in enumerate(params.params):
            if p.name.value in earlier or p.name.value in ("self", "cls"):
                position = i + 1
        items = list(params.params)
        later_required = any(p.default is None for p in items[position:])
        earlier_default = any(p.default is not None for p in items[:position])
        if (default is not None and later_required) or (default is None and earlier_default):
            raise _Refused(f"`{param.name}` cannot go into the override's positional parameters in the base's order")
        updated = params.with_changes(params=_insert(items, position, new))
    else:
        raise _Refused(f"`{param.name}` is {param.kind.name.lower()} in the base")
    return fn.with_changes(params=updated)


def _forward_keyword(fn: cst.FunctionDef, name: str, member: str) -> cst.FunctionDef:
    calls = _forward_calls(fn.body, member)
    if not calls:
        raise _Refused("the override does not call the original: decide what the new parameter means for the copy")

    class Forward(cst.CSTTransformer):
        def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
            if not any(original is c for c in calls):
                return updated
            if any(a.star == "**" or (a.keyword and a.keyword.value == name) for a in updated.args):
                return updated  # **kwargs already carries it
            arg = cst.Arg(keyword=cst.Name(name), value=cst.Name(name),
                          equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
            return updated.with_changes(args=_insert(list(updated.args), len(updated.args), arg))

    return fn.with_changes(body=fn.body.visit(Forward()))


def _reads(node: cst.CSTNode, name: str, skip: Sequence[cst.CSTNode]) -> bool:
    """Whether `name` is read anywhere in `node` outside the forwarding calls' own arguments."""
    hits: list[bool] = []

    class Visitor(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> bool:
            if any(call is s for s in skip):
                for a in call.args:
                    if not (isinstance(a.value, cst.Name) and a.value.value == name):
                        a.visit(self)
                call.func.visit(self)
                return False
            return True

        def visit_Name(self, n: cst.Name) -> None:
            if n.value == name:
                hits.append(True)

    node.visit(Visitor())
    return bool(hits)


def _drop_param(fn: cst.FunctionDef, name: str, member: str) -> cst.FunctionDef:
    calls = _forward_calls(fn.body, member)
    if _reads(fn.body, name, calls):
        raise _Refused(f"the body uses `{name}`: compute the value another way")
    params = fn.params
    position = next((i for i, p in enumerate(params.params) if p.name.value == name), None)

    def without(items: Sequence[cst.Param]) -> list[cst.Param]:
        kept = [p for p in items if p.name.value != name]
        if kept and len(kept) < len(items) and items[-1].name.value == name:
            kept[-1] = kept[-1].with_changes(comma=items[-1].comma)  # the old last one's (trailing) comma
        return kept

    updated = params.with_changes(params=without(params.params), kwonly_params=without(params.kwonly_params))
    if not updated.kwonly_params and isinstance(updated.star_arg, cst.ParamStar) and params.kwonly_params:
        updated = updated.with_changes(star_arg=cst.MaybeSentinel.DEFAULT)

    class Unforward(cst.CSTTransformer):
        def leave_Call(self, original: cst.Call, call: cst.Call) -> cst.Call:
            if not any(original is c for c in calls):
                return call
            args = []
            positional = 0
            for a in call.args:
                is_it = isinstance(a.value, cst.Name) and a.value.value == name
                if a.keyword is None and not a.star:
                    positional += 1
                if is_it and (a.keyword is not None and a.keyword.value == name or a.keyword is None
                              and position is not None):
                    continue
                args.append(a)
            if args and len(args) < len(call.args):
                args[-1] = args[-1].with_changes(comma=call.args[-1].comma)
            return call.with_changes(args=args)

    return fn.with_changes(params=updated, body=fn.body.visit(Unforward()))


# --- planning ---------------------------------------------------------------------------------

def _base_function(host: HostView, path: str) -> FunctionInfo | None:
    sym = host.resolve(path)
    if sym is None or sym.kind not in (FUNCTION, METHOD) or not isinstance(sym.obj, FunctionInfo):
        return None
    return sym.obj


def _differing(a: list[str], b: list[str]) -> tuple[int, int, int]:
    """Where two line lists differ once common leading and trailing lines are set aside:
    (start, end in `a`, end in `b`); start == both ends when they are equal."""
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a, end_b = end_a - 1, end_b - 1
    return start, end_a, end_b


def _changed_lines(before: str, after: str) -> tuple[int, str, str]:
    """The changed block between two texts: (first line, its lines before, after). An edit is one
    local change, so common leading and trailing lines are all a diff needs (linear, not quadratic)."""
    a, b = before.splitlines(), after.splitlines()
    start, end_a, end_b = _differing(a, b)
    if start == end_a == end_b:
        return 0, "", ""
    return start + 1, "\n".join(a[start:end_a]), "\n".join(b[start:end_b])


def _function_span(tree: ast.Module, qualname: str) -> tuple[int, int, int] | None:
    """(first line with decorators, last line, column) of the def `qualname` ("Cls.meth")."""
    body, node = tree.body, None
    for part in qualname.split("."):
        node = next((n for n in body if isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                     and n.name == part), None)
        if node is None:
            return None
        body = node.body
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return first, node.end_lineno or node.lineno, node.col_offset


def _import_spans(tree: ast.Module, module: str, name: str) -> list[tuple[int, int, int]]:
    return [(n.lineno, n.end_lineno or n.lineno, n.col_offset) for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and not n.level and n.module == module
            and any(a.name == name for a in n.names)]


def _edit_span(text: str, span: tuple[int, int, int], transformer: cst.CSTTransformer) -> str:
    """`text` with the statement at `span` transformed by libcst, parsed on its own (dedented):
    a unit is parsed, not the whole file, and only the lines that change are replaced."""
    start, end, column = span
    lines = text.splitlines(keepends=True)
    chunk = lines[start - 1:end]
    indent = chunk[0][:column] if chunk else ""
    if indent.strip():
        raise _Refused("the statement does not start its line")
    dedented = []
    for line in chunk:
        if line.startswith(indent):
            dedented.append(line[len(indent):])
        elif not line.strip():
            dedented.append(line)
        else:
            raise _Refused("a line of the unit is indented less than its first line")
    snippet = "".join(dedented)
    try:
        updated = cst.parse_module(snippet).visit(transformer).code
    except cst.ParserSyntaxError:
        raise _Refused("libcst cannot parse the unit") from None
    a, b = snippet.splitlines(keepends=True), updated.splitlines(keepends=True)
    head, tail_a, tail_b = _differing(a, b)
    lines[start - 1 + head:start - 1 + tail_a] = [indent + x if x.strip() else x for x in b[head:tail_b]]
    return "".join(lines)


def _fix_one(finding: Finding, text: str, tree: ast.Module, host: HostView) -> tuple[str, str]:
    """The file's text (parsed: `tree`) with one finding fixed, and what was done; _Refused with why
    when not safe."""
    assert finding.plugin is not None
    code = finding.code
    if code == MOVED:
        name, old_module = finding.args.get("name", ""), finding.args.get("module", "")
        homes = public_homes(host, name)
        if len(homes) != 1:
            raise _Refused(f"NEW defines `{name}` in {len(homes)} public modules" +
                           (f" ({', '.join(homes[:4])})" if homes else "") + ": choose one by hand")
        spans = _import_spans(tree, old_module, name)
        if not spans:
            raise _Refused(f"no `from {old_module} import {name}` statement to rewrite")
        for span in sorted(spans, reverse=True):  # bottom-up: a split import shifts what follows
            text = _edit_span(text, span, _MoveImport(old_module, name, homes[0]))
        return text, f"import `{name}` from `{homes[0]}`"
    unit = finding.plugin.unit
    member = unit.rpartition(".")[2]
    span = _function_span(tree, unit)
    if span is None:
        raise _Refused(f"`{unit}` not found in the file")
    base_path = finding.args.get("base", "")
    param_name = finding.args.get("param", "")
    if code == ADDED:
        base = _base_function(host, base_path)
        if base is None:
            raise _Refused(f"`{base_path}` not found in NEW")
        param = next((p for p in base.signature.params if p.name == param_name), None)
        if param is None:
            raise _Refused(f"`{param_name}` not in NEW's signature")
        if param.default is not None and not _literal(param.default):
            raise _Refused(f"the base default `{param.default}` is not a literal the plugin can name")
        names = [p.name for p in base.signature.params]
        edit = _EditFunction(member, lambda fn: _forward_keyword(_add_param(fn, param, names), param.name, member))
        default = f"={param.default}" if param.default is not None else ""
        what = f"add `{param.name}{default}` to `{unit}` and forward it"
    else:
        edit = _EditFunction(member, lambda fn: _drop_param(fn, param_name, member))
        what = f"drop `{param_name}` from `{unit}` (NEW's base no longer takes it)"
    return _edit_span(text, span, edit), what


def plan_fixes(findings: Sequence[Finding], host: HostView, read: ReadFile,
               settings: Settings | None = None) -> FixPlan:
    """Every safe fix for the findings (paths relative to the plugin tree), with the files' new texts.

    With `settings` (the scan's: they shaped `host`), the plan is kept in NEW's index cache from one
    run to the next under what it depends on: every finding as it is, the texts of the files the
    fixes would edit, NEW's tree, the settings and pinport's code (the libcst edits cost most of
    planning them, and a rebase plans the same ones on every run). A row that does not read is
    planned again."""
    if settings is None:
        return _plan_fixes(findings, host, read)
    paths = sorted({f.plugin.path for f in findings if f.code in (MOVED, ADDED, *DROPPED) and f.plugin is not None})
    texts = {path: read(path) for path in paths}
    inputs = hashlib.blake2b(digest_size=16)
    for f in findings:
        inputs.update(repr(f).encode("utf-8", "surrogatepass") + b"\0")
    for path, text in texts.items():
        inputs.update(f"{path}\0{text is None}\0{text or ''}\0".encode("utf-8", "surrogatepass"))
    made: list[FixPlan] = []
    index = {id(f): i for i, f in enumerate(findings)}

    def build() -> _StoredPlan:
        plan = _plan_fixes(findings, host, lambda path: texts[path] if path in texts else read(path))
        made.append(plan)
        return _StoredPlan([(index[id(x.finding)], x.path, x.line, x.before, x.after, x.what) for x in plan.fixes],
                           plan.refused, {path: after for path, (_, after) in plan.texts.items()})

    stored = host.index.stored("fixes-1", _StoredPlan, build, inputs.hexdigest(), repr(settings))
    if made:
        return made[0]
    try:
        return _read_plan(stored, findings, texts)
    except (IndexError, KeyError, TypeError, ValueError):  # a row that names findings or files it was not made for
        return _plan_fixes(findings, host, read)


class _StoredPlan(NamedTuple):
    """A `FixPlan` as the index cache keeps it: each fix names its finding by its place among the
    findings planned for; each edited file keeps its new text (the old one is what was read)."""

    fixes: list[tuple[int, str, int, str, str, str]]  # (finding, path, line, before, after, what)
    refused: dict[str, str]
    texts: dict[str, str]


def _read_plan(stored: _StoredPlan, findings: Sequence[Finding], texts: dict[str, str | None]) -> FixPlan:
    before = {path: text for path, text in texts.items() if text is not None}
    fixes = []
    for i, path, line, old, new, what in stored.fixes:
        if not 0 <= i < len(findings):
            raise IndexError(i)
        fixes.append(SafeFix(findings[i], path, line, old, new, what))
    return FixPlan(fixes, stored.refused, {path: (before[path], after) for path, after in stored.texts.items()})


def _plan_fixes(findings: Sequence[Finding], host: HostView, read: ReadFile) -> FixPlan:
    """Every safe fix for the findings (paths relative to the plugin tree), with the files' new texts."""
    plan = FixPlan()
    current: dict[str, str] = {}
    originals: dict[str, str] = {}
    trees: dict[str, ast.Module] = {}  # path -> the parse of its current text (a file gets several fixes)
    for finding in findings:
        if finding.code in _NO_REWRITE and finding.level is Severity.ERROR:
            plan.refused[finding.fingerprint] = _NO_REWRITE[finding.code].format_map(_Args(finding.args))
        if finding.code not in (MOVED, ADDED, *DROPPED) or finding.plugin is None:
            continue
        path = finding.plugin.path
        if path not in current:
            text = read(path)
            if text is None:
                plan.refused[finding.fingerprint] = f"{path}: cannot read"
                continue
            originals[path] = current[path] = text
        try:
            if path not in trees:
                trees[path] = ast.parse(current[path])
            updated, what = _fix_one(finding, current[path], trees[path], host)
        except _Refused as why:
            plan.refused[finding.fingerprint] = str(why)
            continue
        except SyntaxError:
            plan.refused[finding.fingerprint] = f"{path} does not parse"
            continue
        if updated == current[path]:
            continue
        try:
            tree = ast.parse(updated)
        except SyntaxError:
            plan.refused[finding.fingerprint] = "the edit would not parse"
            continue
        line, old, new = _changed_lines(current[path], updated)
        current[path], trees[path] = updated, tree
        plan.fixes.append(SafeFix(finding, path, line, old, new, what))
    plan.texts = {path: (originals[path], text) for path, text in current.items() if text != originals[path]}
    return plan
