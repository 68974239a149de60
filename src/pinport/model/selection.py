"""Selection sites (for the bypass check, #10): where a host version chooses between a patched class
and a parallel implementation, and what the choice reads.

The site is the innermost `if` (or conditional expression) with the candidate in one branch and
the target in the other; its test is followed into environment variables (with their defaults),
`self.X` assignments and config fields or properties, so OLD and NEW can be compared line-free.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from ..findings import Location
from .host import HostView
from .nodes import chain, children, walk_tree
from .parse import resolve_relative
from .resolve import METHOD, Symbol
from .summary import BindingKind, ClassAttr, FunctionInfo

_GETENV = r"os\.(?:getenv|environ\.get)\(\s*[\"']{var}[\"']\s*(?:,\s*([^)\n]*))?\)"


@dataclass
class Selection:
    """One place a host version chooses between target and candidate, and what its test reads."""

    site: Location
    reads: set[tuple[str, ...]] = field(default_factory=set)  # normalised, line-free: compared OLD vs NEW
    env_vars: set[str] = field(default_factory=set)
    flags: set[str] = field(default_factory=set)  # upper-case names the test reads (flags, constants)
    lines: list[str] = field(default_factory=list)


def _mentions(view: HostView, mod: str, cls: Symbol) -> bool:
    """Whether a module's text could import `cls`: its name and its module (absolute or relative)."""
    text = view.index.source(mod)
    parent, _, leaf = cls.module.rpartition(".")
    if cls.path.rpartition(".")[2] not in text:
        return False
    return ".".join(cls.module.split(".")[-2:]) in text or (mod.rpartition(".")[0] == parent and (
        f"from .{leaf} import" in text or f"import {leaf}" in text))


def _scope_modules(view: HostView, target: Symbol, cand: Symbol) -> tuple[list[str], list[str]]:
    """(modules naming both classes, modules naming only the candidate) under their common package."""
    a, b = target.module.split("."), cand.module.split(".")
    common: list[str] = []
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common.append(x)
    prefix = ".".join(common if len(common) >= 2 else a[:2])
    both, one = [], []
    for mod in view.index.modules:
        if mod != cand.module and (mod == prefix or mod.startswith(prefix + ".")) and _mentions(view, mod, cand):
            (both if _mentions(view, mod, target) else one).append(mod)
    return both, one


def selections(view: HostView, target: Symbol, cand: Symbol) -> list[Selection]:
    """The switches in `view` between `cand` and `target`: the innermost `if` (or conditional expression)
    with the candidate in one branch and the target in the other branch or right after it (early
    return); failing that, the innermost `if` naming only the candidate."""
    def build() -> list[Selection]:
        both, only = _scope_modules(view, target, cand)
        switches: list[Selection] = []
        one: list[Selection] = []
        for group in (both, only):
            for mod in group:
                tree = view.index.parsed(mod)
                if tree is not None:
                    _module_selections(view, mod, tree, target, cand, switches, one)
            if switches:
                break  # a real switch found: modules that only build the candidate add nothing
        for sel in one:
            sel.reads.add(("names only the candidate",))
            sel.lines[0] = sel.lines[0].replace(" selects on ", " uses it under ")
        return sorted(switches or one, key=lambda s: (s.site.path, s.site.line))
    return view.memo(("selections", target.path, cand.path), build)


def _module_selections(view: HostView, mod: str, tree: ast.Module, target: Symbol, cand: Symbol,
                       switches: list[Selection], one: list[Selection]) -> None:
    imports: list[ast.ImportFrom] = []
    branches = _branching(view, mod, tree, cand.path.rpartition(".")[2], imports)
    refs_c, refs_t = _Refs(view, mod, imports, cand.path), _Refs(view, mod, imports, target.path)
    best: dict[int, _Branch] = {}  # candidate reference -> its innermost switch
    loose: dict[int, _Branch] = {}
    for entry in branches:
        for side in (0, 1):
            mine = [r for r in entry.refs[side] if refs_c.match(r)]
            if not mine:
                continue
            other = entry.refs[1 - side] + (_flat(entry.after) if side == 0 else [])
            table = best if any(refs_t.match(r) for r in other) else loose
            for r in mine:
                if id(r) not in table or table[id(r)].depth < entry.depth:
                    table[id(r)] = entry
    chosen = {id(e.node): e for e in best.values()}
    for entry in chosen.values():
        switches.append(_describe(view, mod, entry.node, entry.cls, entry.fn))
    if not chosen:
        for entry in {id(e.node): e for e in loose.values()}.values():
            one.append(_describe(view, mod, entry.node, entry.cls, entry.fn))


@dataclass
class _Branch:
    node: ast.AST  # an If or IfExp
    depth: int
    cls: ast.ClassDef | None
    fn: ast.AST | None
    refs: tuple[list[ast.AST], list[ast.AST]] = field(default_factory=lambda: ([], []))
    after: list[ast.AST] = field(default_factory=list)  # the statements that follow an `if`


def _branching(view: HostView, mod: str, tree: ast.Module, name: str,
               imports: list[ast.ImportFrom]) -> list[_Branch]:
    """Every If/IfExp with the name nodes of each branch (nested ones included), in the top-level
    statements and methods whose text names `name`; `if TYPE_CHECKING:` blocks are skipped. Every
    `from ... import` seen (and each at module level) goes into `imports`."""
    lines = view.index.lines(mod)
    hot = [i for i, line in enumerate(lines, 1) if name in line]

    def names_it(node: ast.AST) -> bool:
        lo, hi = node.lineno, getattr(node, "end_lineno", node.lineno) or node.lineno  # type: ignore[attr-defined]
        return any(lo <= h <= hi for h in hot)

    found: dict[int, _Branch] = {}
    after: dict[int, list[ast.AST]] = {}
    stack: list[tuple[ast.AST, tuple[tuple[int, int], ...], ast.ClassDef | None, ast.AST | None]] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom):
            imports.append(stmt)
        elif isinstance(stmt, ast.ClassDef) and names_it(stmt):
            stack.extend((m, (), stmt, None) for m in stmt.body if names_it(m))
        elif not isinstance(stmt, ast.ClassDef) and names_it(stmt):
            stack.append((stmt, (), None, None))
    for block in (tree.body, *[s.body + s.orelse for s in tree.body if isinstance(s, ast.If)]):
        for i, stmt in enumerate(block):
            if isinstance(stmt, ast.If):
                after[id(stmt)] = block[i + 1:]
    while stack:
        node, ifs, cls, fn = stack.pop()
        if isinstance(node, ast.ImportFrom | ast.Name | ast.Attribute):
            if isinstance(node, ast.ImportFrom) and node not in imports:
                imports.append(node)
            for key, side in ifs:
                found[key].refs[side].append(node)
            if isinstance(node, ast.Attribute):
                continue  # the whole chain is one reference
        for part in ("body", "orelse", "finalbody"):
            block = getattr(node, part, None)
            if type(block) is list:
                for i, stmt in enumerate(block):
                    if isinstance(stmt, ast.If):
                        after[id(stmt)] = block[i + 1:]
        if isinstance(node, ast.If) and chain(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            stack.extend((c, ifs, cls, fn) for c in node.orelse)
            continue
        if isinstance(node, ast.If | ast.IfExp):
            found[id(node)] = _Branch(node, len(ifs), cls, fn, after=after.get(id(node), []))
            stack.append((node.test, ifs, cls, fn))
            body, orelse = (node.body, node.orelse) if isinstance(node, ast.If) else ([node.body], [node.orelse])
            stack.extend((c, (*ifs, (id(node), 0)), cls, fn) for c in body)
            stack.extend((c, (*ifs, (id(node), 1)), cls, fn) for c in orelse)
            continue
        inner_cls = node if isinstance(node, ast.ClassDef) else cls
        inner_fn = node if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else fn
        stack.extend((c, ifs, inner_cls, inner_fn) for c in children(node))
    return [entry for entry in found.values() if entry.refs[0] or entry.refs[1]]


def _flat(nodes: list[ast.AST]) -> list[ast.AST]:
    """The import, name and attribute-chain nodes under some statements."""
    out: list[ast.AST] = []
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ImportFrom | ast.Name | ast.Attribute):
            out.append(node)
        if not isinstance(node, ast.Attribute):
            stack.extend(children(node))
    return out


class _Refs:
    """Which nodes of one host module name a given class: its imports (local ones too) and aliases."""

    def __init__(self, view: HostView, mod: str, imports: list[ast.ImportFrom], path: str) -> None:
        self.view, self.mod, self.path = view, mod, path
        self.module, _, self.name = path.rpartition(".")
        self.locals: set[str] = set()
        sym = view.resolver.module_attr(mod, self.name)
        if sym is not None and sym.path == path:
            self.locals.add(self.name)
        self.imports: set[int] = set()
        for node in imports:
            base = resolve_relative(mod, view.index.is_package(mod), node.level, node.module)
            for alias in node.names:
                if alias.name == self.name and (base == self.module or _same(view, f"{base}.{alias.name}", path)):
                    self.imports.add(id(node))
                    self.locals.add(alias.asname or alias.name)

    def match(self, node: ast.AST) -> bool:
        if isinstance(node, ast.ImportFrom):
            return id(node) in self.imports
        if isinstance(node, ast.Name):
            return node.id in self.locals
        text = chain(node)
        if not text.endswith("." + self.name):
            return False
        sym = self.view.resolver.resolve_in(self.mod, text)
        return sym is not None and sym.path == self.path


def _same(view: HostView, a: str, b: str) -> bool:
    sym = view.resolve(a)
    return sym is not None and sym.path == b


def _describe(view: HostView, mod: str, node: ast.AST, cls: ast.ClassDef | None, fn: ast.AST | None) -> Selection:
    test = node.test  # type: ignore[attr-defined]
    rel = view.index.paths[mod]
    text = ast.unparse(test)
    sel = Selection(Location(rel, node.lineno, node.col_offset, mod, view.index.line_text(mod, node.lineno)))
    sel.reads.add(("test", text))
    sel.lines.append(f"{view.label}: {rel}:{node.lineno} selects on `{text}`")
    _reads(view, mod, test, cls, fn, sel, depth=0)
    return sel


def _reads(view: HostView, mod: str, expr: ast.AST, cls: ast.ClassDef | None, fn: ast.AST | None, sel: Selection,
           depth: int) -> None:
    """Environment variables, `self.X` assignments and config members an expression reads, into `sel`."""
    envs = set(view.env_modules)
    for node in walk_tree(expr):
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
        if name.isupper():
            sel.flags.add(name)
        text = chain(node) if isinstance(node, ast.Attribute) else ""
        if isinstance(node, ast.Call) and chain(node.func) in ("os.getenv", "os.environ.get") and node.args and \
                isinstance(node.args[0], ast.Constant):
            _env(view, str(node.args[0].value), sel)
        if not text:
            continue
        head, _, last = text.rpartition(".")
        head_sym = view.resolver.resolve_in(mod, head) if head and not head.startswith("self") else None
        if head_sym is not None and head_sym.path in envs:
            _env(view, last, sel)
        elif head == "self" and cls is not None and depth < 2:
            for value, method in _self_assignments(view, mod, cls, last):
                sel.reads.add(("self", last, ast.unparse(value)))
                sel.lines.append(f"{view.label}: self.{last} = {ast.unparse(value)} (line {value.lineno})")
                _reads(view, mod, value, cls, method, sel, depth + 1)
        elif head and depth < 3:
            _config(view, mod, head, last, fn, sel)


def _self_assignments(view: HostView, mod: str, cls: ast.ClassDef, attr: str) -> list[tuple[ast.AST, ast.AST]]:
    out = []
    lines = view.index.lines(mod)
    for method in cls.body:
        if isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef) and f"self.{attr}" in "\n".join(
                lines[method.lineno - 1:method.end_lineno]):
            for node in walk_tree(method):
                if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None and any(
                        chain(t) == f"self.{attr}" for t in (node.targets if isinstance(node, ast.Assign)
                                                            else [node.target])):
                    out.append((node.value, method))
    return out


def _config(view: HostView, mod: str, head: str, member: str, fn: ast.AST | None, sel: Selection) -> None:
    """`config.member` where `config` is a parameter annotated with a host class: its field or property."""
    var = head.rpartition(".")[2]
    params = [] if fn is None else [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]  # type: ignore[attr-defined]
    ann = next((ast.unparse(a.annotation) for a in params if a.arg == var and a.annotation is not None), None)
    cls = view.resolve_annotation(mod, ann)
    found = view.member(cls, member, instance=False) if cls is not None else None
    if found is None or not found.module:
        return
    label = f"{found.owner.rpartition('.')[2]}.{member}"
    where = f"{view.index.paths[found.module]}:{found.line}"
    if found.kind == METHOD and isinstance(found.obj, FunctionInfo):
        # the property's body, and the helpers it calls, read as text: a big config module is not parsed
        text = _body_text(view, found)
        calls = sorted(set(_SELF_CALL.findall(text)))
        for name in calls:
            helper = view.member(cls, name, instance=False)  # type: ignore[arg-type]
            if helper is not None and helper.kind == METHOD and helper.module:
                text += "\n" + _body_text(view, helper)
        flags = {f for m in view.env_modules for f in re.findall(rf"\b{m.rpartition('.')[2]}\.([A-Z][A-Z0-9_]+)", text)}
        for flag in sorted(flags):
            _env(view, flag, sel)
        consts = sorted(set(_CONSTANT.findall(text)) - flags)
        sel.flags.update(flags, consts)
        sel.reads.add(("config", label, "property", *calls))
        sel.lines.append(f"{view.label}: config `{label}` is a property ({where}) reading "
                         f"{', '.join(sorted(flags) + consts + [f'self.{c}()' for c in calls]) or 'nothing'}")
        for const in consts:
            values = _constant_strings(view, found.module, const)
            if values:
                sel.reads.add(("constant", const, *values))
                shown = ", ".join(values[:4]) + (f", ... ({len(values)} entries)" if len(values) > 4 else "")
                sel.lines.append(f"{view.label}: {const} = {{{shown}}}")
    elif isinstance(found.obj, ClassAttr):
        sel.reads.add(("config", label, "field", found.obj.value))
        sel.lines.append(f"{view.label}: config field `{label}` ({where}) defaults to "
                         f"`{found.obj.value or '(required)'}`")


_SELF_CALL = re.compile(r"\bself\.(\w+)\(")
_CONSTANT = re.compile(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b")
_STRING = re.compile(r"[\"']([^\"'\n]+)[\"']")


def _body_text(view: HostView, sym: Symbol) -> str:
    fn = sym.obj
    if not isinstance(fn, FunctionInfo):
        return ""
    return "\n".join(line.split("#")[0] for line in view.index.lines(sym.module)[fn.line - 1:fn.end_line])


def _constant_strings(view: HostView, mod: str, name: str) -> list[str]:
    """The string literals of a module-level constant (`ARCHS = frozenset({"A", "B"})`), sorted."""
    binding = view.index.modules[mod].bindings.get(name)
    if binding is None or binding.kind is not BindingKind.ASSIGN:
        return []
    lines = view.index.lines(mod)
    text, depth = "", 0
    for line in lines[binding.line - 1:binding.line + 400]:
        code = line.split("#")[0]
        text += code + "\n"
        depth += sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")
        if depth <= 0:
            break
    return sorted(set(_STRING.findall(text.partition("=")[2])))


def _env(view: HostView, var: str, sel: Selection) -> None:
    if var in sel.env_vars:
        return
    sel.env_vars.add(var)
    default = "?"
    for mod in view.env_modules:
        match = re.search(_GETENV.format(var=re.escape(var)), view.index.source(mod))
        if match:
            default = (match.group(1) or "None").strip()
            break
    sel.reads.add(("env", var, default))
    sel.lines.append(f"{view.label}: env {var} (default {default})")
