"""Host types inside the plugin's code: which host class `self` is, and what the plugin itself assigns.

The calls check and the attribute-chain check infer the host type of plugin expressions the same
way: a patch-class method runs with `self` an instance of its target, a subclass method with an
instance of its host base; members the plugin adds are its own, not the host's; and an attribute
the plugin's code assigns on `self` (`self.drafter = ArcticProposer(...)`) has the type the plugin
gives it, in every plugin method of that host class, not the type the host assigns. A plugin class
that subclasses a host class is seen as that host class minus the members the plugin defines
(`Typed.hidden`), so a call on it binds to the host method it inherits and to nothing it overrides.
`PluginTyping` is built once per host version and kept by `ScanFacts`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

from ..model.binding import BOUND, CALL, UNBOUND, Callee
from ..model.inference import Inference, Lookup, Typed
from ..model.nodes import chain, children, walk_inner, walk_tree
from ..model.parse import dotted
from ..model.resolve import CLASS, EXTERNAL, FUNCTION, METHOD, MODULE, Resolver, Symbol
from ..model.summary import ClassInfo, FunctionInfo
from ..model.units import Unit, UnitWalk, local_imports
from .model import PluginModel
from .records import PatchKind
from .uses import ATTRIBUTE_GUARDS, caught_names, find_host_methods, plugin_class_info

_CTOR = re.compile(r"([A-Za-z_][\w.]*)\(")
_UNKNOWN = object()  # an assignment whose type is not known: the attribute's type is unknown


class PluginTyping:
    """The plugin against one host version: `self` types, plugin-provided members, assigned attributes."""

    def __init__(self, plugin: PluginModel, view_resolver: Resolver, plugin_resolver: Resolver,
                 constructions: dict[str, dict[str, list[tuple[ast.Call, dict[str, ast.expr]]]]] | None = None) -> None:
        self.plugin, self.resolver, self.plugin_resolver = plugin, view_resolver, plugin_resolver
        # plugin module -> the plugin class paths its functions construct (see `_constructions`); of
        # the plugin alone, so the typings of both host versions may share one
        self._constructions = constructions if constructions is not None else {}
        self.provided: set[tuple[str, str]] = set()  # (canonical class path, member) the plugin defines
        self.aliases: dict[tuple[str, str], str] = {}  # (canonical target, local name) -> host member path
        self.patch_targets: dict[tuple[str, str], Symbol] = {}  # (plugin module, class qualname) -> target
        self.subclass_bases: dict[tuple[str, str], Symbol] = {}
        for target in plugin.surface.targets:
            sym = self.resolver.resolve(target.target)
            if sym is None or sym.kind != CLASS:
                continue
            key = (target.plugin_module, target.plugin_class)
            (self.patch_targets if target.is_patch else self.subclass_bases).setdefault(key, sym)
        for patch in plugin.surface.patches:
            if patch.kind is PatchKind.ALIAS:
                holder = self.patch_targets.get((patch.plugin_module, patch.via)) if patch.via else None
                if holder is not None:  # the patch copies `_orig_x` onto its target too
                    self.aliases[(holder.path, patch.local_name)] = patch.alias_of
                    self.provided.add((holder.path, patch.local_name))
                continue
            owner = self.resolver.resolve(patch.owner)
            if owner is not None and owner.kind in (CLASS, MODULE) and patch.kind in (
                    PatchKind.MEMBER, PatchKind.ASSIGNMENT):
                self.provided.add((owner.path, patch.name))
        self._self_attrs: dict[tuple[str, str], dict[str, Typed | None]] = {}
        self._target_attrs: dict[str, dict[str, Typed | None]] | None = None
        self._installed: dict[tuple[str, str], Symbol] | None = None
        self._built: dict[str, bool] = {}

    # -- names ----------------------------------------------------------------------------------
    def lookup(self, module: str, local: dict[str, str] | None = None) -> Lookup:
        """Bare names of a plugin module (and a function's local imports) that denote host symbols."""
        names = self.plugin.names
        local = local or {}

        def lookup(name: str) -> Symbol | None:
            path = local[name] if name in local else names.binding_path(module, name)
            if path is None or not names.is_host(path):
                return None
            return self.resolver.resolve(path)
        return lookup

    def masked(self, cls: Symbol, name: str) -> bool:
        """Whether `cls.name` (a class or module member) is the plugin's own: added or replaced by a patch."""
        if cls.kind == MODULE:
            return (cls.path, name) in self.provided
        for c in self.resolver.mro(cls):
            if (c.path, name) in self.provided:
                return True
            if isinstance(c.obj, ClassInfo) and c.obj.has_member(name):
                return False
        return False

    # -- what the plugin assigns on `self` --------------------------------------------------------
    def self_attrs(self, module: str, qual: str) -> dict[str, Typed | None]:
        """Types of the `self.X` a plugin class's methods see that the plugin assigns: for a patch class,
        what any patch of the same target assigns; for a subclass, what it and its plugin bases assign."""
        key = (module, qual)
        if key not in self._self_attrs:
            target = self.patch_targets.get(key)
            if target is not None:
                self._self_attrs[key] = self.target_attrs().get(target.path, {})
            else:
                self._self_attrs[key] = self.forwarded_attrs(module, qual) | self._class_attrs([(module, qual)])
        return self._self_attrs[key]

    def forwarded_attrs(self, module: str, qual: str) -> dict[str, Typed | None]:
        """Host attributes a host constructor stores from a parameter (`self.sampler = sampler`) that a
        plugin subclass's `__init__` fills with a parameter of its own (`super().__init__(sampler, ...)`):
        when every construction of the plugin class in the plugin passes an instance of a plugin class,
        the attribute holds that object (a duck type the host's annotation does not describe), typed
        as that class's host base minus what the plugin defines, or unknown when it has none."""
        base = self.subclass_bases.get((module, qual))
        node = self.plugin.function_node(module, f"{qual}.__init__") if base is not None else None
        init = self.resolver.class_member(base, "__init__") if node is not None else None
        if init is None or init.kind != METHOD or not isinstance(init.obj, FunctionInfo) or not init.owner:
            return {}
        owner = self.resolver.resolve(init.owner)
        stored = owner.obj.instance_attrs if owner is not None and isinstance(owner.obj, ClassInfo) else {}
        own = [a.arg for a in (*node.args.posonlyargs, *node.args.args)][1:]
        out: dict[str, Typed | None] = {}
        for host_param, mine in _forwarded_params(node, init.obj).items():
            attrs = [name for name, assigned in stored.items()
                     if any(a.method == "__init__" and a.expr == host_param for a in assigned)]
            if not attrs or mine not in own:
                continue
            held = self._constructed_with(module, qual, own.index(mine), mine)
            if held is not _UNKNOWN:
                out.update(dict.fromkeys(attrs, held))  # type: ignore[arg-type]
        return out

    def built_in_plugin(self, path: str) -> bool:
        """Whether plugin code builds instances of the plugin class `path` itself (`AsyncOmni(...)`, a
        call resolving to it): objects of it then flow wherever the plugin hands them."""
        if path not in self._built:
            name, index, found = path.rpartition(".")[2], self.plugin.index, False
            for mod in index.grep(f"{name}("):
                tree = index.parsed(mod) if mod in self.plugin.modules else None
                found = any(isinstance(n, ast.Call) and chain(n.func).endswith(name) and
                            (cls := self.plugin_resolver.resolve_in(mod, chain(n.func))) is not None
                            and cls.path == path for n in (walk_tree(tree) if tree is not None else ()))
                if found:
                    break
            self._built[path] = found
        return self._built[path]

    def _constructed_with(self, module: str, qual: str, position: int, param: str) -> Typed | None | object:
        """What every plugin construction of class `module.qual` passes as its parameter `param` (at
        `position` after `self`): the one plugin class they build there (as `plugin_class_type`: None
        for a duck type), or `_UNKNOWN` when a site passes anything else or there is no site."""
        path, name = f"{module}.{qual}", qual.rpartition(".")[2]
        index = self.plugin.index
        found: dict[str, Typed | None] = {}
        for mod in index.grep(f"{name}("):
            for call, built in self._constructions_in(mod).get(path, ()) if mod in self.plugin.modules else ():
                arg = call.args[position] if position < len(call.args) else next(
                    (k.value for k in call.keywords if k.arg == param), None)
                made = built.get(arg.id) if isinstance(arg, ast.Name) else arg
                made_cls = self.plugin_resolver.resolve_in(mod, chain(made.func)) if isinstance(
                    made, ast.Call) and chain(made.func) else None
                if made_cls is None or made_cls.kind != CLASS or made_cls.module not in index.modules:
                    return _UNKNOWN  # a host object, or one not known here: the host's annotation stands
                found[made_cls.path] = self.plugin_class_type(mod, chain(made.func))
        if not found:
            return _UNKNOWN
        return next(iter(found.values())) if len(found) == 1 else None

    def _constructions_in(self, mod: str) -> dict[str, list[tuple[ast.Call, dict[str, ast.expr]]]]:
        """Class path -> the calls in a plugin module's functions that resolve to it, in walk order,
        each with its function's single-assignment locals (`_local_constructions`); a call in a
        nested function appears once per enclosing function, as a walk of each function finds it.
        One walk per module however many classes `_constructed_with` asks about."""
        if mod not in self._constructions:
            by_path: dict[str, list[tuple[ast.Call, dict[str, ast.expr]]]] = {}
            tree = self.plugin.index.parsed(mod)
            for fn in (n for n in walk_inner(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)) \
                    if tree is not None else ():
                nodes = tuple(walk_inner(fn))
                built = _local_constructions(nodes)
                for call in (n for n in nodes if isinstance(n, ast.Call)):
                    cls = self.plugin_resolver.resolve_in(mod, chain(call.func)) if chain(call.func) else None
                    if cls is not None:
                        by_path.setdefault(cls.path, []).append((call, built))
            self._constructions[mod] = by_path
        return self._constructions[mod]

    def target_attrs(self) -> dict[str, dict[str, Typed | None]]:
        """Host class path -> the types of the attributes every patch class of it assigns on `self`."""
        if self._target_attrs is None:
            by_target: dict[str, list[tuple[str, str]]] = {}
            for (module, qual), sym in sorted(self.patch_targets.items()):
                by_target.setdefault(sym.path, []).append((module, qual))
            self._target_attrs = {path: self._class_attrs(classes) for path, classes in by_target.items()}
        return self._target_attrs

    def _class_attrs(self, classes: list[tuple[str, str]]) -> dict[str, Typed | None]:
        found: dict[str, dict[object, Typed | None]] = {}  # name -> {type key: type}
        for module, qual in classes:
            info = plugin_class_info(self.plugin.index, module, qual)
            if info is None:
                continue
            for name, assigned in info.instance_attrs.items():
                for a in assigned:
                    t = self._assigned_type(module, a.expr)
                    key = (t.sym.path, t.instance, t.hidden) if isinstance(t, Typed) else None
                    found.setdefault(name, {})[key] = t if isinstance(t, Typed) else None
        return {name: next(iter(types.values())) if len(types) == 1 else None for name, types in found.items()}

    def _assigned_type(self, module: str, expr: str) -> Typed | object:
        """The type a plugin `self.X = <expr>` gives: a host class built, or a plugin class seen as its
        host base minus what the plugin defines; anything else is unknown."""
        match = _CTOR.match(expr)
        if not match:
            return _UNKNOWN
        head, *rest = match.group(1).split(".")
        sym = self.lookup(module)(head)
        for part in rest:
            sym = self.resolver.member(sym, part) if sym is not None else None
        if sym is not None:
            return Typed(sym, True) if sym.kind == CLASS else _UNKNOWN
        return self.plugin_class_type(module, match.group(1)) or _UNKNOWN

    def plugin_class_type(self, module: str, expr: str) -> Typed | None:
        """An instance of the plugin class `expr` names in `module`, as its nearest host base with the
        members the plugin's classes on the way define hidden; None when it has no host base."""
        cls = self.plugin_resolver.resolve_in(module, expr)
        if cls is None or cls.kind != CLASS:
            return None
        hidden: set[str] = set()
        for owner in self.plugin_resolver.mro(cls):
            if owner.kind == EXTERNAL:
                if not self.plugin.names.is_host(owner.path):
                    return None
                base = self.resolver.resolve(owner.path)
                return Typed(base, True, frozenset(hidden)) if base is not None and base.kind == CLASS else None
            if isinstance(owner.obj, ClassInfo):
                info = owner.obj
                hidden.update(info.methods, info.attributes, info.instance_attrs, info.classes)
        return None

    # -- one unit ---------------------------------------------------------------------------------
    def alias_callee(self, module: str, unit: Unit, func: ast.AST) -> Callee | None:
        """`self._orig_x(...)` / `Patch._orig_x(...)` in a patch class: the upstream member it kept."""
        target = self.patch_targets.get((module, unit.cls))
        if target is None or not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
            return None
        via_self = func.value.id in ("self", "cls")
        via_class = func.value.id == unit.cls.rpartition(".")[2]
        if not (via_self or via_class):
            return None
        kept = self.aliases.get((target.path, func.attr), "")
        sym = self.resolver.resolve(kept) if kept else None
        if sym is None or sym.kind not in (METHOD, FUNCTION) or not isinstance(sym.obj, FunctionInfo):
            return None
        if sym.kind == FUNCTION or sym.obj.is_staticmethod:
            return Callee(sym, CALL, kept)
        instance = func.value.id == "self"
        return Callee(sym, BOUND if instance or sym.obj.is_classmethod else UNBOUND, kept, target)

    def self_class(self, module: str, unit: Unit) -> tuple[Symbol | None, bool]:
        """The host class `self` is an instance of in a plugin unit, and whether it is a patch target
        (a module-level function installed on one host class is a patch of it)."""
        if not unit.cls:
            return self.installed_functions().get((module, unit.qualname)), True
        key = (module, unit.cls)
        target = self.patch_targets.get(key)
        return (target, True) if target is not None else (self.subclass_bases.get(key), False)

    def unit_self_attrs(self, module: str, unit: Unit, cls_sym: Symbol | None) -> dict[str, Typed | None] | None:
        """The plugin-assigned `self.X` a unit sees (`self_class` gave `cls_sym`): an installed function's
        are those every patch of its host class assigns."""
        if cls_sym is None:
            return None
        return self.self_attrs(module, unit.cls) if unit.cls else self.target_attrs().get(cls_sym.path, {})

    def installed_functions(self) -> dict[tuple[str, str], Symbol]:
        """(plugin module, function qualname) -> the one host class a plugin function outside any class is
        installed on as a method (`Host.meth = fn`, `setattr(Host, "meth", fn)`, a string-target registry):
        its first parameter is an instance of that class."""
        if self._installed is None:
            self._installed = {}
            for method in find_host_methods(self.plugin):
                if "." in method.qualname or method.plugin_class or method.wrapper in ("staticmethod", "classmethod"):
                    continue
                owners = [s for o in method.owners if (s := self.resolver.resolve(o)) is not None and s.kind == CLASS]
                if len(owners) == 1 and len(method.owners) == 1:
                    self._installed[(method.module, method.qualname)] = owners[0]
        return self._installed

    def own_members(self, module: str, qual: str) -> frozenset[str]:
        """What a plugin class and its plugin bases define (methods, attributes, `self.X`): on a
        subclass of a host class, these names are the plugin's, not the host's."""
        cls = self.plugin_resolver.resolve(f"{module}.{qual}") if qual else None
        out: set[str] = set()
        for owner in self.plugin_resolver.mro(cls) if cls is not None and cls.kind == CLASS else ():
            if isinstance(owner.obj, ClassInfo) and owner.kind == CLASS:
                info = owner.obj
                out.update(info.methods, info.attributes, info.instance_attrs, info.classes)
        return frozenset(out)

    def inference(self, module: str, unit: Unit, walk: UnitWalk) -> Inference:
        """An Inference over one plugin unit: host names, `self`, `super()`, the plugin's own members
        (what a plugin subclass defines itself) and the attributes the plugin assigns."""
        local = {k: self.plugin.names.follow(v) for k, v in local_imports(
            walk, module, self.plugin.index.is_package(module)).items()}
        cls_sym, is_patch = self.self_class(module, unit)
        own = self.own_members(module, unit.cls) if cls_sym is not None and not is_patch else frozenset()

        def masked(cls: Symbol, name: str) -> bool:
            if cls_sym is not None and cls.path == cls_sym.path and name in own:
                return True
            return self.masked(cls, name)

        attrs = self.unit_self_attrs(module, unit, cls_sym)
        inf = Inference(self.resolver, self.lookup(module, local), masked=masked, self_attrs=attrs,
                        super_mro=self.resolver.mro(cls_sym) if cls_sym is not None and not is_patch else ())
        if unit.node is not None:
            inf.bind_locals(unit.node, walk, Typed(cls_sym, True) if cls_sym is not None else None)
        return inf




def _forwarded_params(node: ast.FunctionDef | ast.AsyncFunctionDef, host_init: FunctionInfo) -> dict[str, str]:
    """Host `__init__` parameter -> the plugin `__init__`'s own parameter its `super().__init__(...)`
    call passes there unchanged (`super().__init__(sampler, cfg)` -> {"sampler": "sampler", ...})."""
    params = [p.name for p in host_init.bound_params()]
    for stmt in node.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "__init__"
                and isinstance(call.func.value, ast.Call) and dotted(call.func.value.func) == "super"):
            continue
        out = {params[i]: a.id for i, a in enumerate(call.args) if i < len(params) and isinstance(a, ast.Name)}
        out.update((k.arg, k.value.id) for k in call.keywords if k.arg and isinstance(k.value, ast.Name))
        return out
    return {}


def _local_constructions(nodes: tuple[ast.AST, ...]) -> dict[str, ast.expr]:
    """Locals a function assigns exactly once, to a call (`sampler = Sampler(...)`): name -> that call
    (`nodes`: the function's `walk_inner`)."""
    out: dict[str, ast.expr] = {}
    seen: set[str] = set()
    for n in nodes:
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            name = n.targets[0].id
            if name in seen:
                out.pop(name, None)
            elif isinstance(n.value, ast.Call):
                out[name] = n.value
            seen.add(name)
    return out


class HostCall(NamedTuple):
    """A call in the plugin that reaches a host callable (against one host version)."""

    module: str
    unit: Unit
    call: ast.Call
    callee: Callee
    guard: str  # why the call may run only on some host versions ('' when nothing guards it)


def host_calls(typing: PluginTyping, units: list[tuple[str, Unit, UnitWalk]],
               inference: Callable[[str, Unit], Inference]) -> list[HostCall]:
    """Every plugin call whose callee resolves to a host function, method or class in `typing`'s host."""
    out: list[HostCall] = []
    for module, unit, walk in units:
        if not walk.calls:
            continue
        inf = inference(module, unit)
        for call in walk.calls:
            callee = typing.alias_callee(module, unit, call.func) or inf.callee(call.func)
            if callee is not None and callee.sym.module:
                out.append(HostCall(module, unit, call, callee, walk.guard_at(call.lineno)))
    return out


# -- where attributes are read, and whether the line always runs -------------------------------------
def conditions(unit: Unit) -> dict[ast.AST, tuple[bool, frozenset[str]]]:
    """Every node of a unit's body -> (runs only behind a condition, attribute names guarded there).

    Behind a condition: an `if`/`while`/`match` branch, a conditional expression, the right side of
    `and`/`or`, a loop's `else`, an `except` handler, a nested function. Guarded: the names a
    `hasattr(x, "name")` test probes, and every name (`"*"`) inside a `try` that catches
    AttributeError or a `getattr(x, "name", default)`. A walk over the whole unit: callers ask
    only for units where something is to be reported."""
    return {node: (cond, guarded) for node, cond, guarded in _walk_conditions(unit)}


_ANY: frozenset[str] = frozenset({"*"})  # every name is guarded (a `try` catching AttributeError)


def _walk_conditions(unit: Unit) -> Iterator[tuple[ast.AST, bool, frozenset[str]]]:
    """(node, behind a condition, attribute names guarded there) for every node of a unit's body."""
    body = unit.node.body if unit.node is not None else list(unit.body)
    stack: list[tuple[ast.AST, bool, frozenset[str]]] = [(n, False, frozenset()) for n in reversed(body)]
    while stack:
        node, cond, guarded = stack.pop()
        yield node, cond, guarded
        kids: list[tuple[ast.AST, bool, frozenset[str]]]
        if isinstance(node, ast.If | ast.IfExp | ast.While):
            inner = guarded | _probed(node.test)
            body_ = node.body if isinstance(node.body, list) else [node.body]
            orelse = node.orelse if isinstance(node.orelse, list) else [node.orelse]
            kids = [(node.test, cond, guarded), *((n, True, inner) for n in body_), *((n, True, guarded) for n in orelse)]
        elif isinstance(node, ast.BoolOp):
            inner = guarded | _probed(node.values[0]) if isinstance(node.op, ast.And) else guarded
            kids = [(node.values[0], cond, guarded), *((n, True, inner) for n in node.values[1:])]
        elif isinstance(node, ast.Try | ast.TryStar):
            inner = _ANY if caught_names(node) & ATTRIBUTE_GUARDS else guarded
            kids = [*((n, cond, inner) for n in node.body), *((n, True, guarded) for n in (*node.handlers, *node.orelse)),
                    *((n, cond, guarded) for n in node.finalbody)]
        elif isinstance(node, ast.For | ast.AsyncFor):
            kids = [(node.target, cond, guarded), (node.iter, cond, guarded), *((n, cond, guarded) for n in node.body),
                    *((n, True, guarded) for n in node.orelse)]
        elif isinstance(node, ast.match_case | ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            kids = [(n, True, guarded) for n in children(node)]
        elif isinstance(node, ast.ClassDef):
            continue
        elif isinstance(node, ast.Call) and _is_getattr_default(node):
            kids = [(n, cond, _ANY) for n in children(node)]
        else:
            kids = [(n, cond, guarded) for n in children(node)]
        stack.extend(reversed(kids))


def _probed(test: ast.AST) -> frozenset[str]:
    """Names a condition probes for: `hasattr(x, "name")` anywhere in it."""
    out = set()
    for n in walk_tree(test):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "hasattr" and len(n.args) == 2 \
                and isinstance(n.args[1], ast.Constant) and isinstance(n.args[1].value, str):
            out.add(n.args[1].value)
    return frozenset(out)


def _is_getattr_default(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) >= 3


__all__ = ["HostCall", "PluginTyping", "conditions", "host_calls"]
