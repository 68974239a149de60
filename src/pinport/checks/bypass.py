"""Silent bypass (#10): a parallel implementation of a patched class that some configurations use instead.

vLLM grew a second GPU model runner (`vllm.v1.worker.gpu.model_runner.GPUModelRunner`) next to
the patched one; 0.18.0 chose it behind an opt-in environment variable, 0.24.0 behind a config
property that defaults on for common models, and every patch of the old runner silently stopped
applying there. For each patch target this check finds classes that do the same job (same name
elsewhere, a sibling with mostly the same methods, a subclass that overrides patched methods
without calling up) and the code that selects between them, at OLD and at NEW: the `if` whose
branches name the candidate, and the environment variables and config fields its test reads
(found by `model/selection.py`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..findings import Finding, Kind, Location, Severity
from ..model.host import HostView, package_of
from ..model.resolve import CLASS, Symbol
from ..model.selection import Selection, selections
from ..model.summary import BindingKind, ClassInfo
from ..plugin.reach import supported_platforms
from ..plugin.records import PatchKind
from .base import ScanContext

NAME = "bypass"

PARALLEL_ADDED = Kind("PP1001", "ParallelImplementationAdded", "{label} adds `{candidate}`, a parallel "
                      "implementation of the patched `{name}` ({relation}); the patches do not reach it",
                      Severity.WARNING, 10, NAME)
SELECTION_CHANGED = Kind("PP1002", "ParallelSelectionChanged", "`{candidate}` is a parallel implementation of the "
                         "patched `{name}` ({relation}), and {label} changed how it is selected", Severity.WARNING,
                         10, NAME)
PARALLEL_EXISTS = Kind("PP1003", "ParallelImplementation", "`{candidate}` is a parallel implementation of the "
                       "patched `{name}` ({relation}); the patches do not reach it", Severity.INFO, 10, NAME)

KINDS = (PARALLEL_ADDED, SELECTION_CHANGED, PARALLEL_EXISTS)

_SAME_NAME_SHARE = 0.4  # of the target's own public methods a same-named class must also define
_SIBLING_SHARE = 0.5  # ... a sibling must define, counting only methods the shared base does not give
_MIN_COMMON = 3


@dataclass(frozen=True)
class Candidate:
    cls: Symbol  # in NEW
    relation: str  # "same name", "sibling of X", "subclass overriding ..."
    common: tuple[str, ...]  # patched (else public) methods it defines itself


def _public(info: ClassInfo) -> set[str]:
    return {n for n in info.methods if not n.startswith("_")}


def _inherited(view: HostView, bases: list[Symbol]) -> set[str]:
    names: set[str] = set()
    for base in bases:
        for s in view.resolver.mro(base):
            if isinstance(s.obj, ClassInfo):
                names.update(s.obj.methods)
    return names


def find_candidates(view: HostView, target: Symbol, patched: set[str]) -> list[Candidate]:
    """Classes of `view` that look like a parallel implementation of `target` (see module docstring)."""
    info = target.obj
    assert isinstance(info, ClassInfo)
    resolver = view.resolver
    mro_t = {s.path for s in resolver.mro(target)}
    name = target.path.rpartition(".")[2]
    own = _public(info)
    out: dict[str, Candidate] = {}
    for mod, kind in view.index.definitions.get(name, ()):
        sym = view.resolve(f"{mod}.{name}") if kind is BindingKind.CLASS and mod != target.module else None
        if sym is None or sym.kind != CLASS or sym.path in mro_t or target.path in {
                s.path for s in resolver.mro(sym)} or not isinstance(sym.obj, ClassInfo):
            continue
        common = own & set(sym.obj.methods)
        if len(common) >= _MIN_COMMON and len(common) >= _SAME_NAME_SHARE * len(own):
            out[sym.path] = Candidate(sym, "same name", _shown(common, patched))
    host_bases = [b for b in resolver.bases(target) if b.kind == CLASS]
    base_paths = {b.path for b in host_bases}
    extra = own - _inherited(view, host_bases)
    leaves = frozenset({b.path.rpartition(".")[2] for b in host_bases} | {name})
    index = view.class_index(package_of(target.module), leaves)
    for leaf in sorted(leaves):
        for mod, cls_name in index.get(leaf, ()):
            sym = view.resolve(f"{mod}.{cls_name}")
            if sym is None or sym.kind != CLASS or sym.path == target.path or sym.path in out or not isinstance(
                    sym.obj, ClassInfo):
                continue
            direct = {b.path for b in resolver.bases(sym)}
            if target.path in direct:
                overridden = sorted(n for n in patched & set(sym.obj.methods)
                                    if not _mangled(n) and not view.calls_super(sym, n))
                if overridden:
                    out[sym.path] = Candidate(sym, "subclass overriding patched " + ", ".join(overridden[:4]),
                                              tuple(overridden))
            elif direct & base_paths and target.path not in {s.path for s in resolver.mro(sym)}:
                common = extra & set(sym.obj.methods)
                if len(common) >= _MIN_COMMON and len(common) >= _SIBLING_SHARE * len(extra):
                    shared = sorted(direct & base_paths)[0].rpartition(".")[2]
                    out[sym.path] = Candidate(sym, f"sibling under {shared}", _shown(common, patched))
    return [out[k] for k in sorted(out)]


def _mangled(name: str) -> bool:
    """`__x` in a class body is `_Cls__x`: a subclass's own `__x` is another name, never an override."""
    return name.startswith("__") and not name.endswith("__")


def _shown(common: set[str], patched: set[str]) -> tuple[str, ...]:
    return tuple(sorted(common & patched) or sorted(common))


# -- the check -----------------------------------------------------------------------------------
class BypassCheck:
    name = NAME
    cost = 0.8  # relative run time (tenths of a second of a warm scan), to spread checks over two cores
    drift = (10,)
    kinds = KINDS
    description = "patched classes have no parallel implementation the host may select instead"

    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        patched: dict[str, set[str]] = {}
        for p in ctx.plugin.surface.patches:
            if p.kind in (PatchKind.MEMBER, PatchKind.ASSIGNMENT) and p.function is not None and not (
                    p.name.startswith("__") and p.name.endswith("__")):
                patched.setdefault(p.owner, set()).add(p.name)
        covered = {s.path for t in ctx.plugin.surface.targets if t.is_patch
                   for s in [ctx.new.resolve(t.target)] if s is not None}
        seen: set[str] = set()
        for target in ctx.plugin.surface.targets:
            sym = ctx.new.resolve(target.target)
            if not target.is_patch or sym is None or sym.kind != CLASS or sym.path in seen:
                continue
            seen.add(sym.path)
            for cand in find_candidates(ctx.new, sym, patched.get(target.target, set())):
                if cand.cls.path not in covered:
                    finding = self._judge(ctx, target.site, target.target, sym, cand)
                    if finding is not None:
                        yield finding

    def _judge(self, ctx: ScanContext, site: Location, target_path: str, target: Symbol,
               cand: Candidate) -> Finding | None:
        old_target, old_cand = ctx.old.resolve(target.path), ctx.old.resolve(cand.cls.path)
        is_new = old_cand is None or old_cand.kind != CLASS
        new_sel = selections(ctx.new, target, cand.cls)
        old_sel = [] if is_new or old_target is None else selections(ctx.old, old_target, old_cand)  # type: ignore[arg-type]
        # only a site that names both classes is a switch between them; others only show where it is built
        switch_old = [x for x in old_sel if ("names only the candidate",) not in x.reads]
        switch_new = [x for x in new_sel if ("names only the candidate",) not in x.reads]
        changed = not is_new and bool(switch_old or switch_new) and _signature(switch_old) != _signature(switch_new)
        if (is_new or changed) and not ctx.judging_new:
            return None  # introduced by the move: reported once, on NEW, as drift
        kind = PARALLEL_ADDED if is_new else SELECTION_CHANGED if changed else PARALLEL_EXISTS
        forced, notes = self._forced(ctx, {v for s in new_sel for v in s.env_vars})
        details = [f"it defines {', '.join(cand.common[:8])} itself"]
        lines = {}
        for label, sels in ((ctx.old.label, old_sel), (ctx.new.label, new_sel)):
            found = [line.removeprefix(f"{label}: ") for sel in sels[:3] for line in sel.lines]
            lines[label] = found or ([] if is_new and label == ctx.old.label else ["no selection site found"])
        if not is_new and lines[ctx.old.label] == lines[ctx.new.label]:
            details.extend(f"{ctx.old.label} and {ctx.new.label}: {line}" for line in lines[ctx.new.label])
        else:
            details.extend(f"{label}: {line}" for label, found in lines.items() for line in found)
        details.extend(notes)
        bootstrap = _bootstrap(ctx)
        if bootstrap is not None:
            details.append(f"the plugin's bootstrap, where a force belongs: `{bootstrap[0]}` ({bootstrap[1].cited()})")
        severity = Severity.INFO if forced and kind is not PARALLEL_EXISTS else None
        refused = _refused_platform(ctx, cand.cls.module)
        if refused:
            details.append(f"the plugin refuses the `{refused}` platform this implementation serves "
                           f"(it requires {', '.join(sorted(supported_platforms(ctx.plugin)))})")
            severity = Severity.INFO
        args = {"name": target_path, "candidate": cand.cls.path, "relation": cand.relation, "label": ctx.new.label}
        return Finding(kind, args, site, subject=cand.cls.path,
                       old=old_sel[0].site if old_sel else ctx.old.location(old_cand) if not is_new else None,
                       new=new_sel[0].site if new_sel else ctx.new.location(cand.cls), severity=severity,
                       details=tuple(details),
                       extra={"flags": sorted({v for s in new_sel for v in s.env_vars | s.flags}),
                              **({"bootstrap": bootstrap[0]} if bootstrap else {}),
                              **({"appendix": f"serves the {refused} platform the plugin refuses"} if refused else {})},
                       suggestion="force the patched implementation (as the selection allows)"
                                  + (f" in the plugin's bootstrap `{bootstrap[0]}`" if bootstrap else "")
                                  + f", or port the patches to `{cand.cls.path.rpartition('.')[2]}` in "
                                    f"`{cand.cls.module}`")

    @staticmethod
    def _forced(ctx: ScanContext, env_vars: set[str]) -> tuple[bool, list[str]]:
        sets = [(m, node, var, value) for m, _, node, var, value in ctx.facts.uses.env_sets
                if var in env_vars]
        notes = [f"plugin forces {var}={value} at {ctx.plugin.index.paths[m]}:{node.lineno}"
                 for m, node, var, value in sets]
        if env_vars and not sets:
            notes.append(f"the plugin does not set {', '.join(sorted(env_vars))}: nothing forces the patched path")
        return bool(sets), notes


_PLATFORMS = ("cuda", "rocm", "cpu", "xpu", "tpu", "hpu", "neuron")  # words naming a host platform in module paths


def _refused_platform(ctx: ScanContext, module: str) -> str:
    """The platform a candidate's module is for (`worker.cpu_model_runner` -> cpu) when the plugin's own
    platform check refuses it; "" otherwise."""
    supported = supported_platforms(ctx.plugin)
    if not supported:
        return ""
    words = set(re.split(r"[._]", module))
    return next((p for p in _PLATFORMS if p in words and p not in supported), "")


def _bootstrap(ctx: ScanContext) -> tuple[str, Location] | None:
    """The plugin's entry-point function (what the host runs first) and where it is defined."""
    for entry in ctx.plugin.entry_points:
        module, _, attr = entry.value.partition(":")
        module, attr = module.strip(), attr.strip()
        node = ctx.plugin.function_node(module, attr) if attr else None
        if node is not None:
            return f"{module}:{attr}", ctx.facts.plugin_line(module, node.lineno, attr)
    return None


def _signature(sels: list[Selection]) -> frozenset[frozenset[tuple[str, ...]]]:
    return frozenset(frozenset(s.reads) for s in sels)


__all__ = ["KINDS", "BypassCheck", "find_candidates"]
