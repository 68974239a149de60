"""Which host functions and methods can still run once the plugin is loaded: a caller graph over the host.

A host call that would fail against a plugin override only matters where the host unit holding it
runs. That unit runs when some host code that runs calls it: followed backwards from the unit,
through `.name(` calls (on receivers that may be its class), function names, and the values a
function is handed on as (returned by a method and kept in `self.attr`, registered as a torch
custom op and called as `torch.ops.<ns>.<op>`). The walk stops at host code the plugin replaces,
and at methods no instance can run: every instance of their class is a plugin class installed in
its place (`register_oot`) that overrides the method without calling up. Anything it cannot follow
(a name spelt as a string, a value handed on elsewhere, a unit nothing names, a name too common
to follow, a long chain) counts as running.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..model.callsites import modules_mentioning, modules_subclassing, text_lines
from ..model.host import HostView
from ..model.inference import host_inference
from ..model.nodes import walk_tree
from ..model.resolve import CLASS, Symbol
from ..model.units import Unit, module_units, spans, walk_unit
from ..model.words import word
from .callers import class_as_value, named_dynamically
from .reach import ClassShape

_DEPTH = 8  # callers followed before a chain counts as running
_WIDE = 60  # modules mentioning a name above which it is too common to follow
_WIDE_CLASS = 200  # modules spelling a class's name above which its constructions are not followed
# decorators that only wrap the function where it is defined (torch's grad modes among them): none registers it
_INERT_DECORATORS = ("staticmethod", "classmethod", "abstractmethod", "override", "overload", "inference_mode",
                     "no_grad", "enable_grad")


@dataclass(frozen=True)
class OpRegistrar:
    """A host function registering a function as a torch custom op: `name(op_name="x", op_func=f)`
    makes `f` run where `torch.ops.<namespace>.x` is called (setting `op-registrars`,
    `"direct_register_custom_op(op_name, op_func)"`: the parameters naming the op and the function,
    by keyword or position)."""

    name: str
    op_param: str
    func_param: str

    @staticmethod
    def parse(text: str) -> OpRegistrar | None:
        found = re.fullmatch(r"\s*([\w.]+)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)\s*", text)
        return OpRegistrar(found.group(1).rpartition(".")[2], found.group(2), found.group(3)) if found else None


Unit_ = tuple[str, str]  # (module, unit qualname)


class HostPaths:
    """Whether host units may run once the plugin is loaded (see the module docstring).

    `replaced`: host units the plugin replaces; `stand_ins(host_class)`: the shapes of plugin classes
    installed in place of a host class; `derived(host_class)`: the shapes of every plugin class
    deriving from it; `plugin_names(name)`: whether plugin code spells a name (it may call it).
    """

    def __init__(self, view: HostView, replaced: frozenset[str], stand_ins: Callable[[str], tuple[ClassShape, ...]],
                 derived: Callable[[str], tuple[ClassShape, ...]], plugin_names: Callable[[str], bool],
                 registrars: tuple[OpRegistrar, ...] = (), implicit: tuple[str, ...] = (),
                 slots: frozenset[str] = frozenset()) -> None:
        self.view, self.replaced = view, replaced
        self.stand_ins, self.derived, self.plugin_names = stand_ins, derived, plugin_names
        self.registrars, self.implicit, self.slots = registrars, implicit, slots
        self._built: dict[str, bool] = {}
        self._known: dict[Unit_, bool] = {}
        self._stack: set[Unit_] = set()

    def runs(self, module: str, qualname: str) -> bool:
        """Whether the host unit `qualname` of `module` may run once the plugin is loaded."""
        return self._runs((module, qualname), 0)

    def _runs(self, unit: Unit_, depth: int) -> bool:
        module, qualname = unit
        if f"{module}.{qualname}" in self.replaced:
            return False
        if unit in self._known:
            return self._known[unit]
        if unit in self._stack:
            return False  # a cycle adds no way in
        if depth > _DEPTH:
            return True
        self._stack.add(unit)
        try:
            verdict = self._judge(module, qualname, depth)
        finally:
            self._stack.discard(unit)
        if verdict or not self._stack:
            self._known[unit] = verdict  # a "no" found inside a cycle may rest on the cycle's guess
        return verdict

    def _judge(self, module: str, qualname: str, depth: int) -> bool:
        node = self._def(module, qualname)
        if node is None:
            return True  # loose module or class-body code, or a unit we cannot find: it runs
        cls_name, _, name = qualname.rpartition(".")
        cls = self.view.resolve(f"{module}.{cls_name}") if cls_name else None
        if cls_name and (cls is None or cls.kind != CLASS):
            return True  # a function nested in another: not followed
        if cls is not None and (not self._instances_run(cls, name) or not self._is_built(cls, depth)):
            return False
        if name.startswith("__") or name in self.implicit or self._plugin_may_call(module, cls, name) or any(
                _decorator(d) not in _INERT_DECORATORS for d in node.decorator_list):
            return True
        callers = self._callers(module, cls, name)
        return callers is None or not callers or any(self._runs(c, depth + 1) for c in callers)

    def _plugin_may_call(self, module: str, cls: Symbol | None, name: str) -> bool:
        """Whether plugin code may call the host function or method: it spells the name, and for a module
        function also the host module's path or its package's below the top (an absolute import, the only way in);
        a plugin function of the same name is its own."""
        package = module.rpartition(".")[0]
        return self.plugin_names(name) and (cls is not None or any(
            self.plugin_names(m) for m in (module, package if "." in package else "") if m))

    def _def(self, module: str, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        return next((u.node for u in module_units(self.view.index, module) if u.qualname == qualname), None)

    def _instances_run(self, cls: Symbol, name: str) -> bool:
        """Whether host code of `cls.name` may run on some instance: not when every instance is a plugin
        class installed in place of `cls` that overrides it (no host subclass inherits it, and every
        plugin class deriving from it overrides it)."""
        stand_ins = self.stand_ins(cls.path)
        if not stand_ins or any(name not in s.replaces for s in (*stand_ins, *self.derived(cls.path))):
            return True
        return any(name not in sub.obj.methods for sub in self._host_subclasses(cls) if hasattr(sub.obj, "methods"))

    def _is_built(self, cls: Symbol, depth: int) -> bool:
        """Whether instances of the host class `cls` (or of a host subclass) may exist once the plugin is
        loaded. Not when the host names it only in class-path strings stored in a slot the plugin fills
        with its own class (`config.worker_cls = "host.Worker"`, where the plugin's platform sets its
        worker), or builds it by name only in host units that do not run (`ElasticExecutor(self)` in a
        method of that worker); and no plugin class derives from it, and it is handed on nowhere else."""
        if cls.path not in self._built:
            self._built[cls.path] = True  # while deciding (a class built where it is itself used): built
            self._built[cls.path] = self._decide_built(cls, depth)
        return self._built[cls.path]

    def _decide_built(self, cls: Symbol, depth: int) -> bool:
        if depth > _DEPTH or self.derived(cls.path) or self.stand_ins(cls.path):
            return True
        index, top = self.view.index, self.view.resolver.top
        by_slot = False
        for q in "\"'":
            for module in modules_mentioning(index, f"{q}{cls.path}{q}", top):
                stored = _slot_strings(index.parsed(module), cls.path)
                if stored is None or not stored <= self.slots:
                    return True  # the path string goes somewhere not followed
                by_slot = by_slot or bool(stored)
        short = cls.path.rpartition(".")[2]
        whole = word(short)
        found = [m for m in modules_mentioning(index, short, top) if whole.search(index.source(m))]
        if len(found) > _WIDE_CLASS:
            return True
        built_by_name = False
        for module in found:
            tree = index.parsed(module)
            if tree is None or index.module_memo(module, ("class-as-value", short),
                                                 lambda t=tree: class_as_value(t, short)):
                return True
            lines = text_lines(index, module, f"{short}(")
            for unit in module_units(index, module):
                if not any(spans(unit, line) for line in lines):
                    continue
                walk = walk_unit(index, module, unit)
                calls = [c for c in walk.calls if _called_name(c) == short]
                inference = host_inference(self.view.resolver, module, unit, walk) if calls else None
                for call in calls:
                    callee = inference.callee(call.func) if inference is not None else None
                    if callee is not None and callee.sym.path != cls.path:
                        continue  # another class of that name
                    if callee is None or self._runs((module, unit.qualname), depth + 1):
                        return True
                    built_by_name = True
        if not by_slot and not built_by_name:
            return True  # nothing in the host builds it: something we cannot see may
        return any(self._is_built(sub, depth + 1) for sub in self._host_subclasses(cls))

    def _host_subclasses(self, cls: Symbol) -> Iterator[Symbol]:
        short = cls.path.rpartition(".")[2]
        resolver = self.view.resolver
        for module in modules_subclassing(self.view.index, short, resolver.top):
            for name, info in self.view.index.modules[module].classes.items():
                if any(b.rpartition(".")[2] == short for b in info.bases):
                    sub = self.view.resolve(f"{module}.{name}")
                    if sub is not None and sub.path != cls.path and cls.path in {c.path for c in resolver.mro(sub)}:
                        yield sub

    def _callers(self, module: str, cls: Symbol | None, name: str) -> list[Unit_] | None:
        """The host units that may call the function or method `name` (of `cls`); None when its value
        goes somewhere not followed."""
        index, top = self.view.index, self.view.resolver.top
        if any(named_dynamically(index, m, name) for q in "\"'" for m in modules_mentioning(index, f"{q}{name}{q}", top)):
            return None  # named as a string: `getattr(x, "name")`, a table of names
        found = modules_mentioning(index, f".{name}" if cls is not None else name, top)
        if len(found) > _WIDE:
            return None
        out: list[Unit_] = []
        for where in found:
            if cls is None and where != module and not re.search(rf"\bimport\b[^\n]*\b{re.escape(name)}\b|"
                                                                 rf"\bimport\s*\([^)]*\b{re.escape(name)}\b|"
                                                                 rf"\.{re.escape(name)}\b", index.source(where)):
                continue  # neither imports the function (also in a parenthesised list) nor reads it off its module
            lines = text_lines(index, where, name)
            for unit in module_units(index, where):
                if not any(spans(unit, line) for line in lines) or f"{where}.{unit.qualname}" in self.replaced:
                    continue
                for ref, parents in _references(unit, name, method=cls is not None):
                    if cls is not None and not self._may_be(where, unit, ref.value, cls):  # type: ignore[attr-defined]
                        continue
                    up = parents.get(id(ref))
                    if isinstance(up, ast.Call) and up.func is ref:
                        out.append((where, unit.qualname))
                        continue
                    flows = self._flows(where, unit, ref, parents, 0)
                    if flows is None:
                        return None
                    out.extend(flows)
        return out

    def _may_be(self, module: str, unit: Unit, receiver: ast.expr, cls: Symbol) -> bool:
        """Whether the receiver of `x.name` in a host unit may be an instance of `cls` (or the class)."""
        resolver = self.view.resolver
        if _is_self(unit, receiver):
            own = self.view.resolve(f"{module}.{unit.cls}") if unit.cls else None
            if own is None or own.kind != CLASS:
                return True
            return cls.path in {c.path for c in resolver.mro(own)} or own.path in {c.path for c in resolver.mro(cls)}
        typed = host_inference(resolver, module, unit, walk_unit(self.view.index, module, unit)).infer(receiver)
        if typed is None or typed.sym is None or typed.sym.kind != CLASS:
            return True
        return cls.path in {c.path for c in resolver.mro(typed.sym)} or \
            typed.sym.path in {c.path for c in resolver.mro(cls)}

    def _flows(self, module: str, unit: Unit, ref: ast.expr, parents: dict[int, ast.AST],
               depth: int) -> list[Unit_] | None:
        """The host units that call a value read at `ref` (a function, a bound method, a torch op): it is
        returned by its method and kept in `self.attr`, registered as a custom op, or stored straight
        into `self.attr`; None when it goes anywhere else."""
        if depth > 3:
            return None
        node: ast.AST = ref
        up = parents.get(id(node))
        while isinstance(up, ast.IfExp) and node is not up.test or isinstance(up, ast.BoolOp):
            node, up = up, parents.get(id(up))
        if isinstance(up, ast.Return) and unit.node is not None:
            return self._result_flows(module, unit, depth)
        if isinstance(up, ast.Assign) and len(up.targets) == 1 and _self_attr(unit, up.targets[0]):
            return self._attribute_calls(up.targets[0].attr)  # type: ignore[attr-defined]
        call = parents.get(id(up)) if isinstance(up, ast.keyword) else up
        if isinstance(call, ast.Call):
            op = self._registered_op(call, node)
            if op is not None:
                return self._op_calls(op, depth)
        return None

    def _result_flows(self, module: str, unit: Unit, depth: int) -> list[Unit_] | None:
        """Where a method's (or function's) result goes: each call of it must store it in `self.attr`."""
        name = unit.qualname.rpartition(".")[2]
        index, top = self.view.index, self.view.resolver.top
        found = modules_mentioning(index, f"{name}(", top)
        if not found or len(found) > _WIDE or self.plugin_names(name):
            return None
        out: list[Unit_] = []
        for where in found:
            lines = text_lines(index, where, name)
            for other in (u for u in module_units(index, where) if any(spans(u, line) for line in lines)):
                for ref, parents in _references(other, name, method=bool(unit.cls)):
                    call = parents.get(id(ref))
                    if not (isinstance(call, ast.Call) and call.func is ref):
                        return None
                    stmt = parents.get(id(call))
                    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _self_attr(other, stmt.targets[0])):
                        return None
                    calls = self._attribute_calls(stmt.targets[0].attr)  # type: ignore[attr-defined]
                    if calls is None:
                        return None
                    out.extend(calls)
        return out

    def _attribute_calls(self, attr: str) -> list[Unit_] | None:
        """The host units calling the value kept in `x.attr`; None when it is read any other way."""
        index, top = self.view.index, self.view.resolver.top
        found = modules_mentioning(index, f".{attr}", top)
        if len(found) > _WIDE or self.plugin_names(attr):
            return None
        out: list[Unit_] = []
        for where in found:
            lines = text_lines(index, where, f".{attr}")
            for unit in (u for u in module_units(index, where) if any(spans(u, line) for line in lines)):
                for ref, parents in _references(unit, attr, method=True):
                    call = parents.get(id(ref))
                    if not (isinstance(call, ast.Call) and call.func is ref):
                        return None
                    out.append((where, unit.qualname))
        return out

    def _registered_op(self, call: ast.Call, value: ast.AST) -> str | None:
        """The op name when `call` registers `value` as a torch custom op (setting `op-registrars`)."""
        func = call.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        for registrar in self.registrars:
            if registrar.name != called:
                continue
            given = dict(zip((registrar.op_param, registrar.func_param), call.args, strict=False))
            given |= {k.arg: k.value for k in call.keywords if k.arg}
            op = given.get(registrar.op_param)
            if given.get(registrar.func_param) is value and isinstance(op, ast.Constant) and isinstance(op.value, str):
                return op.value
        return None

    def _op_calls(self, op: str, depth: int) -> list[Unit_] | None:
        """The host units calling the torch custom op `op` (`torch.ops.<ns>.op(...)`, or the value read
        so and handed on as above)."""
        index, top = self.view.index, self.view.resolver.top
        out: list[Unit_] = []
        for where in modules_mentioning(index, f".{op}", top):
            lines = text_lines(index, where, f".{op}")
            for unit in (u for u in module_units(index, where) if any(spans(u, line) for line in lines)):
                for ref, parents in _references(unit, op, method=True):
                    if not _is_torch_op(ref):
                        continue
                    up = parents.get(id(ref))
                    if isinstance(up, ast.Call) and up.func is ref:
                        out.append((where, unit.qualname))
                        continue
                    flows = self._flows(where, unit, ref, parents, depth + 1)
                    if flows is None:
                        return None
                    out.extend(flows)
        return out


def _slot_strings(tree: ast.Module | None, path: str) -> set[str] | None:
    """The slots a module stores the class-path string `path` in (`x.worker_cls = "path"`, `worker_cls="path"`);
    None when it spells the path any other way (a docstring aside)."""
    if tree is None:
        return None
    out: set[str] = set()
    docs = {id(b[0].value) for n in ast.walk(tree) if isinstance(b := getattr(n, "body", None), list) and b
            and isinstance(b[0], ast.Expr) and isinstance(b[0].value, ast.Constant)}
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and node.value == path) or id(node) in docs:
            continue
        up = parents.get(id(node))
        if isinstance(up, ast.Assign) and len(up.targets) == 1 and isinstance(up.targets[0], ast.Attribute):
            out.add(up.targets[0].attr)
        elif isinstance(up, ast.keyword) and up.arg:
            out.add(up.arg)
        else:
            return None
    return out


def _called_name(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _references(unit: Unit, name: str, method: bool) -> Iterator[tuple[ast.expr, dict[int, ast.AST]]]:
    """Each read of `x.name` (method) or of the name `name` (function: also `module.name`) in a unit,
    with the unit's parent map."""
    parents: dict[int, ast.AST] = {}
    hits: list[ast.expr] = []
    for root in unit.body:
        for node in walk_tree(root):
            for child in ast.iter_child_nodes(node):
                parents[id(child)] = node
            if isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.ctx, ast.Load) or \
                    not method and isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                hits.append(node)
    for hit in hits:
        yield hit, parents


def _is_self(unit: Unit, node: ast.expr) -> bool:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super":
        return True
    me = unit.node.args.args[0].arg if unit.cls and unit.node is not None and unit.node.args.args else ""
    return isinstance(node, ast.Name) and bool(me) and node.id == me


def _self_attr(unit: Unit, target: ast.expr) -> bool:
    return isinstance(target, ast.Attribute) and _is_self(unit, target.value)


def _is_torch_op(node: ast.expr) -> bool:
    """`torch.ops.<namespace>.<op>`."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return isinstance(node, ast.Name) and node.id == "torch" and parts[-1:] == ["ops"] and len(parts) == 3


def _decorator(node: ast.expr) -> str:
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
