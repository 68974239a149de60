"""Strings the plugin passes to, assigns to or compares with a host's closed set (#7).

A host often accepts a fixed set of names: a `Literal[...]` type (a config field, a parameter,
through aliases), an Enum, or a tuple/dict of names a function checks its argument against. When
NEW drops a value the plugin uses, nothing fails to import: a validated config or a checking
function raises, an assignment asks for a code path that is gone, a comparison can never be true
again. A value the OLD set has and the NEW set lacks is a finding (values in neither are the
plugin's own). Severity: error where NEW raises (a function that checks the name, a validated
config constructor, an Enum lookup) on a line that always runs; warning for assignments,
comparisons and unvalidated annotations, or behind a condition. One finding per plugin file, host
member and value, led by the use that breaks hardest; the others are listed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import NamedTuple

from ..findings import Finding, Kind, Severity
from ..model.binding import CONSTRUCT, callee_params, callee_subject
from ..model.closed_sets import enum_members, member_values, parameter_values
from ..model.host import HostView
from ..model.inference import Inference
from ..model.resolve import CLASS, EXTERNAL
from ..model.summary import ParamKind
from ..model.units import Unit
from ..plugin.typed import conditions
from .base import ScanContext

NAME = "values"

VALUE_DROPPED = Kind("PP0708", "ValueNoLongerAccepted", "`{value}` is {how} `{target}`, whose accepted values in "
                     "{label} no longer include it", Severity.ERROR, 7, NAME)

KINDS = (VALUE_DROPPED,)


class _Use(NamedTuple):
    """One use of a string against a host set: where, how, the host subject, whether NEW raises on it."""

    module: str
    unit: str
    node: ast.AST
    how: str  # "passed to", "assigned to", "compared with", "looked up in"
    subject: str  # host path of the parameter, field or enum
    value: str
    raises: bool
    conditional: bool


class ClosedValuesCheck:
    name = NAME
    cost = 7  # relative run time (tenths of a second of a warm scan), to spread checks over two cores
    shares = ("host_calls", "plugin_inference")  # costly shared facts: run beside the checks reading them
    drift = (7,)
    kinds = KINDS
    description = "strings the plugin passes, assigns or compares are still in the host's closed sets"

    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        found: dict[tuple[str, str, str], list[_Use]] = {}
        for use in (*self._calls(ctx), *self._attributes(ctx)):
            found.setdefault((use.module, use.subject, use.value), []).append(use)
        for uses in found.values():  # the use that breaks hardest leads; the others are listed
            yield self._finding(ctx, sorted(uses, key=lambda u: (
                not (u.raises and not u.conditional), u.how == "compared with", u.node.lineno, u.node.col_offset)))

    # -- strings passed to host callables, and Enum lookups by call -------------------------------
    def _calls(self, ctx: ScanContext) -> Iterator[_Use]:
        for hc in ctx.facts.host_calls(ctx.host):
            strings = [(i, a) for i, a in enumerate(hc.call.args) if _is_str(a)] + \
                [(k.arg, k.value) for k in hc.call.keywords if k.arg and _is_str(k.value)]
            if not strings:
                continue
            callee = hc.callee
            other = ctx.other.resolve(callee_subject(callee))
            if other is None:
                continue
            members = enum_members(ctx.host, callee.sym) if callee.mode == CONSTRUCT else None
            if members is not None:  # `Mode("fast")`: a value lookup, ValueError when it is gone
                before = enum_members(ctx.other, other)
                for _, node in strings[:1]:
                    if before is not None and _dropped(node.value, before[1], members[1]):
                        yield _Use(hc.module, hc.unit.qualname, node, "looked up in", callee.sym.path, node.value,
                                   True, bool(hc.guard) or _conditional(ctx, hc.module, hc.unit, hc.call))
                continue
            params = callee_params(ctx.host.resolver, callee)
            if params is None:
                continue
            slots = [p.name for p in params if p.kind <= ParamKind.POSITIONAL_OR_KEYWORD]
            for key, node in strings:
                name = slots[key] if isinstance(key, int) and key < len(slots) else key if isinstance(key, str) else ""
                if not name:
                    continue
                now = parameter_values(ctx.host, callee.sym, name)
                then = parameter_values(ctx.other, other, name)
                if now is not None and then is not None and _dropped(node.value, then.values, now.values):
                    yield _Use(hc.module, hc.unit.qualname, node, "passed to", f"{callee_subject(callee)}({name}=)",
                               node.value, now.enforced, bool(hc.guard) or _conditional(ctx, hc.module, hc.unit, hc.call))

    # -- strings assigned to or compared with typed host attributes, Enum lookups by name ----------
    def _attributes(self, ctx: ScanContext) -> Iterator[_Use]:
        for module in ctx.plugin.modules:
            for unit in ctx.facts.plugin_units(module):
                if unit.node is None:
                    continue
                candidates = _candidates(ctx, module, unit)
                if not candidates:
                    continue
                here = ctx.facts.plugin_inference(ctx.host, module, unit)
                there = ctx.facts.plugin_inference(ctx.other, module, unit)
                for node in candidates:
                    yield from self._node(ctx, module, unit, node, here, there)

    def _node(self, ctx: ScanContext, module: str, unit: Unit, node: ast.AST, here: Inference,
              there: Inference) -> Iterator[_Use]:
        if isinstance(node, ast.Subscript):  # `Mode["FAST"]`
            cls, before = here.infer(node.value), there.infer(node.value)
            if cls is None or before is None or cls.instance or cls.sym.kind != CLASS:
                return
            now, then = enum_members(ctx.host, cls.sym), enum_members(ctx.other, before.sym)
            if now is not None and then is not None and _dropped(node.slice.value, then[0], now[0]):
                yield _Use(module, unit.qualname, node, "looked up in", cls.sym.path, node.slice.value, True,
                           _conditional(ctx, module, unit, node))
            return
        if isinstance(node, ast.Assign):
            target, values, how = node.targets[0], [node.value], "assigned to"
        else:
            assert isinstance(node, ast.Compare)
            target, how = (node.left, "compared with") if isinstance(node.left, ast.Attribute) else (
                node.comparators[0], "compared with")
            other_side = node.comparators[0] if target is node.left else node.left
            values = other_side.elts if isinstance(other_side, ast.Tuple | ast.List | ast.Set) else [other_side]
        if not isinstance(target, ast.Attribute):
            return
        now = _attribute_values(ctx.host, here, target)
        then = _attribute_values(ctx.other, there, target)
        if now is None or then is None:
            return
        subject, now_set = now
        for value in values:
            if _is_str(value) and _dropped(value.value, then[1], now_set):
                yield _Use(module, unit.qualname, node, how, subject, value.value, False,
                           how == "compared with" or _conditional(ctx, module, unit, node))

    # -- the finding -----------------------------------------------------------------------------
    def _finding(self, ctx: ScanContext, uses: list[_Use]) -> Finding:
        first = uses[0]
        severity = Severity.ERROR if first.raises and not first.conditional else Severity.WARNING
        details = [f"{ctx.old.label} accepts `{first.value}`; {ctx.new.label} does not"]
        for how in ("passed to", "assigned to", "compared with", "looked up in"):
            lines = sorted({u.node.lineno for u in uses[1:] if u.how == how})
            if lines:
                details.append(f"also {how.split()[0]} at line{'s' if len(lines) > 1 else ''} "
                               f"{', '.join(str(n) for n in lines[:12])}")
        owner = first.subject.split("(", 1)[0]
        here, there = ctx.host.resolve(owner), ctx.other.resolve(owner)
        return Finding(VALUE_DROPPED, {"value": first.value, "how": first.how, "target": first.subject,
                                       "name": first.value, "label": ctx.host.label},
                       ctx.plugin_site(first.module, first.unit, first.node), subject=first.subject,
                       severity=severity, details=tuple(details),
                       suggestion=f"use a value {ctx.host.label} still accepts, or handle `{first.value}` in the "
                                  f"plugin (upstream dropped it)",
                       **ctx.pair(ctx.host.location(here), ctx.other.location(there))._asdict())


# -- helpers ---------------------------------------------------------------------------------------
def _is_str(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _dropped(value: str, before: frozenset[str], now: frozenset[str]) -> bool:
    return value in before and value not in now


def _candidates(ctx: ScanContext, module: str, unit: Unit) -> list[ast.AST]:
    """The unit's nodes `_candidate` keeps, found once for both runs (plugin facts only)."""
    return ctx.facts.keep(("closed-value-candidates", module, unit.qualname, getattr(unit.node, "lineno", 0)),
                          lambda: [n for n in ctx.facts.plugin_unit_nodes(module, unit) if _candidate(n)])


def _candidate(node: ast.AST) -> bool:
    """Assignments of a string to an attribute, comparisons of an attribute with strings, `E["NAME"]`."""
    if isinstance(node, ast.Assign):
        return len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute) and _is_str(node.value)
    if isinstance(node, ast.Compare):
        if len(node.ops) != 1 or not isinstance(node.ops[0], ast.Eq | ast.NotEq | ast.In | ast.NotIn):
            return False
        left, right = node.left, node.comparators[0]
        if isinstance(left, ast.Attribute):
            return _is_str(right) or (isinstance(right, ast.Tuple | ast.List | ast.Set) and any(
                _is_str(e) for e in right.elts))
        return isinstance(right, ast.Attribute) and _is_str(left) and isinstance(node.ops[0], ast.Eq | ast.NotEq)
    return isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_str(node.slice) and isinstance(
        node.value, ast.Name | ast.Attribute)


def _attribute_values(view: HostView, inf: Inference, node: ast.Attribute) -> tuple[str, frozenset[str]] | None:
    """(host path of the field, its closed set) for `x.field` with `x` a typed host object."""
    owner = inf.infer(node.value)
    if owner is None or owner.sym.kind != CLASS or node.attr in owner.hidden:
        return None
    member = view.member(owner.sym, node.attr, owner.instance)
    if member is None or member.kind == EXTERNAL:
        return None
    values = member_values(view, member)
    return (member.path, values) if values is not None else None


def _conditional(ctx: ScanContext, module: str, unit: Unit, node: ast.AST) -> bool:
    """Whether the node runs only behind a condition (see `plugin.typed.conditions`)."""
    flags = ctx.facts.keep(("conditions", module, unit.qualname, getattr(unit.node, "lineno", 0)),
                           lambda: conditions(unit))
    return flags.get(node, (False,))[0]


__all__ = ["KINDS", "ClosedValuesCheck"]
