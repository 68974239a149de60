"""Aliases and targets: every `_orig_*` alias and every patch or subclass target resolves.

An alias is a hard dependency: `_orig_init = Target.__init__` raises AttributeError at import
when the host renames or drops the member. A patch target that no longer resolves (or is no
longer a class, e.g. it became a factory function) makes every member of the patch dead.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from ..findings import Finding, Kind, Severity
from ..model.resolve import CLASS, MODULE
from ..model.summary import ClassInfo
from ..plugin.records import PatchKind
from .base import ScanContext, guard_severity

NAME = "aliases"

ALIAS_MISSING = Kind("PP0001", "AliasTargetMissing", "`{alias}` keeps `{target}`, which does not exist in "
                     "{label}: AttributeError at import", Severity.ERROR, None, NAME)
TARGET_MISSING = Kind("PP0003", "PatchTargetMissing", "`{plugin_class}` targets `{target}`, which does not "
                      "exist in {label}", Severity.ERROR, None, NAME)
TARGET_KIND = Kind("PP0004", "PatchTargetNotAClass", "`{plugin_class}` targets `{target}`, which is a {kind} "
                   "in {label}, not a class or module", Severity.ERROR, None, NAME)

CLASS_PATH_MISSING = Kind("PP0006", "ClassPathUnresolved", "the host is told to load `{path}` ({how}), which "
                          "the plugin does not define: ImportError or AttributeError when the host loads it",
                          Severity.ERROR, None, NAME)

DELETED_MISSING = Kind("PP0007", "DeletedMemberMissing", "`del {owner}.{name}` raises AttributeError at "
                       "import: `{owner}` in {label} does not define `{name}` itself", Severity.ERROR, None, NAME)

KINDS = (ALIAS_MISSING, TARGET_MISSING, TARGET_KIND, CLASS_PATH_MISSING, DELETED_MISSING)


class AliasesCheck:
    name = NAME
    cost = 0.1  # relative run time (tenths of a second of a warm scan), to spread checks over two cores
    drift = ()
    kinds = KINDS
    description = "every original-alias and every patch target resolves, through inheritance"

    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        for class_path in ctx.plugin.surface.class_paths:  # judged on the plugin: the same on both sides
            if ctx.facts.plugin_resolver.resolve(class_path.path) is None:
                yield Finding(CLASS_PATH_MISSING, {"path": class_path.path, "how": class_path.how},
                              class_path.site, subject=class_path.path,
                              suggestion="point the string at the class's module and name")
        host = ctx.host
        for target in ctx.plugin.surface.targets:
            sym = host.resolve(target.target)
            args = {"plugin_class": target.plugin_class, "target": target.target, "label": host.label}
            severity = guard_severity(target.guard)
            if sym is None:
                yield Finding(TARGET_MISSING, args, target.site, subject=target.target, severity=severity,
                              suggestion="re-target the patch (see the import findings for where it went)",
                              **ctx.evidence(target.target))
            elif sym.kind not in (CLASS, MODULE) and sym.kind in ("function", "attribute"):
                yield Finding(TARGET_KIND, {**args, "kind": sym.kind}, target.site, subject=target.target,
                              severity=severity, suggestion="patch the class the factory returns instead",
                              **ctx.evidence(target.target))
        yield from self._registry_targets(ctx)
        yield from self._deletions(ctx)
        provided = ctx.plugin.surface.provided()
        for patch in ctx.plugin.surface.patches:
            if patch.kind is not PatchKind.ALIAS or patch.alias_of in provided:
                continue
            owner = host.resolve(patch.owner)
            if owner is None or owner.kind not in (CLASS, MODULE):
                continue  # the owner itself is missing: reported as a target or import finding
            if host.resolve(patch.alias_of) is not None:
                continue
            alias = patch.local_name or patch.name
            suggestion = "re-derive the override against the host's new structure"
            if owner.kind == CLASS and isinstance(owner.obj, ClassInfo):
                pool = [n for s in host.resolver.mro(owner) if isinstance(s.obj, ClassInfo) for n in s.obj.methods]
                close = difflib.get_close_matches(patch.name, pool, n=3, cutoff=0.6)
                if close:
                    suggestion = f"{host.label} `{patch.owner.rpartition('.')[2]}` has: {', '.join(close)}"
            yield Finding(ALIAS_MISSING, {"alias": alias, "target": patch.alias_of, "label": host.label}, patch.site,
                          subject=patch.alias_of, severity=guard_severity(patch.guard), suggestion=suggestion,
                          **ctx.evidence(patch.alias_of))

    @staticmethod
    def _registry_targets(ctx: ScanContext) -> Iterator[Finding]:
        """A registry patch spelled as a string (`@register_patch(target="…")`): nothing imports its
        owner, so a host that moved or dropped it fails only when the registry applies the patch."""
        host = ctx.host
        seen: set[tuple[str, int]] = set()
        for patch in ctx.plugin.surface.patches:
            key = (patch.site.path, patch.site.line)
            if not patch.by_string or key in seen or host.resolve(patch.owner) is not None:
                continue
            seen.add(key)
            name = patch.function.name if patch.function else patch.name
            yield Finding(TARGET_MISSING, {"plugin_class": name, "target": patch.target, "label": host.label},
                          patch.site, subject=patch.target, severity=guard_severity(patch.guard),
                          suggestion="re-target the patch string (see where upstream moved the member)",
                          **ctx.evidence(patch.target))

    @staticmethod
    def _deletions(ctx: ScanContext) -> Iterator[Finding]:
        host = ctx.host
        for deletion in ctx.plugin.surface.deletions:
            owner = host.resolve(deletion.owner)
            if owner is None or owner.kind != CLASS or not isinstance(owner.obj, ClassInfo):
                continue  # a missing owner is an import finding
            info = owner.obj
            if deletion.name in info.methods or deletion.name in info.attributes or deletion.name in info.classes:
                continue  # `del` removes the class's own member; an inherited or instance one raises
            target = f"{deletion.owner}.{deletion.name}"
            yield Finding(DELETED_MISSING, {"owner": deletion.owner.rpartition(".")[2], "name": deletion.name,
                                            "label": host.label}, deletion.site, subject=target,
                          severity=guard_severity(deletion.guard),
                          suggestion="drop the `del` (the member is gone) or delete it where it is defined now",
                          **ctx.evidence(target))
