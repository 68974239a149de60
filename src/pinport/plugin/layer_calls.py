"""Host calls of a layer's instances, for members a dispatcher hands to a passthrough (`forward`).

vLLM's CustomOp picks one member per platform (`return self.forward_oot`), keeps it and runs it
from `forward(self, *args, **kwargs)`: the member gets exactly what the host passes when it calls
the layer (`self.rotary_emb(positions, q, k)`, through `Module.__call__`). A bare `self.member`
read there says nothing about arguments; the layer calls do. `instance_call_failures` follows every
host construction of the classes whose instances may run the member to where the instance is kept
(`self.attr = Cls(...)`, returned by a factory such as `get_rope`, passed on as an argument), then
binds each host call of a kept instance to the member's signature. A use it cannot follow (the
class or instance handed on some other way) answers None: nothing is decided.

A factory that picks the class from a value (`scaling_type = rope_parameters.get("rope_type",
"default")`, then `if scaling_type == "mllama4": ... Llama4VisionRotaryEmbedding(...)`) builds a
class only on the branch the value selects: where the caller passes that value as a literal
(`rope_parameters = {"rope_type": "mllama4", ...}`), the branches it rules out build nothing there.
A value the caller does not spell as a literal leaves every branch possible.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import NamedTuple

from ..model.binding import BOUND, CONSTRUCT, TOO_MANY, TWICE, bind_call
from ..model.callsites import (
    CallSite,
    iter_call_sites,
    modules_mentioning,
    modules_subclassing,
    text_lines,
)
from ..model.forwarding import dispatch_route
from ..model.host import HostView
from ..model.inference import Inference, host_inference
from ..model.nodes import walk_tree
from ..model.resolve import CLASS, FUNCTION, Symbol
from ..model.summary import ClassInfo, FunctionInfo, Param
from ..model.units import Unit, call_name, module_units, spans, walk_unit
from ..model.words import word
from .callers import (
    class_aliases,
    class_as_value,
    named_bare,
    named_dynamically,
    replacement_params,
)
from .model import PluginModel
from .reach import Lineage
from .receivers import inheriting
from .records import Patch, PatchKind

Failures = dict[tuple[str, str], list[tuple[str, int]]]  # (problem, parameter) -> (host module, line) of each call
UNKNOWN = ("unknown", "")  # a call whose arguments are not known statically (`layer(*args)`)
_DEPTH = 4  # functions followed through their returns or parameters before an instance counts as escaped
_HOLDERS = 1000  # attributes holding instances beyond which the flow is too wide to follow


def carried_routes(view: HostView, name: str, classes: tuple[str, ...]) -> tuple[str, ...] | None:
    """The passthroughs (`forward`) carrying each bare `self.name` read of the host that may read it off an
    instance of `classes`: every such read is a dispatcher's route (`model.forwarding.dispatch_route`).
    None when some bare read of `x.name` is not one (a callback handed on anywhere); () when there is none.
    A `self.name` read in a class no instance of `classes` can be (`self.forward = self.forward_cuda` in
    a sampler) reads another class's member."""
    index, top = view.index, view.resolver.top
    carriers: set[str] = set()
    for module in modules_mentioning(index, f".{name}", top):
        lines = _bare_lines(view, module, name)
        if not lines:
            continue
        for unit in module_units(index, module):
            if not any(spans(unit, line) for line in lines):
                continue
            for node in _bare_reads(unit, name):
                if not _may_be_self_of(view, module, unit, node, classes):
                    continue
                route = dispatch_route(index, module, unit, node)
                if route is None:
                    return None
                carriers.add(route.carrier)
    return tuple(sorted(carriers))


def _may_be_self_of(view: HostView, module: str, unit: Unit, node: ast.Attribute, classes: tuple[str, ...]) -> bool:
    """Whether a bare read may be off an instance of `classes`: anything but `self` in a class unrelated to them."""
    if not (isinstance(node.value, ast.Name) and node.value.id == _self_name(unit) and unit.cls):
        return True
    cls = view.resolve(f"{module}.{unit.cls}")
    if cls is None or cls.kind != CLASS:
        return True
    return any(_holder_related(view, path, cls) for path in classes)


def is_carried(view: HostView, module: str, unit: Unit, node: ast.expr) -> bool:
    """Whether a bare read in a host unit is a dispatcher's route, run with a passthrough's arguments."""
    return dispatch_route(view.index, module, unit, node) is not None


def _bare_lines(view: HostView, module: str, name: str) -> set[int]:
    def build() -> frozenset[int]:
        tree = view.index.parsed(module)
        return frozenset(n.lineno for unit in (module_units(view.index, module) if tree is not None else ())
                         for n in _bare_reads(unit, name))
    return set(view.index.module_memo(module, ("layer-bare-reads", name), build))


def _bare_reads(unit: Unit, name: str) -> list[ast.Attribute]:
    """`x.name` reads of a unit that are not calls of it."""
    called = {id(n.func) for root in unit.body for n in walk_tree(root) if isinstance(n, ast.Call)}
    return [n for root in unit.body for n in walk_tree(root) if isinstance(n, ast.Attribute) and n.attr == name
            and isinstance(n.ctx, ast.Load) and id(n) not in called]


class _Flow:
    """Where instances of some host classes go, and how host code calls them."""

    def __init__(self, view: HostView, params: tuple[Param, ...], replaced: frozenset[str], carrier: str,
                 implicit: tuple[str, ...]) -> None:
        self.view, self.params, self.replaced, self.carrier, self.implicit = view, params, replaced, carrier, implicit
        self.failures: Failures = {}
        self.holders: set[tuple[str | None, str]] = set()  # (class path, or None for any object; attribute)
        self.followed: set[tuple[str, str, int]] = set()  # factories followed: (module, qualname, id(construction))
        self._inference: dict[tuple[str, str], Inference] = {}
        self._classes: dict[tuple[str, str], list[Symbol] | None] = {}  # (attribute, owner class) -> classes held
        self._active: set[tuple[str, str]] = set()
        self._parents: dict[tuple[str, str, int], dict[int, ast.AST]] = {}
        self._dispatch: dict[tuple[int, int], tuple[dict[str, tuple[str, str, object]], list[tuple[ast.expr, bool]]]] = {}
        self._locals: dict[int, _Locals] = {}  # per caller unit (its def's id): its names' stores, read once
        self._cycles = 0

    def inference(self, module: str, unit: Unit) -> Inference:
        key = (module, unit.qualname)
        if key not in self._inference:
            self._inference[key] = host_inference(self.view.resolver, module, unit,
                                                  walk_unit(self.view.index, module, unit))
        return self._inference[key]

    def judge(self, module: str, call: ast.Call) -> None:
        problems = bind_call(self.params, call)
        for key in [UNKNOWN] if problems is None else [(p.kind, p.name) for p in problems]:
            self.failures.setdefault(key, []).append((module, call.lineno))

    def value(self, module: str, unit: Unit, node: ast.expr, parents: dict[int, ast.AST], depth: int,
              origin: ast.Call | None = None) -> bool:
        """Follow an expression holding an instance; False when it goes where we do not follow. `origin` is the
        construction it came from while the flow stays in the unit building it (a factory's branch)."""
        up = parents.get(id(node))
        while isinstance(up, ast.IfExp | ast.BoolOp | ast.NamedExpr) and node is not getattr(up, "test", None):
            if isinstance(up, ast.NamedExpr):
                return False
            node, up = up, parents.get(id(up))
        if isinstance(up, ast.Call) and up.func is node:
            self.judge(module, up)  # the instance called: `Module.__call__` runs the passthrough
            return True
        if isinstance(up, ast.Attribute):
            call = parents.get(id(up))
            if up.attr == self.carrier:
                if not (isinstance(call, ast.Call) and call.func is up):
                    return False  # the passthrough handed on (`fn = rope.forward`): called where we do not look
                self.judge(module, call)
            return True  # a member read off it (`rope.cos_sin_cache`), or the passthrough called by name
        if isinstance(up, ast.Expr | ast.Compare) or isinstance(up, ast.Call) and call_name(up) in _INSPECTING:
            return True
        if isinstance(up, ast.Assign | ast.AnnAssign) and up.value is node:
            targets = up.targets if isinstance(up, ast.Assign) else [up.target]
            return len(targets) == 1 and self.store(module, unit, targets[0], parents, depth, origin)
        if isinstance(up, ast.Return):
            return self.returned(module, unit, depth, origin)
        if isinstance(up, ast.Call) or isinstance(up, ast.keyword) and isinstance(parents.get(id(up)), ast.Call):
            return self.passed(module, unit, node, up, parents, depth)
        return False

    def store(self, module: str, unit: Unit, target: ast.expr, parents: dict[int, ast.AST], depth: int,
              origin: ast.Call | None) -> bool:
        me = _self_name(unit)
        if isinstance(target, ast.Attribute):
            on_self = isinstance(target.value, ast.Name) and target.value.id == me
            holder = self.view.resolve(f"{module}.{unit.cls}") if on_self and unit.cls else None
            self.holders.add((holder.path if holder is not None else None, target.attr))
            return True
        if isinstance(target, ast.Name) and unit.node is not None:
            return all(self.value(module, unit, use, parents, depth, origin) for use in _loads(unit.node, target.id))
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            return self.cached(module, unit, target.value.id) and self.returned(module, unit, depth, origin)
        return False

    def cached(self, module: str, unit: Unit, name: str) -> bool:
        """`CACHE[key] = instance` in a function: a cache of its own results when the module reads `CACHE`
        only to test for a key or to return an entry from that same function."""
        tree = self.view.index.parsed(module)
        if tree is None or unit.node is None or unit.cls:
            return False
        parents = _parents(tree)
        for node in walk_tree(tree):
            if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
                continue
            up = parents.get(id(node))
            if isinstance(up, ast.Compare) and all(isinstance(op, ast.In | ast.NotIn) for op in up.ops) \
                    and node is not up.left:
                continue
            if isinstance(up, ast.Subscript) and isinstance(parents.get(id(up)), ast.Return) \
                    and _within(unit.node, up):
                continue
            if isinstance(up, ast.Subscript) and isinstance(up.ctx, ast.Store) and _within(unit.node, up):
                continue
            return False
        return True

    def returned(self, module: str, unit: Unit, depth: int, origin: ast.Call | None) -> bool:
        """An instance a module-level function returns goes wherever each host call keeps its result (each
        call the function, given its literal arguments, may build `origin` for)."""
        if unit.cls or unit.node is None or depth >= _DEPTH:
            return False
        key = (module, unit.qualname, id(origin))
        if key in self.followed:
            return True
        self.followed.add(key)
        return self._callers(module, unit, depth + 1, origin)

    def _callers(self, module: str, unit: Unit, depth: int, origin: ast.Call | None) -> bool:
        view, name = self.view, unit.qualname
        path = f"{module}.{name}"
        index, top = view.index, view.resolver.top
        whole = word(name)
        for caller in modules_mentioning(index, name, top):
            if not whole.search(index.source(caller)):
                continue
            tree = index.parsed(caller)
            if tree is None:
                return False
            lines = text_lines(index, caller, f"{name}(")
            if index.module_memo(caller, ("named-bare", name), lambda t=tree: named_bare(t, name)):
                return False  # the factory handed on as a value
            for other in module_units(index, caller):
                if not any(spans(other, line) for line in lines) or f"{caller}.{other.qualname}" in self.replaced:
                    continue
                parents = self.parents(caller, other)
                for call in walk_unit(index, caller, other).calls:
                    if call_name(call) != name:
                        continue
                    callee = self.inference(caller, other).callee(call.func)
                    if callee is None or callee.sym.path != path:
                        if callee is None and caller == module:
                            return False  # a call of this module's function we cannot resolve
                        continue
                    if origin is not None and not self.literal_dispatch(unit, origin, call, other):
                        continue  # the caller's literal selects a branch that does not build it
                    if not self.value(caller, other, call, parents, depth):
                        return False
        return True

    def passed(self, module: str, unit: Unit, node: ast.expr, up: ast.AST, parents: dict[int, ast.AST],
               depth: int) -> bool:
        """An instance handed to a host function or class: followed to the parameter receiving it."""
        call = up if isinstance(up, ast.Call) else parents[id(up)]
        assert isinstance(call, ast.Call)
        if depth >= _DEPTH or any(isinstance(a, ast.Starred) for a in call.args):
            return False
        inference = self.inference(module, unit)
        callee = inference.callee(call.func)
        if callee is not None:
            targets = [_receiving_function(self.view, callee.sym)]
        elif (typed := inference.infer(call.func)) is not None and typed.instance and typed.sym is not None \
                and typed.sym.kind == CLASS and typed.sym.module:
            targets = [self._called_instance(typed.sym)]
        else:  # `self.indexer(...)`, `fn(...)`: an instance of what `.indexer` (the local) is set to
            held = self._expression_classes(module, unit, call.func, 0)
            targets = [self._called_instance(c) for c in held] if held is not None else [None]
        if None in targets:
            return False
        # host code works on its own pin: a receiver whose signature the call does not bind to is not the one called
        fitting = [t for t in targets if self._binds(t, call)]  # type: ignore[arg-type]
        return bool(fitting) and all(self._into(t, call, node, up, depth) for t in fitting)

    def _binds(self, target: tuple[str, Unit, int], call: ast.Call) -> bool:
        fn_module, fn_unit, skip = target
        sym = self.view.resolve(f"{fn_module}.{fn_unit.qualname}") if fn_unit.node is not None else None
        if sym is None or not isinstance(sym.obj, FunctionInfo):
            return True
        return bind_call(sym.obj.signature.params[skip:], call) in (None, [])

    def _into(self, target: tuple[str, Unit, int], call: ast.Call, node: ast.expr, up: ast.AST, depth: int) -> bool:
        """Follow an argument into the function receiving it (a dataclass: into the field keeping it)."""
        fn_module, fn_unit, skip = target
        if isinstance(up, ast.keyword):
            param = up.arg
        elif fn_unit.node is None:
            return False  # a dataclass's field taken positionally: its order is not read here
        else:
            position = call.args.index(node) + skip  # type: ignore[arg-type]
            names = [a.arg for a in (*fn_unit.node.args.posonlyargs, *fn_unit.node.args.args)]
            param = names[position] if position < len(names) else None
        if param is None:
            return False
        if fn_unit.node is None:  # a dataclass: the field keeps it
            self.holders.add((f"{fn_module}.{fn_unit.qualname}", param))
            return True
        params = {a.arg for a in (*fn_unit.node.args.posonlyargs, *fn_unit.node.args.args, *fn_unit.node.args.kwonlyargs)}
        if param not in params:
            return False
        fn_parents = self.parents(fn_module, fn_unit)
        return all(self.value(fn_module, fn_unit, use, fn_parents, depth + 1) for use in _loads(fn_unit.node, param))

    def literal_dispatch(self, unit: Unit, construction: ast.Call, call: ast.Call, caller: Unit) -> bool:
        """`literal_dispatch`, with the factory's selectors and guards read once."""
        fn = unit.node
        if fn is None:
            return True
        key = (id(fn), id(construction))
        if key not in self._dispatch:
            self._dispatch[key] = (_selectors(fn), _guards(fn.body, construction) or [])
        selectors, guards = self._dispatch[key]
        if not selectors or not guards:
            return True
        node = caller.node
        if node is not None and id(node) not in self._locals:
            self._locals[id(node)] = _local_stores(node)
        return literal_dispatch(fn, selectors, guards, call, self._locals.get(id(node)) if node is not None else None)

    def _called_instance(self, sym: Symbol | None) -> tuple[str, Unit, int] | None:
        """Where a call of a host class's instance goes: the member its calls run (`__call__`, or one the setting
        `called-implicitly` names, `forward` through `Module.__call__`), as the class's MRO defines it first."""
        if sym is None or sym.kind != CLASS:
            return None
        for cls in self.view.resolver.mro(sym):
            if not isinstance(cls.obj, ClassInfo) or not cls.module:
                continue
            name = next((n for n in ("__call__", *self.implicit) if n in cls.obj.methods), None)
            if name is not None:
                qual = f"{cls.path[len(cls.module) + 1:]}.{name}"
                unit = next((u for u in module_units(self.view.index, cls.module) if u.qualname == qual), None)
                return (cls.module, unit, 1) if unit is not None and unit.node is not None else None
        return None

    def _receiver_class(self, module: str, unit: Unit, node: ast.expr) -> Symbol | None:
        """The host class an expression is an instance of, when known (`self` in a method: the method's class)."""
        if isinstance(node, ast.Name) and node.id == _self_name(unit) and unit.cls:
            sym = self.view.resolve(f"{module}.{unit.cls}")
        else:
            typed = self.inference(module, unit).infer(node)
            sym = typed.sym if typed is not None and typed.instance else None
        return sym if sym is not None and sym.kind == CLASS and sym.module else None

    def attribute_classes(self, attr: str, owner: Symbol | None, depth: int) -> list[Symbol] | None:
        """The host classes whose instances host code may store into `x.attr` of an instance of `owner` (None:
        of any object): `self.attr = Cls(...)` in a class related to it, `obj.attr = ...`, `Fields(attr=...)` for a
        class related to it, a value copied from another attribute or a parameter; None when some store holds
        what we cannot tell."""
        key = (attr, owner.path if owner is not None else "")
        if key in self._classes:
            return self._classes[key]
        if key in self._active:  # a cycle: what flows around it comes from the stores the outer walk visits
            self._cycles += 1
            return []
        self._active.add(key)
        cycles = self._cycles
        found = self._attribute_classes(attr, owner, depth) if depth < _DEPTH else None
        self._active.discard(key)
        if found is None or self._cycles == cycles or not self._active:
            self._classes[key] = found  # complete: no cycle cut short what it gathered
        return found

    def _related(self, owner: Symbol | None, other: Symbol | None) -> bool:
        return owner is None or other is None or _holder_related(self.view, owner.path, other)

    def _attribute_classes(self, attr: str, owner: Symbol | None, depth: int) -> list[Symbol] | None:
        index, top = self.view.index, self.view.resolver.top
        out: dict[str, Symbol] = {}
        for module in sorted({*modules_mentioning(index, f".{attr}", top), *modules_mentioning(index, f"{attr}=", top)}):
            if index.parsed(module) is None:
                return None
            for unit in module_units(index, module):
                for root in unit.body:
                    for node in walk_tree(root):
                        values: list[ast.expr] = []
                        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None and any(
                                isinstance(t, ast.Attribute) and t.attr == attr and self._related(
                                    owner, self._receiver_class(module, unit, t.value)) for t in _targets(node)):
                            values.append(node.value)
                        elif isinstance(node, ast.Call) and any(k.arg == attr for k in node.keywords):
                            callee = self.inference(module, unit).callee(node.func)
                            if callee is None or callee.mode != CONSTRUCT or self._related(owner, callee.sym):
                                values += [k.value for k in node.keywords if k.arg == attr]
                        for value in values:
                            found = self._expression_classes(module, unit, value, depth)
                            if found is None:
                                return None
                            out.update((c.path, c) for c in found)
        return list(out.values())

    def _expression_classes(self, module: str, unit: Unit, node: ast.expr, depth: int) -> list[Symbol] | None:
        if isinstance(node, ast.Constant) and node.value is None:
            return []
        if isinstance(node, ast.IfExp | ast.BoolOp):
            return self._union(module, unit, [node.body, node.orelse] if isinstance(node, ast.IfExp) else node.values,
                               depth)
        if isinstance(node, ast.Call):
            callee = self.inference(module, unit).callee(node.func)
            return [callee.sym] if callee is not None and callee.mode == CONSTRUCT else None
        if isinstance(node, ast.Attribute):
            owner = self._receiver_class(module, unit, node.value)
            owners = self._expression_classes(module, unit, node.value, depth + 1) if owner is None and isinstance(
                node.value, ast.Name) else None  # `attention.indexer`, `attention` a parameter: what callers pass
            if owners:
                return self._union_over(node.attr, owners, depth)
            return self.attribute_classes(node.attr, owner, depth + 1)
        if isinstance(node, ast.Name) and node.id == _self_name(unit):
            cls = self.view.resolve(f"{module}.{unit.cls}")
            return [cls] if cls is not None and cls.kind == CLASS else None
        if isinstance(node, ast.Name) and unit.node is not None and depth < _DEPTH:
            fn = unit.node
            if node.id in {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}:
                return self._parameter_classes(module, unit, node.id, depth + 1)
            stores = [n for n in walk_tree(fn) if isinstance(n, ast.Name) and n.id == node.id
                      and not isinstance(n.ctx, ast.Load)]
            assigns = [n for n in walk_tree(fn) if isinstance(n, ast.Assign | ast.AnnAssign) and n.value is not None
                       and any(isinstance(t, ast.Name) and t.id == node.id for t in _targets(n))]
            if not assigns or len(assigns) != len(stores):
                return None  # bound some other way (a loop, a tuple unpacking, `with ... as`)
            return self._union(module, unit, [a.value for a in assigns], depth)  # type: ignore[misc]
        return None

    def _union_over(self, attr: str, owners: list[Symbol], depth: int) -> list[Symbol] | None:
        out: list[Symbol] = []
        for owner in owners:
            found = self.attribute_classes(attr, owner, depth + 1)
            if found is None:
                return None
            out += found
        return out

    def _union(self, module: str, unit: Unit, nodes: list[ast.expr], depth: int) -> list[Symbol] | None:
        out: list[Symbol] = []
        for node in nodes:
            found = self._expression_classes(module, unit, node, depth)
            if found is None:
                return None
            out += found
        return out

    def _only_tested(self, module: str, tree: ast.Module, short: str) -> bool:
        """Whether every use of a class named `short` as a value in a module hands it to a host function that
        only tests against it (`get_layers(config, Cls)` -> `isinstance(layer, layer_type)`): it builds nothing."""
        parents = _parents(tree)
        for node in _value_uses(tree, short):
            call = parents.get(id(node))
            unit = next((u for u in module_units(self.view.index, module) if u.node is not None
                         and _within(u.node, node)), None)
            if not isinstance(call, ast.Call) or node not in call.args or unit is None:
                return False
            callee = self.inference(module, unit).callee(call.func)
            target = _receiving_function(self.view, callee.sym) if callee is not None and callee.sym.kind == FUNCTION \
                else None
            fn = target[1].node if target is not None else None
            names = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)] if fn is not None else []
            position = call.args.index(node)
            if position >= len(names) or any(isinstance(a, ast.Starred) for a in call.args[:position + 1]):
                return False
            fn_parents = _parents(fn)
            if not all(_type_tested(fn_parents, use) for use in _loads(fn, names[position])):
                return False
        return True

    def _parameter_classes(self, module: str, unit: Unit, name: str, depth: int) -> list[Symbol] | None:
        """The classes of what host code passes a constructor's parameter (`__init__(self, indexer)`): each
        construction of the class or of a host subclass inheriting its `__init__`, and each `super().__init__`
        call of one that does not. None for any other function, or a class handed on as a value."""
        fn, view = unit.node, self.view
        if fn is None:
            return None
        names = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
        position = names.index(name) if name in names else None
        resolver = view.resolver
        sites: list[tuple[CallSite, int]] = []
        if not unit.cls:  # a module function: every host call of it (it must not be handed on as a value)
            path, index = f"{module}.{unit.qualname}", view.index
            if any(index.module_memo(m, ("named-bare", unit.qualname), lambda m=m: named_bare(index.parsed(m), unit.qualname))
                   for m in modules_mentioning(index, unit.qualname, resolver.top)):
                return None
            sites = [(site, 0) for site in iter_call_sites(resolver, unit.qualname, lambda c: c.sym.path == path)]
            return self._arguments_classes(sites, name, position, depth)
        owner = view.resolve(f"{module}.{unit.cls}")
        if owner is None or owner.kind != CLASS or unit.qualname != f"{unit.cls}.__init__":
            return None
        init = f"{owner.path}.__init__"
        for cls in inheriting(view, owner, "__init__"):
            short = cls.path.rpartition(".")[2]
            if any(class_as_value(t, short) and not self._only_tested(m, t, short)
                   for m in modules_mentioning(view.index, short, resolver.top) if (t := view.index.parsed(m)) is not None):
                return None
            sites += [(site, 1) for site in iter_call_sites(
                resolver, short, lambda c, path=cls.path: c.mode == CONSTRUCT and c.sym.path == path)]
        below = sorted({owner.module, *modules_subclassing(view.index, owner.path.rpartition(".")[2], resolver.top)})
        sites += [(site, 1 if site.callee.mode == BOUND else 0) for site in iter_call_sites(
            resolver, "__init__", lambda c: c.sym.path == init, modules=below)]
        return self._arguments_classes(sites, name, position, depth)

    def _arguments_classes(self, sites: list[tuple[CallSite, int]], name: str, position: int | None,
                           depth: int) -> list[Symbol] | None:
        """The classes of what each call site passes the parameter `name` (at `position`, `skip` arguments the
        callee gets first not counted)."""
        view = self.view
        out: list[Symbol] = []
        for site, skip in sites:
            call = site.call
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return None
            given = next((k.value for k in call.keywords if k.arg == name), None)
            if given is None and position is not None and 0 <= position - skip < len(call.args):
                given = call.args[position - skip]
            if given is None:
                continue  # the default
            caller = next((u for u in module_units(view.index, site.module) if u.qualname == site.unit), None)
            found = self._expression_classes(site.module, caller, given, depth) if caller is not None else None
            if found is None:
                return None
            out += found
        return out

    def held(self, holders: set[str | None], attr: str) -> bool:
        """Follow every host read of `attr` that may be an instance kept by one of `holders` (None: any object)."""
        view = self.view
        index, resolver = view.index, view.resolver
        for module in modules_mentioning(index, f".{attr}", resolver.top):
            lines = text_lines(index, module, f".{attr}")
            if index.parsed(module) is None:
                return False
            for unit in module_units(index, module):
                if not any(spans(unit, line) for line in lines) or f"{module}.{unit.qualname}" in self.replaced:
                    continue
                me = _self_name(unit)
                reads = [node for root in unit.body for node in walk_tree(root) if isinstance(node, ast.Attribute)
                         and node.attr == attr and isinstance(node.ctx, ast.Load)]
                for node in reads:
                    if not any(self._may_hold(module, unit, node.value, me, h) for h in holders):
                        continue
                    if not self.value(module, unit, node, self.parents(module, unit), 0):
                        return False
        return True

    def parents(self, module: str, unit: Unit) -> dict[int, ast.AST]:
        key = (module, unit.qualname, getattr(unit.body[0], "lineno", 0) if unit.body else 0)
        if key not in self._parents:
            self._parents[key] = _unit_parents(unit)
        return self._parents[key]

    def _may_hold(self, module: str, unit: Unit, receiver: ast.expr, me: str, holder: str | None) -> bool:
        """Whether the receiver of an `x.attr` read may be an instance whose `attr` `holder` sets."""
        if holder is None:
            return True
        if isinstance(receiver, ast.Name) and receiver.id == me and unit.cls:
            cls = self.view.resolve(f"{module}.{unit.cls}")
            typed = cls if cls is not None and cls.kind == CLASS else None
        else:
            found = self.inference(module, unit).infer(receiver)
            typed = found.sym if found is not None and found.sym is not None and found.sym.kind == CLASS else None
        return typed is None or _holder_related(self.view, holder, typed)


def _holder_related(view: HostView, holder: str, receiver: Symbol) -> bool:
    """Whether an instance typed `receiver` may be one a holder class stores into (either derives from the other)."""
    sym = view.resolve(holder)
    if sym is None or sym.kind != CLASS:
        return True
    return holder in {c.path for c in view.resolver.mro(receiver)} or receiver.path in {
        c.path for c in view.resolver.mro(sym)}


_INSPECTING = ("isinstance", "issubclass", "hasattr", "getattr", "callable", "type", "id")


def _type_tested(parents: dict[int, ast.AST], node: ast.expr) -> bool:
    """`isinstance(x, node)` / `issubclass(x, node)`: a class only tested against."""
    call = parents.get(id(node))
    return isinstance(call, ast.Call) and call_name(call) in ("isinstance", "issubclass") and call.args[1:2] == [node]


def _value_uses(tree: ast.Module, name: str) -> list[ast.expr]:
    """Reads of a class named `name` other than calling it, testing against it, annotating or subclassing it
    (`callers.class_as_value`, every such read)."""
    inert: set[int] = set()
    out: list[ast.expr] = []
    for node in walk_tree(tree):
        if isinstance(node, ast.Name | ast.Attribute):
            if (node.attr if isinstance(node, ast.Attribute) else node.id) == name and isinstance(node.ctx, ast.Load) \
                    and id(node) not in inert:
                out.append(node)
            continue
        if isinstance(node, ast.Call):
            inert.add(id(node.func))
            if isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass"):
                inert.update(id(n) for a in node.args[1:] for n in walk_tree(a))
        elif isinstance(node, ast.ClassDef):
            inert.update(id(n) for b in node.bases for n in walk_tree(b))
        for annotation in (getattr(node, "annotation", None), getattr(node, "returns", None)):
            if isinstance(annotation, ast.AST):
                inert.update(id(n) for n in walk_tree(annotation))
    return out


def _self_name(unit: Unit) -> str:
    return unit.node.args.args[0].arg if unit.cls and unit.node is not None and unit.node.args.args else ""


def _loads(fn: ast.AST, name: str) -> list[ast.Name]:
    return [n for n in walk_tree(fn) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    return {id(child): node for node in walk_tree(tree) for child in ast.iter_child_nodes(node)}


def _unit_parents(unit: Unit) -> dict[int, ast.AST]:
    out: dict[int, ast.AST] = {}
    for root in unit.body:
        out.update(_parents(root))
    return out


def _within(outer: ast.AST, node: ast.AST) -> bool:
    return outer.lineno <= node.lineno <= (outer.end_lineno or outer.lineno)  # type: ignore[attr-defined]


def _receiving_function(view: HostView, sym: Symbol) -> tuple[str, Unit, int] | None:
    """(module, unit, positional arguments the callee takes before the caller's) of the host code receiving a
    call's arguments: a function's body, a class's `__init__` (self first), a dataclass's fields (unit without node)."""
    if sym.kind == FUNCTION and sym.module:
        qual = sym.path[len(sym.module) + 1:]
        unit = next((u for u in module_units(view.index, sym.module) if u.qualname == qual), None)
        return (sym.module, unit, 0) if unit is not None and unit.node is not None else None
    if sym.kind != CLASS:
        return None
    for cls in view.resolver.mro(sym):
        if not isinstance(cls.obj, ClassInfo) or not cls.module:
            continue
        qual = cls.path[len(cls.module) + 1:]
        if "__init__" in cls.obj.methods:
            unit = next((u for u in module_units(view.index, cls.module) if u.qualname == f"{qual}.__init__"), None)
            return (cls.module, unit, 1) if unit is not None and unit.node is not None else None
        if any(d.rpartition(".")[2] == "dataclass" or d.startswith("dataclass") for d in cls.obj.decorators):
            return cls.module, Unit(qual, qual, None, ()), 0
    return None


def instance_call_failures(view: HostView, classes: tuple[str, ...], params: tuple[Param, ...],
                           replaced: frozenset[str], carrier: str, implicit: tuple[str, ...] = ()) -> Failures | None:
    """The host calls of instances of `classes` (exactly those classes, as built by host code) that do not
    bind to `params`, by (problem, parameter); None when an instance or a class goes where we do not follow.
    Calls in host units the plugin replaces (`replaced`) never run and are not judged."""
    flow = _Flow(view, params, replaced, carrier, implicit)
    for path in classes:
        cls = view.resolve(path)
        if cls is None or cls.kind != CLASS:
            return None
        for module, unit, call, parents in _constructions(view, cls, replaced) or [None]:  # type: ignore[misc]
            if module is None:
                return None
            if not flow.value(module, unit, call, parents, 0, call):
                return None
    done: set[tuple[str | None, str]] = set()
    while flow.holders - done:
        if len(flow.holders) > _HOLDERS:
            return None
        todo = flow.holders - done
        attr = min(a for _, a in todo)
        holders = {h for h, a in todo if a == attr}
        done |= {(h, attr) for h in holders}
        if not flow.held(holders, attr):  # each attribute's reads walked once for the holders found so far
            return None
    return flow.failures


def _constructions(view: HostView, cls: Symbol,
                   replaced: frozenset[str]) -> list[tuple[str, Unit, ast.Call, dict[int, ast.AST]]] | None:
    """Each host construction of `cls` (`Cls(...)`, or through a local alias `c = A if t else Cls; c(...)`); None
    when the class is used as a value some other way (a table entry, an argument)."""
    index, resolver = view.index, view.resolver
    short = cls.path.rpartition(".")[2]
    whole = word(short)
    out: list[tuple[str, Unit, ast.Call, dict[int, ast.AST]]] = []
    for module in modules_mentioning(index, short, resolver.top):
        if not whole.search(index.source(module)):
            continue
        tree = index.parsed(module)
        aliases = index.module_memo(module, ("class-aliases", short, False),
                                    lambda t=tree: class_aliases(t, short)) if tree is not None else None
        if aliases is None:
            return None
        lines = text_lines(index, module, f"{short}(")
        for unit in module_units(index, module):
            local = {a for a, first, last in aliases if unit.node is not None and first <= unit.node.lineno <= last}
            if f"{module}.{unit.qualname}" in replaced or not local and not any(spans(unit, line) for line in lines):
                continue
            parents = _unit_parents(unit)
            walk = walk_unit(index, module, unit)
            for call in walk.calls:
                if isinstance(call.func, ast.Name) and call.func.id in local:
                    out.append((module, unit, call, parents))
                    continue
                if call_name(call) != short:
                    continue
                callee = host_inference(resolver, module, unit, walk).callee(call.func)
                if callee is None or callee.sym.path == cls.path:
                    out.append((module, unit, call, parents))
    return out


def literal_dispatch(fn: ast.FunctionDef | ast.AsyncFunctionDef, selectors: dict[str, tuple[str, str, object]],
                     guards: list[tuple[ast.expr, bool]], call: ast.Call, caller: _Locals | None) -> bool:
    """Whether a factory `fn` may build a construction the `guards` lead to for `call`: False only when a guard
    compares a selector (`s = p.get("key", default)`, `p` a parameter: `_selectors`) with literals, and the
    caller passes `p` as a dict literal whose entry (or its absence: the default) fails that guard."""
    names = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    values: dict[str, object] = {}
    for local, (param, key, default) in selectors.items():
        given = _argument(call, param, names)
        literal = _dict_literal(caller, given) if given is not None else None
        if literal is None:
            continue
        value = literal.get(key, default)
        if value is not _NOT_LITERAL:
            values[local] = value
    for test, holds in guards:
        result = _evaluate(test, values)
        if result is not None and result is not holds:
            return False
    return True


_NOT_LITERAL = object()


def _selectors(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, tuple[str, str, object]]:
    """Locals assigned once as `s = p.get("key", default)` (or `p.get("key")`) off a parameter `p` that is
    rebound only as `p = p or {}`: local -> (parameter, key, default)."""
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    stores: dict[str, list[ast.AST]] = {}
    for node in walk_tree(fn):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                for n in walk_tree(t):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                        stores.setdefault(n.id, []).append(node)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign | ast.NamedExpr | ast.For) and isinstance(
                getattr(node, "target", None), ast.Name):
            stores.setdefault(node.target.id, []).append(node)  # type: ignore[union-attr]
    out: dict[str, tuple[str, str, object]] = {}
    for local, assigns in stores.items():
        if len(assigns) != 1 or not isinstance(assigns[0], ast.Assign) or len(assigns[0].targets) != 1:
            continue
        value = assigns[0].value
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get"
                and isinstance(value.func.value, ast.Name) and value.func.value.id in params and not value.keywords
                and 1 <= len(value.args) <= 2 and isinstance(value.args[0], ast.Constant)
                and isinstance(value.args[0].value, str)):
            continue
        param = value.func.value.id
        if not all(_keeps(a, param) for a in stores.get(param, ())):
            continue
        default = value.args[1].value if len(value.args) == 2 and isinstance(value.args[1], ast.Constant) else \
            None if len(value.args) == 1 else _NOT_LITERAL
        if default is not _NOT_LITERAL:
            out[local] = (param, value.args[0].value, default)
    return out


def _keeps(node: ast.AST, param: str) -> bool:
    """`p = p or {}`: a parameter rebound to itself, or an empty dict when it is empty (the same entries)."""
    return isinstance(node, ast.Assign) and isinstance(node.value, ast.BoolOp) and isinstance(node.value.op, ast.Or) \
        and len(node.value.values) == 2 and isinstance(node.value.values[0], ast.Name) \
        and node.value.values[0].id == param and isinstance(node.value.values[1], ast.Dict) \
        and not node.value.values[1].keys


def _guards(body: list[ast.stmt], target: ast.AST) -> list[tuple[ast.expr, bool]] | None:
    """The tests of the `if`s enclosing `target` in a block (True in the body, False in the `else`)."""
    for stmt in body:
        if not _within(stmt, target):
            continue
        if isinstance(stmt, ast.If) and not _within(stmt.test, target):
            for block, holds in ((stmt.body, True), (stmt.orelse, False)):
                inner = _guards(block, target)
                if inner is not None:
                    return [(stmt.test, holds), *inner]
            return []
        for block in _blocks(stmt):
            inner = _guards(block, target)
            if inner is not None:
                return inner
        return []
    return None


def _blocks(stmt: ast.stmt) -> Iterator[list[ast.stmt]]:
    for field in ("body", "orelse", "finalbody"):
        block = getattr(stmt, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block
    for handler in getattr(stmt, "handlers", ()):
        yield handler.body


def _argument(call: ast.Call, param: str, names: list[str]) -> ast.expr | None:
    for k in call.keywords:
        if k.arg == param:
            return k.value
    position = names.index(param) if param in names else -1
    if 0 <= position < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[:position + 1]):
        return call.args[position]
    return None


class _Locals(NamedTuple):
    """A caller unit's plain stores of each name, and the names it mutates (`d[k] = ...`, `d.update(...)`)."""

    stores: dict[str, list[ast.AST]]
    mutated: frozenset[str]


def _local_stores(fn: ast.AST) -> _Locals:
    stores: dict[str, list[ast.AST]] = {}
    mutated: set[str] = set()
    for n in walk_tree(fn):
        if isinstance(n, ast.Assign | ast.AnnAssign | ast.AugAssign):
            for t in _targets(n):
                if isinstance(t, ast.Name):
                    stores.setdefault(t.id, []).append(n)
        elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store | ast.Del) and isinstance(n.value, ast.Name):
            mutated.add(n.value.id)
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
            mutated.add(n.value.id)
    return _Locals(stores, frozenset(mutated))


def _dict_literal(caller: _Locals | None, node: ast.expr) -> dict[str, object] | None:
    """A dict literal with constant string keys (directly, or the one value of a local name): key -> constant
    value (`_NOT_LITERAL` for another expression). None when the argument is anything else."""
    if isinstance(node, ast.Name) and caller is not None:
        stores = caller.stores.get(node.id, [])
        if len(stores) != 1 or node.id in caller.mutated or not isinstance(stores[0], ast.Assign):
            return None
        node = stores[0].value
    if not isinstance(node, ast.Dict) or not all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                                 for k in node.keys):
        return None
    return {k.value: v.value if isinstance(v, ast.Constant) else _NOT_LITERAL  # type: ignore[union-attr]
            for k, v in zip(node.keys, node.values, strict=True)}


def _targets(node: ast.AST) -> list[ast.expr]:
    return node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]


def _evaluate(test: ast.expr, values: dict[str, object]) -> bool | None:
    """A guard's truth from the selectors' known values (None: not decided)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _evaluate(test.operand, values)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        results = [_evaluate(v, values) for v in test.values]
        if isinstance(test.op, ast.And):
            return False if False in results else None if None in results else True
        return True if True in results else None if None in results else False
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)
            and test.left.id in values):
        return None
    value, op, right = values[test.left.id], test.ops[0], test.comparators[0]
    if isinstance(op, ast.Eq | ast.NotEq) and isinstance(right, ast.Constant):
        return (value == right.value) is isinstance(op, ast.Eq)
    if isinstance(op, ast.In | ast.NotIn) and isinstance(right, ast.List | ast.Tuple | ast.Set) and all(
            isinstance(e, ast.Constant) for e in right.elts):
        return (value in [e.value for e in right.elts]) is isinstance(op, ast.In)  # type: ignore[union-attr]
    return None


def fails_for(failures: Failures, param: str) -> bool:
    """Whether some judged call trips `param`: it passes it where it is not taken, omits it where it is
    required, passes too many positional arguments, or passes what is not known statically."""
    return any(kind in (UNKNOWN[0], TOO_MANY, TWICE) or name == param for kind, name in failures)


def layer_instances(view: HostView, plugin: PluginModel, patch: Patch, lineage: Lineage | None) -> tuple[str, ...] | None:
    """The host classes whose host-built instances run the member `patch` replaces: for a plugin subclass,
    the host classes it is installed in place of (`register_oot`), when the plugin never builds or hands
    on its class itself; for a patched host member, the class and its host subclasses inheriting it.
    None when instances may come from elsewhere."""
    owner, _ = view.replaced_member(patch.owner, patch.name)
    if owner is None or owner.kind != CLASS:
        return None
    if patch.kind in (PatchKind.MEMBER, PatchKind.ASSIGNMENT):
        return tuple(c.path for c in inheriting(view, owner, patch.name))
    if patch.kind is not PatchKind.OVERRIDE or lineage is None or lineage.handed_on or lineage.hooks \
            or lineage.swapped or not lineage.installed_as:
        return None
    shorts = {s.path.rpartition(".")[2] for s in lineage.family}
    for module in plugin.modules:
        text = plugin.index.source(module)
        if not any(f"{short}(" in text for short in shorts):
            continue
        tree = plugin.index.parsed(module)
        if tree is None or any(isinstance(n, ast.Call) and call_name(n) in shorts for n in walk_tree(tree)):
            return None  # the plugin builds its class itself: its instances may go anywhere
    resolved = [view.resolve(p) for p in lineage.installed_as]
    return tuple(s.path for s in resolved if s is not None) if all(resolved) else None


def routed_member_fits(view: HostView, plugin: PluginModel, patch: Patch, param: str, replaced: frozenset[str],
                       implicit: tuple[str, ...], lineage: Lineage | None, named_fit: bool) -> bool:
    """Whether no host call can trip `param` of the replacement `patch`: the host names the member as a
    call only in ways that fit (`named_fit`, judged by the caller), never as a string, and reads it bare
    only as a dispatcher's route run by a passthrough the layer's calls reach (`forward`, setting
    `called-implicitly`), and every host call of an instance that may run it binds as far as `param` goes."""
    owner, _ = view.replaced_member(patch.owner, patch.name)
    params = replacement_params(patch, owner) if owner is not None else None
    if not named_fit or params is None:
        return False
    index, top = view.index, view.resolver.top
    if any(named_dynamically(index, m, patch.name) for q in "\"'"
           for m in modules_mentioning(index, f"{q}{patch.name}{q}", top)):
        return False
    classes = layer_instances(view, plugin, patch, lineage)
    if not classes:
        return False
    carriers = carried_routes(view, patch.name, classes)
    if not carriers or len(carriers) > 1 or carriers[0] not in implicit:
        return False
    failures = view.memo(("layer-call-failures", classes, params, replaced, carriers[0]),
                         lambda: instance_call_failures(view, classes, params, replaced, carriers[0], implicit))
    return failures is not None and not fails_for(failures, param)
