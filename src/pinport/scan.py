"""Sources -> code model -> plugin surface -> checks -> sorted findings. Prints nothing."""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from .checks import Check, select_checks
from .checks.base import HostView, ScanContext
from .config import Settings
from .findings import Finding, Kind, Location, ScanResult, Severity, Status
from .model.index import CodeIndex, IndexCache, load_indexes
from .model.resolve import Resolver
from .plugin.model import PluginModel, load_plugin_model
from .sources.progress import ProgressFn, no_progress
from .sources.tree import SourceTree

log = logging.getLogger(__name__)

PLUGIN_SYNTAX_ERROR = Kind("PP0005", "PluginFileDoesNotParse", "this plugin file does not parse ({error}); "
                           "it was not analysed", Severity.ERROR, None, "scan")
CHECK_CRASHED = Kind("PP0099", "CheckCrashed", "internal error in check `{check}`: {error}", Severity.WARNING,
                     None, "scan")


@dataclass
class Models:
    """The three indexed trees of one scan, and the plugin's discovered surface."""

    plugin: PluginModel
    old: HostView
    new: HostView


def load_models(plugin: SourceTree, old: SourceTree, new: SourceTree, settings: Settings, *,
                cache: IndexCache | None = None, progress: ProgressFn = no_progress) -> Models:
    plugin_index, old_index, new_index = load_indexes([plugin, old, new], cache, progress=progress)
    return Models(load_plugin_model(plugin_index, settings), _view(old_index, settings),
                  _view(new_index, settings))


def _view(index: CodeIndex, settings: Settings) -> HostView:
    return HostView(index, Resolver(index, settings.host))


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Checks parse host files whose trees live as long as the scan; with the cyclic collector on,
    every generation-2 pass re-walks them all (it doubled the checks' time). Nothing here makes
    reference cycles worth collecting mid-scan."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _run_checks(checks: Iterable[Check], ctx: ScanContext, strict: bool) -> list[Finding]:
    out: list[Finding] = []
    for check in checks:
        try:
            out.extend(check.run(ctx))
        except Exception as exc:  # one broken check must not end the scan (flake8's PluginExecutionFailed)
            if strict:
                raise
            log.debug("check %s crashed", check.name, exc_info=True)
            out.append(Finding(CHECK_CRASHED, {"check": check.name, "error": f"{type(exc).__name__}: {exc}"},
                               None, subject=check.name))
    return out


# A call-site finding (callers check) that confirms a signature finding for the same plugin unit
# and parameter is folded into it: one break reads as one finding, with its call sites.
_FOLDS = {"PP0110": "PP0101", "PP0112": "PP0201"}  # evidence code -> summary code


def _fold(findings: list[Finding]) -> list[Finding]:
    def key(code: str, f: Finding, arg: str) -> tuple:
        return code, f.plugin.path if f.plugin else "", f.plugin.unit if f.plugin else "", f.args.get(arg, "")

    summaries = {key(f.code, f, "param"): i for i, f in enumerate(findings) if f.code in _FOLDS.values()}
    out = list(findings)
    dropped: set[int] = set()
    for i, f in enumerate(findings):
        target = summaries.get(key(_FOLDS.get(f.code, ""), f, "name")) if f.code in _FOLDS else None
        if target is None:
            continue
        merged = out[target]
        out[target] = replace(merged, severity=Severity.ERROR if merged.level is not Severity.ERROR else merged.severity,
                              details=(*merged.details, f"confirmed by {f.code}: {f.message}",
                                       *(d for d in f.details if ".py:" in d.split(" ")[0])))
        dropped.add(i)
    return [f for i, f in enumerate(out) if i not in dropped]


def _dedupe(findings: Iterable[Finding]) -> list[Finding]:
    seen: set[tuple] = set()
    out = []
    for f in findings:
        key = (f.fingerprint, f.plugin.line if f.plugin else 0, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def scan_models(models: Models, settings: Settings, *, checks: tuple[str, ...] = (),
                strict: bool = False, extra_checks: tuple[Check, ...] = ()) -> ScanResult:
    """Run the checks judging NEW and judging OLD; label each NEW finding drift or latent.

    `checks` names registered checks (all when empty); `extra_checks` are check objects run
    instead, for checks from outside the registry (and tests of a check on its own).
    """
    started = time.perf_counter()
    selected = extra_checks or select_checks(checks)
    plugin = models.plugin
    with _collector_paused():
        on_new = _fold(_dedupe(_run_checks(selected, ScanContext(plugin, models.new, models.old, True, settings),
                                           strict)))
        on_old = _fold(_dedupe(_run_checks(selected, ScanContext(plugin, models.old, models.new, False, settings),
                                           strict)))
    old_prints = {f.fingerprint for f in on_old}
    new_prints = {f.fingerprint for f in on_new}
    findings = [f.with_status(Status.LATENT if f.fingerprint in old_prints else Status.DRIFT) for f in on_new]
    findings.extend(_syntax_errors(plugin))
    fixed = [f.with_status(Status.FIXED) for f in on_old if f.fingerprint not in new_prints]
    for index in (plugin.index, models.old.index, models.new.index):
        index.flush()  # summaries built on demand go to the cache for the next run
    return ScanResult(
        plugin_label=plugin.label, old_label=models.old.label, new_label=models.new.label,
        findings=tuple(sorted(findings, key=Finding.sort_key)),
        checks=tuple(c.name for c in selected), files_scanned=len(plugin.modules),
        seconds=time.perf_counter() - started, fixed=tuple(sorted(fixed, key=Finding.sort_key)))


def _syntax_errors(plugin: PluginModel) -> Iterable[Finding]:
    for module in plugin.modules:
        error = plugin.index.modules[module].syntax_error
        if error:
            line = int(error.split(":")[0].split()[-1]) if error.startswith("line ") else 0
            yield Finding(PLUGIN_SYNTAX_ERROR, {"error": error}, Location(plugin.index.paths[module], line),
                          subject=module)


def scan(plugin: SourceTree, old: SourceTree, new: SourceTree, settings: Settings, *,
         cache: IndexCache | None = None, checks: tuple[str, ...] = (), strict: bool = False,
         extra_checks: tuple[Check, ...] = (), progress: ProgressFn = no_progress) -> ScanResult:
    """Index the three trees and run the selected checks (all by default)."""
    started = time.perf_counter()
    models = load_models(plugin, old, new, settings, cache=cache, progress=progress)
    result = scan_models(models, settings, checks=checks, strict=strict, extra_checks=extra_checks)
    return ScanResult(**{**result.__dict__, "seconds": time.perf_counter() - started})
