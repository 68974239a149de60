"""Host types of expressions, statically: annotations, return types and arity, `self`, `super()`.

Everything here reads the parsed trees an index hands out (`CodeIndex.parsed`) and memoises
per index. Inference is deliberately shallow and flow-insensitive: a local has a type only
when every assignment agrees, and anything unsure yields None, so a caller that only reports
what resolved cannot report a guess.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NamedTuple

from .binding import BOUND, CALL, CONSTRUCT, DATACLASS_DECORATORS, UNBOUND, Callee
from .index import CodeIndex
from .resolve import CLASS, EXTERNAL, FUNCTION, INSTANCE_ATTR, METHOD, MODULE, Resolver, Symbol
from .summary import ClassAttr, ClassInfo, FunctionInfo, InstanceAttr
from .units import Unit, UnitWalk, decorator_name, local_imports, source_lines

# single values by their declared type (the host's own, `torch.Tensor` for vLLM, come from its profile)
_NON_TUPLE = {"int", "float", "bool", "None", "np.ndarray", "numpy.ndarray", "npt.NDArray", "NDArray", "dict", "Dict"}
_NAME = re.compile(r"[A-Za-z_][\w.]*")


# -- return arity -------------------------------------------------------------------------------
def function_node(index: CodeIndex, module: str, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The parsed def that starts at `line` in `module` (module and class level; kept on the index)."""
    return index.module_memo(module, "defs", lambda: _defs_by_line(index, module)).get(line)


def _defs_by_line(index: CodeIndex, module: str) -> dict[int, ast.FunctionDef | ast.AsyncFunctionDef]:
    tree = index.parsed(module)
    found: dict[int, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    stack: list[ast.stmt] = list(tree.body) if tree is not None else []
    while stack:  # statement lists only: defs, class bodies and module-level if/try branches
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found[node.lineno] = node
        elif isinstance(node, ast.ClassDef):
            stack.extend(node.body)
        elif isinstance(node, ast.If | ast.Try | ast.With):
            stack.extend((*node.body, *getattr(node, "orelse", ()), *getattr(node, "finalbody", ())))
            for handler in getattr(node, "handlers", ()):
                stack.extend(handler.body)
    return found


def _own_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function body, not descending into nested defs, lambdas or classes."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            stack.extend(ast.iter_child_nodes(node))


def annotation_arity(text: str | None, plain: Iterable[str] = ()) -> int | None:
    """How many values a declared return type unpacks into: n for tuple[..n..], 1 for plain values
    (builtins, arrays, and the host's `plain` type names: setting `plain-types`)."""
    if not text:
        return None
    text = text.strip().strip("'\"")
    parts = [p.strip() for p in split_top(text, "|") if p.strip() != "None"]
    if len(parts) != 1:
        return None
    text = parts[0]
    for prefix in ("tuple[", "Tuple[", "typing.Tuple["):
        if text.startswith(prefix) and text.endswith("]"):
            inner = text[len(prefix):-1]
            if "..." in inner or inner.strip() in ("", "()"):
                return None
            return len(split_top(inner, ","))
    base = text.split("[", 1)[0]
    return 1 if base in _NON_TUPLE or base in plain else None


def split_top(text: str, sep: str) -> list[str]:
    """`text` split at each `sep` outside brackets (`A[B, C] | D` -> `A[B, C] `, ` D`)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def return_arity(index: CodeIndex, sym: Symbol, expected: int | None = None, plain: Iterable[str] = ()) -> int | None:
    """How many values every `return` of a host function gives (1 = not a tuple); None if unsure.

    With `expected` (what the caller unpacks), a return annotation that agrees settles it
    without parsing the host module.
    """
    fn = sym.obj
    if not isinstance(fn, FunctionInfo) or not sym.module:
        return None
    plain = frozenset(plain)
    if expected is not None and annotation_arity(fn.signature.returns, plain) == expected:
        return expected  # the declared type agrees with the caller: no need to parse the body
    node = function_node(index, sym.module, fn.line)
    if node is None:
        return None
    declared = annotation_arity(ast.unparse(node.returns), plain) if node.returns is not None else None
    arities: set[int] = set()
    returns = 0
    locals_ = _tuple_locals(node)
    for n in _own_nodes(node):
        if isinstance(n, ast.Yield | ast.YieldFrom):
            return None
        if not isinstance(n, ast.Return) or n.value is None or (
                isinstance(n.value, ast.Constant) and n.value.value is None):
            continue  # `return None` fails any unpacking, on OLD and NEW alike
        returns += 1
        value = n.value
        if isinstance(value, ast.Name) and value.id in locals_:
            value = locals_[value.id]  # `out = (a, b); return out`
        if isinstance(value, ast.Tuple | ast.List):
            if any(isinstance(e, ast.Starred) for e in value.elts):
                return None
            arities.add(len(value.elts))
        elif isinstance(value, ast.Constant) and isinstance(value.value, int | float | bool):
            arities.add(1)
        elif isinstance(value, ast.Compare | ast.UnaryOp):
            arities.add(1)
        elif declared is not None:
            arities.add(declared)
        else:
            return None
    if not returns and declared is not None and _is_stub(node):
        return declared  # an abstract or interface method: its annotation is the contract
    return arities.pop() if len(arities) == 1 else None


def _tuple_locals(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.Tuple | ast.List]:
    """Locals every assignment of which is a tuple (or list) display of one length: `out = (a, b)`."""
    found: dict[str, ast.Tuple | ast.List | None] = {}
    for n in _own_nodes(fn):
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(
            n, ast.AnnAssign | ast.AugAssign | ast.For | ast.AsyncFor | ast.NamedExpr) else []
        for t in targets:
            if not isinstance(t, ast.Name):
                continue
            value = getattr(n, "value", None) if isinstance(n, ast.Assign | ast.AnnAssign) else None
            shaped = value if isinstance(value, ast.Tuple | ast.List) and not any(
                isinstance(e, ast.Starred) for e in value.elts) else None
            before = found.get(t.id, shaped) if t.id in found else shaped
            same = before is not None and shaped is not None and len(before.elts) == len(shaped.elts)
            found[t.id] = shaped if same else None
    return {k: v for k, v in found.items() if v is not None}


def _is_stub(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A body of only a docstring, `...`, `pass` or `raise NotImplementedError`: an interface."""
    for stmt in fn.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if isinstance(stmt, ast.Pass | ast.Raise):
            continue
        return False
    return True


# -- type inference -----------------------------------------------------------------------------
class Typed(NamedTuple):
    """What an expression denotes: the symbol itself (a class, module, function) or an instance of a class.

    `hidden` names members that are not the host's on this object: an instance of a plugin subclass is
    typed as its host base, minus what the plugin's classes define (their members resolve to nothing).
    """

    sym: Symbol
    instance: bool = False
    hidden: frozenset[str] = frozenset()


Lookup = Callable[[str], Symbol | None]


def annotation_name(text: str | None) -> str | None:
    """The one class name an annotation denotes (`X`, `"X"`, `X | None`, `Optional[X]`), else None."""
    if not text:
        return None
    text = text.strip().strip("'\"")
    for prefix in ("Optional[", "typing.Optional["):
        if text.startswith(prefix) and text.endswith("]"):
            text = text[len(prefix):-1]
    if text.startswith(("Union[", "typing.Union[")) and text.endswith("]"):
        text = text[text.index("[") + 1:-1]
        parts = [p.strip() for p in split_top(text, ",") if p.strip() != "None"]
    else:
        parts = [p.strip().strip("'\"") for p in split_top(text, "|") if p.strip() != "None"]
    return parts[0] if len(parts) == 1 and _NAME.fullmatch(parts[0]) else None


def module_lookup(resolver: Resolver, module: str, local: dict[str, str] | None = None) -> Lookup:
    """Names as a host module sees them, with a function's local imports first."""
    def lookup(name: str) -> Symbol | None:
        if local and name in local:
            return resolver.resolve(local[name])
        return resolver.module_attr(module, name)
    return lookup


class Inference:
    """Host types of expressions in one body: parameters by annotation, locals by agreeing assignments.

    `lookup` answers bare names (the module's namespace and local imports); `env` holds the
    locals; `self_attrs` overrides `self.X` for attributes the caller knows better (a plugin
    that assigns them itself); `masked(cls, name)` hides members the caller does not want
    resolved to the host (members a plugin provides); `super_mro` is where `super()` looks.
    """

    def __init__(self, resolver: Resolver, lookup: Lookup, *, env: dict[str, Typed | None] | None = None,
                 self_attrs: dict[str, Typed | None] | None = None,
                 masked: Callable[[Symbol, str], bool] | None = None,
                 super_mro: Sequence[Symbol] = ()) -> None:
        self.resolver = resolver
        self.lookup = lookup
        self.env: dict[str, Typed | None] = env if env is not None else {}
        self.self_attrs = self_attrs or {}
        self.masked = masked or (lambda _cls, _name: False)
        self.super_mro = tuple(super_mro)
        self.nested_supers: frozenset[int] = frozenset()  # `super()` of a class nested in the body: not ours
        self._depth = 0  # attribute chains followed through constructor assignments (a cycle guard)

    def annotation(self, text: str | None, lookup: Lookup | None = None) -> Typed | None:
        name = annotation_name(text)
        sym = self.dotted(name, lookup or self.lookup) if name else None
        return Typed(sym, True) if sym is not None and sym.kind == CLASS else None

    def dotted(self, expr: str, lookup: Lookup) -> Symbol | None:
        head, *rest = expr.split(".")
        sym = lookup(head)
        for part in rest:
            if sym is None:
                return None
            sym = self.resolver.member(sym, part)
        return sym

    def _host_annotation(self, text: str | None, owner_module: str) -> Typed | None:
        return self.annotation(text, module_lookup(self.resolver, owner_module)) if owner_module else None

    # -- expressions ----------------------------------------------------------------------------
    def infer(self, node: ast.AST) -> Typed | None:
        if isinstance(node, ast.Name):
            if node.id in self.env:
                return self.env[node.id]
            sym = self.lookup(node.id)
            return Typed(sym) if sym is not None and sym.kind in (CLASS, MODULE, FUNCTION) else None
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self" and node.attr in self.self_attrs:
                return self.self_attrs[node.attr]
            base = self.infer(node.value)
            return self.attribute(base, node.attr) if base is not None else None
        if isinstance(node, ast.Call):
            callee = self.callee(node.func)
            if callee is None:
                return None
            if callee.mode == CONSTRUCT:
                return Typed(callee.sym, True)
            fn = callee.sym.obj
            return self._host_annotation(fn.signature.returns, callee.sym.module) if isinstance(
                fn, FunctionInfo) else None
        return None

    def _member(self, base: Typed, name: str) -> Symbol | None:
        sym = base.sym
        if sym.kind not in (MODULE, CLASS) or name in base.hidden or self.masked(sym, name):
            return None
        if sym.kind == MODULE:
            return self.resolver.module_attr(sym.path, name)
        return self.resolver.class_member(sym, name, instance=base.instance)

    def attribute(self, base: Typed, name: str) -> Typed | None:
        """The type of `<base>.name`."""
        m = self._member(base, name)
        if m is None or m.kind == EXTERNAL:
            return None
        if m.kind in (CLASS, MODULE) or (m.kind == FUNCTION and base.sym.kind == MODULE):
            return Typed(m)
        if isinstance(m.obj, FunctionInfo):
            return self._host_annotation(m.obj.signature.returns, m.module) if m.obj.is_property else None
        if isinstance(m.obj, ClassAttr):
            return self._host_annotation(m.obj.annotation, m.module)
        if m.kind == INSTANCE_ATTR and isinstance(m.obj, InstanceAttr):
            return self._instance_attr(m)
        return None

    def _instance_attr(self, m: Symbol) -> Typed | None:
        """`self.x: T = ...` by its annotation, else `self.x = Cls(...)` by the constructor."""
        assert isinstance(m.obj, InstanceAttr)
        lines = source_lines(self.resolver.index, m.module)
        line = lines[m.obj.line - 1].strip() if 0 < m.obj.line <= len(lines) else ""
        found = re.match(rf"self\.{re.escape(m.obj.name)}\s*:\s*([^=]+)=", line)
        if found:
            return self._host_annotation(found.group(1), m.module)
        ctor = re.match(r"([A-Za-z_][\w.]*)\(", m.obj.expr)
        if ctor:
            sym = self.dotted(ctor.group(1), module_lookup(self.resolver, m.module))
            return Typed(sym, True) if sym is not None and sym.kind == CLASS else None
        return self._from_parameter(m)

    def _from_parameter(self, m: Symbol) -> Typed | None:
        """`self.x = config` or `self.x = config.model_config` in a method whose `config` parameter
        is annotated with a host class: the annotation, then each attribute along the chain."""
        assert isinstance(m.obj, InstanceAttr)
        parts = m.obj.expr.strip().split(".")
        if not all(p.isidentifier() for p in parts) or len(parts) > 6 or self._depth > 8:
            return None
        owner = self.resolver.resolve(m.owner) if m.owner else None
        fn = owner.obj.methods.get(m.obj.method) if owner is not None and isinstance(owner.obj, ClassInfo) else None
        param = fn.signature.get(parts[0]) if fn is not None and parts[0] != "self" else None
        t = self._host_annotation(param.annotation, m.module) if param is not None else None
        self._depth += 1
        try:
            for part in parts[1:]:
                t = self.attribute(t, part) if t is not None else None
        finally:
            self._depth -= 1
        return t

    # -- calls ----------------------------------------------------------------------------------
    def callee(self, func: ast.AST) -> Callee | None:
        """The host callable a call's `func` expression reaches, and how."""
        if isinstance(func, ast.Name):
            t = self.infer(func)
            if t is None or t.instance or (func.id in self.env and t.sym.kind == CLASS):
                return None  # `cls(...)` / a class held in a local may be any subclass: not judged
            if t.sym.kind == CLASS:
                return Callee(t.sym, CONSTRUCT, t.sym.path)
            return Callee(t.sym, CALL, t.sym.path) if t.sym.kind == FUNCTION else None
        if not isinstance(func, ast.Attribute):
            return None
        if _is_super(func.value):
            return None if id(func.value) in self.nested_supers else self._super_callee(func.attr)
        base = self.infer(func.value)
        if base is None:
            return None
        m = self._member(base, func.attr)
        if m is None or m.kind not in (CLASS, FUNCTION, METHOD) or not m.module:
            return None
        via = f"{base.sym.path}.{func.attr}"
        if m.kind == CLASS:
            return Callee(m, CONSTRUCT, via)
        if m.kind == FUNCTION:
            return Callee(m, CALL, via)
        fn = m.obj
        if not isinstance(fn, FunctionInfo) or fn.is_property:
            return None
        mode = BOUND if base.instance or fn.is_classmethod else UNBOUND
        return Callee(m, mode, via, base.sym)

    def _super_callee(self, name: str) -> Callee | None:
        for c in self.super_mro:
            if c.kind == EXTERNAL:
                return None
            info = c.obj
            if not isinstance(info, ClassInfo):
                return None
            if name in info.methods:
                fn = info.methods[name]
                m = Symbol(METHOD, f"{c.path}.{name}", c.module, fn.line, fn, c.path)
                return Callee(m, BOUND, m.path, c)
            if name == "__init__" and any(d in DATACLASS_DECORATORS for d in info.decorators):
                return Callee(c, CONSTRUCT, f"{c.path}.__init__", c)  # the synthesised __init__
        return None

    # -- locals ---------------------------------------------------------------------------------
    def bind_locals(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, facts: UnitWalk,
                    self_type: Typed | None) -> None:
        """Fill `env` from one def: `self`/`cls`, annotated parameters, then agreeing assignments."""
        self.nested_supers = facts.nested_supers
        args = [*fn.args.posonlyargs, *fn.args.args]
        decorators = {decorator_name(d) for d in fn.decorator_list}
        first = args[0].arg if args and "staticmethod" not in decorators else None
        for a in (*args, *fn.args.kwonlyargs, fn.args.vararg, fn.args.kwarg):
            if a is not None:
                self.env[a.arg] = self.annotation(ast.unparse(a.annotation)) if a.annotation is not None else None
        if first is not None and self_type is not None:
            cls_level = "classmethod" in decorators or fn.name == "__new__"
            self.env[first] = Typed(self_type.sym, not cls_level)
        for name in facts.shadowed:
            self.env[name] = None  # nested parameters shadow (flow-insensitively)
        # a local declared with an annotation (`x: T = ...`) keeps that type through later plain
        # rebindings (`x = replace(x, ...)`): the declaration is what a type checker holds them to
        declared: dict[str, Typed | None] = {}
        for _line, _col, name, _value, ann in facts.assigned:
            if ann is not None and name not in facts.shadowed:
                t = self.annotation(ast.unparse(ann))
                declared[name] = t if name not in declared or _key(declared[name]) == _key(t) else None
        seen = set(self.env)
        for _line, _col, name, value, _ann in facts.assigned:
            if name in facts.shadowed:
                continue
            if name in declared:
                t = declared[name]
            else:
                t = self.infer(value) if value is not None else None
            if name in seen and _key(self.env.get(name)) != _key(t):
                t = None  # assignments disagree (or a parameter is rebound): unknown
            seen.add(name)
            self.env[name] = t


def _key(t: Typed | None) -> tuple[str, bool] | None:
    return (t.sym.path, t.instance) if t is not None else None


def _is_super(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super" \
        and not node.args


def host_inference(resolver: Resolver, module: str, unit: Unit, facts: UnitWalk) -> Inference:
    """An Inference for one host unit: its module namespace, local imports, `self` and `super()`."""
    index = resolver.index
    local = local_imports(facts, module, index.is_package(module))
    cls = resolver.resolve(f"{module}.{unit.cls}") if unit.cls else None
    cls = cls if cls is not None and cls.kind == CLASS else None
    inf = Inference(resolver, module_lookup(resolver, module, local),
                    super_mro=resolver.mro(cls)[1:] if cls is not None else ())
    if unit.node is not None:
        inf.bind_locals(unit.node, facts, Typed(cls, True) if cls is not None else None)
    return inf
