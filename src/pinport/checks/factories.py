"""Keywords a factory forwards to a constructor (#7): `Cls.create(x=1, y=2)` -> `cls(x=x, **kwargs)`,
and `dataclasses.replace(obj, field=...)` on a host dataclass.

A call to a host factory whose `**kwargs` goes on to a constructor binds to the factory whatever
it passes; a keyword the constructor no longer takes fails only inside (`TypeError` from `cls(...)`).
For each plugin call of a host function or class/static method that takes `**kwargs`, the keywords
the factory does not name itself are bound against the constructor its body forwards them to
(`model.forwarding`): one the constructor does not take (and passes nowhere else) is an error.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..findings import Finding, Kind, Severity
from ..model.binding import (
    CONSTRUCT,
    callee_location,
    callee_params,
    callee_subject,
    constructor_params,
)
from ..model.forwarding import forwarded_constructor
from ..model.nodes import chain
from ..model.resolve import CLASS
from ..model.summary import ParamKind, has_var_keyword
from ..model.units import Unit, local_imports
from ..plugin.typed import HostCall
from .base import ScanContext

NAME = "factories"

FACTORY_KEYWORD_REJECTED = Kind("PP0707", "FactoryKeywordRejected", "`{factory}` forwards `{name}` to `{callee}(...)`, "
                                "which takes no parameter `{name}` in {label}", Severity.ERROR, 7, NAME)

KINDS = (FACTORY_KEYWORD_REJECTED,)


class FactoriesCheck:
    name = NAME
    cost = 1  # relative run time (tenths of a second of a warm scan), to spread checks over two cores
    shares = ("host_calls", "plugin_inference")  # costly shared facts: run beside the checks reading them
    drift = (7,)
    kinds = KINDS
    description = "keywords the plugin passes through a host factory's **kwargs are still constructor parameters"

    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        for hc in ctx.facts.host_calls(ctx.host):
            if hc.callee.mode != CONSTRUCT and any(k.arg for k in hc.call.keywords):
                yield from self._call(ctx, hc)
        yield from self._replacements(ctx)

    def _replacements(self, ctx: ScanContext) -> Iterator[Finding]:
        """`dataclasses.replace(obj, field=...)` on a typed host dataclass: the fields are its `__init__`'s."""
        for module in ctx.plugin.modules:
            if not ctx.facts.plugin_mentions(module, ("replace(",)):
                continue
            for unit in ctx.facts.plugin_units(module):
                walk = ctx.facts.plugin_unit_walk(module, unit)
                for call in walk.calls:
                    if len(call.args) != 1 or not call.keywords or not _is_replace(ctx, module, unit, call):
                        continue
                    typed = ctx.facts.plugin_inference(ctx.host, module, unit).infer(call.args[0])
                    if typed is None or not typed.instance or typed.sym.kind != CLASS:
                        continue
                    accepts = constructor_params(ctx.host.resolver, typed.sym)
                    if accepts is None or has_var_keyword(accepts):
                        continue
                    takes = {p.name for p in accepts}
                    other_cls = ctx.other.resolve(typed.sym.path)
                    other_accepts = constructor_params(ctx.other.resolver, other_cls) if other_cls is not None else None
                    for kw in call.keywords:
                        if kw.arg is None or kw.arg in takes:
                            continue
                        yield Finding(FACTORY_KEYWORD_REJECTED, {"factory": "dataclasses.replace", "name": kw.arg,
                                                                 "callee": typed.sym.path, "label": ctx.host.label},
                                      ctx.plugin_site(module, unit.qualname, call), subject=f"{typed.sym.path}.{kw.arg}",
                                      severity=Severity.WARNING if walk.guard_at(call.lineno) else None,
                                      suggestion=f"drop `{kw.arg}=` or set what replaced it in {ctx.host.label}",
                                      **ctx.pair(callee_location(ctx.host, typed.sym, accepts),
                                                  callee_location(ctx.other, other_cls, other_accepts))._asdict())

    def _call(self, ctx: ScanContext, hc: HostCall) -> Iterator[Finding]:
        params = callee_params(ctx.host.resolver, hc.callee)
        if params is None or not has_var_keyword(params) or any(k.arg is None for k in hc.call.keywords):
            return
        named = {p.name for p in params if p.kind in (ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.KEYWORD_ONLY)}
        passed = [k for k in hc.call.keywords if k.arg and k.arg not in named]
        if not passed:
            return
        forwarding = forwarded_constructor(ctx.host, hc.callee.sym, hc.callee.receiver)
        if forwarding is None:
            return
        accepts = constructor_params(ctx.host.resolver, forwarding.cls)
        if accepts is None or has_var_keyword(accepts):
            return
        takes = {p.name for p in accepts if p.kind in (ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.KEYWORD_ONLY)}
        other_cls = ctx.other.resolve(forwarding.cls.path)
        other_accepts = constructor_params(ctx.other.resolver, other_cls) if other_cls is not None else None
        factory = callee_subject(hc.callee)
        for kw in passed:
            if kw.arg in takes or kw.arg in forwarding.explicit:
                continue
            yield Finding(FACTORY_KEYWORD_REJECTED, {"factory": factory, "name": kw.arg, "callee": forwarding.cls.path,
                                                     "label": ctx.host.label},
                          ctx.plugin_site(hc.module, hc.unit.qualname, hc.call),
                          subject=f"{forwarding.cls.path}.{kw.arg}",
                          severity=Severity.WARNING if hc.guard else None,
                          details=(f"{ctx.host.label}: `{factory}` passes its **kwargs on at "
                                   f"{ctx.host.index.paths.get(hc.callee.sym.module, hc.callee.sym.module)}:"
                                   f"{forwarding.line}",),
                          suggestion=f"drop `{kw.arg}=` or pass what replaced it in {ctx.host.label}",
                          **ctx.pair(callee_location(ctx.host, forwarding.cls, accepts),
                                      callee_location(ctx.other, other_cls, other_accepts))._asdict())



def _is_replace(ctx: ScanContext, module: str, unit: Unit, call: ast.Call) -> bool:
    """Whether a call's function is `dataclasses.replace` (imported at module level or in the unit)."""
    text = chain(call.func)
    head, _, rest = text.partition(".")
    if not head:
        return False
    walk = ctx.facts.plugin_unit_walk(module, unit)
    local = local_imports(walk, module, ctx.plugin.index.is_package(module))
    base = local.get(head) or ctx.plugin.names.binding_path(module, head) or head
    return (f"{base}.{rest}" if rest else base) == "dataclasses.replace"


__all__ = ["KINDS", "FactoriesCheck"]
