"""Answer "what does `vllm.a.b.X` denote in this tree": re-exports, `*` imports, lazy exports, MRO.

Every walk carries a seen-set, so import cycles and self-referencing aliases terminate;
results are memoised per path because checks ask the same questions many times.
"""

from __future__ import annotations

from dataclasses import dataclass

from .index import CodeIndex
from .summary import Binding, BindingKind, ClassAttr, ClassInfo, FunctionInfo, InstanceAttr

MODULE, CLASS, FUNCTION, METHOD, ATTRIBUTE, INSTANCE_ATTR, LAZY, EXTERNAL, OPAQUE = (
    "module", "class", "function", "method", "attribute", "instance attribute", "lazy export", "external",
    "value member")  # OPAQUE: a member of a value (`logger.info`): exists as far as static analysis knows

# External bases that add no members a plugin would read: member lookups look past them. The one
# rule every lookup (checks, call binding, mirrors) shares, so `Engine(ABC)` and `Engine` agree.
INERT_BASES = frozenset({
    "abc.ABC", "typing.Generic", "typing.Protocol", "typing_extensions.Protocol", "builtins.object", "object",
    "enum.Enum", "typing.NamedTuple", "typing.TypedDict", "typing_extensions.TypedDict"})
# The few members an inert base does give its subclasses, under their own names (`row._asdict()`,
# `mode.value`): a lookup finds them there, though it looks past the base for every other name.
INERT_MEMBERS = {
    "abc.ABC": frozenset({"register", "_abc_impl", "__subclasshook__"}),  # ABCMeta's: virtual subclasses
    "typing.NamedTuple": frozenset({"_asdict", "_replace", "_make", "_fields", "_field_defaults", "count", "index"}),
    "enum.Enum": frozenset({"name", "value", "_name_", "_value_", "_missing_", "_generate_next_value_",
                            "_member_map_", "_member_names_", "_value2member_map_"}),
}


def inert_member(base: Symbol, name: str) -> Symbol | None:
    """`name` as the inert base `base` supplies it (an EXTERNAL symbol), or None."""
    if name in INERT_MEMBERS.get(base.path, ()):
        return Symbol(EXTERNAL, f"{base.path}.{name}", "", owner=base.path)
    return None


@dataclass(frozen=True)
class Symbol:
    """A resolved name: what it is, its canonical path, and where it is defined."""

    kind: str
    path: str  # canonical dotted path where it is defined
    module: str  # the defining module ("" for external)
    line: int = 0
    obj: ClassInfo | FunctionInfo | ClassAttr | InstanceAttr | Binding | None = None
    owner: str = ""  # canonical path of the class that defines a member


class Resolver:
    """Resolution over one CodeIndex; `top` is the package it owns, or several (others are external)."""

    def __init__(self, index: CodeIndex, top: str | tuple[str, ...]) -> None:
        self.index = index
        self.tops = (top,) if isinstance(top, str) else top
        self.top = self.tops[0]
        self._memo: dict[str, Symbol | None] = {}
        self._mro: dict[str, tuple[Symbol, ...]] = {}

    # -- paths ---------------------------------------------------------------------------------
    def resolve(self, path: str) -> Symbol | None:
        """The symbol a dotted path denotes, or None when this tree does not define it."""
        if path in self._memo:
            return self._memo[path]
        self._memo[path] = None  # cycle guard: a path that leads back to itself resolves to nothing
        result = self._resolve(path, frozenset())
        self._memo[path] = result
        return result

    def _resolve(self, path: str, seen: frozenset[str]) -> Symbol | None:
        if path in seen:
            return None
        seen = seen | {path}
        parts = path.split(".")
        if parts[0] not in self.tops:
            return Symbol(EXTERNAL, path, "")
        for i in range(len(parts), 0, -1):
            mod = ".".join(parts[:i])
            if mod in self.index.modules:
                break
        else:
            return None
        sym: Symbol | None = Symbol(MODULE, mod, mod, 1)
        for name in parts[i:]:
            sym = self.member(sym, name, seen)  # type: ignore[arg-type]
            if sym is None:
                return None
        return sym

    def member(self, sym: Symbol, name: str, seen: frozenset[str] = frozenset()) -> Symbol | None:
        """`sym.name`: a module attribute, a class member through the MRO; None when undefined."""
        if sym.kind == MODULE:
            return self.module_attr(sym.module, name, seen)
        if sym.kind == CLASS:
            return self.class_member(sym, name)
        if sym.kind in (EXTERNAL, LAZY):
            return Symbol(sym.kind, f"{sym.path}.{name}", sym.module)
        return Symbol(OPAQUE, f"{sym.path}.{name}", sym.module, sym.line)

    def module_attr(self, mod: str, name: str, seen: frozenset[str] = frozenset()) -> Symbol | None:
        summary = self.index.modules.get(mod)
        if summary is None:
            return None
        if summary.syntax_error:  # never parsed (too big, too deep, broken): what it defines is unknown
            return Symbol(OPAQUE, f"{mod}.{name}", mod, 0)
        binding = summary.bindings.get(name)
        if binding is not None:
            return self._binding(mod, binding, seen)
        sub = f"{mod}.{name}"
        if sub in self.index.modules:
            return Symbol(MODULE, sub, sub, 1)
        star_key = f"{mod}.*.{name}"  # `a: from b import *` and `b: from a import *` must end
        for star in summary.star_imports if star_key not in seen else ():
            target = self.index.modules.get(star)
            if target is None:
                if star.split(".")[0] not in self.tops:
                    return None  # a star import from outside: the name may come from there; unknown
                continue
            exported = target.all_names if target.all_names is not None else None
            if (exported is not None and name in exported) or (exported is None and not name.startswith("_")):
                found = self.module_attr(star, name, seen | {star_key})
                if found is not None:
                    return found
        if name in summary.lazy_exports:
            target = summary.lazy_exports[name]
            if target:
                found = self._resolve(target, seen)
                if found is not None:
                    return found
            return Symbol(LAZY, f"{mod}.{name}", mod, self._getattr_line(mod))
        return None

    def _getattr_line(self, mod: str) -> int:
        fn = self.index.modules[mod].functions.get("__getattr__")
        return fn.line if fn else 1

    def _binding(self, mod: str, b: Binding, seen: frozenset[str]) -> Symbol | None:
        path = f"{mod}.{b.name}"
        summary = self.index.modules[mod]
        if b.kind is BindingKind.CLASS:
            return Symbol(CLASS, path, mod, b.line, summary.classes.get(b.name))
        if b.kind is BindingKind.FUNCTION:
            return Symbol(FUNCTION, path, mod, b.line, summary.functions.get(b.name))
        if b.kind in (BindingKind.IMPORT, BindingKind.IMPORT_FROM):
            found = self._resolve(b.target, seen)
            if found is None and b.kind is BindingKind.IMPORT_FROM and b.target in self.index.modules:
                return Symbol(MODULE, b.target, b.target, 1)
            return found
        return Symbol(ATTRIBUTE, path, mod, b.line, b)

    # -- expressions in a module's namespace ---------------------------------------------------
    def resolve_in(self, mod: str, expr: str) -> Symbol | None:
        """A dotted expression as written in module `mod` ("parallel_state.GroupCoordinator")."""
        head, _, rest = expr.partition(".")
        sym = self.module_attr(mod, head)
        if sym is None:
            if head in ("object", "int", "str", "dict", "list", "tuple", "Exception", "type"):
                return Symbol(EXTERNAL, f"builtins.{expr}", "")
            return None
        for name in rest.split(".") if rest else ():
            sym = self.member(sym, name)
            if sym is None:
                return None
        return sym

    # -- classes -------------------------------------------------------------------------------
    def bases(self, cls: Symbol) -> list[Symbol]:
        info = cls.obj
        if not isinstance(info, ClassInfo):
            return []
        out = []
        for base in info.bases:
            if base in ("?", "object", "Generic", "typing.Generic", "Protocol", "typing.Protocol"):
                continue
            sym = self.resolve_in(cls.module, base) if cls.module else None
            if sym is None:
                sym = Symbol(EXTERNAL, base, "")
            out.append(sym)
        return out

    def mro(self, cls: Symbol) -> tuple[Symbol, ...]:
        """C3 linearisation over the tree; external bases end a branch; falls back to DFS order."""
        if cls.path in self._mro:
            return self._mro[cls.path]
        self._mro[cls.path] = (cls,)  # cycle guard
        seqs = [list(self.mro(b)) if b.kind == CLASS else [b] for b in self.bases(cls)]
        seqs.append([b for b in self.bases(cls)])
        result = [cls]
        pending = [s for s in seqs if s]
        while pending:
            for seq in pending:
                head = seq[0]
                if not any(head.path in (x.path for x in s[1:]) for s in pending):
                    break
            else:  # inconsistent hierarchy: keep going in depth-first order
                head = pending[0][0]
            result.append(head)
            pending = [[x for x in s if x.path != head.path] for s in pending]
            pending = [s for s in pending if s]
        self._mro[cls.path] = tuple(result)
        return self._mro[cls.path]

    def class_member(self, cls: Symbol, name: str, *, instance: bool = False) -> Symbol | None:
        """What class `cls` defines as `name`, through its MRO past inert bases (`INERT_BASES`: the one
        rule every lookup shares); `instance=True` also counts `self.X = ...` assignments. An EXTERNAL
        symbol when an outside base (or a base bound to a value) may define it."""
        for owner in self.mro(cls):
            info = owner.obj
            if owner.kind == EXTERNAL and owner.path in INERT_BASES:
                if (supplied := inert_member(owner, name)) is not None:
                    return supplied
                continue
            if owner.kind != CLASS or not isinstance(info, ClassInfo):
                # an outside class, or a base bound to a value (`Base = make_base()`): unknown members
                return Symbol(EXTERNAL, f"{owner.path}.{name}", "", owner=owner.path)
            found = own_member(owner, info, name, instance)
            if found is not None:
                return found
        return None

    def has_external_base(self, cls: Symbol) -> bool:
        return any(s.kind != CLASS for s in self.mro(cls)[1:])

    def file_line(self, sym: Symbol) -> tuple[str, int]:
        """(path relative to the tree root, line) of a symbol, for evidence."""
        return self.index.paths.get(sym.module, ""), sym.line


def own_member(owner: Symbol, info: ClassInfo, name: str, instance: bool) -> Symbol | None:
    """`name` as class `owner` itself defines it (method, class attribute, nested class, `self.X`)."""
    path = f"{owner.path}.{name}"
    if name in info.methods:
        return Symbol(METHOD, path, owner.module, info.methods[name].line, info.methods[name], owner.path)
    if name in info.attributes:
        return Symbol(ATTRIBUTE, path, owner.module, info.attributes[name].line, info.attributes[name], owner.path)
    if name in info.classes:
        return Symbol(CLASS, path, owner.module, info.classes[name].line, info.classes[name], owner.path)
    if instance and (name in info.instance_attrs or name in info.slots):
        assigned = info.instance_attrs.get(name)
        return Symbol(INSTANCE_ATTR, path, owner.module, assigned[0].line if assigned else info.line,
                      assigned[0] if assigned else None, owner.path)
    return None
