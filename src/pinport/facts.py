"""ScanFacts: every derived fact more than one check reads, built once per scan and memoised on itself.

The scan builds one `ScanFacts` over the plugin and both host versions and hands it to every check
as `ctx.facts`. A fact is computed the first time a check asks and kept on this object, so both runs
of each check (judging NEW, then OLD) and every check share one answer. The computations live in
`model/` (host-only facts, on each `HostView`) and `plugin/` (the plugin's walk, copies, callers);
this class only decides what is kept and for how long: as long as the scan's models.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import re
from collections.abc import Callable, Hashable, Iterable, Iterator
from functools import cached_property
from typing import Any

from .config import Settings
from .findings import Location
from .model.callsites import CallSite
from .model.forwarding import dispatch_route
from .model.host import HostView, receiving_params
from .model.index import IndexCache, LazyModules
from .model.inference import Inference
from .model.nodes import walk_inner
from .model.resolve import CLASS, EXTERNAL, INERT_BASES, Resolver, Symbol
from .model.summary import ClassInfo, FunctionInfo, Param, ParamKind
from .model.units import Unit, UnitWalk, iter_units, walk_unit
from .model.words import word
from .plugin.assigned import AssignedAttribute, find_assigned_attributes
from .plugin.callers import (
    Failure,
    constructions_bind,
    handed_on,
    host_call_failures,
    instance_calls_reached,
    override_reached,
    replaced_units,
)
from .plugin.dispatch import PlatformGuards
from .plugin.forks import Copies, find_copies, find_copy_sources, stored_copy_sources
from .plugin.host_paths import HostPaths, OpRegistrar
from .plugin.layer_calls import fails_for, is_carried, routed_member_fits
from .plugin.model import PluginModel
from .plugin.module_reach import unreached_modules
from .plugin.origins import Origin, copy_origins
from .plugin.reach import (
    ClassShape,
    Lineage,
    ModuleCalls,
    class_shape,
    lineage,
    module_calls,
    plugin_call_passing,
    unreached_classes,
)
from .plugin.receivers import plugin_stores
from .plugin.records import Patch, PatchKind
from .plugin.registered_models import (
    ModelCall,
    registered_call,
    registered_classes,
    registrar_arguments,
)
from .plugin.release_copies import Selector, find_selectors, version_of
from .plugin.source_patches import (
    SourcePatches,
    counterpart_block,
    find_source_patches,
    nearest_block,
    text_line,
)
from .plugin.surface import PluginResolver
from .plugin.typed import HostCall, PluginTyping, host_calls
from .plugin.uses import (
    HostMethod,
    PluginUses,
    SelfUse,
    added_members,
    find_host_methods,
    instance_methods,
    plugin_class_info,
    self_use,
    walk_plugin,
)
from .plugin.version_guards import Gate, version_gates
from .sources.tree import SourceTree

_SELF_NAME = re.compile(r"\bself\.([A-Za-z_][A-Za-z0-9_]*)")
_PLUGIN_SIDE = ("uses", "host_methods", "added_members", "plugin_resolver", "instance_methods",
                "unreached_modules")  # cached facts of the plugin alone
_FORWARD = re.compile(r"return\s+self\.([A-Za-z_]\w*)\(\s*\*\w+\s*,\s*\*\*\w+\s*\)")
_DOC_QUOTES = ('"' * 3, "'" * 3)


class ScanFacts:
    """The shared facts of one scan: the plugin side, and the plugin against each host version."""

    def __init__(self, plugin: PluginModel, old: HostView, new: HostView, settings: Settings,
                 history: tuple[SourceTree, ...] = (), index_cache: IndexCache | None = None) -> None:
        self.plugin, self.old, self.new, self.settings = plugin, old, new, settings
        self.history, self.index_cache = history, index_cache  # host releases before OLD, oldest first
        self._memo: dict[Hashable, Any] = {}

    def load_plugin_side(self) -> None:
        """Compute the facts of the plugin alone now (say, before forking workers that would each
        compute them, or before judging many host versions with `with_hosts`)."""
        for name in _PLUGIN_SIDE:
            getattr(self, name)
        for module in self.plugin.modules:  # nearly every check walks the plugin's units
            for unit in self.plugin_units(module):
                self.plugin_unit_walk(module, unit)

    def with_hosts(self, old: HostView, new: HostView) -> ScanFacts:
        """The facts of the same plugin against another host pair (the rebase's stops judge one
        plugin against many releases): facts of the plugin alone or of one host view carry over,
        facts of the pair (the copies' NEW counterparts) are computed afresh."""
        other = ScanFacts(self.plugin, old, new, self.settings, self.history, self.index_cache)
        other._memo = dict(self._memo)  # keys name the host view they depend on (see `keep`)
        for name in (*_PLUGIN_SIDE, "history_digest"):
            if name in self.__dict__:
                other.__dict__[name] = self.__dict__[name]
        return other

    @cached_property
    def history_digest(self) -> str:
        """Identity of the releases before OLD (labels, versions, files' hashes), for keys of facts
        that read them (the copies' origins); carried over by `with_hosts`."""
        digest = hashlib.blake2b(digest_size=16)
        for tree in self.history:
            digest.update(f"{tree.label}\0{tree.version}\0".encode())
            digest.update("\n".join(f"{p}={h}" for p, h in tree.files.items()).encode())
        return digest.hexdigest()

    def stored(self, name: str, kind: Any, build: Callable[[], Any], *views: HostView) -> Any:
        """A fact of the plugin's and `views`' contents and the settings alone, kept in the index
        cache from one run to the next (a warm scan of the same trees builds it no more); `kind`
        is its type, for decoding (`model.codec`: data only). A row that does not decode is built again."""
        if self.index_cache is None:
            return build()
        return self.index_cache.stored(self.stored_key(name, *views), kind, build)

    def stored_key(self, name: str, *views: HostView) -> str:
        """The index-cache key of a fact of the plugin and `views` ('' when a tree is not cached):
        their contents, the settings and pinport's own code."""
        if self.index_cache is None or not all(isinstance(view.index.modules, LazyModules) for view in views):
            return ""
        return self.plugin.index.stored_key(name, repr(self.settings),
                                            *(view.index.modules.digest() for view in views))  # type: ignore[union-attr]

    def keep(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """A fact one check derives from these facts on both of its runs, computed once per scan.

        A key holds `id(view)` of the host view the fact depends on (`with_hosts` carries every
        kept fact over to another host pair); a fact of both views together is not kept here.
        """
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]

    # -- plugin side -------------------------------------------------------------------------------
    def plugin_tree(self, module: str) -> ast.Module | None:
        """The parsed tree of a plugin module (None when it does not parse)."""
        return self.plugin.index.parsed(module)

    def plugin_mentions(self, module: str, markers: Iterable[str]) -> bool:
        """Whether a plugin module's source contains one of `markers` (text, not parsed)."""
        text = self.plugin.index.source(module)
        return any(m in text for m in markers)

    def plugin_units(self, module: str) -> list[Unit]:
        """The code units (functions, methods, module and class bodies) of a parsed plugin module."""
        def build() -> list[Unit]:
            tree = self.plugin.index.parsed(module)
            return list(iter_units(tree)) if tree is not None else []
        return self.keep(("units", module), build)

    def plugin_unit_nodes(self, module: str, unit: Unit) -> tuple[ast.AST, ...]:
        """Every node of a plugin function unit but the leaves, in `ast.walk` order (see `plugin_nodes`)."""
        assert unit.node is not None
        return self.plugin_nodes(module, unit.node)

    def plugin_nodes(self, module: str, node: ast.AST) -> tuple[ast.AST, ...]:
        """Every node under a plugin function's node but the leaves (`model.nodes.LEAVES`: names,
        constants, contexts, operators), in `ast.walk` order: walked once per scan, however many
        checks and facts filter it on however many runs (none of them looks for a leaf)."""
        key = ("nodes", module, getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        root, nodes = self.keep(key, lambda: (node, tuple(walk_inner(node))))
        return nodes if root is node else tuple(walk_inner(node))  # another tree's node at the same place

    def plugin_unit_walk(self, module: str, unit: Unit) -> UnitWalk:
        """One walk over a plugin unit: its calls, imports, assignments, guards."""
        return walk_unit(self.plugin.index, module, unit)

    def plugin_line_text(self, module: str, line: int) -> str:
        return self.plugin.index.line_text(module, line)

    def plugin_line(self, module: str, line: int, unit: str, column: int = 0) -> Location:
        """The plugin location of a line in `module`, inside plugin unit `unit`, with the line's text."""
        return Location(self.plugin.index.paths[module], line, column, unit, self.plugin.index.line_text(module, line))

    def plugin_call_passing(self, cls_name: str, method: str, position: int, param: str) -> int:
        """The first plugin line calling `method` of a `cls_name` instance with `param` (see
        `plugin.reach.plugin_call_passing`); 0 when none does."""
        return self.keep(("plugin-call-passing", cls_name, method, position, param),
                         lambda: plugin_call_passing(self.plugin, self._module_calls, cls_name, method, position, param))

    def _module_calls(self, module: str) -> ModuleCalls:
        return self.keep(("module-calls", module), lambda: module_calls(self.plugin.index.parsed(module)))

    @cached_property
    def uses(self) -> PluginUses:
        """What every plugin function reads and stores on `self` and on host objects (one walk)."""
        return walk_plugin(self.plugin)

    @cached_property
    def unreached_modules(self) -> frozenset[str]:
        """Plugin modules nothing imports from the bootstrap on (`plugin.module_reach`): their code never
        runs, so what it would break is context."""
        return unreached_modules(self.plugin, self.settings)

    @cached_property
    def host_methods(self) -> list[HostMethod]:
        """Plugin functions run as methods of host classes (patch members, overrides, `Host.x = fn`)."""
        return find_host_methods(self.plugin)

    @cached_property
    def instance_methods(self) -> dict[tuple[str, str, str], tuple[Param, ...]]:
        """(plugin class path, held attribute, method) -> parameters of the function the plugin installs
        on the object it holds there (`self.a.m = fn`, or a helper handed `self.a`): see `plugin.uses`."""
        return instance_methods(self.plugin, self.uses)

    @cached_property
    def assigned_attributes(self) -> list[AssignedAttribute]:
        """Host attributes plugin methods set to new instances of plugin classes (`self.drafter = Mine()`)."""
        return find_assigned_attributes(self.plugin, self.host_methods)

    def confirming_sites(self, view: HostView, patch: Patch) -> tuple[tuple[CallSite, str, str], ...]:
        """(host call site, attribute, parameter that fails) for each `view` call site that fails against an ordinary
        subclass's override and reaches the plugin's class through a host attribute the plugin sets
        to an instance of it (`self.drafter.propose(...)` in the host runner whose plugin subclass
        sets `self.drafter = PluginProposer(...)`): a call that certainly runs the override."""
        if patch.kind is not PatchKind.OVERRIDE or not patch.via:
            return ()
        cls = f"{patch.plugin_module}.{patch.via}"
        holders = []
        for held in self.assigned_attributes:
            built = self.plugin_resolver.resolve(held.plugin_class)
            if built is not None and cls in {s.path for s in self.plugin_resolver.mro(built)}:
                holders.append(held)
        attrs = frozenset(held.attr for held in holders)
        key = ("confirming-failures", id(view), patch.plugin_module, patch.site.line, patch.owner, patch.name, attrs)
        found = self.keep(key, lambda: host_call_failures(view, patch, self.replaced_units(view), attrs)) \
            if holders else None  # only calls through those attributes can confirm
        out: list[tuple[CallSite, str, str]] = []
        for (_, param), entries in (found[2].items() if found else ()):
            for site, _, _ in entries:
                receiver = site.call.func.value if isinstance(site.call.func, ast.Attribute) else None
                if not (isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name)
                        and receiver.value.id == "self"):
                    continue
                host_cls = view.resolve(f"{site.module}.{site.unit.rpartition('.')[0]}") if "." in site.unit else None
                if host_cls is None:
                    continue
                method = site.unit.rpartition(".")[2]
                for held in holders:
                    if held.holder and self.plugin_defines(held.module, held.holder, method):
                        continue  # the plugin's class overrides the host method holding the call: it never runs
                    owner = view.resolve(held.owner)
                    if held.attr == receiver.attr and owner is not None and host_cls.path in {
                            s.path for s in view.resolver.mro(owner)} and (site, held.attr, param) not in out:
                        out.append((site, held.attr, param))
        return tuple(out)

    def confirmed_by(self, view: HostView, patch: Patch) -> tuple[tuple[str, int, str, str], ...]:
        """(host module, line, attribute, parameter that fails) of each of `confirming_sites`, kept across
        runs: finding them parses every host module calling the method (most of a warm vllm-ascend
        signatures check)."""
        if patch.kind is not PatchKind.OVERRIDE or not patch.via:
            return ()
        key = ("confirmed-by", id(view), patch.plugin_module, patch.site.line, patch.owner, patch.name)
        name = f"confirming-sites-1:{patch.plugin_module}:{patch.site.line}:{patch.via}:{patch.owner}:{patch.name}"

        def build() -> tuple[tuple[str, int, str, str], ...]:
            return tuple((site.module, site.line, attr, param) for site, attr, param in self.confirming_sites(view, patch))
        return self.keep(key, lambda: self.stored(name, tuple[tuple[str, int, str, str], ...], build, view))

    def self_use(self, method: HostMethod) -> SelfUse:
        return self_use(self.uses, method)

    @cached_property
    def added_members(self) -> dict[str, frozenset[str]]:
        """Host class path (as written) -> members the plugin adds to it or stores on its `self`."""
        return added_members(self.plugin, self.host_methods, self.uses)

    @cached_property
    def plugin_resolver(self) -> Resolver:
        """A resolver over the plugin's own tree (host bases come out EXTERNAL)."""
        return PluginResolver(self.plugin.names, self.plugin.packages or self.plugin.package)

    @cached_property
    def plugin_subclasses(self) -> dict[str, tuple[str, ...]]:
        """Plugin class path -> the plugin classes below it (transitively), by path: a `self` of the class
        may be one of them."""
        out: dict[str, list[str]] = {}
        resolver = self.plugin_resolver
        for module, summary in self.plugin.index.modules.items():
            for name in summary.classes:
                sym = resolver.resolve(f"{module}.{name}")
                if sym is None or sym.kind != CLASS:
                    continue
                for above in resolver.mro(sym)[1:]:
                    if above.kind == CLASS and isinstance(above.obj, ClassInfo):
                        out.setdefault(above.path, []).append(sym.path)
        return {k: tuple(sorted(set(v))) for k, v in out.items()}

    def plugin_defines(self, module: str, qualname: str, name: str) -> bool:
        """Whether the plugin class, or a plugin base of it, defines `name` (or has a `__getattr__`)."""
        sym = self.plugin_resolver.resolve(f"{module}.{qualname}")
        if sym is None or sym.kind != CLASS:
            info = plugin_class_info(self.plugin.index, module, qualname)
            return bool(info and info.has_member(name))
        return any(isinstance(owner.obj, ClassInfo) and (owner.obj.has_member(name) or "__getattr__" in
                                                         owner.obj.methods)
                   for owner in self.plugin_resolver.mro(sym))

    def foreign_base(self, module: str, qualname: str) -> bool:
        """Whether a plugin class has a base from neither the plugin nor the host (`torch.nn.Module`
        next to a host base, a third-party mixin): it may give instances any member."""
        sym = self.plugin_resolver.resolve(f"{module}.{qualname}")
        if sym is None or sym.kind != CLASS:
            return False
        known = (self.settings.host, *(self.plugin.packages or (self.plugin.package,)))  # host and plugin roots
        return any(s.kind == EXTERNAL and s.path not in INERT_BASES and not any(
            s.path == top or s.path.startswith(top + ".") for top in known) for s in self.plugin_resolver.mro(sym)[1:])

    def plugin_members(self, owner: str) -> set[str]:
        """Members the plugin itself gives instances of host class `owner`: patch members, and everything
        its patch classes and subclasses of that class define or assign."""
        def build() -> frozenset[str]:
            out = {p.name for p in self.plugin.surface.patches if p.owner == owner}
            for target in self.plugin.surface.targets:
                if target.target == owner:
                    info = plugin_class_info(self.plugin.index, target.plugin_module, target.plugin_class)
                    if info is not None:
                        out.update(info.methods, info.attributes, info.instance_attrs, info.classes)
            return frozenset(out)
        return set(self.keep(("plugin-members", owner), build))

    @cached_property
    def copies(self) -> Copies:
        """The plugin's forks and mirrors (copied from OLD) with their NEW counterparts."""
        sources = self.keep(("copy-sources", id(self.old)), lambda: find_copy_sources(
            self.plugin, self.old.index, self.old.resolver, self.settings) if self.index_cache is None else
            stored_copy_sources(self.plugin, self.old.index, self.old.resolver, self.settings, self.index_cache,
                                self.stored_key("copy-sources-1", self.old)))
        return find_copies(self.plugin, self.old.index, self.old.resolver, self.new.index, self.new.resolver,
                           self.settings, sources)

    @cached_property
    def release_selectors(self) -> tuple[Selector, ...]:
        """The plugin functions picking one of its per-release copies by the host version."""
        return find_selectors(self.plugin, self.settings.host)

    @cached_property
    def version_gates(self) -> tuple[Gate, ...]:
        """The plugin's refusals of host versions (`if <host version test>: raise ...`, `assert <test>`)."""
        return version_gates(self.plugin.index, self.plugin.modules, self.settings.host)

    def host_version(self, view: HostView) -> tuple[int, ...]:
        """A host version's release numbers ((0, 28, 0)), from the tree's version or else its label
        ("~/vllm@v0.28.0"); () when neither states one."""
        return version_of(view.index.tree.version or view.label)

    @cached_property
    def source_patches(self) -> SourcePatches:
        """The plugin's source-text patches (`.patch.py` files of `(old, new)` pairs) and their patcher."""
        return find_source_patches(self.plugin, self.settings.host)

    def host_text_line(self, view: HostView, module: str, text: str) -> int | None:
        """The line where `text` first occurs in a host module's source (the patcher's `old in source`),
        0 when it does not, None when the host has no such module."""
        if module not in view.index.paths:
            return None
        return self.keep(("text-line", id(view), module, text), lambda: text_line(view.index.source(module), text))

    def nearest_host_text(self, view: HostView, module: str, text: str) -> tuple[int, str] | None:
        """(line, text) of the block of a host module most like `text`, when one is clearly alike."""
        if module not in view.index.paths:
            return None
        return self.keep(("nearest-text", id(view), module, text),
                         lambda: nearest_block(view.index.lines(module), text))

    def text_counterpart(self, view: HostView, other: HostView, module: str, line: int,
                         count: int) -> tuple[int, str] | None:
        """(line, text) in `view`'s module of the `count` lines at `line` of `other`'s, by a line diff of the
        module at the two versions (None when that text was deleted or a version lacks the module)."""
        if module not in view.index.paths or module not in other.index.paths:
            return None
        return self.keep(("text-counterpart", id(view), id(other), module, line, count), lambda: counterpart_block(
            other.index.lines(module), view.index.lines(module), line, count))

    def host_line_location(self, view: HostView, module: str, line: int, unit: str = "") -> Location:
        """A host module's line as evidence: its file, the line and the line's text."""
        return Location(view.index.paths[module], line, 0, unit or module, view.index.line_text(module, line).strip())

    def modules_holding(self, view: HostView, text: str) -> tuple[str, ...]:
        """The host modules whose source contains `text` (sorted)."""
        return view.index.grep(text)

    @cached_property
    def unused_fork_classes(self) -> frozenset[tuple[str, str]]:
        """(module, class) of the classes in forked files that no plugin code hands on: the host
        never calls them, so their overrides are not judged one by one. Kept across runs: walking
        every plugin module that spells a forked class was a third of a warm vllm-ascend scan."""
        modules = sorted({f.plugin_module for f in self.copies.forks})
        name = "unused-fork-classes-1:" + hashlib.blake2b("\0".join(modules).encode(), digest_size=16).hexdigest()
        found = self.stored(name, list[tuple[str, str]], lambda: sorted(unreached_classes(self.plugin, set(modules))))
        return frozenset(found)

    # -- the plugin against one host version -------------------------------------------------------
    def provided_by_plugin(self, view: HostView, owner: Symbol) -> frozenset[str]:
        """Members the plugin adds to `owner` or a related host class in `view` (patch members, stores)."""
        def build() -> frozenset[str]:
            related = {s.path for s in view.resolver.mro(owner)}
            out: set[str] = set()
            for path, names in self.added_members.items():
                sym = view.resolve(path)
                if sym is not None and sym.kind == CLASS and (
                        sym.path in related or owner.path in {s.path for s in view.resolver.mro(sym)}):
                    out |= names
            return frozenset(out)
        return self.keep(("provided", id(view), owner.path), build)

    def replaced_units(self, view: HostView) -> frozenset[str]:
        """Host functions and methods (module path + qualified name) the plugin replaces in `view`."""
        return self.keep(("replaced", id(view)), lambda: replaced_units(view, self.plugin.surface.patches))

    def call_failures(self, view: HostView, patch: Patch, in_order: bool = False) -> Failure | None:
        """`view`'s reachable call sites that do not bind to the plugin's replacement `patch` (with
        `in_order`: that pass a positional argument it binds elsewhere than the base does; see
        `plugin.callers.host_call_failures`); the signatures and callers checks both ask."""
        key = ("failures", id(view), patch.plugin_module, patch.site.line, patch.owner, patch.name, in_order)
        return self.keep(key, lambda: host_call_failures(view, patch, self.replaced_units(view), in_order=in_order))

    def override_reached(self, view: HostView, patch: Patch, in_order: bool = False) -> bool:
        """Whether `view`'s code may call an ordinary subclass's override in a way it cannot accept
        (with `in_order`: binding a positional argument elsewhere than the base does; see
        `plugin.callers.override_reached`): a mismatch nothing in the host can trip is context."""
        key = ("override-reached", id(view), patch.plugin_module, patch.site.line, patch.owner, patch.name, in_order)

        def build() -> bool:
            return override_reached(view, patch, self.replaced_units(view), self.settings.called_implicitly,
                                    lambda: self.lineage(patch), self.host_paths(view).runs, self.plugin_stores,
                                    in_order=in_order, dispatched=self.dispatch_taken(view))
        # kept across runs: walking host modules for the ways a call can reach the class is most of a warm scan
        name = (f"override-reached-6:{patch.plugin_module}:{patch.site.line}:{patch.kind.value}:{patch.via}:"
                f"{patch.target}:{'order' if in_order else 'binding'}")
        return self.keep(key, lambda: self.stored(name, bool, build, view))

    def layer_calls_fit(self, view: HostView, patch: Patch, param: str) -> bool:
        """Whether no host call can trip `param` of the replacement `patch`, its member reached beyond named
        calls only through a dispatcher's route that the layer's own calls run (see `plugin.layer_calls`)."""
        def build() -> bool:
            if patch.kind is PatchKind.OVERRIDE:
                taken = self.dispatch_taken(view)
                named_fit = not override_reached(
                    view, patch, self.replaced_units(view), self.settings.called_implicitly, lambda: self.lineage(patch),
                    self.host_paths(view).runs, self.plugin_stores,
                    dispatched=lambda m, u, n: taken(m, u, n) and not is_carried(view, m, u, n))
            else:
                found = self.call_failures(view, patch)
                named_fit = found is None or not fails_for(found[2], param)
            return routed_member_fits(view, self.plugin, patch, param, self.replaced_units(view),
                                      tuple(self.settings.called_implicitly), self.lineage(patch), named_fit)
        key = ("layer-calls-fit", id(view), patch.plugin_module, patch.site.line, patch.owner, patch.name, param)
        # kept across runs: following every layer built from a factory walks many host modules
        name = f"layer-calls-fit-1:{patch.plugin_module}:{patch.site.line}:{patch.kind.value}:{patch.via}:{patch.target}:{param}"
        return self.keep(key, lambda: self.stored(name, bool, build, view))

    def dispatch_taken(self, view: HostView) -> Callable[[str, Unit, ast.expr], bool]:
        """Whether a bare `self.member` read in a host unit may hand the member out on the plugin's
        platform: False only for a dispatcher's route whose platform guard the plugin's platform class
        answers against (`plugin.dispatch`), the route `if current_platform.is_xpu(): return
        self.forward_xpu` under a CUDA platform."""
        guards = self.keep(("platform-guards", id(view)), lambda: PlatformGuards(
            view, self.plugin, self.plugin_resolver, self.settings.platform_instances))

        def taken(module: str, unit: Unit, node: ast.expr) -> bool:
            route = dispatch_route(view.index, module, unit, node) if guards.platforms else None
            return route is None or guards.possible(module, route)
        return taken

    def handed_on(self, view: HostView, patch: Patch) -> bool:
        """Whether `view` may reach the member `patch` replaces without a call naming it (see
        `plugin.callers.handed_on`): then no judged call site speaks for every caller."""
        key = ("handed-on", id(view), patch.owner, patch.name)
        return self.keep(key, lambda: handed_on(view, patch))

    def constructions_bind(self, view: HostView, patch: Patch) -> bool:
        """Whether every host construction of the class whose `__init__` `patch` replaces binds its
        positional arguments alike (see `plugin.callers.constructions_bind`)."""
        key = ("constructions-bind", id(view), patch.plugin_module, patch.site.line, patch.owner, patch.name)
        return self.keep(key, lambda: constructions_bind(view, patch, self.replaced_units(view)))

    def instance_calls_reached(self, view: HostView, patch: Patch) -> bool:
        """Whether `view`'s code may call an instance of the patched host class in a way the replacement of
        its implicitly run member rejects (see `plugin.callers.instance_calls_reached`)."""
        key = ("instance-calls", id(view), patch.plugin_module, patch.site.line, patch.owner, patch.name)
        name = f"instance-calls-1:{patch.plugin_module}:{patch.site.line}:{patch.kind.value}:{patch.target}"
        return self.keep(key, lambda: self.stored(
            name, bool, lambda: instance_calls_reached(view, patch, self.replaced_units(view)), view))

    def host_paths(self, view: HostView) -> HostPaths:
        """Which of `view`'s units may still run once the plugin is loaded (`plugin.host_paths`), kept per view."""
        def build() -> HostPaths:
            registrars = tuple(r for text in self.settings.op_registrars if (r := OpRegistrar.parse(text)) is not None)
            return HostPaths(view, self.replaced_units(view), lambda path: self.stand_ins(view).get(path, ()),
                             lambda path: self.derived_classes(view, path), self.plugin_spells,
                             registrars, self.settings.called_implicitly,
                             frozenset(c.how for c in self.plugin.surface.class_paths))
        return self.keep(("host-paths", id(view)), build)

    def stand_ins(self, view: HostView) -> dict[str, tuple[ClassShape, ...]]:
        """Host class path in `view` -> the plugin classes installed in its place (`register_oot`)."""
        def build() -> dict[str, tuple[ClassShape, ...]]:
            out: dict[str, list[ClassShape]] = {}
            for r in self.plugin.surface.replacements:
                host = view.resolve(r.host_class)
                shape = self.class_shape(f"{r.plugin_module}.{r.plugin_class}")
                if host is not None and shape is not None:
                    out.setdefault(host.path, []).append(shape)
            return {k: tuple(v) for k, v in out.items()}
        return self.keep(("stand-ins", id(view)), build)

    def derived_classes(self, view: HostView, host_class: str) -> tuple[ClassShape, ...]:
        """The plugin classes deriving from the host class `host_class` of `view`."""
        def build() -> tuple[ClassShape, ...]:
            short = host_class.rpartition(".")[2]
            resolver, out = self.plugin_resolver, []
            for module, summary in self.plugin.index.modules.items():
                for name in summary.classes:
                    sym = resolver.resolve(f"{module}.{name}")
                    if sym is None or sym.kind != CLASS or not any(
                            c.kind == EXTERNAL and c.path.rpartition(".")[2] == short for c in resolver.mro(sym)):
                        continue
                    shape = self.class_shape(sym.path)
                    if shape is not None and any(host_class in {c.path for c in view.resolver.mro(b)}
                                                 for p in shape.host_bases if (b := view.resolve(p)) is not None):
                        out.append(shape)
            return tuple(out)
        return self.keep(("derived", id(view), host_class), build)

    def plugin_spells(self, name: str) -> bool:
        """Whether plugin code spells `name` as a word (it may call the host member of that name)."""
        whole = word(name)
        return self.keep(("spells", name), lambda: any(
            name in self.plugin.index.source(m) and whole.search(self.plugin.index.source(m)) for m in self.plugin.modules))

    def plugin_stores(self, attr: str) -> tuple[tuple[ClassShape | None, bool, bool], ...] | None:
        """Each plugin store into `x.attr` (see `plugin.receivers.plugin_stores`): the shape of the plugin class
        making it (None outside one, or unresolved), whether `x` is its `self`, whether the value is; None when
        plugin code may store it by name (`setattr`)."""
        def build() -> tuple[tuple[ClassShape | None, bool, bool], ...] | None:
            stores = plugin_stores(self.plugin.index, self.plugin.modules, attr)
            return None if stores is None else tuple(
                (self.class_shape(s.cls) if s.cls else None, s.on_self, s.of_self) for s in stores)
        return self.keep(("plugin-stores", attr), build)

    def registered_model_call(self, patch: Patch) -> ModelCall | None:
        """The keyword call the host's loader or runner makes of the member an override of a plugin model class
        replaces, when the plugin registers the class with the host's model registry and the override takes
        that call (see `plugin.registered_models`)."""
        registered = self.keep(("registered-models",), lambda: registered_classes(
            self.plugin, self.settings.model_registrars))
        calls = tuple(c for text in self.settings.registered_model_calls if (c := ModelCall.parse(text)) is not None)
        return registered_call(patch, registered, calls, self.lineage(patch), registrar_arguments(
            self.settings.model_registrars)) if registered and calls else None

    def lineage(self, patch: Patch) -> Lineage | None:
        """Where host code can meet instances of the plugin class an override belongs to (see
        `plugin.reach.Lineage`): its plugin subclasses, whether the host may build it, its holders."""
        if patch.kind is not PatchKind.OVERRIDE or not patch.via:
            return None
        path = f"{patch.plugin_module}.{patch.via}"
        return self.keep(("lineage", path), lambda: lineage(self.plugin, self.plugin_resolver, path, self.class_shape))

    def class_shape(self, path: str) -> ClassShape | None:
        """A plugin class as host code meets it (`plugin.reach.class_shape`), kept per class."""
        return self.keep(("class-shape", path), lambda: class_shape(self.plugin, self.plugin_resolver, path))

    @cached_property
    def origins(self) -> dict[tuple[str, int], Origin]:
        """(plugin path, first line) of each copy -> the release before OLD it matches best (empty
        without a release history); a copy that lags OLD is merged from there by `pinport port`."""
        if not self.history:
            return {}
        return copy_origins(self.copies.copies, self.plugin.index, self.old.index, self.history, self.index_cache)

    def plugin_typing(self, view: HostView) -> PluginTyping:
        """How plugin code is typed against `view`: `self`, plugin-provided members, assigned attributes."""
        return self.keep(("typing", id(view)), lambda: PluginTyping(
            self.plugin, view.resolver, self.plugin_resolver, self.keep("plugin-constructions", dict)))

    def plugin_inference(self, view: HostView, module: str, unit: Unit) -> Inference:
        """Host types of the expressions in one plugin unit against `view` (see `plugin.typed`)."""
        key = ("inference", id(view), module, unit.qualname, getattr(unit.body[0], "lineno", 0) if unit.body else 0)
        return self.keep(key, lambda: self.plugin_typing(view).inference(module, unit,
                                                                         self.plugin_unit_walk(module, unit)))

    def host_calls(self, view: HostView) -> list[HostCall]:
        """Every plugin call that reaches a host callable in `view` (the call-judging checks share it)."""
        def build() -> list[HostCall]:
            units = [(m, u, self.plugin_unit_walk(m, u)) for m in self.plugin.modules for u in self.plugin_units(m)]
            return host_calls(self.plugin_typing(view), units, lambda m, u: self.plugin_inference(view, m, u))
        return self.keep(("host-calls", id(view)), build)

    def helper_stores(self, view: HostView, method: HostMethod) -> frozenset[str]:
        """Attributes host helpers set on a plugin method's `self` when the method hands it to them
        (`self.quant_method.create_weights(self, ...)` registering `w13_weight` on its `layer`)."""
        def build() -> frozenset[str]:
            me = method.node.args.args[0].arg if method.node.args.args else ""
            found: set[str] = set()
            for call in self.host_calls(view) if me else ():
                if call.module == method.module and call.unit.qualname == method.qualname:
                    for param in receiving_params(call.callee, call.call, me):
                        found |= view.attributes_set_on(call.callee.sym, param)
            return frozenset(found)
        return self.keep(("helper-stores", id(view), method.module, method.qualname), build)

    def host_helper_sets(self, view: HostView, owners: Iterable[Symbol], method: HostMethod) -> frozenset[str]:
        """Attributes host helpers set on `self` of a plugin method of host classes `owners`: helpers
        the host classes' own methods hand `self` to, and helpers the plugin method hands it to."""
        out = set(self.helper_stores(view, method))
        for owner in owners:
            out |= view.attributes_from_helpers(owner)
        return frozenset(out)

    def refuses_every_call(self, patch: Patch) -> bool:
        """Whether a plugin method's body only raises NotImplementedError (after a docstring): the plugin
        declares the member unsupported, so a call fails there whatever it passes and the member's
        signature decides nothing. Asked of methods (patch-class members and subclass overrides)."""
        if patch.kind not in (PatchKind.MEMBER, PatchKind.OVERRIDE):
            return False
        node = self.plugin.function_node(patch.plugin_module, patch.site.unit)
        return node is not None and _only_raises_not_implemented(node)

    def forwarded_name(self, view: HostView, base: Symbol) -> str:
        """The member a host passthrough method hands everything to (`def forward_oot(self, *args,
        **kwargs): return self.forward_native(*args, **kwargs)` -> "forward_native"), else ''.

        A plugin's replacement of such a method takes the calls meant for that member, so it is
        judged against the member as the patched class defines it."""
        fn = base.obj
        if not isinstance(fn, FunctionInfo) or not base.module or [p.kind for p in fn.signature.params[1:]] != [
                ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD]:
            return ""

        def build() -> str:
            lines = view.index.lines(base.module)[fn.line:fn.end_line]
            body = [t for t in (line.strip() for line in lines) if t and not t.startswith("#")]
            if len(body) == 2 and body[0].startswith(_DOC_QUOTES):
                body = body[1:]
            found = _FORWARD.fullmatch(body[0]) if len(body) == 1 else None
            return found.group(1) if found else ""
        return self.keep(("forwarded", id(view), base.path), build)

    # -- copies against OLD and NEW ---------------------------------------------------------------
    def vanished_members(self, owner: str, reads: dict[str, int], provided: set[str],
                         theirs: str | None = None, base: str | None = None) -> Iterator[tuple[str, int, Symbol, str]]:
        """(name, plugin line, OLD member, NEW rename or "") for each `self.X` read that OLD's class
        `owner` defines and NEW's does not; a rename is taken from the NEW body first, then the class."""
        old_cls, new_cls = self.old.resolve(owner), self.new.resolve(owner)
        if old_cls is None or new_cls is None or old_cls.kind != CLASS or new_cls.kind != CLASS:
            return
        hints: tuple[list[str], list[str]] | None = None
        for name, line in sorted(reads.items()):
            if name in provided or name.startswith("__"):
                continue
            before = self.old.member(old_cls, name)
            if before is None or before.kind == EXTERNAL:
                continue
            if self.new.member(new_cls, name) is not None:
                continue
            if hints is None:  # names NEW's body starts using, then members NEW's class gained
                started = set(_SELF_NAME.findall(theirs or "")) - set(_SELF_NAME.findall(base or ""))
                hints = (sorted(n for n in started if self.new.member(new_cls, n)),
                         sorted(_all_members(self.new, new_cls) - _all_members(self.old, old_cls)))
            rename = (difflib.get_close_matches(name, hints[0], 1, 0.5)
                      or difflib.get_close_matches(name, hints[1], 1, 0.6) or [""])[0]
            yield name, line, before, rename


def _all_members(view: HostView, cls: Symbol) -> set[str]:
    """Every member name `cls` and its host bases define (for rename hints)."""
    out: set[str] = set()
    for owner in view.resolver.mro(cls):
        if isinstance(owner.obj, ClassInfo):
            info = owner.obj
            out.update(info.methods, info.attributes, info.instance_attrs, info.classes)
    return out


def _only_raises_not_implemented(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = fn.body[1:] if fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(
        fn.body[0].value, ast.Constant) and isinstance(fn.body[0].value.value, str) else fn.body
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    exc = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
