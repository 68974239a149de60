"""Calls against parameters, statically: bind a call to a Signature; what a host callable accepts.

Shared by the checks that judge calls (a plugin calling the host, the host calling a plugin
replacement, the host constructing a patched class). A call whose arguments or callee cannot
be known statically yields None, never a guess.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from .index import CodeIndex
from .resolve import CLASS, EXTERNAL, FUNCTION, METHOD, Resolver, Symbol
from .summary import (
    ClassAttr,
    ClassInfo,
    FunctionInfo,
    Param,
    ParamKind,
    Signature,
    has_var_keyword,
    has_var_positional,
)
from .units import source_lines

if TYPE_CHECKING:
    from ..findings import Location
    from .host import HostView

MISSING, UNEXPECTED, TOO_MANY, TWICE = "missing", "unexpected", "too-many", "twice"
CALL, BOUND, UNBOUND, CONSTRUCT = "call", "bound", "unbound", "construct"
INIT_FAMILY = ("__new__", "__init__", "__post_init__")

# Bases that define no constructor of their own worth binding against (object's is implied).
_INERT_BASES = {"abc.ABC", "typing.Generic", "typing.Protocol", "typing_extensions.Protocol",
                "builtins.object", "object", "ABC", "Generic", "Protocol"}
DATACLASS_DECORATORS = {"dataclass", "dataclasses.dataclass", "config", "pydantic.dataclasses.dataclass"}
_KEEPS_CLASS = DATACLASS_DECORATORS | {"final", "typing.final", "runtime_checkable",
                                       "typing.runtime_checkable", "total_ordering",
                                       "functools.total_ordering"}


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
    var_pos = has_var_positional(params)
    var_kw = has_var_keyword(params)
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


def bound_names(params: Sequence[Param], call: ast.Call) -> set[str] | None:
    """The parameters a call gives a value (positionally or by keyword); None when `*`/`**` hide it."""
    if has_unpacking(call):
        return None
    slots = [p.name for p in params if p.kind <= ParamKind.POSITIONAL_OR_KEYWORD]
    return set(slots[:len(call.args)]) | {k.arg for k in call.keywords if k.arg}


def same_default(old: str, new: str) -> bool | None:
    """Whether two default texts denote the same expression (formatting aside); None when one does not
    parse (a multi-line default cut at its first line): unknown, never reported as a change."""
    try:
        return ast.dump(ast.parse(_field_value(old), mode="eval")) == ast.dump(
            ast.parse(_field_value(new), mode="eval"))
    except SyntaxError:
        return None


def _field_value(text: str) -> str:
    """A default as the value it gives: `field(default=X)` / `Field(default=X)` / `Field(X)` -> X."""
    text = text.strip()
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return text
    if isinstance(node, ast.Call) and (node.func.attr if isinstance(node.func, ast.Attribute) else getattr(
            node.func, "id", "")) in ("field", "Field"):
        for kw in node.keywords:
            if kw.arg == "default":
                return ast.unparse(kw.value)
        if node.args:
            return ast.unparse(node.args[0])
    return text


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
        if any(d in DATACLASS_DECORATORS for d in info.decorators):
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
        is_dc = any(d in DATACLASS_DECORATORS for d in info.decorators)
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


def _decorator_kw_only(index: CodeIndex, module: str, info: ClassInfo) -> bool:
    """Whether the class's dataclass decorator says kw_only=True (read from the lines above `class`)."""
    lines = source_lines(index, module)
    above = " ".join(lines[max(0, info.line - 6):info.line - 1])
    return "kw_only=True" in above.replace(" ", "")


def render_params(name: str, params: Sequence[Param] | None, limit: int = 240) -> str:
    """`name(a, b=1, *, c)` for evidence lines, cut short for very long signatures."""
    text = f"{name}(?)" if params is None else f"{name}{Signature(tuple(params)).render()}"
    return text if len(text) <= limit else text[:limit - 5] + " ...)"


def callee_subject(callee: Callee) -> str:
    """The callee as the call reaches it (`Cls` for a constructor), stable across moves."""
    return callee.via.removesuffix(".__init__")


def other_callee(other: HostView, callee: Callee) -> tuple[Symbol | None, tuple[Param, ...] | None]:
    """The same callee in another host version, and the parameters a caller supplies there."""
    sym = other.resolve(callee_subject(callee))
    if sym is None or sym.kind != callee.sym.kind:
        return sym, None
    return sym, callee_params(other.resolver, callee._replace(sym=sym))


def callee_location(view: HostView, sym: Symbol | None, params: Sequence[Param] | None) -> Location | None:
    """Evidence for a callee: the `__init__` a class's signature comes from, else its definition."""
    if sym is None:
        return None
    short = sym.path.rpartition(".")[2]
    if sym.kind == CLASS:
        init = view.resolver.class_member(sym, "__init__")
        if init is not None and init.kind == METHOD and init.module:
            return view.location(init, snippet=f"def __init__ of {render_params(short, params)}")
        return view.location(sym, snippet=f"class {render_params(short, params)}")
    return view.location(sym, snippet=f"def {render_params(short, params)}")
