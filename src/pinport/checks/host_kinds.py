"""Host kinds and flags (#6): a class that became a factory, environment flags and TypedDict keys that vanished.

These are the host facts that break silently: `isinstance(x, Host)` raises TypeError once
`Host` is a function; `envs.VLLM_X` raises AttributeError from the envs module's lazy table
even though a TYPE_CHECKING declaration still names it; an environment variable the plugin
sets stops doing anything; a TypedDict key read by the plugin is no longer produced.
The plugin walk and the host lookups come from `ctx.facts` and the host views.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding, Kind, Severity
from ..model.resolve import ATTRIBUTE, CLASS, EXTERNAL, FUNCTION, MODULE, Symbol
from ..model.summary import ClassInfo
from ..plugin.records import PatchKind
from ..plugin.uses import PluginUses
from .base import HostView, ScanContext, guard_severity

NAME = "host-kinds"

CLASS_BECAME_FUNCTION = Kind("PP0610", "ClassBecameFunction", "`{name}` is used as a class here ({how}), but "
                             "{label} defines it as a function", Severity.ERROR, 6, NAME)
FUNCTION_BECAME_CLASS = Kind("PP0611", "FunctionBecameClass", "the plugin replaces `{name}` with a function, but "
                             "{label} defines it as a class", Severity.ERROR, 6, NAME)
ENV_FLAG_REMOVED = Kind("PP0612", "EnvFlagRemoved", "environment flag `{name}` is read from `{module}`, which no "
                        "longer defines it in {label}: AttributeError", Severity.ERROR, 6, NAME)
ENV_VAR_NOT_READ = Kind("PP0613", "EnvVarNotRead", "the plugin sets `{name}`, which {label} no longer reads: the "
                        "setting has no effect", Severity.WARNING, 6, NAME)
TYPEDDICT_KEY_MISSING = Kind("PP0614", "TypedDictKeyMissing", "key `{name}` is read from a `{cls}`, which {label} "
                             "no longer declares", Severity.ERROR, 6, NAME)

KINDS = (CLASS_BECAME_FUNCTION, FUNCTION_BECAME_CLASS, ENV_FLAG_REMOVED, ENV_VAR_NOT_READ, TYPEDDICT_KEY_MISSING)


def _is_typeddict(view: HostView, cls: Symbol) -> bool:
    return any(s.path.rpartition(".")[2] == "TypedDict" or (
        isinstance(s.obj, ClassInfo) and any(b.rpartition(".")[2] == "TypedDict" for b in s.obj.bases))
        for s in view.resolver.mro(cls))


# -- the check -----------------------------------------------------------------------------------
class HostKindsCheck:
    name = NAME
    cost = 0.1  # relative run time (tenths of a second of a warm scan), to spread checks over two cores
    drift = (6,)
    kinds = KINDS
    description = "host names keep their kind, environment flags and TypedDict keys the plugin uses still exist"

    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        facts = ctx.facts.uses
        yield from self._class_uses(ctx, facts)
        yield from self._replacements(ctx)
        yield from self._env_flags(ctx)
        yield from self._env_sets(ctx, facts)
        yield from self._typeddict_keys(ctx, facts)

    def _class_uses(self, ctx: ScanContext, facts: PluginUses) -> Iterator[Finding]:
        seen: set[tuple[str, str, str]] = set()
        for module, unit, node, path, how in facts.class_uses:
            sym = ctx.host.resolve(path)
            if sym is None or sym.kind != FUNCTION or (module, unit, path) in seen:
                continue
            seen.add((module, unit, path))
            made = ctx.host.returned_class(sym)
            yield Finding(CLASS_BECAME_FUNCTION, {"name": path.rpartition(".")[2], "how": how, "label": ctx.host.label},
                          ctx.plugin_site(module, unit, node), subject=path,
                          suggestion=f"test against `{made.path}`, the class the factory returns" if made else
                          "test against the class the factory returns",
                          **ctx.evidence(path, judged=sym))

    def _replacements(self, ctx: ScanContext) -> Iterator[Finding]:
        for patch in ctx.plugin.surface.patches:
            if patch.function is None or patch.kind not in (PatchKind.ASSIGNMENT, PatchKind.MEMBER):
                continue
            owner = ctx.host.resolve(patch.owner)
            if owner is None or owner.kind != MODULE:
                continue
            member = ctx.host.resolver.module_attr(owner.module, patch.name)
            if member is None or member.kind != CLASS:
                continue
            if member.module != owner.module and ctx.host.only_called(owner.module, patch.name):
                continue  # an imported class the module only calls: the factory serves it (and no other module)
            if member.module == owner.module and ctx.host.only_called(owner.module, patch.name, at_run_time=True) \
                    and not ctx.host.read_elsewhere_as_attribute(owner.module, patch.name):
                continue  # a class its own module only builds, in functions, and no module reads as `mod.Name`
            yield Finding(FUNCTION_BECAME_CLASS, {"name": patch.target, "label": ctx.host.label}, patch.site,
                          subject=patch.target, severity=guard_severity(patch.guard),
                          suggestion="patch the class's methods instead of replacing it with a function",
                          **ctx.evidence(patch.target, judged=member))

    def _env_flags(self, ctx: ScanContext) -> Iterator[Finding]:
        modules = ctx.host.env_modules
        added = {(e.table, e.name) for e in ctx.plugin.surface.env_entries}  # the plugin's own table entries
        seen: set[tuple[str, str, str]] = set()
        for use in ctx.plugin.surface.uses:
            for module in modules:
                if not use.path.startswith(module + "."):
                    continue
                flag = use.path[len(module) + 1:].split(".")[0]
                key = (use.site.path, use.site.unit, flag)
                if not flag.isupper() or key in seen or (module, flag) in added or \
                        ctx.host.env_flag_defined(module, flag):
                    continue
                seen.add(key)
                subject = f"{module}.{flag}"
                other = ctx.other.index.modules.get(module)
                there = ctx.other.location(Symbol(ATTRIBUTE, subject, module, ctx.other.env_flag_line(module, flag)))
                defined = ctx.pair(None, there if other else None)  # the judged version lacks it
                yield Finding(ENV_FLAG_REMOVED, {"name": flag, "module": module, "label": ctx.host.label}, use.site,
                              subject=subject, severity=guard_severity(use.guard),
                              suggestion=f"find what replaced `{flag}` in {ctx.host.label} (a config field?)",
                              old=defined.old, new=defined.new)

    def _env_sets(self, ctx: ScanContext, facts: PluginUses) -> Iterator[Finding]:
        prefix = ctx.settings.flag_prefix  # the host's own flags (host profile `flag-prefix`)
        for module, unit, node, var, value in facts.env_sets:
            if not var.startswith(prefix) or ctx.host.reads_env(var) or not ctx.other.reads_env(var):
                continue
            yield Finding(ENV_VAR_NOT_READ, {"name": var, "label": ctx.host.label}, ctx.plugin_site(module, unit, node),
                          subject=var, details=(f"plugin sets {var}={value}",),
                          suggestion=f"find what selects this behaviour in {ctx.host.label} and force it there")

    def _typeddict_keys(self, ctx: ScanContext, facts: PluginUses) -> Iterator[Finding]:
        for fn in facts.functions:
            seen: set[tuple[str, str]] = set()
            for node, var, key, is_get in fn.keys:
                cls_path = fn.typed.get(var, "")
                if not ctx.plugin.names.is_host(cls_path) or (cls_path, key) in seen:
                    continue
                here, there = ctx.host.resolve(cls_path), ctx.other.resolve(cls_path)
                if here is None or there is None or here.kind != CLASS or there.kind != CLASS or not _is_typeddict(
                        ctx.host, here):
                    continue
                seen.add((cls_path, key))
                if ctx.host.member(here, key, instance=False) is not None:
                    continue
                found = ctx.other.member(there, key, instance=False)
                if found is None or found.kind == EXTERNAL:
                    continue
                subject = f"{cls_path}.{key}"
                yield Finding(TYPEDDICT_KEY_MISSING, {"name": key, "cls": cls_path.rpartition(".")[2],
                                                      "label": ctx.host.label},
                              ctx.plugin_site(fn.module, fn.qualname, node), subject=subject,
                              severity=Severity.WARNING if is_get else None,
                              details=("read with .get(): silently None",) if is_get else (),
                              suggestion=f"read what {ctx.host.label} puts in the dict instead",
                              **ctx.evidence(subject, judged=here, other=found))


__all__ = ["KINDS", "HostKindsCheck"]
