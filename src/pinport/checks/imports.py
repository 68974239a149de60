"""Imports (#4 moved, #5 renamed, #6 removed): every host import and host attribute read resolves.

An unresolved name is explained with what NEW has instead: the same name defined elsewhere
(moved), a definition at the old place that looks like the old one under another name
(renamed), or what the old place holds now (removed, perhaps replaced by a flag).
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterator

from ..findings import Finding, Kind, Severity
from ..model.nodes import walk_tree
from ..model.resolve import CLASS, FUNCTION, MODULE, Symbol
from ..model.summary import BindingKind, ClassInfo, FunctionInfo
from ..plugin.reach import names_used_as_classes
from ..plugin.records import Guard
from .base import HostView, ScanContext, guard_severity

NAME = "imports"

MODULE_MISSING = Kind("PP0401", "ModuleMissing", "module `{module}` does not exist in {label}",
                      Severity.ERROR, 4, NAME)
NAME_MOVED = Kind("PP0402", "NameMoved", "`{name}` is no longer in `{module}` in {label}; it is defined in "
                  "`{where}`", Severity.ERROR, 4, NAME)
NAME_RENAMED = Kind("PP0501", "NameRenamed", "`{name}` is gone from `{module}` in {label}; `{candidate}` "
                    "there looks like its new name", Severity.ERROR, 5, NAME)
NAME_REMOVED = Kind("PP0601", "NameRemoved", "`{name}` no longer exists in `{module}` in {label}",
                    Severity.ERROR, 6, NAME)
ATTRIBUTE_MISSING = Kind("PP0602", "HostAttributeMissing", "`{name}` read on `{base}` does not exist in {label}",
                         Severity.ERROR, 6, NAME)
TYPE_CHECKING_ONLY = Kind("PP0403", "TypeCheckingOnlyName", "`{name}` exists in `{module}` only under "
                          "TYPE_CHECKING in {label}; importing it fails at run time", Severity.ERROR, 4, NAME)

KINDS = (MODULE_MISSING, NAME_MOVED, NAME_RENAMED, NAME_REMOVED, ATTRIBUTE_MISSING, TYPE_CHECKING_ONLY)


class ImportsCheck:
    name = NAME
    cost = 2.3  # relative run time (tenths of a second of a warm scan), to spread checks over two cores
    drift = (4, 5, 6)
    kinds = KINDS
    description = "every host import and host attribute read resolves in the host version"

    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        provided = ctx.plugin.surface.provided()
        for imp in ctx.plugin.surface.imports:
            if imp.path in provided or ctx.plugin.surface.stands_in(imp.path):
                continue
            finding = self._check_path(ctx, imp.path, imp.is_module_import, imp.site.path)
            if finding is not None:
                kind, args, evidence, suggestion = finding
                severity, details = guard_severity(imp.guard), (
                    (f"guarded: {imp.guard.value}",) if imp.guard is not Guard.NONE else ())
                if imp.instead and all(ctx.host.resolve(p) is not None for p in imp.instead):
                    # the `except ImportError:` fallback of a try whose imports all resolve: it never runs here
                    severity, details = Severity.INFO, (f"in the `except ImportError:` fallback of a try whose "
                                                        f"imports all exist in {ctx.host.label}: it does not run",)
                yield Finding(kind, args, imp.site, subject=imp.path, suggestion=suggestion,
                              severity=severity, **evidence, details=details)
        seen: set[tuple[str, str, str]] = set()
        for use in ctx.plugin.surface.uses:
            key = (use.site.path, use.site.unit, use.path)
            if key in seen:
                continue
            seen.add(key)
            finding = self._check_use(ctx, use.path, use.base, provided)
            if finding is not None:
                kind, args, evidence, suggestion = finding
                yield Finding(kind, args, use.site, subject=use.path, suggestion=suggestion,
                              severity=guard_severity(use.guard), **evidence)

    # ------------------------------------------------------------------------------------------
    def _check_use(self, ctx: ScanContext, path: str, base: str, provided: set[str]):
        host = ctx.host
        base_sym = host.resolve(base)
        if base_sym is None or base_sym.kind not in (MODULE, CLASS):
            return None  # the base itself is unresolved (reported at its import) or a value
        # walk the chain: only the first missing link is a finding
        head = base
        for part in path[len(base) + 1:].split("."):
            if f"{head}.{part}" in provided or (part.startswith("__") and part.endswith("__")):
                return None  # set by the plugin itself, or a dunder every module and class has
            sym = host.resolve(f"{head}.{part}")
            if sym is None:
                parent = host.resolve(head)
                if parent is None or parent.kind not in (MODULE, CLASS):
                    return None
                if host.is_env_flag_read(head, part):
                    return None  # the host-kinds check reports a removed flag as EnvFlagRemoved
                missing = f"{head}.{part}"
                args = {"name": part, "base": head, "label": host.label}
                suggestion = self._alternatives(ctx, head, part) or f"`{part}` must be re-derived against {host.label}"
                return ATTRIBUTE_MISSING, args, ctx.evidence(missing), suggestion
            if sym.kind not in (MODULE, CLASS):
                return None
            head = f"{head}.{part}"
        return None

    def _check_path(self, ctx: ScanContext, path: str, is_module: bool, plugin_path: str = ""):
        host = ctx.host
        sym = host.resolve(path)
        module, _, name = path.rpartition(".")
        if sym is not None:
            if not is_module and self._type_checking_only(host, module, name):
                args = {"name": name, "module": module, "label": host.label}
                return (TYPE_CHECKING_ONLY, args, ctx.evidence(path),
                        f"import `{name}` from where it is defined at run time, or only under TYPE_CHECKING")
            return None
        if is_module or host.resolve(module) is None:
            target = path if is_module else module
            if host.resolve(target) is None:
                return self._module_missing(ctx, target, "" if is_module else name)
        args = {"name": name, "module": module, "label": host.label}
        moved = self._moved(host, name)
        if moved:
            where = moved[0]
            args["where"] = where.path
            suggestion = f"import `{name}` from `{where.module}`" + (
                f" (also defined in {', '.join(m.module for m in moved[1:4])})" if len(moved) > 1 else "")
            return NAME_MOVED, args, ctx.evidence(path, judged=where), suggestion
        renamed = self._renamed(ctx, module, name)
        if renamed:
            args["candidate"] = renamed.path.rpartition(".")[2]
            suggestion = f"use `{renamed.path}` (check that it does the same job)"
            as_class = ctx.facts.keep(("class-uses", plugin_path),
                                      lambda: names_used_as_classes(ctx.plugin, plugin_path))
            if renamed.kind != CLASS and name in as_class:  # the suggestion must pass the same check
                suggestion = (f"`{renamed.path}` took its place but is a {renamed.kind}, which the plugin's "
                              f"`isinstance`/base/except use of `{name}` cannot take: test against the class "
                              "the host's own code checks the same object with now")
            return NAME_RENAMED, args, ctx.evidence(path, judged=renamed), suggestion
        suggestion = self._alternatives(ctx, module, name) or f"re-derive the use of `{name}` against {host.label}"
        return NAME_REMOVED, args, ctx.evidence(path), suggestion

    def _module_missing(self, ctx: ScanContext, module: str, name: str = ""):
        """A module gone from the host. For `from module import name` the suggestion follows the name:
        where NEW defines it now, else a same-named module only if it defines the name too."""
        host = ctx.host
        args = {"module": module, "label": host.label}
        moved = self._moved(host, name) if name else []
        # the one closest to the gone module first: `a.gpu_input_batch` -> `a.gpu.input_batch`, not `a.cpu.input_batch`
        moved.sort(key=lambda m: -difflib.SequenceMatcher(None, module, m.module).ratio())
        if moved:
            where = moved[0]
            suggestion = f"import `{name}` from `{where.module}` (check that it does the same job)" + (
                f"; also defined in {', '.join(m.module for m in moved[1:4])}" if len(moved) > 1 else "")
            return MODULE_MISSING, args, ctx.evidence(module, judged=where), suggestion
        leaf = module.rpartition(".")[2]
        same_leaf = sorted(m for m in host.index.modules if m.rpartition(".")[2] == leaf
                           and (not name or name in host.index.modules[m].bindings))
        if same_leaf:
            suggestion = f"the module may have moved to `{same_leaf[0]}`" + (
                f" (or {', '.join(same_leaf[1:3])})" if len(same_leaf) > 1 else "")
            evidence = ctx.evidence(module, judged=Symbol(MODULE, same_leaf[0], same_leaf[0], 1))
        else:
            parent = module
            while parent and host.resolve(parent) is None:
                parent = parent.rpartition(".")[0]
            suggestion = f"nearest existing package is `{parent}`" if parent else "the host package is missing"
            gone = ctx.other.resolve(f"{module}.{name}") if name else None
            if name and (not name.islower() or (gone is not None and gone.kind in (FUNCTION, CLASS))):
                suggestion += f"; {host.label} defines `{name}` nowhere: re-derive its use"  # what `_moved` looks for
            evidence = ctx.evidence(module)
        return MODULE_MISSING, args, evidence, suggestion

    @staticmethod
    def _type_checking_only(host: HostView, module: str, name: str) -> bool:
        summary = host.index.modules.get(module)
        if summary is None:
            return False
        binding = summary.bindings.get(name)
        return bool(binding and binding.type_checking and name not in summary.lazy_exports)

    @staticmethod
    def _moved(host: HostView, name: str) -> list[Symbol]:
        found = []
        for mod, kind in host.index.definitions.get(name, ()):
            if kind in (BindingKind.FUNCTION, BindingKind.CLASS) or not name.islower():
                sym = host.resolve(f"{mod}.{name}")
                if sym is not None:
                    found.append(sym)
        # prefer the shortest public path (vllm.utils.torch_utils over vllm.utils.torch_utils._impl)
        return sorted(found, key=lambda s: (s.path.count("._"), s.path.count("."), s.path))

    def _renamed(self, ctx: ScanContext, module: str, name: str) -> Symbol | None:
        """A definition NEW has at the gone place (and OLD lacked) that resembles OLD's `name`."""
        gone = ctx.other.resolve(f"{module}.{name}")
        here = ctx.host.index.modules.get(module)
        there = ctx.other.index.modules.get(module)
        if gone is None or here is None or gone.kind not in (FUNCTION, CLASS):
            return None
        best, best_score = None, 0.0
        for cand in here.bindings:
            if there is not None and cand in there.bindings:
                continue  # existed before too: not a rename of `name`
            sym = ctx.host.resolve(f"{module}.{cand}")
            if sym is None or sym.kind != gone.kind:
                continue
            score = 0.4 * difflib.SequenceMatcher(None, name, cand).ratio() + 0.6 * _shape_similarity(gone, sym)
            if score > best_score:
                best, best_score = sym, score
        return best if best_score >= 0.55 else None

    @staticmethod
    def _alternatives(ctx: ScanContext, module: str, name: str) -> str:
        """What the old place holds now: look-alike names there, and flags that may replace a helper."""
        sym = ctx.host.resolve(module)
        if sym is not None and sym.kind == CLASS and isinstance(sym.obj, ClassInfo):  # `Cls.x` read on a class
            pool = list(sym.obj.methods) + list(sym.obj.attributes)
        else:
            summary = ctx.host.index.modules.get(module)
            if summary is None:
                return ""
            pool = list(summary.bindings) + list(summary.lazy_exports)
        close = difflib.get_close_matches(name, pool, n=3, cutoff=0.6)
        parts = []
        if close:
            parts.append(f"{ctx.host.label} `{module}` has: {', '.join(close)}")
        flags = _replacement_flags(ctx, module, name)
        if flags:
            parts.append(f"a flag may replace it: {', '.join(f'`{f}`' for f in flags)}")
        return "; ".join(parts)


_WEAK_TOKENS = {"is", "get", "use", "has", "vllm", "enable", "enabled", "the", "set"}


def _tokens(name: str) -> set[str]:
    return {t for t in name.lower().split("_") if t and t not in _WEAK_TOKENS}


def _replacement_flags(ctx: ScanContext, module: str, name: str) -> list[str]:
    """Upper-case flags in NEW (module constants, lazy `envs.*` exports) named like a removed helper.

    The flags the OLD definition itself decided by come first: `vllm_is_batch_invariant()` returned
    `VLLM_BATCH_INVARIANT`, which NEW serves as `envs.VLLM_BATCH_INVARIANT`. Only a flag in what it
    returns or tests counts: a constant it merely passes on (`pin_memory=PIN_MEMORY`) is no stand-in.
    """
    wanted = _tokens(name)
    read_by_old: set[str] = set()
    gone = ctx.other.resolve(f"{module}.{name}")  # the definition the judged version no longer has
    if gone is not None and gone.kind == FUNCTION and isinstance(gone.obj, FunctionInfo):
        node = ctx.other.function_node(gone)
        if node is not None:
            read_by_old = {n.id for part in _decisive_parts(node) for n in walk_tree(part)
                           if isinstance(n, ast.Name) and n.id.isupper()}
    if not wanted and not read_by_old:
        return []
    scored: list[tuple[float, str]] = []
    for mod, flag in ctx.host.index.flags:
        overlap = len(wanted & _tokens(flag)) / len(wanted | _tokens(flag)) if wanted else 0.0
        score = overlap + (1.0 if flag in read_by_old else 0.0)
        if score >= 0.6:
            scored.append((-score, f"{mod}.{flag}"))
    return list(dict.fromkeys(path for _, path in sorted(scored)))[:3]


def _decisive_parts(node: ast.AST) -> list[ast.AST]:
    """What a helper's result is decided by: its returned values and its tests (if/while/ternary)."""
    out: list[ast.AST] = []
    for n in walk_tree(node):
        if isinstance(n, ast.Return) and n.value is not None:
            out.append(n.value)
        elif isinstance(n, (ast.If, ast.While, ast.IfExp)):
            out.append(n.test)
    return out


def _shape_similarity(a: Symbol, b: Symbol) -> float:
    """How alike two definitions look: parameter names for functions, member names for classes."""
    def shape(sym: Symbol) -> set[str]:
        if isinstance(sym.obj, FunctionInfo):
            returns = sym.obj.signature.returns
            return {p.name for p in sym.obj.signature.params if p.name not in ("self", "cls")} | (
                {f"->{returns}"} if returns and returns != "None" else set())
        if isinstance(sym.obj, ClassInfo):
            return set(sym.obj.methods) | set(sym.obj.attributes)
        return set()
    sa, sb = shape(a), shape(b)
    if not sa or not sb:
        return 0.3 if not sa and not sb else 0.0  # nothing to compare is weak evidence either way
    return len(sa & sb) / len(sa | sb)
