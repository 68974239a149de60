"""Instance attributes (#9): what plugin methods read on `self`, and on typed host objects, still exists.

A patch-class method runs with `self` an instance of the TARGET class (the patch class does not
inherit from it), a subclass override with `self` an instance of the plugin class; either way
every `self.X` the plugin reads and does not set itself must be set or defined by the host
class through its MRO. When the host still sets it but assigns something of another kind (a
`CpuGpuBuffer` became a plain tensor), the members the plugin uses on it (`.gpu`, `.np`) break.
The plugin's host methods and their `self` uses come from `ctx.facts`, shared with undefined.py.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from ..findings import Finding, Kind, Severity
from ..model.host import HostView
from ..model.resolve import CLASS, EXTERNAL, INSTANCE_ATTR, Symbol
from ..model.summary import ClassInfo
from ..plugin.uses import HostMethod
from .base import ScanContext

NAME = "attributes"

ATTRIBUTE_NOT_SET = Kind("PP0901", "AttributeNoLongerSet", "`self.{name}` is read here, but `{cls}` in {label} "
                         "no longer sets or defines `{name}` (nor do its bases)", Severity.ERROR, 9, NAME)
HOST_OBJECT_ATTRIBUTE = Kind("PP0902", "HostObjectAttributeMissing", "`{name}` is read on a `{cls}` ({via}), "
                             "which no longer defines it in {label}", Severity.ERROR, 9, NAME)
ATTRIBUTE_TYPE_CHANGED = Kind("PP0903", "AttributeTypeChanged", "`self.{name}` is assigned `{new_expr}` in {label} "
                              "(was `{old_expr}`); the plugin uses `.{members}` on it", Severity.WARNING, 9, NAME)
ATTRIBUTE_MEMBER_GONE = Kind("PP0904", "AttributeMemberGone", "`self.{name}` is `{new_expr}` in {label} (was "
                             "`{old_expr}`, a `{old_type}`); `.{members}` existed only on the old type",
                             Severity.ERROR, 9, NAME)

KINDS = (ATTRIBUTE_NOT_SET, HOST_OBJECT_ATTRIBUTE, ATTRIBUTE_TYPE_CHANGED, ATTRIBUTE_MEMBER_GONE)

_HEAD = re.compile(r"^([A-Za-z_][\w.]*)\s*(\(|$)")


def _head(expr: str) -> str:
    match = _HEAD.match(expr.strip())
    return match.group(1) if match else expr.strip()


def _assignments(view: HostView, sym: Symbol, plain: tuple[str, ...]) -> tuple[list[str], Symbol | None]:
    """The expressions the defining class assigns to `self.X`, and the class they produce (or None)."""
    owner = view.resolve(sym.owner) if sym.owner else None
    if owner is None or not isinstance(owner.obj, ClassInfo):
        return [], None
    exprs = [a.expr for a in owner.obj.instance_attrs.get(sym.path.rpartition(".")[2], ())]
    for expr in exprs:
        head = _head(expr)
        if head.startswith("self."):
            typed = view.returned_class(view.member(owner, head[5:], instance=False))
        elif head and head != "None" and not head.startswith(plain):
            typed = view.returned_class(view.resolver.resolve_in(owner.module, head))
        else:
            typed = None
        if typed is not None:
            return exprs, typed
    return exprs, None


# -- the check -----------------------------------------------------------------------------------
def _copied_units(ctx: ScanContext) -> frozenset[tuple[str, str]]:
    """Units the mirrors/forks checks already judge for members NEW dropped (they run on NEW only).

    (module, qualified name) of each mirror, and (module, "") for each forked file.
    """
    if not ctx.judging_new:
        return frozenset()
    copies = ctx.facts.copies
    return frozenset({(m.patch.plugin_module, m.patch.site.unit) for m in copies.mirrors}
                     | {(f.plugin_module, "") for f in copies.forks})


def _is_copied(copied: frozenset[tuple[str, str]], unit: HostMethod) -> bool:
    return (unit.module, unit.qualname) in copied or (unit.module, "") in copied


class AttributesCheck:
    name = NAME
    cost = 0.6  # relative run time (tenths of a second of a warm scan), to spread checks over two cores
    shares = ("copies",)  # costly shared facts: run beside the checks reading them
    drift = (9,)
    kinds = KINDS
    description = "every `self.X` a plugin method reads is still set by the host class, with the same API"

    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        loose = frozenset(ctx.facts.uses.loose)
        copied = _copied_units(ctx)
        for unit in ctx.facts.host_methods:
            yield from self._unit(ctx, unit, loose, copied)
        yield from self._typed_reads(ctx, loose)

    def _unit(self, ctx: ScanContext, unit: HostMethod, loose: frozenset[str],
              copied: frozenset[tuple[str, str]] = frozenset()) -> Iterator[Finding]:
        use = ctx.facts.self_use(unit)
        owners = [ctx.host.resolve(o) for o in unit.owners]
        if use.dynamic or any(o is None or o.kind != CLASS for o in owners):
            return  # an unresolved owner is the imports/aliases checks' business
        others = [ctx.other.resolve(o) for o in unit.owners]
        provided = frozenset().union(*(ctx.facts.provided_by_plugin(ctx.host, o) for o in owners))  # type: ignore[arg-type]
        for attr, nodes in sorted(use.reads.items()):
            if attr in use.stores or attr in use.guarded or attr in provided or attr in loose or (
                    attr.startswith("__") and attr.endswith("__")):
                continue
            if unit.plugin_class and not unit.is_patch and (ctx.facts.plugin_defines(
                    unit.module, unit.plugin_class, attr) or ctx.facts.foreign_base(unit.module, unit.plugin_class)):
                continue  # the plugin class, or a base from outside plugin and host, may define it
            here = [ctx.host.member(o, attr, unit.instance) for o in owners]  # type: ignore[arg-type]
            there = [ctx.other.member(o, attr, unit.instance) if o is not None and o.kind == CLASS else None
                     for o in others]
            if not any(here):
                found = next((t for t in there if t is not None and t.kind != EXTERNAL), None)
                if found is not None and not _is_copied(copied, unit) and attr not in ctx.facts.host_helper_sets(
                        ctx.host, owners, unit):  # type: ignore[arg-type]
                    yield self._not_set(ctx, unit, attr, nodes, owners[0], found)  # type: ignore[arg-type]
                continue
            sym_here = next((h for h in here if h is not None), None)
            sym_there = next((t for t in there if t is not None), None)
            members = use.members.get(attr)
            # a changed assignment is a move OLD -> NEW: judged on NEW only, so it is never "latent"
            if (ctx.judging_new and members and sym_here is not None and sym_there is not None
                    and sym_here.kind == INSTANCE_ATTR and sym_there.kind == INSTANCE_ATTR):
                finding = self._type_change(ctx, unit, attr, members, sym_here, sym_there)
                if finding is not None:
                    yield finding

    def _not_set(self, ctx: ScanContext, unit: HostMethod, attr: str, nodes: list[ast.Attribute], owner: Symbol,
                 found: Symbol) -> Finding:
        subject = f"{unit.owners[0]}.{attr}"
        details = [f"read at lines {', '.join(str(n.lineno) for n in nodes[:8])}"] if len(nodes) > 1 else []
        origin = getattr(found.obj, "expr", "")
        if origin:
            details.append(f"{ctx.other.label}: self.{attr} = {origin}")
        return Finding(ATTRIBUTE_NOT_SET, {"name": attr, "cls": owner.path.rpartition(".")[2], "label": ctx.host.label},
                       ctx.plugin_site(unit.module, unit.qualname, nodes[0]), subject=subject, details=tuple(details),
                       suggestion=f"set `self.{attr}` in the plugin (e.g. in the `__init__` patch) or re-derive it "
                                  f"from what {ctx.host.label} uses instead",
                       **ctx.evidence(subject, judged=owner, other=found))

    def _type_change(self, ctx: ScanContext, unit: HostMethod, attr: str, members: dict[str, ast.Attribute],
                     sym_here: Symbol, sym_there: Symbol) -> Finding | None:
        """Judged on NEW only (a change OLD -> NEW): the judged side is NEW, the other OLD."""
        assert ctx.judging_new
        exprs_here, type_here = _assignments(ctx.host, sym_here, ctx.settings.plain_values)
        exprs_there, type_there = _assignments(ctx.other, sym_there, ctx.settings.plain_values)
        heads_here = {_head(e) for e in exprs_here} - {"None", ""}
        heads_there = {_head(e) for e in exprs_there} - {"None", ""}
        if not heads_here or not heads_there or heads_here == heads_there:
            return None
        if type_here is not None and type_there is not None and type_here.path == type_there.path:
            return None  # another way to build the same class
        used = sorted(members)
        gone: list[str] = []
        plain_tensor = any(_head(e).startswith(ctx.settings.plain_values) for e in exprs_here)
        if type_there is not None and (type_here is not None or plain_tensor):
            gone = [m for m in used if ctx.other.member(type_there, m) is not None
                    and (type_here is None or ctx.host.member(type_here, m) is None)]
        node = members[(gone or used)[0]]
        kind = ATTRIBUTE_MEMBER_GONE if gone else ATTRIBUTE_TYPE_CHANGED
        args = {"name": attr, "label": ctx.host.label, "new_expr": exprs_here[0], "old_expr": exprs_there[0],
                "members": ", .".join(gone or used),
                "old_type": type_there.path.rpartition(".")[2] if type_there else "?"}
        subject = f"{unit.owners[0]}.{attr}"
        details = tuple(f"{view.label}: self.{attr} = {e}" for view, es in ((ctx.old, exprs_there),
                                                                          (ctx.new, exprs_here)) for e in es[:3])
        return Finding(kind, args, ctx.plugin_site(unit.module, unit.qualname, node), subject=subject,
                       details=details, old=ctx.old.location(sym_there), new=ctx.new.location(sym_here),
                       suggestion=f"adapt the uses of `self.{attr}` to what {ctx.host.label} assigns")

    def _typed_reads(self, ctx: ScanContext, loose: frozenset[str]) -> Iterator[Finding]:
        """`x.attr` where x is a known host class (annotation, typed host call) that dropped `attr`."""
        for fn in ctx.facts.uses.functions:
            seen: set[tuple[str, str]] = set()
            for node, how, key in fn.reads:
                if node.attr in loose or node.attr.startswith("__"):
                    continue
                if how == "name" and key in fn.typed and fn.stores.get(key, 0) <= 1:
                    cls_path, via = fn.typed[key], f"`{key}`"
                elif key in fn.called and (how == "call" or fn.stores.get(key, 0) <= 1):
                    cls = ctx.host.returned_class(ctx.host.resolve(fn.called[key])) if ctx.plugin.names.is_host(
                        fn.called[key]) else None
                    cls_path = cls.path if cls is not None else ""
                    via = f"`{fn.called[key].rpartition('.')[2]}()`" if how == "call" else f"`{key}`"
                else:
                    continue
                if not ctx.plugin.names.is_host(cls_path) or (cls_path, node.attr) in seen:
                    continue
                seen.add((cls_path, node.attr))
                finding = self._typed_read(ctx, fn.module, fn.qualname, node, cls_path, via)
                if finding is not None:
                    yield finding

    def _typed_read(self, ctx: ScanContext, module: str, qual: str, node: ast.Attribute, cls_path: str,
                    via: str) -> Finding | None:
        here, there = ctx.host.resolve(cls_path), ctx.other.resolve(cls_path)
        if here is None or there is None or here.kind != CLASS or there.kind != CLASS:
            return None
        if ctx.host.member(here, node.attr) is not None or node.attr in ctx.facts.provided_by_plugin(ctx.host, here):
            return None
        found = ctx.other.member(there, node.attr)
        if found is None or found.kind == EXTERNAL:
            return None
        subject = f"{cls_path}.{node.attr}"
        return Finding(HOST_OBJECT_ATTRIBUTE, {"name": node.attr, "cls": cls_path.rpartition(".")[2], "via": via,
                                               "label": ctx.host.label},
                       ctx.plugin_site(module, qual, node), subject=subject,
                       suggestion=f"find what {ctx.host.label} `{cls_path.rpartition('.')[2]}` offers instead of "
                                  f"`{node.attr}`", **ctx.evidence(subject, judged=here, other=found))


__all__ = ["KINDS", "AttributesCheck"]
