"""Factories that forward `**kwargs` to a constructor: `Cls.create(a, **kwargs)` -> `cls(a=a, **kwargs)`.

A call to such a factory binds to the factory's signature whatever keywords it passes, because
`**kwargs` takes them all; they fail only inside, when the constructor receives one it does not
take. `forwarded_constructor` reads the factory's body once per host version (memoised on the
`HostView`) and says which class its `**kwargs` reach and which keywords it passes itself.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from .binding import CONSTRUCT
from .host import HostView
from .inference import function_node, host_inference
from .resolve import CLASS, Symbol
from .summary import FunctionInfo, ParamKind
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
