"""Run the rebase: choose the base, scan, plan pins and safe fixes, apply them, gather the documents' facts.

The plan is always made against the plugin *at the base* (the chosen commit, or the tree itself
outside git), so re-running gives the same plan; what the working tree already resolved is
ticked by scanning it too. `--apply` edits only the working tree, and only on a clean one.
"""

from __future__ import annotations

import functools
import gc
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import InvalidVersion, Version

from ..config import Settings, load_settings, read_pyproject
from ..edits import Edit
from ..errors import ConfigError, PinportError, SourceNotFound
from ..findings import Finding, ScanResult
from ..ledger.git import GitRepo
from ..model.index import IndexCache, load_index, load_indexes
from ..pins import no_pin_error, read_pin
from ..plugin.model import load_plugin_model
from ..port.plan import PortItem, file_proposals
from ..port.run import applicable_merges, verified_merges, verified_port
from ..scan import Models, collector_paused, host_view, scan_models
from ..sources import (
    Cache,
    SourceTree,
    cached_releases,
    list_versions,
    load_directory,
    load_git,
    load_host,
    load_plugin,
)
from ..sources.progress import ProgressFn, no_progress
from ..sources.tree import hash_bytes
from ..workers import can_fork, run_beside
from .base import BaseChoice, branch_name, choose_base, create_branch
from .fixes import FixPlan, plan_fixes
from .pins import PinPlan, plan_pins
from .snapshot import Snapshot, commit_snapshot, disk_snapshot
from .write import write_edits, write_text

DEFAULT_PLUGIN = "arctic-inference==0.3.0"  # the built-in job: this release against the newest host


@dataclass(frozen=True)
class RebaseOptions:
    plugin_spec: str | None = None
    old_spec: str | None = None
    new_spec: str | None = None
    old_tree: str | None = None  # host OLD from a directory or REPO@REF (the pin stays a version)
    new_tree: str | None = None
    apply: bool = False
    branch: bool = False
    allow_dirty: bool = False
    gate: bool = False  # after --apply, run the no-GPU gate on the working tree
    gate_python: str | None = None  # the gate's interpreter; default: a cached env with the host at NEW
    stops: bool = True
    profile: str | None = None
    host: str | None = None
    cache_dir: Path | None = None
    cwd: Path = field(default_factory=Path.cwd)
    allow_downgrade: bool = False  # a NEW older than OLD is refused unless asked for


@dataclass
class Applied:
    """One edit `--apply` made: file:line, the lines before -> after, and what it was."""

    path: str
    line: int
    before: str
    after: str
    what: str


@dataclass
class Rebase:
    """Everything the rebase found and did; the documents and the terminal summary render it."""

    settings: Settings
    plugin_label: str
    old: str
    new: str
    host_label_old: str
    host_label_new: str
    default_job: bool
    base: BaseChoice | None
    models: Models
    scan: ScanResult
    pins: PinPlan
    fixes: FixPlan
    port: tuple[PortItem, ...]  # every copy's merge proposal, the clean ones verified (`port.verified_port`)
    snapshot: Snapshot  # the plugin project at the base
    tree_prefix: str  # the import root inside the project ("" or "src/"); findings' paths start above it
    done: frozenset[str] = frozenset()  # fingerprints the working tree no longer has
    merged: frozenset[str] = frozenset()  # mirror/fork units whose clean merge is in the working tree
    applied: list[Applied] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    branch_note: str = ""
    repo_root: Path | None = None
    stops: object | None = None
    gate: object | None = None  # the gate's result (`pinport.gate.GateResult`) with --gate
    after: ScanResult | None = None  # the working tree's own scan, when it differs from the base
    html: str | None = None  # REBASE_REPORT.html when it was rendered beside the stops (else when written)
    seconds: float = 0.0

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.pins.findings + self.scan.findings

    @property
    def merges(self) -> tuple[PortItem, ...]:
        """The merges `--apply` applies: clean, changing something, verified."""
        return applicable_merges(self.port)


def is_plugin_checkout(path: Path, settings: Settings) -> bool:
    """A project that declares itself a plugin of the host: [tool.pinport], a host requirement or
    an entry point in a host group (pinport's own clone is not one)."""
    pyproject = read_pyproject(path) if (path / "pyproject.toml").is_file() else {}
    if "pinport" in pyproject.get("tool", {}):
        return True
    project = pyproject.get("project", {})
    host = settings.host_dist.lower()
    groups = [project.get("dependencies", []), *project.get("optional-dependencies", {}).values()]
    if any(isinstance(r, str) and r.lower().replace("_", "-").startswith(host) for g in groups for r in g):
        return True
    if any(str(group).startswith(settings.host + ".") for group in project.get("entry-points", {})):
        return True
    setup = path / "setup.py"
    return setup.is_file() and f"{settings.host}." in setup.read_text(encoding="utf-8", errors="replace")


def _releases_or_none(dist: str) -> tuple[str, ...]:
    """The host's releases, to resolve a narrow-range pin; none when the index cannot be reached (the
    pin then decides nothing: `--old` does, or a local host tree)."""
    try:
        return tuple(list_versions(dist))
    except PinportError:
        return ()


def _newest(dist: str) -> str:
    from packaging.version import Version

    versions = [v for v in list_versions(dist) if not Version(v).is_prerelease]
    if not versions:
        raise SourceNotFound(f"no releases of {dist} found on the package index")
    return versions[-1]


def host_metadata(tree: SourceTree) -> str:
    """What the host requires: its wheel METADATA, else a dist-info beside the package, else its
    requirements files (an sdist or a checkout) as Requires-Dist lines."""
    if tree.metadata:
        return tree.metadata
    for path in sorted(tree.root.glob("*.dist-info/METADATA")):
        return path.read_text(encoding="utf-8", errors="replace")
    project = tree.project_root or tree.root
    lines = []
    for path in sorted([*project.glob("requirements*.txt"), *project.glob("requirements/*.txt")]):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            line = line.split("#", 1)[0].strip()
            if line and not line.startswith("-"):
                lines.append(f"Requires-Dist: {line}")
    return "\n".join(lines)


def _git_or_none(root: Path) -> GitRepo | None:
    try:
        return GitRepo(root)
    except SourceNotFound:
        return None


def _is_ancestor(root: Path, commit: str, head: str) -> bool:
    done = subprocess.run(["git", "-C", str(root), "merge-base", "--is-ancestor", commit, head],
                          capture_output=True, check=False)
    return done.returncode == 0


def _dirty(root: Path) -> str:
    done = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                          capture_output=True, text=True, check=False)
    return done.stdout.strip().splitlines()[0].strip() if done.stdout.strip() else ""


def _plugin_models(tree: SourceTree, host: Models, settings: Settings, cache: IndexCache) -> Models:
    plugin = load_plugin_model(load_index(tree, cache), settings)
    return Models(plugin, host.old, host.new, host.history, host.index_cache)


def run_rebase(options: RebaseOptions, progress: ProgressFn = no_progress) -> Rebase:
    """Plan (and with `apply`, carry out) the rebase; raises PinportError on bad input."""
    with collector_paused():  # one batch of scans over the same trees: a collector pass re-walks them all
        rebase = _run_rebase(options, progress)
        # Re-enabled, the collector's first pass would walk every object the run made (0.4 s); they
        # hold no cycles (reference counting frees them), so they go to the permanent generation.
        gc.freeze()
    return rebase


def _run_rebase(options: RebaseOptions, progress: ProgressFn) -> Rebase:
    started = time.perf_counter()
    cache = Cache(options.cache_dir)
    index_cache = IndexCache.in_cache(cache)
    overrides = {"profile": options.profile, "host": options.host}
    notes: list[str] = []
    spec = options.plugin_spec
    cwd = options.cwd
    default_job = False
    if spec is None:
        if is_plugin_checkout(cwd, load_settings(cwd, overrides)):
            spec = str(cwd)
        else:
            spec, default_job = DEFAULT_PLUGIN, True
            notes.append(f"not inside a plugin checkout: planning the built-in job {DEFAULT_PLUGIN}")
    local = Path(spec).expanduser()
    if local.is_dir():
        local = local.resolve()
        settings = load_settings(local, overrides)
        work_tree = load_directory(local, settings.plugin_package or None)
        project = work_tree.project_root or work_tree.root
    else:
        if options.apply or options.branch:
            raise ConfigError("--apply and --branch need a plugin checkout (a directory), not " + spec)
        work_tree = load_plugin(spec, None, cache=cache, progress=progress)
        project = work_tree.project_root or work_tree.root
        settings = load_settings(project, overrides)
    prefix = work_tree.root.relative_to(project).as_posix() + "/" if work_tree.root != project else ""
    if options.new_tree and not options.new_spec:
        raise ConfigError("--new-tree needs --new VERSION too (the version the pins move to)")
    new = options.new_spec or _newest(settings.host_dist)
    git = _git_or_none(project) if local.is_dir() else None
    releases = functools.cache(lambda: _releases_or_none(settings.host_dist))  # asked only for a narrow range
    choice: BaseChoice | None = None
    branch_note = ""
    base_tree = work_tree
    snapshot = disk_snapshot(project, work_tree.label)
    at_base = True
    try:
        if git is not None:
            choice = choose_base(git, settings, new, old=options.old_spec, versions=releases)
            chosen = choice.chosen
            if options.branch:
                if chosen is None:
                    raise PinportError(f"--branch: {choice.reason()}")
                if options.apply and not options.allow_dirty and (dirty := _dirty(project)):
                    raise PinportError(f"{project}: uncommitted changes ({dirty}); commit or stash them first, "
                                       "or pass --allow-dirty")
                branch_note = create_branch(git, branch_name(settings, new), chosen.commit)
            head = git.head()
            if chosen is not None:
                at_base = bool(head) and (head == chosen.commit or _is_ancestor(project, chosen.commit, head))
                # the base's own files (cached by commit), not the working tree's edits
                base_tree = load_git(f"{project}@{chosen.commit}", settings.plugin_package or None, cache,
                                     progress)
                base_tree = SourceTree(**{**base_tree.__dict__, "label": f"{chosen.branch}@{chosen.short}"})
                snapshot = commit_snapshot(git, chosen.commit, f"{chosen.branch}@{chosen.short}")
                if not at_base:
                    notes.append(f"the working tree is not on {chosen.branch}: the plan is for the base; "
                                 "--branch starts the rebase from it")
    finally:
        if git is not None:
            git.close()
    if options.gate and not options.apply:
        raise ConfigError("--gate runs after --apply; give both")
    if options.apply and not at_base:
        raise PinportError("--apply: the working tree does not descend from the chosen base; pass --branch")
    old = options.old_spec or (choice.chosen.pin if choice and choice.chosen else None) or \
        read_pin(settings, snapshot.read, versions=releases)
    if not old:
        raise no_pin_error(work_tree.label, settings, snapshot.read, versions=releases)
    if not options.allow_downgrade:
        _refuse_downgrade(settings.host_dist, old, new)
    if options.apply and not options.allow_dirty:
        if git is None:
            raise PinportError(f"{project}: not a git work tree; --apply needs one (or pass --allow-dirty)")
        if dirty := _dirty(project):
            raise PinportError(f"{project}: uncommitted changes ({dirty}); commit or stash them first, "
                               "or pass --allow-dirty")
    old_tree = load_host(options.old_tree or old, settings, cache=cache, progress=progress)
    new_tree = load_host(options.new_tree or new, settings, cache=cache, progress=progress)
    listing = None
    if options.stops and old_tree.version is not None and new_tree.version is not None:
        from .stops import ReleaseListing

        listing = ReleaseListing(settings.host_dist)  # the stops' release list, asked while the rest loads
    metadata = host_metadata(new_tree)
    plugin_index, old_index, new_index = load_indexes([base_tree, old_tree, new_tree], index_cache,
                                                      progress=progress)
    history = tuple(cached_releases(settings.host_dist, cache=cache, below=old_tree.version,
                                    packages=(settings.host,))) if old_tree.version else ()
    models = Models(load_plugin_model(plugin_index, settings), host_view(old_index, settings),
                    host_view(new_index, settings), history, index_cache)  # as `pinport scan` loads them
    models.facts(settings).load_plugin_side()  # once, before the scan's and the stops' workers fork
    if listing is not None:
        listing.wait()  # no thread in flight when the scan forks
    result = scan_models(models, settings)
    pins = plan_pins(settings, list(snapshot.files), snapshot.read, old=old, new=new,
                     host_label=new_index.label, metadata=metadata)
    rebase = Rebase(settings, work_tree.label, old, new, old_index.label, new_index.label, default_job, choice,
                    models, result, pins, FixPlan(), (), snapshot, prefix, notes=notes, branch_note=branch_note,
                    repo_root=project if git is not None else None)

    def plan_edits() -> tuple[FixPlan, tuple[PortItem, ...]]:
        return (plan_fixes(result.findings, models.new, snapshot.read, settings),  # names files from the root
                verified_port(models, settings, result.findings))

    def plan_edits_and_report() -> tuple[FixPlan, tuple[PortItem, ...], str]:
        """The edits' planning, then the HTML report (it needs the merges, not the stops)."""
        from .documents import render_html_report

        rebase.fixes, rebase.port = plan_edits()
        return rebase.fixes, rebase.port, render_html_report(rebase)

    if options.stops and can_fork():  # the stops (over both cores) beside the edits' planning and the report
        from .stops import find_stops

        rebase.stops, (rebase.fixes, rebase.port, rebase.html) = run_beside(
            plan_edits_and_report, lambda: find_stops(rebase, cache, index_cache, progress, listing))
    else:
        rebase.fixes, rebase.port = plan_edits()
        if options.stops:
            from .stops import find_stops

            rebase.stops = find_stops(rebase, cache, index_cache, progress, listing)
    if local.is_dir() and at_base:
        if options.apply:
            rebase.applied = _apply(rebase, project, work_tree, settings, index_cache, old, new, metadata)
        work = _track(rebase, project, settings, index_cache, old, new, metadata)
        if options.gate:
            rebase.gate = _gate(rebase, options, work, project, cache)
    rebase.seconds = time.perf_counter() - started
    return rebase


def _refuse_downgrade(dist: str, old: str, new: str) -> None:
    """A rebase moves the pin forward: NEW older than OLD is almost always a typo (`--new 0.2` for
    0.32), and would plan pin edits back to it; refused before anything is downloaded."""
    try:
        older = Version(new) < Version(old)
    except InvalidVersion:  # a tree's label or a local name: nothing to compare
        return
    if older:
        raise ConfigError(f"--new {new} is older than OLD {old}: a rebase moves the {dist} pin forward "
                          "(pass --allow-downgrade to plan the move back)")


def _apply(rebase: Rebase, project: Path, tree: SourceTree, settings: Settings, index_cache: IndexCache,
           old: str, new: str, metadata: str) -> list[Applied]:
    """Edit the working tree: clean merges, then pins, then the libcst fixes (each re-planned on disk)."""
    applied: list[Applied] = []
    prefix = rebase.tree_prefix
    work = _plugin_models(load_directory(project, settings.plugin_package or None), rebase.models, settings,
                          index_cache)
    findings = scan_models(work, settings).findings
    merges = verified_merges(work, settings, findings)
    files = work.plugin.index.tree.files
    for proposal in file_proposals(merges, work.plugin.index):
        edits = [Edit(i.copy.plugin.start, i.copy.plugin.end, i.proposal,
                      proposal.before[i.copy.plugin.start - 1:i.copy.plugin.end], i.copy.unit)
                 for i in proposal.items]
        digest = files.get(proposal.path)
        made = write_edits(project, prefix + proposal.path, edits,
                           (lambda data, h=digest: hash_bytes(data) == h) if digest else None)
        for item, edit in zip(proposal.items, made, strict=True):
            applied.append(Applied(prefix + proposal.path, edit.start, "\n".join(edit.before),
                                   "\n".join(edit.after),
                                   f"clean three-way merge of `{item.copy.unit}` ({item.copy.kind})"))
    disk = disk_snapshot(project)
    pins = plan_pins(settings, list(disk.files), disk.read, old=old, new=new, host_label=rebase.host_label_new,
                     metadata=metadata)
    for path, (before, after) in pins.texts.items():
        write_text(project, path, before, after)
    applied += [Applied(e.path, e.line, e.before, e.after, e.finding.message) for e in pins.edits if e.changes]
    if merges:  # merged copies: findings and lines come from the files as they are now
        work = _plugin_models(load_directory(project, settings.plugin_package or None), rebase.models,
                              settings, index_cache)
        findings = scan_models(work, settings).findings
    fixes = plan_fixes(findings, work.new, disk_snapshot(project).read)
    for path, (before, after) in fixes.texts.items():
        write_text(project, path, before, after)
    applied += [Applied(f.path, f.line, f.before, f.after, f.what) for f in fixes.fixes]
    return applied


def _track(rebase: Rebase, project: Path, settings: Settings, index_cache: IndexCache, old: str, new: str,
           metadata: str) -> Models:
    """Tick what the working tree already resolved: findings, pins and merges it no longer needs;
    returns the working tree's models (the base's when they are the same files)."""
    tree = load_directory(project, settings.plugin_package or None)
    base_files = rebase.models.plugin.index.tree.files
    disk = disk_snapshot(project)
    if tree.files == base_files and all(disk.read(p) == rebase.snapshot.read(p) for p in rebase.pins.texts):
        return rebase.models  # the working tree is the base: nothing resolved yet
    work = _plugin_models(tree, rebase.models, settings, index_cache)
    rebase.after = scan_models(work, settings)
    remaining = {f.fingerprint for f in rebase.after.findings}
    pins = plan_pins(settings, list(disk.files), disk.read, old=old, new=new, host_label=rebase.host_label_new,
                     metadata=metadata)
    remaining |= {e.finding.fingerprint for e in pins.edits}
    rebase.done = frozenset(f.fingerprint for f in rebase.findings if f.fingerprint not in remaining)
    pending = {(i.copy.plugin.path, i.copy.unit) for i in verified_merges(work, settings, rebase.after.findings)}
    rebase.merged = frozenset(f"{i.copy.plugin.path}::{i.copy.unit}" for i in rebase.merges
                              if (i.copy.plugin.path, i.copy.unit) not in pending)
    return work


def _gate(rebase: Rebase, options: RebaseOptions, work: Models, project: Path, cache: Cache) -> object:
    """The no-GPU gate (`pinport.gate`) on the edited working tree, in a real host environment."""
    from ..gate import make_env, run_gate, use_python

    settings = rebase.settings
    env = use_python(options.gate_python, settings.host_dist) if options.gate_python else \
        make_env(settings.host_dist, rebase.new, cache=cache)
    tree = work.plugin.index.tree
    return run_gate(tree.root, env, settings, work.plugin, static=rebase.after or rebase.scan,
                    project_root=project, new_label=rebase.host_label_new)
