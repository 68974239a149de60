"""Incremental stops: the plugin against every host release between OLD and NEW.

Each release is judged once against OLD's baseline (OLD's side comes from the main scan),
with the loaded models reused: summaries are shared by content hash, parsed trees of files a
release did not change are shared with the release before it, and the releases are split over
two processes (a forked worker inherits what is loaded). Each finding is marked with the first
release where it holds; stops are proposed where new breaks cluster ("smallest delta").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from packaging.version import InvalidVersion, Version

from ..errors import PinportError
from ..findings import Finding, Severity, Status
from ..model.host import HostView
from ..model.index import IndexCache, load_indexes
from ..scan import collector_paused, host_view, judge_one_side, stored_one_side
from ..sources import Cache, SourceTree, list_versions, load_host
from ..sources.progress import ProgressFn, no_progress
from ..workers import can_fork, run_beside


@dataclass(frozen=True)
class Step:
    """One release: the findings that first hold there, and how many hold there in all."""

    version: str
    first: tuple[Finding, ...]
    holding: int


@dataclass
class Stops:
    old: str
    new: str
    steps: list[Step]  # every release after OLD up to and including NEW
    first_seen: dict[str, str]  # fingerprint of a NEW finding -> the first release where it holds
    proposed: list[str]  # the stops, NEW last
    seconds: float = 0.0
    skipped: list[str] = field(default_factory=list)  # releases that could not be loaded, with why

    def carried(self) -> list[tuple[str, list[Finding]]]:
        """Per proposed stop, the findings first holding after the previous stop up to it."""
        out, current = [], []
        for step in self.steps:
            current += list(step.first)
            if step.version in self.proposed:
                out.append((step.version, current))
                current = []
        return out


class ReleaseListing:
    """The host's releases on the package index, asked in a thread as soon as the rebase knows it
    will judge the stops: the index's answer time then overlaps the loading and the indexing.
    `wait()` before forking (a forked worker must not inherit a thread in the middle of a request)."""

    def __init__(self, dist: str) -> None:
        self._versions: list[str] = []
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._ask, args=(dist,), name="release-listing", daemon=True)
        self._thread.start()

    def _ask(self, dist: str) -> None:
        try:
            self._versions = list_versions(dist)
        except BaseException as exc:  # raised where the listing is read, as if asked there
            self._error = exc

    def wait(self) -> None:
        self._thread.join()

    def versions(self) -> list[str]:
        self.wait()
        if self._error is not None:
            raise self._error
        return self._versions


def releases_between(dist: str, old: str, new: str, listing: ReleaseListing | None = None) -> list[str]:
    """Final releases strictly between OLD and NEW on the package index, oldest first."""
    try:
        low, high = Version(old), Version(new)
    except InvalidVersion:
        return []
    versions = listing.versions() if listing is not None else list_versions(dist)
    return [v for v in versions if not Version(v).is_prerelease and low < Version(v) < high]


def _weight(findings: Sequence[Finding]) -> int:
    return sum(3 if f.level is Severity.ERROR else 1 for f in findings if f.level is not Severity.INFO)


def propose(steps: Sequence[Step], new: str, most: int = 3) -> list[str]:
    """Stops where new breaks cluster: a release carrying at least a quarter of the weight (errors
    count three times) becomes a stop, at most `most` of them before NEW, which is always last."""
    weights = {s.version: _weight(s.first) for s in steps if s.version != new}
    total = sum(weights.values()) + _weight(next((s.first for s in steps if s.version == new), ()))
    heavy = [v for v, w in weights.items() if total and w >= max(3, total / 4)]
    heavy = sorted(sorted(heavy, key=lambda v: -weights[v])[:most], key=Version)
    return heavy + [new]


def _judge(versions: Sequence[str], args: tuple) -> list[tuple[str, list[Finding]]]:
    """Judge releases in order; each takes the parsed trees of unchanged files from OLD, NEW and the
    release judged just before it (whose trees exist only once it has been judged). Each release's
    findings are kept in the index cache for the next run (`scan.judged`)."""
    plugin, views, old, new, settings, facts = args
    out = []
    lenders = [old.index, new.index]
    with collector_paused():  # once for all releases: each re-enabling costs a full pass over the trees
        for version in versions:
            index = views[version].index
            for lender in lenders:
                index.lend_from(lender)
            # each release's facts start from the last one's: the plugin-side facts it added carry on
            facts = facts.with_hosts(old, views[version])
            out.append((version, judge_one_side(plugin, views[version], old, settings, facts=facts, stored=True)))
            lenders = [old.index, new.index, index]
    return out


def _judge_all(versions: list[str], views: dict[str, HostView], args: tuple) -> dict[str, list[Finding]]:
    """Each release's findings: read back from the index cache where a run before judged it, the
    others judged; with two cores, the later half of those in a forked worker."""
    plugin, _, old, _, settings, facts = args
    out: dict[str, list[Finding]] = {}
    for version in versions:
        found = stored_one_side(plugin, views[version], old, settings, facts=facts)
        if found is not None:
            out[version] = found
    versions = [v for v in versions if v not in out]
    if len(versions) < 2 or not can_fork():
        return {**out, **dict(_judge(versions, args))}
    half = (len(versions) + 1) // 2
    here, there = versions[:half], versions[half:]
    for v in versions:
        views[v].index.load_text()
    local, forked = run_beside(lambda: _judge(there, args), lambda: _judge(here, args))
    return {**out, **dict(local + forked)}


def find_stops(rebase, cache: Cache, index_cache: IndexCache, progress: ProgressFn,
               listing: ReleaseListing | None = None) -> Stops | None:
    """Judge the plugin at the base against every release between OLD and NEW (None when OLD or
    NEW is not a release, e.g. a directory); `listing`, the releases asked for already."""
    models = rebase.models
    if models.old.index.tree.version is None or models.new.index.tree.version is None:
        return None
    with collector_paused():  # loading releases builds many objects; a collector pass re-walks every tree
        return _find_stops(rebase, cache, index_cache, progress, listing)


def _find_stops(rebase, cache: Cache, index_cache: IndexCache, progress: ProgressFn,
                listing: ReleaseListing | None) -> Stops:
    settings = rebase.settings
    trees, skipped = [], []
    for version in releases_between(settings.host_dist, rebase.old, rebase.new, listing):
        try:
            trees.append(load_host(version, settings, cache=cache, progress=progress))
        except PinportError as exc:  # one release we cannot fetch must not end the rebase
            skipped.append(f"{version}: {exc}")
    return judge_releases(rebase, trees, index_cache, progress, skipped)


def judge_releases(rebase, trees: Sequence[SourceTree], index_cache: IndexCache | None,
                   progress: ProgressFn = no_progress, skipped: Sequence[str] = ()) -> Stops:
    """The stops over the given host trees (each with its version), in version order, then NEW."""
    started = time.perf_counter()
    settings, models = rebase.settings, rebase.models
    trees = sorted(trees, key=lambda t: Version(str(t.version)))
    indexes = load_indexes(trees, index_cache, progress=progress, sharing=models.new.index,
                           lazy_rows=True) if trees else []
    views = {str(tree.version): host_view(index, settings) for tree, index in zip(trees, indexes, strict=True)}
    judged = _judge_all(list(views), views, (models.plugin, views, models.old, models.new, settings,
                                             models.facts(settings)))
    for index in indexes:
        index.flush()
    latent = {f.fingerprint for f in rebase.scan.findings if f.status is Status.LATENT}
    judged[rebase.new] = list(rebase.scan.findings)
    seen: set[str] = set(latent)
    steps: list[Step] = []
    first_seen = {fp: rebase.old for fp in latent}
    for version in [*views, rebase.new]:
        findings = judged[version]
        first = []
        for f in sorted(findings, key=Finding.sort_key):
            if f.fingerprint not in seen:
                seen.add(f.fingerprint)
                first.append(f)
                first_seen[f.fingerprint] = version
        steps.append(Step(version, tuple(first), len(findings)))
    current = {f.fingerprint for f in rebase.scan.findings}
    first_seen = {fp: v for fp, v in first_seen.items() if fp in current}
    return Stops(rebase.old, rebase.new, steps, first_seen, propose(steps, rebase.new),
                 time.perf_counter() - started, list(skipped))


def render_stops(stops: Stops) -> list[str]:
    """The stops section of REBASE_REPORT.md."""
    out = ["## Stops", "",
           f"Every release from {stops.old} to {stops.new}; *first* are the findings that first hold there "
           "(those gone again by NEW are counted but not carried).", "",
           "| release | first hold here | errors among them | holding in all | stop |", "|---|---|---|---|---|"]
    for step in stops.steps:
        errors = sum(1 for f in step.first if f.level is Severity.ERROR)
        out.append(f"| {step.version} | {len(step.first)} | {errors} | {step.holding} | "
                   f"{'**stop**' if step.version in stops.proposed else ''} |")
    out += ["", f"Proposed path: {' → '.join([stops.old, *stops.proposed])}.", ""]
    current = set(stops.first_seen)
    for version, carried in stops.carried():
        kept = [f for f in carried if f.fingerprint in current]
        out.append(f"- **{version}** carries {len(kept)} findings: " + ", ".join(
            f"`{f.code}` {f.plugin.path if f.plugin else ''}:{f.plugin.line if f.plugin else 0}"
            for f in sorted(kept, key=lambda f: (f.level.rank, f.sort_key()))[:12]) +
            (" …" if len(kept) > 12 else ""))
    out += [f"- skipped {s}" for s in stops.skipped]
    return out
