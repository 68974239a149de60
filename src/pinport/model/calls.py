"""Calls, statically: bind a call to a Signature, infer the host type of an expression, find call sites.

Shared by the checks that judge calls (a plugin calling the host, the host calling a plugin
replacement, the host constructing a patched class). Everything here reads the parsed trees
an index hands out (`CodeIndex.parsed`) and memoises per index, so two checks asking about
the same file or name pay once. Inference is deliberately shallow and flow-insensitive: a
local has a type only when every assignment agrees, and anything unsure yields None, so a
caller that only reports what resolved cannot report a guess.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import NamedTuple
from weakref import WeakKeyDictionary

from .index import CodeIndex
from .parse import resolve_relative
from .resolve import CLASS, EXTERNAL, FUNCTION, INSTANCE_ATTR, METHOD, MODULE, Resolver, Symbol
from .summary import ClassAttr, ClassInfo, FunctionInfo, InstanceAttr, Param, ParamKind, Signature

MISSING, UNEXPECTED, TOO_MANY, TWICE = "missing", "unexpected", "too-many", "twice"
CALL, BOUND, UNBOUND, CONSTRUCT = "call", "bound", "unbound", "construct"
INIT_FAMILY = ("__new__", "__init__", "__post_init__")

# Bases that define no constructor of their own worth binding against (object's is implied).
_INERT_BASES = {"abc.ABC", "typing.Generic", "typing.Protocol", "typing_extensions.Protocol",
                "builtins.object", "object", "ABC", "Generic", "Protocol"}
_DATACLASS = {"dataclass", "dataclasses.dataclass", "config", "pydantic.dataclasses.dataclass"}
_KEEPS_CLASS = _DATACLASS | {"final", "typing.final", "runtime_checkable", "typing.runtime_checkable",
                             "total_ordering", "functools.total_ordering"}
_NON_TUPLE = {"int", "float", "bool", "None", "torch.Tensor", "Tensor", "np.ndarray", "numpy.ndarray",
              "npt.NDArray", "NDArray", "torch.device", "torch.dtype", "dict", "Dict"}
_NAME = re.compile(r"[A-Za-z_][\w.]*")


class BindProblem(NamedTuple):
    """Why a call does not bind: MISSING/UNEXPECTED/TWICE name a parameter, TOO_MANY counts."""

    kind: str
    name: str = ""
    given: int = 0
    accepted: int = 0


def has_unpacking(call: ast.Call) -> bool:
    """`f(*a)` or `f(**k)`: the call's arguments are not known statically."""
    return any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)


def bind_counts(params: Sequence[Param], positional: int, keywords: Sequence[str]) -> list[BindProblem]:
    """Bind `positional` arguments and these keywords to `params` as Python would; what fails."""
    slots = [p for p in params if p.kind <= ParamKind.POSITIONAL_OR_KEYWORD]
    var_pos = any(p.kind is ParamKind.VAR_POSITIONAL for p in params)
    var_kw = any(p.kind is ParamKind.VAR_KEYWORD for p in params)
    bound = {p.name for p in slots[:positional]}
    problems: list[BindProblem] = []
    if positional > len(slots) and not var_pos:
        problems.append(BindProblem(TOO_MANY, "", positional, len(slots)))
    by_name = {p.name: p for p in params if p.kind in (ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.KEYWORD_ONLY)}
    for kw in keywords:
        if kw not in by_name:
            if not var_kw:
                problems.append(BindProblem(UNEXPECTED, kw))
            continue
        if kw in bound:
            problems.append(BindProblem(TWICE, kw))
        bound.add(kw)
    problems.extend(BindProblem(MISSING, p.name) for p in params if p.required and p.name not in bound)
    return problems


def bind_call(params: Sequence[Param], call: ast.Call) -> list[BindProblem] | None:
    """The binding problems of a call against parameters; None when `*`/`**` make it unverifiable."""
    if has_unpacking(call):
        return None
    return bind_counts(params, len(call.args), [k.arg for k in call.keywords if k.arg])


# -- what a callable accepts --------------------------------------------------------------------
class Callee(NamedTuple):
    """A host callable as one call reaches it: the symbol, how it is called, and through what."""

    sym: Symbol  # FUNCTION, METHOD or CLASS
    mode: str  # CALL (plain function), BOUND (self/cls supplied), UNBOUND (method via class), CONSTRUCT
    via: str  # dotted path naming the callee as the call reaches it ("vllm.x.Cls.method")
    receiver: Symbol | None = None  # the class an attribute was looked up on, for methods


def callee_params(resolver: Resolver, callee: Callee) -> tuple[Param, ...] | None:
    """The parameters a caller supplies for this callee; None when they cannot be known."""
    sym = callee.sym
    if callee.mode == CONSTRUCT:
        return constructor_params(resolver, sym)
    fn = sym.obj
    if not isinstance(fn, FunctionInfo) or fn.is_property:
        return None
    if sym.kind == FUNCTION or fn.is_staticmethod:
        return fn.signature.params
    if fn.is_classmethod or callee.mode == BOUND:
        return fn.signature.params[1:] if fn.signature.params else ()
    return fn.signature.params


def constructor_params(resolver: Resolver, cls: Symbol) -> tuple[Param, ...] | None:
    """What `Cls(...)` takes: the first `__init__`/`__new__` in the MRO, or synthesised dataclass fields."""
    mro = resolver.mro(cls)
    for i, c in enumerate(mro):
        if c.kind == EXTERNAL:
            if c.path in _INERT_BASES:
                continue
            return None  # an outside base (torch.nn.Module, Enum, pydantic) may define the constructor
        info = c.obj
        if not isinstance(info, ClassInfo) or "?" in info.bases or any(k == "metaclass" for k, _ in info.keywords):
            return None
        if not all(d in _KEEPS_CLASS or d.endswith((".register", "register_processor")) for d in info.decorators):
            return None  # an unknown class decorator may wrap __init__ (support_torch_compile does)
        for name in ("__init__", "__new__"):
            if name in info.methods:
                fn = info.methods[name]
                return fn.signature.params[1:] if fn.signature.params else ()
        if any(d in _DATACLASS for d in info.decorators):
            return _dataclass_fields(resolver, mro[i:])
        if any(b.rpartition(".")[2] == "NamedTuple" for b in info.bases):
            return tuple(Param(a.name, ParamKind.POSITIONAL_OR_KEYWORD, a.value or None, a.annotation)
                         for a in info.attributes.values() if a.annotation)
    return ()


def _dataclass_fields(resolver: Resolver, mro: Sequence[Symbol]) -> tuple[Param, ...] | None:
    """The synthesised `__init__` of a dataclass: fields of every dataclass in the MRO, bases first."""
    fields: dict[str, Param] = {}
    for c in reversed(mro):
        info = c.obj
        if c.kind == EXTERNAL or not isinstance(info, ClassInfo):
            continue
        is_dc = any(d in _DATACLASS for d in info.decorators)
        kw_only = is_dc and _decorator_kw_only(resolver.index, c.module, info)
        for attr in info.attributes.values():
            ann = attr.annotation or ""
            if ann in ("KW_ONLY", "dataclasses.KW_ONLY"):
                kw_only = True
                continue
            if not is_dc:
                if attr.name in fields and attr.value:  # a plain override of an inherited field's default
                    fields[attr.name] = fields[attr.name]._replace(default=attr.value)
                continue
            if not ann or "ClassVar" in ann[:20] or "init=False" in attr.value.replace(" ", ""):
                continue
            kind = ParamKind.KEYWORD_ONLY if kw_only or "kw_only=True" in attr.value.replace(" ", "") \
                else ParamKind.POSITIONAL_OR_KEYWORD
            fields[attr.name] = Param(attr.name, kind, _field_default(resolver.index, c.module, attr), ann)
    ordered = [p for p in fields.values() if p.kind is ParamKind.POSITIONAL_OR_KEYWORD]
    return tuple(ordered + [p for p in fields.values() if p.kind is ParamKind.KEYWORD_ONLY])


def _field_default(index: CodeIndex, module: str, attr: ClassAttr) -> str | None:
    """The default of a dataclass field as text, None when the field is required."""
    value = attr.value.split("  #", 1)[0].strip()
    if not value:
        return None
    head = value.split("(", 1)[0].rpartition(".")[2]
    if head not in ("field", "Field"):
        return value
    text = value
    if text.count("(") > text.count(")"):  # a multi-line field(...): read on until it closes
        lines = source_lines(index, module)
        for extra in lines[attr.line:attr.line + 20]:
            text += " " + extra.strip()
            if text.count("(") <= text.count(")"):
                break
    if "default" in text:  # default= / default_factory=
        return value
    first = text.split("(", 1)[1].strip() if "(" in text else ""
    # pydantic's Field takes the default as its first positional argument (`...` = required)
    if head == "Field" and first and not first.startswith((")", "...")) and "=" not in first.split(",")[0]:
        return value
    return None


_LINES: WeakKeyDictionary[CodeIndex, dict[str, list[str]]] = WeakKeyDictionary()


def source_lines(index: CodeIndex, module: str) -> list[str]:
    """A module's lines, split once per index (CodeIndex.lines splits on every call)."""
    memo = _LINES.setdefault(index, {})
    if module not in memo:
        memo[module] = index.lines(module)
    return memo[module]


def _decorator_kw_only(index: CodeIndex, module: str, info: ClassInfo) -> bool:
    """Whether the class's dataclass decorator says kw_only=True (read from the lines above `class`)."""
    lines = source_lines(index, module)
    above = " ".join(lines[max(0, info.line - 6):info.line - 1])
    return "kw_only=True" in above.replace(" ", "")


# -- return arity -------------------------------------------------------------------------------
_DEFS: WeakKeyDictionary[CodeIndex, dict[str, dict[int, ast.FunctionDef | ast.AsyncFunctionDef]]] = \
    WeakKeyDictionary()


def function_node(index: CodeIndex, module: str, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The parsed def that starts at `line` in `module` (module and class level; memoised)."""
    per_index = _DEFS.setdefault(index, {})
    if module not in per_index:
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
        per_index[module] = found
    return per_index[module].get(line)


def _own_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function body, not descending into nested defs, lambdas or classes."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            stack.extend(ast.iter_child_nodes(node))


def annotation_arity(text: str | None) -> int | None:
    """How many values a declared return type unpacks into: n for tuple[..n..], 1 for plain values."""
    if not text:
        return None
    text = text.strip().strip("'\"")
    parts = [p.strip() for p in _split_top(text, "|") if p.strip() != "None"]
    if len(parts) != 1:
        return None
    text = parts[0]
    for prefix in ("tuple[", "Tuple[", "typing.Tuple["):
        if text.startswith(prefix) and text.endswith("]"):
            inner = text[len(prefix):-1]
            if "..." in inner or inner.strip() in ("", "()"):
                return None
            return len(_split_top(inner, ","))
    return 1 if text.split("[", 1)[0] in _NON_TUPLE else None


def _split_top(text: str, sep: str) -> list[str]:
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


def return_arity(index: CodeIndex, sym: Symbol, expected: int | None = None) -> int | None:
    """How many values every `return` of a host function gives (1 = not a tuple); None if unsure.

    With `expected` (what the caller unpacks), a return annotation that agrees settles it
    without parsing the host module.
    """
    fn = sym.obj
    if not isinstance(fn, FunctionInfo) or not sym.module:
        return None
    if expected is not None and annotation_arity(fn.signature.returns) == expected:
        return expected  # the declared type agrees with the caller: no need to parse the body
    node = function_node(index, sym.module, fn.line)
    if node is None:
        return None
    declared = annotation_arity(ast.unparse(node.returns)) if node.returns is not None else None
    arities: set[int] = set()
    for n in _own_nodes(node):
        if isinstance(n, ast.Yield | ast.YieldFrom):
            return None
        if not isinstance(n, ast.Return) or n.value is None or (
                isinstance(n.value, ast.Constant) and n.value.value is None):
            continue  # `return None` fails any unpacking, on OLD and NEW alike
        value = n.value
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
    return arities.pop() if len(arities) == 1 else None


# -- type inference -----------------------------------------------------------------------------
class Typed(NamedTuple):
    """What an expression denotes: the symbol itself (a class, module, function) or an instance of a class."""

    sym: Symbol
    instance: bool = False


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
        parts = [p.strip() for p in _split_top(text, ",") if p.strip() != "None"]
    else:
        parts = [p.strip().strip("'\"") for p in _split_top(text, "|") if p.strip() != "None"]
    return parts[0] if len(parts) == 1 and _NAME.fullmatch(parts[0]) else None


def module_lookup(resolver: Resolver, module: str, local: dict[str, str] | None = None) -> Lookup:
    """Names as a host module sees them, with a function's local imports first."""
    def lookup(name: str) -> Symbol | None:
        if local and name in local:
            return resolver.resolve(local[name])
        return resolver.module_attr(module, name)
    return lookup


class UnitFacts(NamedTuple):
    """What one walk over a unit finds: calls, local imports, assignments, shadowed names, unpackings."""

    calls: tuple[ast.Call, ...]  # in source order
    imports: tuple[ast.Import | ast.ImportFrom, ...]
    assigned: tuple[tuple[int, int, str, ast.AST | None, ast.AST | None], ...]  # line, col, name, value, annotation
    shadowed: frozenset[str]  # nested parameters, except-handler names: never typed
    unpacked: dict[int, int]  # id(call) -> names in `a, b = call(...)`
    guarded: tuple[tuple[int, int, str], ...] = ()  # (first, last line, why): version tests, try/except TypeError

    def guard_at(self, line: int) -> str:
        """Why code at this line may run only on some host versions ('' when nothing guards it)."""
        return next((why for first, last, why in self.guarded if first <= line <= last), "")


_FACTS: WeakKeyDictionary[CodeIndex, dict[tuple[str, str, int], UnitFacts]] = WeakKeyDictionary()


def unit_facts(index: CodeIndex, module: str, unit: Unit) -> UnitFacts:
    """One walk over a unit (memoised per index): everything inference and call checks need."""
    memo = _FACTS.setdefault(index, {})
    key = (module, unit.qualname, getattr(unit.body[0], "lineno", 0) if unit.body else 0)
    if key in memo:
        return memo[key]
    calls: list[ast.Call] = []
    imports: list[ast.Import | ast.ImportFrom] = []
    assigned: list[tuple[int, int, str, ast.AST | None, ast.AST | None]] = []
    shadowed: set[str] = set()
    unpacked: dict[int, int] = {}
    guarded: list[tuple[int, int, str]] = []
    stack: list[ast.AST] = list(unit.body)
    while stack:
        n = stack.pop()
        stack.extend(ast.iter_child_nodes(n))
        if isinstance(n, ast.Call):
            calls.append(n)
        elif isinstance(n, ast.Assign):
            for t in n.targets:
                for name in _target_names(t):
                    assigned.append((n.lineno, n.col_offset, name.id, n.value if t is name else None, None))
            target = n.targets[0]
            if len(n.targets) == 1 and isinstance(n.value, ast.Call) and isinstance(target, ast.Tuple | ast.List) \
                    and not any(isinstance(e, ast.Starred) for e in target.elts):
                unpacked[id(n.value)] = len(target.elts)
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            assigned.append((n.lineno, n.col_offset, n.target.id, n.value, n.annotation))
        elif isinstance(n, ast.For | ast.AsyncFor | ast.comprehension | ast.withitem | ast.NamedExpr):
            target = n.optional_vars if isinstance(n, ast.withitem) else n.target
            line = getattr(n, "lineno", 0) or getattr(target, "lineno", 0)
            assigned.extend((line, 0, name.id, None, None) for name in _target_names(target))
        elif isinstance(n, ast.Import | ast.ImportFrom):
            imports.append(n)
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and n is not unit.node:
            shadowed.update(a.arg for a in (*n.args.posonlyargs, *n.args.args, *n.args.kwonlyargs,
                                            n.args.vararg, n.args.kwarg) if a is not None)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            shadowed.add(n.name)
        if isinstance(n, ast.If | ast.IfExp) and _mentions_version(n.test):
            guarded.append((n.lineno, n.end_lineno or n.lineno, "a version test"))
        elif isinstance(n, ast.Try) and n.body and any(_catches_type_error(h) for h in n.handlers):
            guarded.append((n.lineno, n.end_lineno or n.lineno, "try/except TypeError"))  # both forms
    calls.sort(key=lambda c: (c.lineno, c.col_offset))
    imports.sort(key=lambda i: i.lineno)
    assigned.sort(key=lambda a: (a[0], a[1]))
    facts = UnitFacts(tuple(calls), tuple(imports), tuple(assigned), frozenset(shadowed), unpacked,
                      tuple(sorted(guarded)))
    memo[key] = facts
    return facts


def _mentions_version(test: ast.AST) -> bool:
    """Whether a condition looks like a host-version test (`vllm_version_is(...)`, `VERSION >= ...`)."""
    for n in ast.walk(test):
        word = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else ""
        if "version" in word.lower():
            return True
    return False


def _catches_type_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(k is None or _decorator_name(k) in ("TypeError", "Exception", "BaseException") for k in kinds)


def local_imports(facts: UnitFacts, module: str, is_package: bool) -> dict[str, str]:
    """Name -> absolute dotted path for every import inside a function body."""
    out: dict[str, str] = {}
    for n in facts.imports:
        if isinstance(n, ast.Import):
            for a in n.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        else:
            base = resolve_relative(module, is_package, n.level, n.module)
            for a in n.names:
                if a.name != "*":
                    out[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
    return out


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
        if sym.kind not in (MODULE, CLASS) or self.masked(sym, name):
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
        return None

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
            return self._super_callee(func.attr)
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
            if name == "__init__" and any(d in _DATACLASS for d in info.decorators):
                return Callee(c, CONSTRUCT, f"{c.path}.__init__", c)  # the synthesised __init__
        return None

    # -- locals ---------------------------------------------------------------------------------
    def bind_locals(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, facts: UnitFacts,
                    self_type: Typed | None) -> None:
        """Fill `env` from one def: `self`/`cls`, annotated parameters, then agreeing assignments."""
        args = [*fn.args.posonlyargs, *fn.args.args]
        decorators = {_decorator_name(d) for d in fn.decorator_list}
        first = args[0].arg if args and "staticmethod" not in decorators else None
        for a in (*args, *fn.args.kwonlyargs, fn.args.vararg, fn.args.kwarg):
            if a is not None:
                self.env[a.arg] = self.annotation(ast.unparse(a.annotation)) if a.annotation is not None else None
        if first is not None and self_type is not None:
            cls_level = "classmethod" in decorators or fn.name == "__new__"
            self.env[first] = Typed(self_type.sym, not cls_level)
        for name in facts.shadowed:
            self.env[name] = None  # nested parameters shadow (flow-insensitively)
        seen = set(self.env)
        for _line, _col, name, value, ann in facts.assigned:
            if name in facts.shadowed:
                continue
            if ann is not None:
                t = self.annotation(ast.unparse(ann))
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


def _decorator_name(node: ast.AST) -> str:
    while isinstance(node, ast.Call):
        node = node.func
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _target_names(target: ast.AST | None) -> Iterator[ast.Name]:
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, ast.Tuple | ast.List):
        for elt in target.elts:
            yield from _target_names(elt.value if isinstance(elt, ast.Starred) else elt)


# -- units and call sites -----------------------------------------------------------------------
class Unit(NamedTuple):
    """A piece of code calls live in: a top-level function or method, or a module/class body."""

    qualname: str  # "Cls.meth", "func", "<module>", "Cls" (class-body statements)
    cls: str  # qualified name of the enclosing class, "" at module level
    node: ast.FunctionDef | ast.AsyncFunctionDef | None  # None for module and class bodies
    body: tuple[ast.AST, ...]  # statements (and, for loose code, the tests of if/with blocks)


def iter_units(tree: ast.Module) -> Iterator[Unit]:
    """Every function and method (nested defs stay inside their parent), then the loose statements.

    Defs inside module- or class-level `if`/`try`/`with` blocks are units of their own too;
    the blocks' other statements (and their tests) stay with the enclosing body.
    """
    loose: tuple[ast.AST, ...] = ()
    stack: list[tuple[list[ast.stmt], str]] = [(tree.body, "")]
    while stack:
        body, cls = stack.pop()
        stray: list[ast.AST] = []
        pending = list(reversed(body))
        while pending:
            node = pending.pop()
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield Unit(f"{cls}.{node.name}" if cls else node.name, cls, node, (node,))
            elif isinstance(node, ast.ClassDef):
                stack.append((node.body, f"{cls}.{node.name}" if cls else node.name))
                stray.extend((*node.decorator_list, *node.bases, *node.keywords))
            elif isinstance(node, ast.If | ast.Try | ast.With):
                stray.extend([node.test] if isinstance(node, ast.If) else
                             [item.context_expr for item in getattr(node, "items", [])])
                blocks = [node.body, getattr(node, "orelse", []), getattr(node, "finalbody", []),
                          *(h.body for h in getattr(node, "handlers", []))]
                pending.extend(reversed([stmt for block in blocks for stmt in block]))
            else:
                stray.append(node)
        if cls:
            if stray:
                yield Unit(cls, cls, None, tuple(stray))
        else:
            loose = tuple(stray)
    if loose:
        yield Unit("<module>", "", None, loose)


def call_name(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


_CANDIDATES: WeakKeyDictionary[CodeIndex, dict[str, tuple[str, ...]]] = WeakKeyDictionary()


def modules_mentioning(index: CodeIndex, text: str, top: str = "") -> tuple[str, ...]:
    """Modules (sorted) whose source contains `text`: the cheap prefilter before any parse."""
    memo = _CANDIDATES.setdefault(index, {})
    key = f"{top}\x00{text}"
    if key not in memo:
        memo[key] = index.grep(text, top)
    return memo[key]


def _arguments_at(text: str, start: int) -> str | None:
    """The source of a call's argument list from its `(` at `start` to the matching `)`."""
    depth, i, n = 0, start, len(text)
    while i < n:
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
        elif ch == "#":
            i = text.find("\n", i)
            if i < 0:
                return None
        elif ch in "'\"":
            quote = text[i:i + 3] if text[i:i + 3] in ('"""', "'''") else ch
            end = text.find(quote, i + len(quote))
            while end > 0 and text[end - 1] == "\\" and len(quote) == 1:
                end = text.find(quote, end + 1)
            if end < 0:
                return None
            i = end + len(quote) - 1
        i += 1
    return None


def failing_call_lines(index: CodeIndex, module: str, name: str, params: Sequence[Param], *,
                       method: bool) -> tuple[int, ...]:
    """Lines of `name(...)` calls in a module that might not bind to `params`, judged from text.

    Each call's argument list is cut out of the source and parsed on its own (microseconds),
    so only the units holding a call that fails, or cannot be judged, need type inference.
    Any doubt (odd text, `*args`) counts as "might fail".
    """
    text = index.source(module)
    needle = f".{name}(" if method else f"{name}("
    lines: list[int] = []
    pos = text.find(needle)
    while pos >= 0:
        before = text[pos - 1] if pos else " "
        if method or not (before.isalnum() or before == "_") and not text.endswith("def ", 0, pos):
            args = _arguments_at(text, pos + len(needle) - 1)
            try:
                call = ast.parse(f"f{args}", mode="eval").body if args else None
            except SyntaxError:
                call = None
            if not isinstance(call, ast.Call) or bind_call(params, call) != []:
                lines.append(text.count("\n", 0, pos) + 1)
        pos = text.find(needle, pos + 1)
    return tuple(lines)


class CallSite(NamedTuple):
    module: str
    line: int
    unit: str
    call: ast.Call
    callee: Callee


def host_inference(resolver: Resolver, module: str, unit: Unit, facts: UnitFacts) -> Inference:
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


def iter_call_sites(resolver: Resolver, name: str, accept: Callable[[Callee], bool], *,
                    text: str | None = None, modules: Sequence[str] | None = None,
                    lines: Mapping[str, Sequence[int]] | None = None,
                    limit: int | None = None) -> Iterator[CallSite]:
    """Host calls named `name` whose resolved callee `accept`s, in module and line order.

    Only `modules` (default: those whose source mentions `text`, itself `name(` by default) are
    parsed; with `lines`, only the units spanning one of a module's lines are looked at; a
    unit's types are inferred only when it holds a call of that name.
    """
    count = 0
    needle = text or f"{name}("
    if modules is None:
        modules = modules_mentioning(resolver.index, needle, resolver.top)
    for module in modules:
        tree = resolver.index.parsed(module)
        if tree is None:
            continue
        wanted = lines.get(module, ()) if lines is not None else text_lines(resolver.index, module, needle)
        found: list[CallSite] = []
        for unit in iter_units(tree):
            if not any(spans(unit, line) for line in wanted):
                continue
            facts = unit_facts(resolver.index, module, unit)
            calls = [c for c in facts.calls if call_name(c) == name]
            if not calls:
                continue
            inf = host_inference(resolver, module, unit, facts)
            for call in calls:
                callee = inf.callee(call.func)
                if callee is not None and accept(callee):
                    found.append(CallSite(module, call.lineno, unit.qualname, call, callee))
        for site in sorted(found, key=lambda s: (s.line, s.call.col_offset)):
            yield site
            count += 1
            if limit is not None and count >= limit:
                return


def text_lines(index: CodeIndex, module: str, text: str) -> tuple[int, ...]:
    """The 1-based lines of a module on which `text` occurs (a cheap way to skip whole units)."""
    source = index.source(module)
    out: list[int] = []
    pos, line, last = source.find(text), 1, 0
    while pos >= 0:
        line += source.count("\n", last, pos)
        last = pos
        out.append(line)
        pos = source.find(text, pos + 1)
    return tuple(out)


def spans(unit: Unit, line: int) -> bool:
    """Whether a unit's statements cover a line."""
    return any(getattr(n, "lineno", 0) <= line <= (getattr(n, "end_lineno", None) or getattr(n, "lineno", 0))
               for n in unit.body)


def render_params(name: str, params: Sequence[Param] | None, limit: int = 240) -> str:
    """`name(a, b=1, *, c)` for evidence lines, cut short for very long signatures."""
    text = f"{name}(?)" if params is None else f"{name}{Signature(tuple(params)).render()}"
    return text if len(text) <= limit else text[:limit - 5] + " ...)"
