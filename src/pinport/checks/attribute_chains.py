"""Attribute chains into host objects (#9): `self.a.b.c.field`, `cfg.model_config.hf_config`, `obj.method()`.

The attributes check judges `self.X` and one hop on a name typed by an annotation or a host call.
This check follows longer chains: each step's host type comes from the host's own annotations,
dataclass and pydantic fields, properties' return types and constructor assignments
(`model.inference`), with `self` typed as the patch target or host base and the attributes the
plugin assigns typed as the plugin gives them (`plugin.typed`). A member the judged host no longer
has, on a class the other version still gives it to, is an error where the line always runs and a
warning behind a condition (an `if` branch, the right side of `and`/`or`, a nested function);
a read guarded by `hasattr(x, "name")` or `except AttributeError` is not reported.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..findings import Finding, Kind, Severity
from ..model.inference import Inference, Typed
from ..model.resolve import CLASS, EXTERNAL, Symbol
from ..model.units import Unit
from ..plugin.typed import conditions
from .base import ScanContext

NAME = "chains"

CHAIN_MEMBER_MISSING = Kind("PP0905", "HostChainMemberMissing", "`{name}` is read on `{chain}`, a `{cls}`, which no "
                            "longer has it in {label}", Severity.ERROR, 9, NAME)

KINDS = (CHAIN_MEMBER_MISSING,)


class ChainsCheck:
    name = NAME
    cost = 1.2  # relative run time (tenths of a second of a warm scan), to spread checks over two cores
    shares = ("plugin_inference",)  # costly shared facts: run beside the checks reading them
    drift = (9,)
    kinds = KINDS
    description = "members read along attribute chains into typed host objects still exist"

    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        for module in ctx.plugin.modules:
            for unit in ctx.facts.plugin_units(module):
                if unit.node is None:
                    continue  # module and class bodies: aliases and imports are the other checks' business
                yield from self._unit(ctx, module, unit)

    def _unit(self, ctx: ScanContext, module: str, unit: Unit) -> Iterator[Finding]:
        reads = ctx.facts.keep(("chain-reads", module, unit.qualname, unit.node.lineno),
                               lambda: _chain_reads(ctx, module, unit))
        if not reads:
            return
        judged = ctx.facts.plugin_inference(ctx.host, module, unit)
        other: Inference | None = None
        seen: set[tuple[str, str]] = set()
        for node in reads:
            here = judged.infer(node.value)
            if here is None or here.sym.kind != CLASS or node.attr in here.hidden or _has(
                    ctx, ctx.host, judged, here, node.attr):
                continue
            other = other or ctx.facts.plugin_inference(ctx.other, module, unit)
            finding = self._judge(ctx, module, unit, node, here, other, seen)
            if finding is not None:
                yield finding

    def _judge(self, ctx: ScanContext, module: str, unit: Unit, node: ast.Attribute, here: Typed,
               other: Inference, seen: set[tuple[str, str]]) -> Finding | None:
        there = other.infer(node.value)
        if there is None or there.sym.kind != CLASS or there.sym.path != here.sym.path or node.attr in there.hidden:
            return None  # the object's class itself changed: the attributes check's type-change business
        found = ctx.other.member(there.sym, node.attr, there.instance)
        if found is None or found.kind == EXTERNAL or other.masked(there.sym, node.attr):
            return None
        key = (here.sym.path, node.attr)
        flags = ctx.facts.keep(("conditions", module, unit.qualname, unit.node.lineno), lambda: conditions(unit))
        conditional, guarded = flags.get(node, (False, frozenset()))
        if key in seen or node.attr in guarded or "*" in guarded:
            return None  # reported once per unit; or the plugin already handles a missing member
        seen.add(key)
        guard = ctx.facts.plugin_unit_walk(module, unit).guard_at(node.lineno)
        severity = Severity.WARNING if conditional or guard else None
        why = guard or ("a condition" if conditional else "")
        subject = f"{here.sym.path}.{node.attr}"
        chain = ast.unparse(node.value)
        details = (f"the read runs only behind {why}",) if why else ()
        return Finding(CHAIN_MEMBER_MISSING, {"name": node.attr, "chain": chain if len(chain) <= 60 else
                                              chain[:57] + "...", "cls": here.sym.path.rpartition(".")[2],
                                              "label": ctx.host.label},
                       ctx.plugin_site(module, unit.qualname, node), subject=subject, severity=severity,
                       details=details, suggestion=f"find what {ctx.host.label} `{here.sym.path.rpartition('.')[2]}` "
                                                   f"offers instead of `{node.attr}`",
                       **ctx.pair(ctx.host.location(here.sym), ctx.other.location(found))._asdict())


def _chain_reads(ctx: ScanContext, module: str, unit: Unit) -> tuple[ast.Attribute, ...]:
    """The attribute reads of a unit this check judges (the same on both runs: plugin facts only)."""
    uses = ctx.facts.uses.by_name.get((module, unit.qualname))
    first = uses.self_name if uses is not None else ""
    return tuple(n for n in ctx.facts.plugin_unit_nodes(module, unit) if isinstance(n, ast.Attribute)
                 and isinstance(n.ctx, ast.Load) and _is_chain(n.value, first, uses))


def _has(ctx: ScanContext, view, inf: Inference, typed: Typed, name: str) -> bool:  # noqa: ANN001
    """Whether reading `name` on the typed object finds something (or the plugin provides it)."""
    cls: Symbol = typed.sym
    if view.member(cls, name, typed.instance) is not None or inf.masked(cls, name):
        return True
    return name in ctx.facts.provided_by_plugin(view, cls)


def _is_chain(value: ast.AST, first: str, uses) -> bool:  # noqa: ANN001
    """Whether `value` (what an attribute is read on) is this check's to judge: two or more hops
    (`self.a.b`, `x.a.b`, `self.a.m()`), or a local the attributes check does not type itself.
    `self.X` is the attributes check's, a name it types (annotation, host call) too."""
    if isinstance(value, ast.Name):
        if value.id == first or uses is None:
            return False
        return value.id not in uses.typed and value.id not in uses.called
    if isinstance(value, ast.Call):  # `make().x` and `mod.make().x` are the attributes check's
        root = value.func
        while isinstance(root, ast.Attribute):
            root = root.value
        return isinstance(value.func, ast.Attribute) and isinstance(root, ast.Name) and (
            root.id == first or (uses is not None and root.id in uses.stores))
    return isinstance(value, ast.Attribute)


__all__ = ["KINDS", "ChainsCheck"]
