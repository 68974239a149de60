"""Safe fixes: the mechanical edits a finding fully determines, made with libcst (layout kept).

- #4 a name that moved: the import is rewritten to the one public module of NEW defining it;
- #1 a parameter the NEW base gained: added to the override with the base's default and
  forwarded in the `_orig_*` / `super()` call (only when the override calls the original,
  since a full copy must decide what the value means);
- #2 a parameter the NEW base dropped: removed from the override and its forwarding call,
  when nothing else in the body reads it.

Anything else stays a finding; each refusal carries its reason. Nothing here writes.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import libcst as cst

from ..findings import Finding
from ..model.host import HostView
from ..model.resolve import FUNCTION, METHOD
from ..model.summary import FunctionInfo, Param, ParamKind

ReadFile = Callable[[str], str | None]

MOVED, ADDED, DROPPED = "PP0402", "PP0101", {"PP0201", "PP0202"}


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


def _changed_lines(before: str, after: str) -> tuple[int, str, str]:
    import difflib

    a, b = before.splitlines(), after.splitlines()
    blocks = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not blocks:
        return 0, "", ""
    i1, i2, j1, j2 = blocks[0][1], blocks[-1][2], blocks[0][3], blocks[-1][4]
    return i1 + 1, "\n".join(a[i1:i2]), "\n".join(b[j1:j2])


def _fix_one(finding: Finding, tree: cst.Module, host: HostView) -> tuple[cst.Module, str]:
    """The module with one finding fixed, and what was done; _Refused with why when it is not safe."""
    assert finding.plugin is not None
    code = finding.code
    if code == MOVED:
        name, old_module = finding.args.get("name", ""), finding.args.get("module", "")
        homes = public_homes(host, name)
        if len(homes) != 1:
            raise _Refused(f"NEW defines `{name}` in {len(homes)} public modules" +
                           (f" ({', '.join(homes[:4])})" if homes else "") + ": choose one by hand")
        mover = _MoveImport(old_module, name, homes[0])
        updated = tree.visit(mover)
        if not mover.count:
            raise _Refused(f"no `from {old_module} import {name}` statement to rewrite")
        return updated, f"import `{name}` from `{homes[0]}`"
    unit = finding.plugin.unit
    member = unit.rpartition(".")[2]
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
        edit = _EditFunction(unit, lambda fn: _forward_keyword(_add_param(fn, param, names), param.name, member))
        updated = tree.visit(edit)
        default = f"={param.default}" if param.default is not None else ""
        what = f"add `{param.name}{default}` to `{unit}` and forward it"
    else:
        edit = _EditFunction(unit, lambda fn: _drop_param(fn, param_name, member))
        updated = tree.visit(edit)
        what = f"drop `{param_name}` from `{unit}` (NEW's base no longer takes it)"
    if edit.count != 1:
        raise _Refused(f"`{unit}` found {edit.count} times in the file")
    return updated, what


def plan_fixes(findings: Sequence[Finding], host: HostView, read: ReadFile) -> FixPlan:
    """Every safe fix for the findings (paths relative to the plugin tree), with the files' new texts."""
    plan = FixPlan()
    modules: dict[str, cst.Module] = {}
    originals: dict[str, str] = {}
    for finding in findings:
        if finding.code not in (MOVED, ADDED, *DROPPED) or finding.plugin is None:
            continue
        path = finding.plugin.path
        if path not in modules:
            text = read(path)
            if text is None:
                plan.refused[finding.fingerprint] = f"{path}: cannot read"
                continue
            try:
                modules[path] = cst.parse_module(text)
            except cst.ParserSyntaxError:
                plan.refused[finding.fingerprint] = f"{path}: libcst cannot parse it"
                continue
            originals[path] = text
        before = modules[path].code
        try:
            updated, what = _fix_one(finding, modules[path], host)
        except _Refused as why:
            plan.refused[finding.fingerprint] = str(why)
            continue
        if updated.code == before:
            continue
        try:
            ast.parse(updated.code)
        except SyntaxError:
            plan.refused[finding.fingerprint] = "the edit would not parse"
            continue
        line, old, new = _changed_lines(before, updated.code)
        modules[path] = updated
        plan.fixes.append(SafeFix(finding, path, line, old, new, what))
    for path, module in modules.items():
        if module.code != originals[path]:
            plan.texts[path] = (originals[path], module.code)
    return plan
