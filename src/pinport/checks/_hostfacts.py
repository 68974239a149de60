"""Host-side facts several checks share: member lookups past inert bases, typed objects, related
classes and environment flags, each memoised per host index.

They read only a host version's model (and, for `provided_by_plugin`, the plugin's patch records),
so attributes, undefined names, host kinds, bypass and imports agree on what the host defines.
"""

from __future__ import annotations

import re
import weakref

from ..model.resolve import (
    ATTRIBUTE,
    CLASS,
    EXTERNAL,
    FUNCTION,
    INSTANCE_ATTR,
    METHOD,
    MODULE,
    Symbol,
)
from ..model.summary import ClassInfo, FunctionInfo
from ..plugin.facts import added_members, memo
from ..plugin.records import Patch
from .base import HostView, ScanContext

# External bases that add no members a plugin would read: member lookups look past them.
INERT_BASES = {"abc.ABC", "typing.Generic", "typing.Protocol", "typing_extensions.Protocol", "builtins.object",
                "object", "enum.Enum", "typing.NamedTuple", "typing.TypedDict", "typing_extensions.TypedDict"}
_IDENT = re.compile(r"[A-Za-z_][\w.]*")


# -- host member lookups ----------------------------------------------------------------------------
def _own_member(owner: Symbol, info: ClassInfo, name: str, instance: bool) -> Symbol | None:
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


def host_member(view: HostView, cls: Symbol, name: str, instance: bool = True) -> Symbol | None:
    """`name` on `cls` through its MRO, past inert external bases; an EXTERNAL symbol when unknowable."""
    for owner in view.resolver.mro(cls):
        if owner.kind == EXTERNAL:
            if owner.path in INERT_BASES:
                continue
            return Symbol(EXTERNAL, f"{owner.path}.{name}", "", owner=owner.path)
        info = owner.obj
        if not isinstance(info, ClassInfo):
            continue
        found = _own_member(owner, info, name, instance)
        if found is not None:
            return found
        if "__getattr__" in info.methods or "__getattribute__" in info.methods or _sets_dynamically(view, owner):
            return Symbol(EXTERNAL, f"{owner.path}.{name}", "", owner=owner.path)
    return None


_SETATTR = re.compile(r"setattr\(\s*self\s*,\s*([A-Za-z_]\w*)\s*,")


def _sets_dynamically(view: HostView, owner: Symbol) -> bool:
    """`self.__dict__`, or `setattr(self, key, ...)` with a key never read back: members are unknowable."""
    info = owner.obj
    if not isinstance(info, ClassInfo) or not owner.module:
        return False

    def build() -> bool:
        text = "\n".join(view.index.lines(owner.module)[info.line - 1:info.end_line])
        if "self.__dict__" in text:
            return True
        # `setattr(self, name, new)` after `getattr(self, name)` only replaces members that exist
        return any(f"getattr(self, {m.group(1)}" not in text for m in _SETATTR.finditer(text))
    return memo(view.index, f"dynamic:{owner.path}", build)  # type: ignore[return-value]


def resolve_annotation(view: HostView, module: str, text: str | None) -> Symbol | None:
    """The host class an annotation text names (`X`, `"X"`, `X | None`, `Optional[X]`) in a host module."""
    if not text:
        return None
    text = text.strip().strip("'\"")
    inner = re.fullmatch(r"(?:typing\.)?Optional\[(.+)\]", text)
    for part in re.split(r"\s*\|\s*", inner.group(1) if inner else text):
        if part != "None" and _IDENT.fullmatch(part):
            sym = view.resolver.resolve_in(module, part)
            return sym if sym is not None and sym.kind == CLASS else None
    return None


def returned_class(view: HostView, sym: Symbol | None) -> Symbol | None:
    """The class a host callable produces: a class itself, or a function's return annotation."""
    if sym is None:
        return None
    if sym.kind == CLASS:
        return sym
    if sym.kind in (FUNCTION, METHOD) and isinstance(sym.obj, FunctionInfo):
        return resolve_annotation(view, sym.module, sym.obj.signature.returns)
    return None


def package_of(module: str) -> str:
    """Where related classes are looked for: the module's package (`vllm.v1.worker`)."""
    return module.rpartition(".")[0] or module


_RELATED_LIMIT = 120  # modules searched for related classes; a bigger package is searched one level deep


def related_modules(view: HostView, prefix: str) -> list[str]:
    """Modules where classes related to one in package `prefix` are looked for: it and its sub-packages."""
    depth = prefix.count(".")
    inside = [m for m in view.index.modules if m == prefix or m.startswith(prefix + ".")]
    near = [m for m in inside if m.count(".") <= depth + 2]
    return near if len(near) <= _RELATED_LIMIT else [m for m in inside if m.count(".") <= depth + 1]


_CLASS_HEADER = re.compile(r"^[ \t]*class[ \t]+\w+[ \t]*\(([^)]*)\)", re.MULTILINE)


def _base_mentions(view: HostView, prefix: str) -> dict[str, set[str]]:
    """Base name -> modules (of the related ones) with a class statement listing it; one regex pass."""
    def build() -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for mod in related_modules(view, prefix):
            for match in _CLASS_HEADER.finditer(view.index.source(mod)):
                for word in re.findall(r"\w+", match.group(1)):
                    out.setdefault(word, set()).add(mod)
        return out
    return memo(view.index, f"bases:{prefix}", build)  # type: ignore[return-value]


def class_index(view: HostView, prefix: str, bases: frozenset[str]) -> dict[str, list[tuple[str, str]]]:
    """Base name -> [(module, class)] for top-level classes of the related modules that list one of
    `bases` (last dotted parts); only modules whose class statements name one are loaded."""
    def build() -> dict[str, list[tuple[str, str]]]:
        out: dict[str, list[tuple[str, str]]] = {}
        mentions = _base_mentions(view, prefix)
        modules = view.index.modules
        for mod in sorted(set().union(*(mentions.get(b, set()) for b in bases))):
            for name, info in modules[mod].classes.items():
                for base in info.bases:
                    leaf = base.rpartition(".")[2]
                    if leaf in bases:
                        out.setdefault(leaf, []).append((mod, name))
        return out
    return memo(view.index, f"classes:{prefix}:{','.join(sorted(bases))}", build)  # type: ignore[return-value]


def subclasses(view: HostView, cls: Symbol) -> list[Symbol]:
    """Host classes under `cls`'s package whose MRO contains `cls` (transitively), by path."""
    def build() -> list[Symbol]:
        found: dict[str, Symbol] = {}
        todo = [cls]
        while todo:
            parent = todo.pop()
            leaf = parent.path.rpartition(".")[2]
            for mod, name in class_index(view, package_of(cls.module), frozenset({leaf})).get(leaf, ()):
                sym = view.resolve(f"{mod}.{name}")
                if sym is not None and sym.kind == CLASS and sym.path not in found and sym.path != cls.path and any(
                        b.path == parent.path for b in view.resolver.bases(sym)):
                    found[sym.path] = sym
                    todo.append(sym)
        return [found[k] for k in sorted(found)]
    return memo(view.index, f"subclasses:{cls.path}", build)  # type: ignore[return-value]


def env_modules(view: HostView) -> list[str]:
    """The host's environment-flag modules (`vllm.envs`): a module named `envs` with a lazy table."""
    def build() -> list[str]:
        modules = view.index.modules  # iterating names is cheap; summaries load on access
        return sorted(m for m in modules if m.rpartition(".")[2] == "envs"
                      and (modules[m].lazy_exports or modules[m].has_getattr))
    return memo(view.index, "envs", build)  # type: ignore[return-value]


def env_flag_defined(view: HostView, module: str, name: str) -> bool:
    """Whether `module.name` exists at run time: in the lazy table or bound outside TYPE_CHECKING."""
    summary = view.index.modules.get(module)
    if summary is None:
        return False
    if summary.has_getattr and not summary.lazy_exports:
        return True  # a `__getattr__` whose table was not recognised: anything may exist
    binding = summary.bindings.get(name)
    return name in summary.lazy_exports or (binding is not None and not binding.type_checking)


def is_env_flag_read(view: HostView, base: str, name: str) -> bool:
    """For the imports check: `base.name` is an environment-flag read that EnvFlagRemoved reports."""
    return base in env_modules(view) and name.isupper()


def host_reads_env(view: HostView, var: str) -> bool:
    """Whether the host reads environment variable `var`: its envs table, else any source mentioning it."""
    if any(var in view.index.modules[m].lazy_exports for m in env_modules(view)):
        return True

    def build() -> bool:  # rare: only for a variable the envs table lacks
        quoted = (f'"{var}"', f"'{var}'")
        return any(view.index.grep(q) for q in quoted)
    return memo(view.index, f"reads-env:{var}", build)  # type: ignore[return-value]


def provided_by_plugin(ctx: ScanContext, owner: Symbol) -> frozenset[str]:
    """Members the plugin adds to `owner` or a related host class (patch members, stores on `self`)."""
    def build() -> frozenset[str]:
        resolver = ctx.host.resolver
        related = {s.path for s in resolver.mro(owner)}
        out: set[str] = set()
        for path, names in added_members(ctx.plugin).items():
            sym = ctx.host.resolve(path)
            if sym is not None and sym.kind == CLASS and (
                    sym.path in related or owner.path in {s.path for s in resolver.mro(sym)}):
                out |= names
        return frozenset(out)
    per_host: dict = memo(ctx.host.index, "provided", dict)  # type: ignore[assignment]
    key = (id(ctx.plugin), owner.path)  # checked against a weak reference: ids are reused
    hit = per_host.get(key)
    if hit is None or hit[0]() is not ctx.plugin:
        hit = per_host[key] = (weakref.ref(ctx.plugin), build())
    return hit[1]


def base_member(host: HostView, patch: Patch) -> tuple[Symbol | None, Symbol | None]:
    """(owner symbol, the member the patch replaces) in one host version."""
    owner = host.resolve(patch.owner)
    if owner is None or owner.kind not in (CLASS, MODULE):
        return owner, None
    if owner.kind == CLASS:
        return owner, host.resolver.class_member(owner, patch.name)
    return owner, host.resolver.module_attr(owner.module, patch.name)
