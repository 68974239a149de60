"""Override signatures (#1 parameter added upstream, #2 parameter removed upstream).

Every plugin function that replaces a host member (patch-class method, subclass override,
`Target.x = fn`, module-function replacement) is compared with the member it replaces, found
through the host class's MRO, so an inherited method is not mistaken for a new one. Upstream
callers call the replacement with the base's signature: whatever the base accepts and the
override does not is a TypeError waiting for the first call.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..findings import Finding, Kind, Location, Severity
from ..model.nodes import walk_tree
from ..model.resolve import CLASS, EXTERNAL, FUNCTION, METHOD, MODULE, Symbol
from ..model.summary import FunctionInfo, Param, ParamKind, has_var_keyword, has_var_positional
from ..plugin.records import Patch, PatchKind
from ..plugin.uses import plugin_class_info
from .base import ScanContext

NAME = "signatures"

PARAM_MISSING = Kind("PP0101", "ParameterMissing", "`{base}` takes `{param}` in {label}; the override "
                     "does not accept it", Severity.ERROR, 1, NAME)
PARAM_RENAMED = Kind("PP0102", "ParameterRenamed", "`{base}` calls parameter `{old}` `{param}` in {label}; "
                     "the override still names it `{old}`", Severity.ERROR, 1, NAME)
PARAM_REORDERED = Kind("PP0103", "ParametersReordered", "`{base}` takes ({order}) positionally in {label}; the "
                       "override takes ({plugin_order})", Severity.ERROR, 1, NAME)
PARAM_KIND = Kind("PP0104", "ParameterKindChanged", "`{param}` is {base_kind} in `{base}` ({label}) but "
                  "{plugin_kind} in the override", Severity.WARNING, 1, NAME)
DEFAULT_CHANGED = Kind("PP0105", "ParameterDefaultDiffers", "`{param}` defaults to `{base_default}` in `{base}` "
                       "({label}) but to `{plugin_default}` in the override", Severity.INFO, 1, NAME)
MEMBER_COLLISION = Kind("PP0106", "MemberCollision", "the plugin adds `{name}`, and {label} now defines "
                        "`{base}` itself", Severity.WARNING, 1, NAME)
EXTRA_REQUIRED = Kind("PP0201", "ParameterExtraRequired", "the override requires `{param}`, which `{base}` "
                      "does not take in {label}: callers never pass it", Severity.ERROR, 2, NAME)
# An optional parameter upstream dropped cannot break a caller (none has to pass it): context, not a risk.
EXTRA_OPTIONAL = Kind("PP0202", "ParameterDroppedUpstream", "`{base}` no longer takes `{param}` in {label}; "
                      "the override still has it{usage}", Severity.INFO, 2, NAME)
OVERRIDES_NOTHING = Kind("PP0203", "OverridesNothing", "`{base}` no longer exists in {label}: the plugin's "
                         "`{name}` overrides nothing and is never called by the host", Severity.ERROR, 2, NAME)
NOW_REQUIRED = Kind("PP0107", "ParameterNowRequired", "`{base}` makes `{param}` optional in {label}; the "
                    "override requires it, so callers that omit it fail", Severity.WARNING, 1, NAME)
UNUSED_FORK_CLASS = Kind("PP0204", "UnusedForkClass", "the fork keeps `{name}`, which nothing in the plugin "
                         "registers, imports or uses: the host never calls its {count} method(s), so they "
                         "are not judged", Severity.INFO, 2, NAME)
MEMBER_ADDED = Kind("PP0002", "MemberAdded", "the plugin adds `{name}` to `{owner}`, which {label} does not "
                    "define", Severity.INFO, None, NAME)

KINDS = (PARAM_MISSING, PARAM_RENAMED, PARAM_REORDERED, PARAM_KIND, DEFAULT_CHANGED, MEMBER_COLLISION,
         EXTRA_REQUIRED, EXTRA_OPTIONAL, OVERRIDES_NOTHING, NOW_REQUIRED, UNUSED_FORK_CLASS, MEMBER_ADDED)

_KIND_WORDS = {ParamKind.POSITIONAL_ONLY: "positional-only", ParamKind.POSITIONAL_OR_KEYWORD: "positional",
               ParamKind.KEYWORD_ONLY: "keyword-only"}


def _bound(fn: FunctionInfo, as_method: bool) -> tuple[Param, ...]:
    return fn.bound_params() if as_method else fn.signature.params


def _no_failing_caller(ctx: ScanContext, patch: Patch, in_order: bool = False, keywords: bool = True) -> bool:
    """A replacement whose judged host call sites all bind to it (with `in_order`: pass no positional
    argument it binds elsewhere than the base, nor `*args`, nor `**kwargs` unless `keywords` is
    False): its mismatch cannot fire as called."""
    if patch.kind not in (PatchKind.MEMBER, PatchKind.ASSIGNMENT):
        return False
    found = ctx.facts.call_failures(ctx.host, patch, in_order)
    return found is not None and not any(keywords or key != ("unpacked", "**") for key in found[2])


class SignaturesCheck:
    name = NAME
    cost = 5  # relative run time (tenths of a second of a warm scan), to spread checks over two cores
    shares = ("copies", "call_failures")  # costly shared facts: run beside the checks reading them
    drift = (1, 2)
    kinds = KINDS
    description = "every override accepts what the member it replaces accepts"

    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        unused = ctx.facts.unused_fork_classes
        unused_overrides: dict[tuple[str, str], int] = {}
        for patch in ctx.plugin.surface.patches:
            if patch.kind is PatchKind.ALIAS or patch.function is None or patch.name.startswith("__") and \
                    patch.name.endswith("__") and patch.name not in ("__init__", "__post_init__", "__call__"):
                continue
            if patch.kind is PatchKind.OVERRIDE and (patch.plugin_module, patch.via) in unused:
                key = (patch.plugin_module, patch.via)
                unused_overrides[key] = unused_overrides.get(key, 0) + 1
                continue
            yield from self._check(ctx, patch)
        for (module, name), count in sorted(unused_overrides.items()):
            info = plugin_class_info(ctx.plugin.index, module, name)
            line = info.line if info is not None else 1
            yield Finding(UNUSED_FORK_CLASS, {"name": name, "count": count},
                          ctx.facts.plugin_line(module, line, name), subject=f"{module}.{name}",
                          suggestion=f"delete `{name}` from the fork, or port it when the plugin starts using it")

    def _check(self, ctx: ScanContext, patch: Patch) -> Iterator[Finding]:
        owner, base = ctx.host.replaced_member(patch.owner, patch.name)
        if owner is None or owner.kind not in (CLASS, MODULE):
            return  # unresolved targets are the aliases check's business
        if base is not None and base.kind == EXTERNAL:
            return  # defined outside the host (torch.nn.Module.forward): not ours to judge
        _, other_base = ctx.other.replaced_member(patch.owner, patch.name)
        # "no longer exists" and "now defines" read OLD -> NEW: judging OLD, no earlier version is at hand
        earlier = other_base if ctx.judging_new else None
        label = ctx.host.label
        site = patch.site
        if base is None:
            args = {"name": patch.name, "base": patch.target, "owner": patch.owner, "label": label}
            if earlier is not None and earlier.kind != EXTERNAL:
                yield Finding(OVERRIDES_NOTHING, args, site, subject=patch.target,
                              suggestion="find where upstream moved this behaviour and re-target the override",
                              **ctx.evidence(patch.target, other=other_base))
            elif patch.kind is not PatchKind.OVERRIDE:  # a plain addition: context, for the appendix
                yield Finding(MEMBER_ADDED, args, site, subject=patch.target, **ctx.evidence(patch.target),
                              extra={"appendix": "a plain addition no upstream member shares"})
            return
        if ctx.judging_new and other_base is None and patch.kind is not PatchKind.OVERRIDE \
                and not patch.name.startswith("_orig"):
            args = {"name": patch.name, "base": base.path, "label": label}
            yield Finding(MEMBER_COLLISION, args, site, subject=patch.target,
                          suggestion="decide whether the plugin's member should now replace or wrap upstream's",
                          **ctx.evidence(patch.target, judged=base))
        if base.kind not in (FUNCTION, METHOD) or not isinstance(base.obj, FunctionInfo):
            return
        base, other_base = self._forwarded(ctx, patch, base), other_base and self._forwarded(ctx, patch, other_base, True)
        yield from self._compare(ctx, patch, base, other_base)

    @staticmethod
    def _forwarded(ctx: ScanContext, patch: Patch, base: Symbol, other: bool = False) -> Symbol:
        """A passthrough base (`forward_oot(self, *a, **k)` returning `self.forward_native(*a, **k)`)
        stands for the member it forwards to, as the patched class defines it (CustomOp out-of-tree)."""
        view = ctx.other if other else ctx.host
        name = ctx.facts.forwarded_name(view, base)
        target = view.replaced_member(patch.owner, name)[1] if name else None
        return target if target is not None and target.kind == METHOD and isinstance(target.obj, FunctionInfo) \
            else base

    def _compare(self, ctx: ScanContext, patch: Patch, base: Symbol, other_base: Symbol | None) -> Iterator[Finding]:
        fn = patch.function
        assert fn is not None and isinstance(base.obj, FunctionInfo)
        as_method = base.kind == METHOD and not base.obj.is_staticmethod
        plugin_as_method = as_method and patch.wrapper != "staticmethod"
        b_params = _bound(base.obj, as_method)
        o_params = _bound(fn, plugin_as_method)
        if patch.name == "__post_init__":
            b_params = self._init_vars(ctx, patch, base, b_params)
        # a `*args`/`**kwargs` of the override binds by position or keyword, never by its own name: a base
        # parameter named `args` is absorbed by it (or missing), not the same parameter of another kind
        o_by_name = {p.name: p for p in o_params if p.kind not in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD)}
        b_by_name = {p.name: p for p in b_params}
        o_var_pos = has_var_positional(o_params)
        o_var_kw = has_var_keyword(o_params)
        label = ctx.host.label
        evidence = self._evidence(ctx, patch, base, other_base)
        base_path = base.path
        other_fn = other_base.obj if other_base is not None and isinstance(other_base.obj, FunctionInfo) else None
        other_names = {p.name for p in other_fn.signature.params} if other_fn else None

        # A plain subclass's method is called by the host only where the host uses the subclass
        # polymorphically, which static analysis cannot always see: cap those at warning.
        cap = Severity.WARNING if patch.kind is PatchKind.OVERRIDE else None
        notes = (f"plugin: def {fn.name}{fn.signature.render()}",) + (
            ("ordinary subclass: breaks where the host calls this method on the subclass",) if cap else ())

        # `forward` runs when the host calls the instance (`layer(x)` -> Module.__call__): no call names it
        implicit = (f"reached without a named call: `{patch.name}` runs when the host calls the instance "
                    "(setting `called-implicitly`), so no host call site is judged"
                    if patch.name in ctx.settings.called_implicitly else "")
        # a method that only raises NotImplementedError fails every call: its signature decides nothing
        refused = ("the override only raises NotImplementedError: the plugin does not support this member, "
                   "and a call fails there whatever it passes",) if ctx.facts.refuses_every_call(patch) else ()

        def finding(kind: Kind, suggestion: str, severity: Severity | None = None, **args: str) -> Finding:
            level = severity or kind.severity
            details = notes
            # a moved parameter, or one made keyword-only, trips only calls passing it positionally
            in_order = kind is PARAM_REORDERED or kind is PARAM_KIND and args.get("plugin_kind") == "keyword-only"
            confirmed = [(module, line, attr) for module, line, attr, param in ctx.facts.confirmed_by(ctx.host, patch)
                         if param == args.get("param")] if cap is not None and kind.severity is Severity.ERROR else []
            if confirmed:  # the host calls it through an attribute holding the plugin's class: it fails there
                level = Severity.ERROR
                details = notes + tuple(f"confirmed by {ctx.host.index.paths[module]}:{line}, which calls "
                                        f"it through `self.{attr}`, set to the plugin's class"
                                        for module, line, attr in confirmed)
            elif cap is not None and level.rank <= cap.rank and (call := ctx.facts.registered_model_call(patch)):
                level = Severity.INFO  # a registered model: the host builds and calls it only by keyword
                details = notes + (f"the plugin registers `{patch.via}` with the host's model registry, which "
                                   f"calls `{patch.name}` only by keyword ({', '.join(call.keywords)}"
                                   f"{', ...' if call.more else ''}; settings `registered-model-calls`), and the "
                                   "override takes that call",)
            elif cap is not None and level.rank <= cap.rank and not ctx.facts.override_reached(ctx.host, patch,
                                                                                               in_order):
                level = Severity.INFO  # only the plugin calls it, or every host call binds to the override
                details = notes + ((f"only plugin code builds `{patch.via}`: no call in {label} can reach its "
                                    "constructor",) if patch.name == "__init__" else (
                    f"no call in {label} can fail against the override: every host call of `{patch.name}` binds "
                    "to it, cannot run on the plugin's class (its receiver is typed as another, or it lies in host "
                    "code the plugin replaces or its class does not run), or reaches it only through a dispatch "
                    "route the plugin's platform never takes (or only the plugin calls it)",))
            elif cap is not None and level.rank < cap.rank:
                level = cap
            elif level.rank <= Severity.WARNING.rank and implicit and _no_failing_caller(ctx, patch) \
                    and not ctx.facts.instance_calls_reached(ctx.host, patch):
                level = Severity.INFO  # `forward` of a host class whose every instance the host calls in a way it takes
                details = notes + (f"no call in {label} can fail against the replacement: the host keeps its "
                                   f"instances in attributes it only calls in ways `{patch.name}` accepts",)
            elif in_order and not implicit and _no_failing_caller(ctx, patch, True, keywords=False) \
                    and (not ctx.facts.handed_on(ctx.host, patch) or ctx.facts.constructions_bind(ctx.host, patch)):
                level = Severity.INFO  # every host call binds its positional arguments as the base would
                details = notes + (f"no call in {label} can fail against the replacement: every host call of "
                                   f"`{patch.name}` passes positionally only what binds to the same parameters, "
                                   "and none names it as a string or hands it on",)
            elif level is Severity.ERROR and _no_failing_caller(ctx, patch):
                found = ctx.facts.call_failures(ctx.host, patch)
                ported = found is not None and found[3] > 0  # host callers the plugin replaces: its copies call it
                misbound = in_order and not _no_failing_caller(ctx, patch, True, keywords=False)
                escapes = implicit or not _no_failing_caller(ctx, patch, True) or ctx.facts.handed_on(ctx.host, patch)
                level = Severity.WARNING if ported or escapes else Severity.INFO
                details = notes + ((f"every reachable call site in {label} binds to the replacement, but some pass "
                                    "positionally an argument it binds to another parameter than the base",)
                                   if misbound else
                                   (f"no reachable call site in {label} fails against the override: the host callers "
                                    "that would are replaced by the plugin, whose copies call it",) if ported else
                                   (f"no reachable call site in {label} fails against the override, but host code "
                                    "may reach it without a call naming it (a string, handed on as a value, or an "
                                    "unpacked call)",) if escapes else
                                   (f"no call in {label} can fail against the replacement: every host call of "
                                    f"`{patch.name}` binds to it alike, and none names it as a string, hands it on "
                                    "or unpacks its arguments",))
            if level is Severity.WARNING and kind in (PARAM_MISSING, NOW_REQUIRED, EXTRA_REQUIRED) \
                    and ctx.facts.layer_calls_fit(ctx.host, patch, args["param"]):
                level = Severity.INFO  # reached through a dispatcher's route: the layer calls carrying it all fit
                details = notes + (f"no call in {label} can trip `{args['param']}`: the host reaches `{patch.name}` "
                                   "through a dispatcher's route its layer calls run, and every host call of a layer "
                                   "that may run it (followed from each construction, through factories and "
                                   "attributes) binds as far as this parameter goes",)
            if refused and level is not Severity.INFO:
                level, details = Severity.INFO, notes + refused
            if implicit and level is Severity.WARNING:
                details += (implicit,)
            return Finding(kind, {"base": base_path, "label": label, **args}, patch.site, subject=patch.target,
                           suggestion=suggestion, severity=level if level is not kind.severity else None,
                           details=details, **evidence)

        missing = [p for p in b_params if p.kind not in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD)
                   and p.name not in o_by_name and not self._absorbed(p, o_var_pos, o_var_kw)]
        extra = [p for p in o_params if p.kind not in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD)
                 and p.name not in b_by_name]
        # A missing base parameter and an extra plugin parameter at the same position: a rename.
        b_pos = [p.name for p in b_params if p.kind <= ParamKind.POSITIONAL_OR_KEYWORD]
        o_pos = [p.name for p in o_params if p.kind <= ParamKind.POSITIONAL_OR_KEYWORD]
        for bp in list(missing):
            for op in list(extra):
                if (bp.name in b_pos and op.name in o_pos and b_pos.index(bp.name) == o_pos.index(op.name)
                        and (other_names is None or op.name in other_names)):
                    missing.remove(bp)
                    extra.remove(op)
                    yield finding(PARAM_RENAMED, f"rename `{op.name}` to `{bp.name}` in the override",
                                  param=bp.name, old=op.name)
                    break
        for bp in missing:
            default = f"={bp.default}" if bp.default is not None else ""
            yield finding(PARAM_MISSING, f"add `{bp.name}{default}` to the override and forward it to the original",
                          severity=None if bp.required else Severity.WARNING, param=bp.name)
        b_var_pos = has_var_positional(b_params)
        b_var_kw = has_var_keyword(b_params)
        extra = [p for p in extra if not (b_var_kw and p.kind is not ParamKind.POSITIONAL_ONLY)
                 and not (b_var_pos and p.kind is not ParamKind.KEYWORD_ONLY)]  # the base's *args/**kwargs carry them
        abstract = any(d.rpartition(".")[2] == "abstractmethod" for d in base.obj.decorators)
        for op in extra:
            if op.required:
                caller = self._plugin_caller(ctx, patch, op, o_params) if cap is not None else 0
                if caller:  # an ordinary subclass the plugin itself calls with the parameter
                    yield Finding(EXTRA_REQUIRED, {"base": base_path, "label": label, "param": op.name},
                                  patch.site, subject=patch.target, severity=Severity.INFO,
                                  suggestion="nothing to do while only the plugin calls it",
                                  details=notes[:1] + (f"only plugin code calls it with `{op.name}` (line {caller} of "
                                                   "the plugin), on instances the plugin builds",), **evidence)
                    continue
                yield finding(EXTRA_REQUIRED, f"give `{op.name}` a default or drop it (stash the value elsewhere)",
                              param=op.name)
            elif other_names is not None and op.name in other_names:
                used = self._uses(ctx, patch, op.name)
                yield finding(EXTRA_OPTIONAL, f"drop `{op.name}` from the override" + (
                    " and compute the value it carried another way" if used else ""),
                    param=op.name, usage=" and uses it" if used else " (unused)")
        common_base = [n for n in b_pos if n in o_pos]
        common_plugin = [n for n in o_pos if n in b_pos]
        if common_base != common_plugin:
            yield finding(PARAM_REORDERED, "take the parameters in the base's order",
                          order=", ".join(common_base), plugin_order=", ".join(common_plugin))
        for bp in b_params:
            op = o_by_name.get(bp.name)
            if op is None or bp.kind in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD):
                continue
            if bp.kind != op.kind and (bp.kind is ParamKind.POSITIONAL_OR_KEYWORD or op.kind is ParamKind.POSITIONAL_ONLY) \
                    and not (op.kind is ParamKind.KEYWORD_ONLY and self._forwards_positionals(ctx, patch, o_params)):
                yield finding(PARAM_KIND, f"make `{bp.name}` {_KIND_WORDS[bp.kind]} like the base",
                              param=bp.name, base_kind=_KIND_WORDS.get(bp.kind, "?"),
                              plugin_kind=_KIND_WORDS.get(op.kind, "?"))
            if bp.default is not None and op.default is None and not abstract:
                yield finding(NOW_REQUIRED, f"give `{bp.name}` the base's default `{bp.default}`", param=bp.name)
            elif bp.default is not None and op.default is not None and bp.default != op.default:
                yield finding(DEFAULT_CHANGED, f"use the base's default `{bp.default}` unless the change is deliberate",
                              param=bp.name, base_default=bp.default, plugin_default=op.default)

    @staticmethod
    def _plugin_caller(ctx: ScanContext, patch: Patch, op: Param, params: tuple[Param, ...]) -> int:
        cls_name = patch.via.rpartition(".")[2]
        position = [p.name for p in params].index(op.name)
        if not cls_name:
            return 0
        return ctx.facts.plugin_call_passing(cls_name, patch.name, position, op.name)

    @staticmethod
    def _init_vars(ctx: ScanContext, patch: Patch, base: Symbol, params: tuple[Param, ...]) -> tuple[Param, ...]:
        """What a dataclass's generated `__init__` hands `__post_init__`: its `InitVar` fields. A plugin
        dataclass (decorated as `dataclass`, or as its host base is) that redeclares a base `InitVar` as a
        plain field no longer passes it, so the override need not take it."""
        info = plugin_class_info(ctx.plugin.index, patch.plugin_module, patch.via) if patch.via else None
        owner = ctx.host.resolve(base.owner) if base.owner else None
        if info is None or owner is None or not hasattr(owner.obj, "decorators"):
            return params
        makers = {"dataclass"} | {d.rpartition(".")[2] for d in owner.obj.decorators}
        if not any(d.partition("(")[0].rpartition(".")[2] in makers for d in info.decorators):
            return params
        plain = {name for name, attr in info.attributes.items() if attr.annotation is not None
                 and not attr.annotation.replace("dataclasses.", "").startswith("InitVar")}
        return tuple(p for p in params if p.name not in plain)

    @staticmethod
    def _forwards_positionals(ctx: ScanContext, patch: Patch, params: tuple[Param, ...]) -> bool:
        """`def m(self, *args, kw=None, **kwargs): ... super().m(*args, ...)`: every positional argument goes
        to the base unchanged, so a base parameter the override names keyword-only still binds positionally."""
        if not params or params[0].kind is not ParamKind.VAR_POSITIONAL:
            return False
        node = ctx.plugin.function_node(patch.plugin_module, patch.site.unit)
        star = params[0].name
        return node is not None and any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == patch.name
            and isinstance(n.func.value, ast.Call) and isinstance(n.func.value.func, ast.Name)
            and n.func.value.func.id == "super" and n.args and isinstance(n.args[0], ast.Starred)
            and isinstance(n.args[0].value, ast.Name) and n.args[0].value.id == star for n in ast.walk(node))

    @staticmethod
    def _absorbed(p: Param, var_pos: bool, var_kw: bool) -> bool:
        """Whether the override's *args/**kwargs accept a base parameter however callers pass it."""
        if p.kind is ParamKind.POSITIONAL_ONLY:
            return var_pos
        if p.kind is ParamKind.KEYWORD_ONLY:
            return var_kw
        return var_kw and (var_pos or p.default is not None)

    @staticmethod
    def _evidence(ctx: ScanContext, patch: Patch, base: Symbol, other_base: Symbol | None) -> dict[str, Location | None]:
        bases = ctx.pair(base, other_base)
        return {"old": ctx.old.def_location(bases.old), "new": ctx.new.def_location(bases.new)}

    @staticmethod
    def _uses(ctx: ScanContext, patch: Patch, name: str) -> bool:
        node = ctx.plugin.function_node(patch.plugin_module, patch.site.unit)
        if node is None:
            return True
        return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in walk_tree(node))
