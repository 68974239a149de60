"""Sources -> code model -> plugin surface -> checks -> sorted findings. Prints nothing."""

from __future__ import annotations

import gc
import hashlib
import json
import logging
import sys
import time
import types
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from .accept import accept_findings
from .checks import Check, select_checks
from .checks.base import ScanContext
from .config import Settings
from .facts import ScanFacts
from .findings import Finding, Kind, Location, ScanResult, Severity, Status, number_occurrences
from .folding import fold_root_causes
from .model import codec
from .model.host import HostView
from .model.index import CodeIndex, IndexCache, load_indexes
from .model.resolve import Resolver
from .plugin.model import PluginModel, load_plugin_model
from .plugin.project import is_for_other_release, version_specific_modules
from .plugin.version_guards import branch_not_taken
from .sources import Cache, cached_releases
from .sources.progress import ProgressFn, no_progress
from .sources.tree import SourceTree
from .workers import can_fork, run_beside, shared_counter

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
    history: tuple[SourceTree, ...] = ()  # earlier host releases (oldest first), indexed only where needed
    index_cache: IndexCache | None = None
    _facts: ScanFacts | None = field(default=None, init=False, repr=False)

    def facts(self, settings: Settings) -> ScanFacts:
        """The shared facts of a scan of these models (kept while the settings stay the same)."""
        if self._facts is None or self._facts.settings != settings:
            self._facts = ScanFacts(self.plugin, self.old, self.new, settings, self.history,
                                     self.index_cache)
        return self._facts


def load_models(plugin: SourceTree, old: SourceTree, new: SourceTree, settings: Settings, *,
                cache: IndexCache | None = None, progress: ProgressFn = no_progress,
                history: tuple[SourceTree, ...] = ()) -> Models:
    """Index the plugin, OLD and NEW; `history` (releases before OLD) is kept for the copies' origins."""
    plugin_index, old_index, new_index = load_indexes([plugin, old, new], cache, progress=progress)
    old_index.lend_from(new_index)  # the files both versions hold: parsed and walked once
    new_index.lend_from(old_index)
    return Models(load_plugin_model(plugin_index, settings), host_view(old_index, settings),
                  host_view(new_index, settings), history, cache)


def host_history(old: SourceTree, settings: Settings, cache: Cache) -> tuple[SourceTree, ...]:
    """The host releases before OLD already in the cache, oldest first: where a lagging copy came from
    (`load_models`' `history`); none when OLD is not a registry release."""
    if old.version is None:
        return ()
    return tuple(cached_releases(settings.host_dist, cache=cache, below=old.version, packages=(settings.host,)))


def host_view(index: CodeIndex, settings: Settings) -> HostView:
    """The view of one indexed host version the checks read."""
    return HostView(index, Resolver(index, settings.host), settings.env_module)


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
            # Everything allocated meanwhile sits in the youngest generation: re-enabled as it is,
            # the next allocation would walk it all at once. Moved to the oldest generation instead
            # (freeze, then unfreeze), it waits for the next full collection like any old object.
            gc.freeze()
            gc.unfreeze()
            gc.enable()


collector_paused = _collector_paused  # for batch callers (the rebase) that pause it over many scans


def _run_checks(checks: Iterable[Check], ctx: ScanContext, strict: bool) -> dict[str, list[Finding]]:
    """Each check's findings by check name. A crashing check keeps what it yielded before the crash
    and adds an internal-error finding naming the check, the plugin file and the unit it was on."""
    out: dict[str, list[Finding]] = {}
    for check in checks:
        found = out[check.name] = []
        try:
            for finding in check.run(ctx):
                if strict:
                    finding.check_template()
                found.append(finding)
        except Exception as exc:  # one broken check must not end the scan (flake8's PluginExecutionFailed)
            if strict:
                raise
            log.debug("check %s crashed", check.name, exc_info=True)
            found.append(Finding(CHECK_CRASHED, {"check": check.name, "error": f"{type(exc).__name__}: {exc}"},
                                 _crash_site(exc, ctx), subject=check.name))
    return out


def _crash_site(exc: BaseException, ctx: ScanContext) -> Location | None:
    """The plugin place a check was judging when it raised: the innermost frame (below the scan's
    own) holding a plugin location (a patch's or unit's `site`, a copy's span, a module and unit)."""
    paths = ctx.plugin.index.paths
    known = set(paths.values())
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        if frame.f_globals.get("__name__") == __name__:
            continue
        names = frame.f_locals
        for value in names.values():
            site = value if isinstance(value, Location) else getattr(value, "site", None)
            if isinstance(site, Location) and site.path in known:
                return site
            span = getattr(value, "plugin", None)
            if getattr(span, "path", None) in known and isinstance(getattr(value, "unit", None), str):
                return Location(span.path, span.start, 0, value.unit)  # type: ignore[union-attr]
        module, unit = names.get("module"), names.get("unit")
        unit = getattr(unit, "qualname", unit)
        if isinstance(module, str) and module in paths and isinstance(unit, str):
            return Location(paths[module], 0, 0, unit)
    return None


def _both_sides(checks: Iterable[Check], sides: tuple[ScanContext, ScanContext],
                strict: bool) -> tuple[dict[str, list[Finding]], dict[str, list[Finding]]]:
    return _run_checks(checks, sides[0], strict), _run_checks(checks, sides[1], strict)


Bundle = tuple[Check, ...]
Task = tuple[Bundle, int]  # a bundle of checks and the side it judges (0: NEW, 1: OLD)
Results = tuple[dict[str, list[Finding]], dict[str, list[Finding]]]  # by check name: judging NEW, judging OLD
Queue = tuple[list[int], Callable[[], int]]  # task numbers, and the `take()` handing out places in that list
# facts of the plugin and both hosts together that checks read on both sides, kept in the index cache
# (`ScanFacts.stored`): this process builds them first while the forked worker judges the checks that
# need none; by the time the worker takes a task reading them, it reads them back instead of building them
_BUILT_FIRST = ("copies",)


def _run_taken(tasks: list[Task], queues: list[Queue], sides: tuple[ScanContext, ScanContext],
               strict: bool, done: list[int]) -> Results:
    """Tasks run one at a time, from each queue in turn, each the next its `take()` hands out (shared
    with the other process), until none is left; the numbers of those run here are added to `done`."""
    found: Results = ({}, {})
    for numbers, take in queues:
        while (i := take()) < len(numbers):
            bundle, side = tasks[numbers[i]]
            found[side].update(_run_checks(bundle, sides[side], strict))
            done.append(numbers[i])
    return found


def _run_forked(tasks: list[Task], queues: list[Queue], sides: tuple[ScanContext, ScanContext],
                strict: bool) -> Results:
    """The forked worker's share: the tasks it takes, then the summaries it built to the cache."""
    result = _run_taken(tasks, queues, sides, strict, [])
    for index in {id(ctx.host.index): ctx.host.index for ctx in sides}.values():
        index.flush()
    return result


def _bundles(checks: tuple[Check, ...]) -> list[Bundle]:
    """The checks in bundles, costliest first (a check's `cost` hint, default 1), each in registry order.

    Checks that read the same costly shared fact of one side (`shares`, but those of `_BUILT_FIRST`)
    are one bundle, so the forked worker and this process never both build it.
    """
    bundle_of: dict[str, int] = {}  # check name or shared fact -> bundle number
    bundles: list[list[Check]] = []

    def keys(check: Check) -> list[str]:
        return [f"check:{check.name}", *(f"fact:{f}" for f in getattr(check, "shares", ()) if f not in _BUILT_FIRST)]
    for check in checks:
        joined = sorted({bundle_of[k] for k in keys(check) if k in bundle_of})
        target = joined[0] if joined else len(bundles)
        if not joined:
            bundles.append([])
        for other in joined[1:]:  # this check links bundles that were apart: merge them
            bundles[target].extend(bundles[other])
            bundles[other] = []
        bundles[target].append(check)
        for member in bundles[target]:
            for key in keys(member):
                bundle_of[key] = target
    order = {c.name: i for i, c in enumerate(checks)}
    return [tuple(sorted(b, key=lambda c: order[c.name]))
            for b in sorted((b for b in bundles if b), key=lambda b: -sum(getattr(c, "cost", 1) for c in b))]


def _tasks(checks: tuple[Check, ...]) -> list[Task]:
    """Each bundle judging NEW, then judging OLD, costliest bundle first: the sides of one costly
    check (the signatures check judging NEW took three times as long as judging OLD, cold, and
    twice as long as any other bundle) go to both processes instead of to one."""
    return [(bundle, side) for bundle in _bundles(checks) for side in (0, 1)]


def _run_all(checks: tuple[Check, ...], sides: tuple[ScanContext, ScanContext], strict: bool) -> Results:
    """Both sides of every check; with two cores, shared with a forked worker.

    The worker inherits the loaded models (copy-on-write); findings come back over a pipe, and
    summaries and stored facts either process builds reach the other through the index cache. Each
    process takes the next task (a bundle of checks on one side) as it finishes one, costliest
    first, so neither waits long for the other however a plugin's costs differ from the hints:
    this process starts with the tasks reading a `_BUILT_FIRST` fact, the worker with the others.
    Without fork (or one core, or one check) everything runs here.
    """
    if len(checks) < 2 or not can_fork():
        return _both_sides(checks, sides, strict)
    tasks = _tasks(checks)
    for ctx in sides:
        ctx.host.index.load_text()  # once, before the fork, instead of once per process
        ctx.host.index.share_with_siblings()
    facts = sides[0].facts
    facts.load_plugin_side()  # the plugin facts nearly every check reads: built once, inherited
    first = [i for i, (bundle, _) in enumerate(tasks) if any(
        name in getattr(c, "shares", ()) for c in bundle for name in _BUILT_FIRST)]
    others = [i for i in range(len(tasks)) if i not in first]
    first_queue, other_queue = (first, shared_counter()), (others, shared_counter())
    mine: list[int] = []

    def rest() -> Results:  # the worker died: every task this process did not run (some it had taken)
        found: Results = ({}, {})
        for i, (bundle, side) in enumerate(tasks):
            if i not in mine:
                found[side].update(_run_checks(bundle, sides[side], strict))
        return found
    local, forked = run_beside(lambda: _run_forked(tasks, [other_queue, first_queue], sides, strict),
                               lambda: _run_taken(tasks, [first_queue, other_queue], sides, strict, mine),
                               fallback=rest)
    return tuple({c.name: {**local[i], **forked[i]}[c.name] for c in checks} for i in (0, 1))  # type: ignore[return-value]


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
                strict: bool = False, extra_checks: tuple[Check, ...] = (), judge_old: bool = True,
                stored: bool = False) -> ScanResult:
    """Run the checks judging NEW and judging OLD; label each NEW finding drift or latent.

    `checks` names registered checks (all when empty); `extra_checks` are check objects run
    instead, for checks from outside the registry (and tests of a check on its own). With
    `judge_old=False` OLD is not judged: the same NEW findings, every one labelled drift and none
    fixed, for a caller comparing identities alone (a merge's verification); `stored` then keeps
    the checks' findings in the index cache across runs (`judged`; not with `strict`). Judging
    both sides, each side's findings are kept so whenever the models have an index cache
    (`_judged_both`; not with `strict`).
    """
    started = time.perf_counter()
    selected = extra_checks or select_checks(checks)
    plugin = models.plugin
    facts = models.facts(settings)
    sides = (ScanContext(plugin, models.new, models.old, True, settings, facts),
             ScanContext(plugin, models.old, models.new, False, settings, facts))
    with _collector_paused():
        if judge_old:
            by_new, by_old = _judged_both(tuple(selected), sides, strict)
        else:
            by_new = judged(selected, sides[0]) if stored and not strict else _run_checks(selected, sides[0], strict)
            by_old = {c.name: [] for c in selected}
    on_new = _side_findings(selected, by_new, plugin, models.new, facts.unreached_modules)
    on_old = _side_findings(selected, by_old, plugin, models.old, facts.unreached_modules)
    on_old_ids = {f.identity for f in on_old}
    on_new_ids = {f.identity for f in on_new}
    findings = [f.with_status(Status.LATENT if f.identity in on_old_ids else Status.DRIFT) for f in on_new]
    findings = _other_release_modules(findings, plugin, models.new.index.tree.version)
    findings.extend(_syntax_errors(plugin))
    fixed = [f.with_status(Status.FIXED) for f in on_old if f.identity not in on_new_ids]
    for index in (plugin.index, models.old.index, models.new.index):
        index.flush()  # summaries built on demand go to the cache for the next run
    prefix = repository_prefix(plugin.index.tree)
    findings = [_in_repository(f, prefix) for f in findings]
    fixed = [_in_repository(f, prefix) for f in fixed]
    result = ScanResult(
        plugin_label=plugin.label, old_label=models.old.label, new_label=models.new.label,
        findings=tuple(sorted(findings, key=Finding.sort_key)),
        checks=tuple(c.name for c in selected), files_scanned=len(plugin.modules),
        seconds=time.perf_counter() - started, fixed=tuple(sorted(fixed, key=Finding.sort_key)))
    return accept_findings(result, settings, _line_reader(plugin, prefix))


def repository_prefix(tree: SourceTree) -> str:
    """What turns a path under the import root into one under the project root: "src/" for a
    `src/` layout, "" otherwise (so reports, baselines and SARIF name files as the repository does)."""
    if tree.project_root is None:
        return ""
    try:
        rel = tree.root.resolve().relative_to(tree.project_root.resolve()).as_posix()
    except ValueError:
        return ""
    return "" if rel == "." else rel + "/"


def _in_repository(f: Finding, prefix: str) -> Finding:
    if not prefix or f.plugin is None:
        return f
    return replace(f, plugin=replace(f.plugin, path=prefix + f.plugin.path))


def _line_reader(plugin: PluginModel, prefix: str) -> Callable[[str, int], str]:
    """`line_of(path, line)` over the plugin's own files, for inline `# pinport: ignore` comments."""
    modules = {prefix + path: module for module, path in plugin.index.paths.items()}

    def line_of(path: str, line: int) -> str:
        module = modules.get(path)
        return plugin.index.line_text(module, line) if module is not None else ""

    return line_of


def judge_one_side(plugin: PluginModel, host: HostView, other: HostView, settings: Settings, *,
                   checks: tuple[str, ...] = (), facts: ScanFacts | None = None,
                   stored: bool = False) -> list[Finding]:
    """The findings judging `host` (with `other` as the other side), in this process, unsorted.

    For scanning many host versions against one baseline (the rebase's stops), where the
    baseline's side is judged once and not again per version; `facts` (a scan's facts over the
    same plugin) lends its plugin-side facts instead of their being rebuilt per version, and is
    used as it is when it is already over this pair (`other`, `host`). With `stored`, the checks'
    findings are kept in the facts' index cache across runs (see `judged`).
    """
    ctx, selected = _one_side(plugin, host, other, settings, checks, facts, stored)
    with _collector_paused():
        found = judged(selected, ctx) if stored else _run_checks(selected, ctx, False)
    return _side_findings(selected, found, plugin, host, ctx.facts.unreached_modules)


def stored_one_side(plugin: PluginModel, host: HostView, other: HostView, settings: Settings, *,
                    checks: tuple[str, ...] = (), facts: ScanFacts | None = None) -> list[Finding] | None:
    """`judge_one_side(..., stored=True)` when its findings are in the index cache already, else None
    (nothing is judged): a caller spreading the sides still to judge over workers asks first."""
    ctx, selected = _one_side(plugin, host, other, settings, checks, facts, True)
    found = _read_stored(_judged_key(selected, ctx), selected, ctx)
    return _side_findings(selected, found, plugin, host, ctx.facts.unreached_modules) if found is not None else None


def _one_side(plugin: PluginModel, host: HostView, other: HostView, settings: Settings, checks: tuple[str, ...],
              facts: ScanFacts | None, stored: bool) -> tuple[ScanContext, tuple[Check, ...]]:
    if facts is None:
        facts = ScanFacts(plugin, other, host, settings)
    elif facts.old is not other or facts.new is not host:
        if stored:
            _ = facts.history_digest  # once, on the facts every release's facts start from (`with_hosts`)
        facts = facts.with_hosts(other, host)
    return ScanContext(plugin, host, other, True, settings, facts), tuple(select_checks(checks))


def _side_findings(checks: tuple[Check, ...], found: dict[str, list[Finding]], plugin: PluginModel,
                   host: HostView, unreached: frozenset[str] = frozenset()) -> list[Finding]:
    """One side's findings as reported: deduplicated, code that does not run there (a version branch not
    taken, a module in `unreached` that nothing imports) made context, root causes folded."""
    findings = _branches_not_run(_dedupe(f for c in checks for f in found[c.name]), plugin, host.index.tree.version)
    return number_occurrences(fold_root_causes(_never_imported(findings, plugin, unreached)))


def _never_imported(findings: list[Finding], plugin: PluginModel, unreached: frozenset[str]) -> list[Finding]:
    """A module no entry point, script, import or module-naming string reaches never runs
    (`plugin.module_reach`): what its code would break is context."""
    paths = {plugin.index.paths[m]: m for m in unreached if m in plugin.index.paths}
    out = []
    for f in findings:
        module = paths.get(f.plugin.path) if f.plugin and f.level is not Severity.INFO else None
        if module is not None:
            f = replace(f, severity=Severity.INFO, details=(
                f"`{module}` is never imported: no entry point, script, plugin import or module-naming "
                f"string reaches it, so this code does not run", *f.details))
        out.append(f)
    return out


def _branches_not_run(findings: list[Finding], plugin: PluginModel, version: str | None) -> list[Finding]:
    """Plugin code under a host-version test that is false on this side's version does not run on it
    (`if vllm_version_is("0.29.0"):` judged on 0.30.0): what it would break there is context."""
    if not version:
        return findings
    modules = {path: module for module, path in plugin.index.paths.items()}
    out = []
    for f in findings:
        module = modules.get(f.plugin.path) if f.plugin else None
        branch = branch_not_taken(plugin.index, module, f.plugin.line, plugin.names.host, version) \
            if module and f.level is not Severity.INFO else None
        if branch is not None:
            f = replace(f, severity=Severity.INFO, details=(
                f"{'under' if branch.taken_when else 'in the else branch of'} `if {branch.text}:` (line "
                f"{branch.line}), false on {plugin.names.host} {version}: this code does not run there",
                *f.details))
        out.append(f)
    return out


class _StoredFinding(NamedTuple):
    """A check's finding as the index cache keeps it (`model.codec`: data only). `args` and `extra`
    are JSON objects in text (their values are of several types); `kind` is matched to the check's
    own kind when it reads back."""

    kind: Kind
    args: str
    plugin: Location | None
    old: Location | None
    new: Location | None
    subject: str
    suggestion: str
    details: tuple[str, ...]
    sites: tuple[Location, ...]
    status: Status
    severity: Severity | None
    extra: str
    occurrence: int


_JUDGED = dict[str, list[_StoredFinding]]  # check name -> its findings, in the order it yielded them


def judged(checks: Iterable[Check], ctx: ScanContext) -> dict[str, list[Finding]]:
    """Each check's findings on one side (`_run_checks`), kept in the index cache from one run to
    the next: a side the rebase judges again on every run (a release between OLD and NEW, a merge's
    verification copy) is then read back, not judged. The key is what the findings depend on: the
    plugin's and both host trees' contents, the settings, the releases before OLD (the copies'
    origins), the checks, the side and pinport's code (`ScanFacts.stored_key`). A row that does not
    read is judged again; findings that would not read back as they are (a crashed check, a value
    JSON does not keep, such as a tuple) are not kept, nor those of a check from outside pinport
    (its code is not in the key)."""
    checks = tuple(checks)
    key = _judged_key(checks, ctx)
    found = _read_stored(key, checks, ctx)
    if found is not None:
        return found
    found = _run_checks(checks, ctx, False)
    _store_judged(key, checks, ctx, found)
    return found


def _judged_both(checks: tuple[Check, ...], sides: tuple[ScanContext, ScanContext], strict: bool) -> Results:
    """Both sides of every check (`_run_all`), each side kept in the index cache as `judged` keeps
    one: a scan of trees, settings and code that have not changed since the last one reads its
    findings back instead of judging again (not with `strict`, whose point is to run every check)."""
    keys = tuple("" if strict else _judged_key(checks, ctx) for ctx in sides)
    found = tuple(_read_stored(key, checks, ctx) for key, ctx in zip(keys, sides, strict=True))
    if found[0] is not None and found[1] is not None:
        return found  # type: ignore[return-value]
    results = _run_all(checks, sides, strict)
    for key, ctx, side in zip(keys, sides, results, strict=True):
        _store_judged(key, checks, ctx, side)
    return results


def _store_judged(key: str, checks: tuple[Check, ...], ctx: ScanContext, found: dict[str, list[Finding]]) -> None:
    """Keep one side's findings under `key` ('' keeps nothing) when they read back exactly as they are
    and no check crashed."""
    if key and not any(f.kind is CHECK_CRASHED for fs in found.values() for f in fs):
        blob = codec.encode({name: [_stored_finding(f) for f in findings] for name, findings in found.items()})
        if repr(_read_judged(codec.decode(blob, _JUDGED), checks)) == repr(found):  # reads back as it is
            ctx.facts.index_cache.put_many([(key, blob)])  # type: ignore[union-attr]


def _in_code_digest(check: Check) -> bool:
    """Whether the check's code is pinport's own (`IndexCache.code_version` covers it)."""
    return type(check).__module__.startswith(__package__ + ".")


def _judged_key(checks: tuple[Check, ...], ctx: ScanContext) -> str:
    """The index-cache key of one side's findings: '' keeps nothing (no cache, a tree not cached, or a
    check from outside pinport, whose code is not in the key)."""
    facts = ctx.facts
    if facts.index_cache is None or not all(_in_code_digest(c) for c in checks):
        return ""
    trees = (ctx.plugin.index.tree, ctx.host.index.tree, ctx.other.index.tree)  # labels and versions are in messages
    plugin = ctx.plugin  # what the project's files outside its modules decide (entry points, packages scanned)
    inputs = "\0".join([*(c.name for c in checks), *(f"{t.label}\0{t.version}" for t in trees), facts.history_digest,
                        repr(plugin.entry_points), repr(plugin.packages), *plugin.modules])
    digest = hashlib.blake2b(inputs.encode(), digest_size=16).hexdigest()
    return facts.stored_key(f"judged-1:{'new' if ctx.judging_new else 'old'}:{digest}", ctx.other, ctx.host)


def _read_stored(key: str, checks: tuple[Check, ...], ctx: ScanContext) -> dict[str, list[Finding]] | None:
    """One side's stored findings under `key`, or None ('' or no row, or a row that does not read)."""
    blob = ctx.facts.index_cache.get_one(key) if key else None  # type: ignore[union-attr]
    if blob is None:
        return None
    try:
        return _read_judged(codec.decode(blob, _JUDGED), checks)
    except (codec.DecodeError, ValueError, TypeError, KeyError):
        log.debug("stored findings %s do not read; judged again", key)
        return None


def _stored_finding(f: Finding) -> _StoredFinding:
    return _StoredFinding(f.kind, json.dumps(f.args), f.plugin, f.old, f.new, f.subject, f.suggestion,
                          f.details, f.sites, f.status, f.severity, json.dumps(f.extra), f.occurrence)


def _read_judged(row: dict[str, list[_StoredFinding]], checks: tuple[Check, ...]) -> dict[str, list[Finding]]:
    """The stored row as `_run_checks` answers; ValueError when it is not one of these checks' answers."""
    if set(row) != {c.name for c in checks}:
        raise ValueError("another set of checks")
    kinds = {k.code: k for c in checks for k in getattr(c, "kinds", ())}
    out: dict[str, list[Finding]] = {}
    for check in checks:
        found = out[check.name] = []
        for s in row[check.name]:
            args, extra = json.loads(s.args), json.loads(s.extra)
            if not (isinstance(args, dict) and isinstance(extra, dict) and all(
                    type(v) in (str, int) for v in args.values())):
                raise ValueError("arguments or extras of another shape")
            kind = kinds.get(s.kind.code)
            found.append(Finding(kind if kind == s.kind else s.kind, args, s.plugin, s.old, s.new, s.subject,
                                 s.suggestion, s.details, s.sites, s.status, s.severity, extra, s.occurrence))
    return out


def _other_release_modules(findings: list[Finding], plugin: PluginModel, version: str | None) -> list[Finding]:
    """A module the plugin keeps for another host release (picked by version at run time) is not
    imported on this one: its errors are warnings."""
    tags = {plugin.index.paths[m]: tag for m, tag in version_specific_modules(plugin.modules).items()}
    out = []
    for f in findings:
        tag = tags.get(f.plugin.path) if f.plugin else None
        if tag and f.level is Severity.ERROR and is_for_other_release(tag, version):
            f = replace(f, severity=Severity.WARNING, details=(
                f"`{f.plugin.path}` is the plugin's copy for another {plugin.names.host} release "
                f"(`_v{tag}`); it is not imported on {version}", *f.details))
        out.append(f)
    return out


def _syntax_errors(plugin: PluginModel) -> Iterable[Finding]:
    for module in plugin.modules:
        summary = plugin.index.modules[module]
        if summary.syntax_error:
            yield Finding(PLUGIN_SYNTAX_ERROR, {"error": summary.syntax_error},
                          Location(plugin.index.paths[module], summary.error_line),
                          subject=module, status=Status.LATENT)  # the plugin's own: true on either host


def scan(plugin: SourceTree, old: SourceTree, new: SourceTree, settings: Settings, *,
         cache: IndexCache | None = None, checks: tuple[str, ...] = (), strict: bool = False,
         extra_checks: tuple[Check, ...] = (), progress: ProgressFn = no_progress) -> ScanResult:
    """Index the three trees and run the selected checks (all by default)."""
    started = time.perf_counter()
    with _collector_paused():  # indexing and discovery build many objects and no cycles worth collecting
        models = load_models(plugin, old, new, settings, cache=cache, progress=progress)
    result = scan_models(models, settings, checks=checks, strict=strict, extra_checks=extra_checks)
    return ScanResult(**{**result.__dict__, "seconds": time.perf_counter() - started})


class _ScanModule(types.ModuleType):
    """`pinport.scan` is this module and also the documented API: `pinport.scan(plugin, old=..., new=...)`
    calls pinport.api.scan (the package attribute cannot be both a module and a function otherwise)."""

    def __call__(self, *args: object, **kwargs: object) -> ScanResult:
        from .api import scan as api_scan

        return api_scan(*args, **kwargs)  # type: ignore[arg-type]


sys.modules[__name__].__class__ = _ScanModule
