"""The compact, picklable facts pinport keeps about one module: what is defined where, with which signature.

These records are what the on-disk index stores (keyed by file content hash), so they hold
no paths or module names of their own: the same file content always yields the same summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import NamedTuple


class ParamKind(IntEnum):
    """Python's parameter kinds, in the order they may appear in a signature."""

    POSITIONAL_ONLY = 0
    POSITIONAL_OR_KEYWORD = 1
    VAR_POSITIONAL = 2
    KEYWORD_ONLY = 3
    VAR_KEYWORD = 4


class Param(NamedTuple):
    name: str
    kind: ParamKind
    default: str | None = None  # source text of the default; None when the parameter is required
    annotation: str | None = None

    @property
    def required(self) -> bool:
        return self.default is None and self.kind not in (ParamKind.VAR_POSITIONAL,
                                                          ParamKind.VAR_KEYWORD)

    def render(self) -> str:
        prefix = {ParamKind.VAR_POSITIONAL: "*", ParamKind.VAR_KEYWORD: "**"}.get(self.kind, "")
        text = prefix + self.name
        if self.annotation:
            text += f": {self.annotation}"
        if self.default is not None:
            text += f" = {self.default}" if self.annotation else f"={self.default}"
        return text


class Signature(NamedTuple):
    params: tuple[Param, ...]
    returns: str | None = None

    def render(self) -> str:
        parts: list[str] = []
        kinds = [p.kind for p in self.params]
        for i, p in enumerate(self.params):
            if p.kind is ParamKind.KEYWORD_ONLY and ParamKind.VAR_POSITIONAL not in kinds and (
                    i == 0 or self.params[i - 1].kind is not ParamKind.KEYWORD_ONLY):
                parts.append("*")
            parts.append(p.render())
            if p.kind is ParamKind.POSITIONAL_ONLY and (
                    i + 1 == len(self.params) or self.params[i + 1].kind is not ParamKind.POSITIONAL_ONLY):
                parts.append("/")
        text = f"({', '.join(parts)})"
        return f"{text} -> {self.returns}" if self.returns else text

    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def get(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name:
                return p
        return None



def has_var_positional(params: tuple[Param, ...]) -> bool:
    """Whether a parameter list takes `*args`."""
    return any(p.kind is ParamKind.VAR_POSITIONAL for p in params)


def has_var_keyword(params: tuple[Param, ...]) -> bool:
    """Whether a parameter list takes `**kwargs`."""
    return any(p.kind is ParamKind.VAR_KEYWORD for p in params)


class FunctionInfo(NamedTuple):
    name: str
    line: int
    end_line: int
    signature: Signature
    decorators: tuple[str, ...] = ()
    is_async: bool = False

    @property
    def is_staticmethod(self) -> bool:
        return "staticmethod" in self.decorators

    @property
    def is_classmethod(self) -> bool:
        return "classmethod" in self.decorators

    @property
    def is_property(self) -> bool:
        return any(d == "property" or d.endswith((".setter", ".getter", ".deleter",
                                                  "cached_property")) for d in self.decorators)

    def bound_params(self) -> tuple[Param, ...]:
        """Parameters a caller supplies: without `self`/`cls` for ordinary and class methods."""
        params = self.signature.params
        if not self.is_staticmethod and params and params[0].kind <= ParamKind.POSITIONAL_OR_KEYWORD:
            return params[1:]
        return params


class InstanceAttr(NamedTuple):
    """`self.<name> = <expr>` somewhere in a method of the class."""

    name: str
    line: int
    method: str
    expr: str  # the assigned expression as written (first line, trimmed)


class ClassAttr(NamedTuple):
    name: str
    line: int
    annotation: str | None = None
    value: str = ""  # source text of the value (first line), empty when only annotated


@dataclass(slots=True)
class ClassInfo:
    name: str
    line: int
    end_line: int
    bases: tuple[str, ...]  # dotted source text of each base, subscripts dropped (Generic[T] -> Generic)
    decorators: tuple[str, ...] = ()
    keywords: tuple[tuple[str, str], ...] = ()  # (metaclass, X), ...
    methods: dict[str, FunctionInfo] = field(default_factory=dict)
    duplicate_methods: tuple[tuple[str, int], ...] = ()  # (name, line) of earlier, overridden defs
    attributes: dict[str, ClassAttr] = field(default_factory=dict)
    instance_attrs: dict[str, tuple[InstanceAttr, ...]] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    slots: tuple[str, ...] = ()

    def has_member(self, name: str) -> bool:
        return (name in self.methods or name in self.attributes or name in self.classes
                or name in self.instance_attrs or name in self.slots)


class BindingKind(IntEnum):
    FUNCTION = 0
    CLASS = 1
    ASSIGN = 2
    IMPORT = 3  # import a.b.c [as x]
    IMPORT_FROM = 4  # from m import x [as y]
    GLOBAL = 5  # assigned through `global x` inside a function


class Binding(NamedTuple):
    """A module-level name: where it is bound and, for imports, what it points to."""

    name: str
    kind: BindingKind
    line: int
    target: str = ""  # for imports: absolute dotted path ("vllm.a.b" or "vllm.a.b.X")
    value: str = ""  # for assignments: the value's source text (first line)
    conditional: bool = False  # bound inside try/if/with at module level
    type_checking: bool = False  # only under `if TYPE_CHECKING:`


@dataclass(slots=True)
class ModuleSummary:
    """Everything the index knows about one module file."""

    bindings: dict[str, Binding] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    functions: dict[str, FunctionInfo] = field(default_factory=dict)
    all_names: tuple[str, ...] | None = None  # static __all__, when there is one
    star_imports: tuple[str, ...] = ()  # absolute module paths
    lazy_exports: dict[str, str] = field(default_factory=dict)  # name -> target path ("" = unknown)
    has_getattr: bool = False
    syntax_error: str = ""  # "line N: message" when the file does not parse
    error_line: int = 0  # the line the parser stopped at (0: not a line, e.g. too big or too deep)
    line_count: int = 0

    def defines(self, name: str) -> bool:
        return name in self.bindings or name in self.lazy_exports


def nested_class(summary: ModuleSummary | None, qualname: str) -> ClassInfo | None:
    """A class's summary in its module by qualified name ("Outer.Inner"), or None."""
    classes = summary.classes if summary is not None else {}
    info = None
    for part in qualname.split(".") if qualname else ():
        info = classes.get(part)
        if info is None:
            return None
        classes = info.classes
    return info
