"""Factories that forward `**kwargs` to a constructor: `Cls.create(a, **kwargs)` -> `cls(a=a, **kwargs)`.

A call to such a factory binds to the factory's signature whatever keywords it passes, because
`**kwargs` takes them all; they fail only inside, when the constructor receives one it does not
take. `forwarded_constructor` reads the factory's body once per host version (memoised on the
`HostView`) and says which class its `**kwargs` reach and which keywords it passes itself.

Dispatchers that hand a member on whole: `dispatch_forward` returns `self.forward_oot` (a bare
read, no call), the class keeps it (`self._forward_method = self.dispatch_forward()`) and a
passthrough runs it (`forward(self, *args, **kwargs)`). `dispatch_route` says which passthrough
carries the member's arguments and which guards (`current_platform.is_xpu()`) its route passes.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from .binding import CONSTRUCT
from .host import HostView
from .index import CodeIndex
from .inference import function_node, host_inference
from .resolve import CLASS, Symbol
from .summary import ClassInfo, FunctionInfo, ParamKind, nested_class
from .units import Unit, walk_unit


class Forwarding(NamedTuple):
    """Where a factory's `**kwargs` go: the class constructed, what the factory passes itself."""

    cls: Symbol
    explicit: frozenset[str]  # keywords the forwarding call passes by name
    line: int  # the forwarding call, in the factory's module


def forwarded_constructor(view: HostView, factory: Symbol, receiver: Symbol | None = None) -> Forwarding | None:
    """The constructor a host factory (function, classmethod, staticmethod) forwards its `**kwargs`
    to; `receiver` is the class a classmethod is called on (its `cls`). None when it forwards
    nowhere that resolves to one host class."""
    fn = factory.obj
    if not isinstance(fn, FunctionInfo) or not factory.module:
        return None
    kwarg = next((p.name for p in fn.signature.params if p.kind is ParamKind.VAR_KEYWORD), None)
    if kwarg is None:
        return None
    found = view.memo(("forwards", factory.path), lambda: _forwarding_call(view, factory, kwarg))
    if found is None:
        return None
    target, explicit, line = found
    if target == "cls":
        owner = receiver or (view.resolve(factory.owner) if factory.owner else None)
        cls = owner if owner is not None and owner.kind == CLASS and fn.is_classmethod else None
    else:
        cls = view.resolve(target)
    return Forwarding(cls, explicit, line) if cls is not None and cls.kind == CLASS else None


def _forwarding_call(view: HostView, factory: Symbol, kwarg: str) -> tuple[str, frozenset[str], int] | None:
    """("cls" or the constructed class's path, explicit keywords, line) of the one call in the
    factory's body that passes `**kwarg` on and constructs a class."""
    assert isinstance(factory.obj, FunctionInfo)
    node = function_node(view.index, factory.module, factory.obj.line)
    if node is None:
        return None
    owner = factory.owner.rpartition(".")[2] if factory.owner else ""
    qual = factory.owner[len(factory.module) + 1:] if factory.owner.startswith(factory.module + ".") else ""
    unit = Unit(f"{qual}.{node.name}" if qual else node.name, qual, node, (node,))
    walk = walk_unit(view.index, factory.module, unit)
    forwarding = [c for c in walk.calls if any(k.arg is None and isinstance(k.value, ast.Name) and k.value.id == kwarg
                                               for k in c.keywords)]
    if len(forwarding) != 1:
        return None
    call = forwarding[0]
    explicit = frozenset(k.arg for k in call.keywords if k.arg)
    if isinstance(call.func, ast.Name) and call.func.id == "cls":
        return "cls", explicit, call.lineno
    if isinstance(call.func, ast.Name) and owner and call.func.id == owner:
        return factory.owner, explicit, call.lineno
    callee = host_inference(view.resolver, factory.module, unit, walk).callee(call.func)
    if callee is None or callee.mode != CONSTRUCT:
        return None
    return callee.sym.path, explicit, call.lineno


class Guard(NamedTuple):
    """A test a dispatch route passes: `test` must evaluate to `holds` for the route to be taken."""

    test: ast.expr
    holds: bool


class DispatchRoute(NamedTuple):
    """`return self.member` in a dispatcher whose result the class keeps and calls through a passthrough.

    `def dispatch_forward(self): if platform.is_xpu(): return self.forward_xpu ...`, kept as
    `self._forward_method = self.dispatch_forward()` and run by `def forward(self, *args, **kwargs):
    return self._forward_method(*args, **kwargs)`: the member then runs with exactly the arguments
    the carrier (`forward`) gets, and only when every guard holds."""

    carrier: str  # the passthrough method whose arguments the member receives
    guards: tuple[Guard, ...]


def dispatch_route(index: CodeIndex, module: str, unit: Unit, node: ast.expr) -> DispatchRoute | None:
    """The route a bare `self.member` read in host `unit` is, when it is one (see `DispatchRoute`)."""
    fn = unit.node
    if fn is None or not unit.cls or not fn.args.args or not isinstance(node, ast.Attribute):
        return None
    me = fn.args.args[0].arg
    if not (isinstance(node.value, ast.Name) and node.value.id == me):
        return None
    guards = _return_guards(fn.body, node, ())
    if guards is None:
        return None
    info = nested_class(index.modules.get(module), unit.cls)
    if info is None:
        return None
    dispatcher = unit.qualname.rpartition(".")[2]
    # the attribute holding the dispatcher's answer, and nothing else
    kept = [a for a, stores in info.instance_attrs.items()
            if stores and all(s.expr.startswith(f"self.{dispatcher}(") for s in stores)]
    carrier = _passthrough_of(index, module, info, kept[0]) if len(kept) == 1 else ""
    return DispatchRoute(carrier, guards) if carrier else None


def _return_guards(body: list[ast.stmt], node: ast.expr, taken: tuple[Guard, ...]) -> tuple[Guard, ...] | None:
    """The guards on the path to `return node` in a block: the tests of enclosing `if`s (true in the
    body, false in the `else`), and of earlier `if test: return ...` statements passed (false)."""
    for stmt in body:
        if isinstance(stmt, ast.Return) and stmt.value is node:
            return taken
        if isinstance(stmt, ast.If):
            found = _return_guards(stmt.body, node, (*taken, Guard(stmt.test, True)))
            if found is None:
                found = _return_guards(stmt.orelse, node, (*taken, Guard(stmt.test, False)))
            if found is not None:
                return found
            if stmt.body and isinstance(stmt.body[-1], ast.Return) and not stmt.orelse:
                taken = (*taken, Guard(stmt.test, False))  # passed only when the test failed
    return None


def _passthrough_of(index: CodeIndex, module: str, info: ClassInfo, attr: str) -> str:
    """The method of a class that only hands everything it gets to `self.attr`:
    `def forward(self, *args, **kwargs): return self.attr(*args, **kwargs)`; '' when none."""
    for name, fn in info.methods.items():
        kinds = [p.kind for p in fn.signature.params[1:]]
        if kinds != [ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD]:
            continue
        node = function_node(index, module, fn.line)
        body = node.body if node is not None else []
        if len(body) == 1 and isinstance(body[0], ast.Return) and _hands_on(body[0].value, attr, node):
            return name
    return ""


def _hands_on(value: ast.expr | None, attr: str, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`self.attr(*args, **kwargs)`, with the function's own `self`, `*args` and `**kwargs`."""
    args, kwarg = fn.args.vararg, fn.args.kwarg
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == attr \
        and isinstance(value.func.value, ast.Name) and value.func.value.id == fn.args.args[0].arg \
        and args is not None and kwarg is not None and len(value.args) == 1 and len(value.keywords) == 1 \
        and isinstance(value.args[0], ast.Starred) and isinstance(value.args[0].value, ast.Name) \
        and value.args[0].value.id == args.arg and value.keywords[0].arg is None \
        and isinstance(value.keywords[0].value, ast.Name) and value.keywords[0].value.id == kwarg.arg
