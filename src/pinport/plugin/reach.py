"""Which plugin classes can reach the host: a class nothing hands on is never called by it.

A forked file often keeps upstream's classes the plugin no longer uses (ArcticInference's
forest-cascade fork keeps its own `FlashAttentionBackend`, while the plugin installs a subclass of
upstream's). Judging such a class's overrides against the host reports breaks that cannot fire.
A class counts as handed on when its own module names it as a value (instantiated, passed,
returned, assigned, subclassed, listed), another plugin module imports it (or reads it off its
module), it is decorated, or a string names it (registries by path); reading a helper off it
(`Cls.helper(...)`) does not.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

from ..model.nodes import walk_inner, walk_tree
from ..model.resolve import CLASS, EXTERNAL, Resolver
from ..model.summary import ClassInfo
from ..model.words import Words
from .construction import built_by_callee, built_where_bound, decorator_path, type_argument
from .model import PluginModel
from .records import PatchKind


def _absolute(plugin: PluginModel, module: str, node: ast.ImportFrom) -> str:
    """The module an `ImportFrom` in `module` reads from, relative levels resolved."""
    if not node.level:
        return node.module or ""
    is_package = plugin.index.paths.get(module, "").endswith("__init__.py")
    parts = module.split(".")
    keep = len(parts) - node.level + (1 if is_package else 0)
    base = ".".join(parts[:max(keep, 0)])
    return f"{base}.{node.module}" if node.module else base


def _local_values(tree: ast.Module) -> set[str]:
    """Names a module loads as values (not only as `Name.attr` bases), and its decorated classes."""
    bases: set[int] = set()
    loads: list[ast.Name] = []
    out: set[str] = set()
    for n in walk_tree(tree):  # one pass: this is the whole forked file
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
            bases.add(id(n.value))
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            loads.append(n)
        elif isinstance(n, ast.ClassDef) and n.decorator_list:
            out.add(n.name)
    return out | {n.id for n in loads if id(n) not in bases}


def unreached_classes(plugin: PluginModel, modules: set[str]) -> frozenset[tuple[str, str]]:
    """(module, class name) of the top-level classes of `modules` that no plugin code hands on."""
    candidates: dict[str, set[str]] = {}
    for module in sorted(modules):
        tree = plugin.index.parsed(module)
        names = {n.name for n in (tree.body if tree is not None else ()) if isinstance(n, ast.ClassDef)}
        if names:
            candidates[module] = names - _local_values(tree)
    if not any(candidates.values()):
        return frozenset()
    everything = set().union(*candidates.values())
    leaves = {m.rpartition(".")[2] for m in candidates}
    used: set[tuple[str, str]] = set()
    imported_anywhere: set[str] = set()
    for module in plugin.modules:
        if module in candidates:
            continue
        text = plugin.index.source(module)
        if not any(name in text for name in everything | leaves):
            continue  # a module that never spells a candidate (or its module) cannot hand it on
        tree = plugin.index.parsed(module)
        bound: set[str] = set()  # modules bound to a name here (`import m`, `from pkg import m`)
        sources: set[str] = set()  # modules something is imported from
        attributes: set[str] = set()
        for node in walk_tree(tree) if tree is not None else ():
            if isinstance(node, ast.ImportFrom):
                source = _absolute(plugin, module, node)
                used |= {(source, a.name) for a in node.names}
                sources.add(source)
                bound |= {f"{source}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                bound |= {a.name for a in node.names}
            elif isinstance(node, ast.Attribute) and node.attr in everything:
                attributes.add(node.attr)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 200:
                value = node.value.replace(":", ".")
                used |= {(m, c) for m, names in candidates.items() for c in names
                         if value == c or value.endswith(f".{c}")}
        for m, names in candidates.items():
            if m in sources or any(i == m or i.startswith(m + ".") for i in bound):
                imported_anywhere.add(m)
            if m in bound:
                used |= {(m, a) for a in attributes & names}  # `fork_module.Cls` read off the module
    # a fork no other plugin module imports is loaded some way we cannot see (a path in a config, an
    # entry point): none of its classes is known to be unused
    return frozenset((m, c) for m, names in candidates.items() if m in imported_anywhere
                     for c in names if (m, c) not in used)


class ModuleCalls(NamedTuple):
    """One walk over a plugin module: `x = Name(...)` assignments by the called name, and
    `x.m(...)` calls by method name with their place in the walk (each list in `ast.walk` order)."""

    built: dict[str, list[ast.Assign]]
    methods: dict[str, list[tuple[int, ast.Call]]]


def module_calls(tree: ast.Module | None) -> ModuleCalls:
    """The calls `plugin_call_passing` looks for, found in one walk (ScanFacts keeps them per module)."""
    built: dict[str, list[ast.Assign]] = {}
    methods: dict[str, list[tuple[int, ast.Call]]] = {}
    for i, node in enumerate(walk_inner(tree) if tree is not None else ()):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            built.setdefault(name, []).append(node)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            methods.setdefault(node.func.attr, []).append((i, node))
    return ModuleCalls(built, methods)


def plugin_call_passing(plugin: PluginModel, calls_of: Callable[[str], ModuleCalls], cls_name: str, method: str,
                        position: int, param: str) -> int:
    """The first plugin line that calls `method` of a `cls_name` instance passing `param` (by name, or
    positionally at `position`, self not counted): `x.method(...)`, or for `forward` the module call
    `self.attr(...)` on an attribute the plugin assigns a `cls_name(...)` to. 0 when none does.
    `calls_of(module)` is `module_calls` of a plugin module's tree (asked only of modules whose
    text spells what is looked for)."""
    index, scanned = plugin.index, set(plugin.modules)
    holders: set[str] = set()
    for module in index.grep(f"{cls_name}("):
        if module in scanned:
            for node in calls_of(module).built.get(cls_name, ()):
                holders |= {t.attr for t in node.targets if isinstance(t, ast.Attribute)}
    called = {method} | (holders if method == "forward" else set())
    spelling = {m for name in called for m in index.grep(f".{name}(")}
    for module in plugin.modules:
        if module not in spelling:
            continue
        methods = calls_of(module).methods
        for _, node in sorted((c for name in called for c in methods.get(name, ())), key=lambda c: c[0]):
            positional = [a for a in node.args if not isinstance(a, ast.Starred)]
            if any(k.arg == param for k in node.keywords) or len(positional) > position:
                return node.lineno
    return 0


def _fills_missing(fn: ast.AST) -> bool:
    """Whether a function sets attributes it first checks for (`if not hasattr(x, n): setattr(x, n, ...)`)."""
    calls = {n.func.id for n in walk_tree(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    return "hasattr" in calls and "setattr" in calls


def backfill_site(plugin: PluginModel, members: list[tuple[str, str]]) -> tuple[int, str] | None:
    """(line, what) where one of the patched `members` ((module, qualname)) backfills the instance
    it runs on: it fills missing attributes itself, or hands `self` to a plugin function that does.
    An instance built before the patches is then completed on first use."""
    for module, qualname in members:
        fn = plugin.function_node(module, qualname)
        if fn is None:
            continue
        if _fills_missing(fn):
            return fn.lineno, f"`{qualname}` fills the attributes an early instance lacks"
        for node in walk_tree(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and any(isinstance(a, ast.Name) and a.id == "self" for a in node.args):
                helper = plugin.function_node(module, node.func.id)
                if helper is not None and _fills_missing(helper):
                    return node.lineno, f"`{qualname}` calls `{node.func.id}(self)`, which fills the attributes " \
                                        "an early instance lacks"
    return None


def supported_platforms(plugin: PluginModel) -> frozenset[str]:
    """Platforms the plugin's bootstrap insists on: `if not current_platform.is_cuda(): raise ...` in
    an entry-point function gives {"cuda"}; empty when it checks none (every platform is possible)."""
    out: set[str] = set()
    for entry in plugin.entry_points:
        module, _, attr = entry.value.partition(":")
        fn = plugin.function_node(module.strip(), attr.strip()) if attr else None
        for node in walk_tree(fn) if fn is not None else ():
            if not (isinstance(node, ast.If) and any(isinstance(n, ast.Raise) for n in node.body)):
                continue
            test = node.test
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Call) \
                    and isinstance(test.operand.func, ast.Attribute) and test.operand.func.attr.startswith("is_"):
                out.add(test.operand.func.attr.removeprefix("is_"))
    return frozenset(out)


def names_used_as_classes(plugin: PluginModel, path: str) -> frozenset[str]:
    """Names a plugin file needs to be classes: `isinstance`/`issubclass` targets, bases, `except` types."""
    module = next((m for m, p in plugin.index.paths.items() if p == path), None)
    tree = plugin.index.parsed(module) if module else None
    out: set[str] = set()

    def names(node: ast.AST | None) -> set[str]:
        if isinstance(node, ast.Name):
            return {node.id}
        if isinstance(node, ast.Tuple):
            return {n.id for n in node.elts if isinstance(n, ast.Name)}
        return set()
    for node in walk_tree(tree) if tree is not None else ():
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
                "isinstance", "issubclass") and len(node.args) == 2:
            out |= names(node.args[1])
        elif isinstance(node, ast.ClassDef):
            out |= {b.id for b in node.bases if isinstance(b, ast.Name)}
        elif isinstance(node, ast.ExceptHandler):
            out |= names(node.type)
    return frozenset(out)


@dataclass(frozen=True)
class ClassShape:
    """A plugin class as host code meets its instances: the host classes it derives from (as the
    plugin writes them), the host classes it is installed in place of (`register_oot`), and the
    methods a plugin class of its MRO defines without delegating (`super().m(...)`): host code of
    those methods never runs on it."""

    path: str
    host_bases: tuple[str, ...]
    stands_for: tuple[str, ...]
    replaces: frozenset[str]
    outside_bases: tuple[str, ...] = ()  # bases of other packages than the host (`torch.nn.Module`)


@dataclass(frozen=True)
class Lineage:
    """Where instances of a plugin class can be met: its own and its plugin subclasses' shapes;
    whether host code may build one (something other than a plugin construction names the class:
    a registry call, a patch, a class-path string; a decorator is kept apart, in `decorators`); and, when every construction is
    stored straight into `self.attr` by a method of a plugin class, those (holder, attribute) pairs
    (None when an instance is returned, passed or kept elsewhere)."""

    family: tuple[ClassShape, ...]
    handed_on: bool
    holders: tuple[tuple[ClassShape, str], ...] | None
    installed_as: tuple[str, ...] = ()  # host classes it is installed in place of (a class patch, register_oot)
    # (plugin class, method, by path) of each host hook handing the class to the host: a method of a plugin class
    # with host bases that returns the class (or its path string, `by path`), itself or through plugin functions
    # returning it (`get_impl_cls()`, `get_device_communicator_cls()`): the host builds it where it calls the hook
    hooks: tuple[tuple[ClassShape, str, bool], ...] = ()
    swapped: tuple[str, ...] = ()  # host classes it stands in for while a plugin context manager's `with` block runs
    # what the family's class decorators call (`construction.decorator_path`; '' unresolved): each hands the class
    # to host code, which builds it unless the host only files it (`construction.files_only`)
    decorators: tuple[str, ...] = ()
    # (function name, parameter) of each host call it is an argument of (`construction.type_argument`): the host
    # gets the class there, and may build it unless every host function of that name only tests against it
    arguments: tuple[tuple[str, str], ...] = ()


_INERT_CALLS = ("isinstance", "issubclass", "super", "type")
_INERT_DECORATORS = ("dataclass", "final", "total_ordering")


def class_shape(plugin: PluginModel, resolver: Resolver, path: str) -> ClassShape | None:
    """The shape of one plugin class (None when it does not resolve to a plugin class)."""
    sym = resolver.resolve(path)
    if sym is None or sym.kind != CLASS or not isinstance(sym.obj, ClassInfo):
        return None
    host_bases: list[str] = []
    outside_bases: list[str] = []
    replaces: set[str] = set()
    for cls in resolver.mro(sym):
        if cls.kind == EXTERNAL:
            (host_bases if plugin.names.is_host(cls.path) else outside_bases).append(cls.path)
            continue
        if not isinstance(cls.obj, ClassInfo) or not cls.module:
            continue
        qual = cls.path[len(cls.module) + 1:]
        for name in cls.obj.methods:
            fn = plugin.function_node(cls.module, f"{qual}.{name}")
            if fn is not None and not _delegates(fn, name):
                replaces.add(name)
    stands_for = tuple(sorted({r.host_class for r in plugin.surface.replacements
                               if f"{r.plugin_module}.{r.plugin_class}" == sym.path}))
    return ClassShape(sym.path, tuple(host_bases), stands_for, frozenset(replaces), tuple(outside_bases))


def _delegates(fn: ast.AST, name: str) -> bool:
    """Whether a method hands on to the implementation it overrides (`super().name(...)`,
    `Base.name(self, ...)`): the host's code of that method then still runs. A call of the same name
    on another object (`self.drafter.load_model(...)` in a runner's `load_model`) is no call up."""
    me = fn.args.args[0].arg if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and fn.args.args else "self"
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == name
               and _calls_up(n, me) for n in walk_tree(fn))


def _calls_up(call: ast.Call, me: str) -> bool:
    """`super().name(...)`, `super(Cls, self).name(...)`, or `Base.name(self, ...)` read off a class (not off
    `self`, an attribute of it, or a call's result), the method's own `self` first."""
    receiver = call.func.value  # type: ignore[attr-defined]
    if isinstance(receiver, ast.Call):
        return isinstance(receiver.func, ast.Name) and receiver.func.id == "super"
    while isinstance(receiver, ast.Attribute):
        receiver = receiver.value
    return isinstance(receiver, ast.Name) and receiver.id != me and bool(call.args) \
        and isinstance(call.args[0], ast.Name) and call.args[0].id == me


def lineage(plugin: PluginModel, resolver: Resolver, path: str,
            shape_of: Callable[[str], ClassShape | None]) -> Lineage | None:
    """Where host code can meet instances of the plugin class `path` (see `Lineage`), from every plugin
    reference to it or to a plugin subclass; `shape_of(path)` is `class_shape`, kept by ScanFacts."""
    if shape_of(path) is None:
        return None
    family = {path}
    installs: dict[tuple[str, int], list[tuple[str, str]]] = {}  # (module, line) -> [(plugin class or "", host)]
    for p in plugin.surface.patches:
        if p.kind is PatchKind.ASSIGNMENT and p.function is None:
            installs.setdefault((p.plugin_module, p.site.line), []).append(("", p.target))
    module_of = {p: m for m, p in plugin.index.paths.items()}  # a table entry may be registered in another module
    for r in plugin.surface.replacements:
        key = (module_of.get(r.site.path, r.plugin_module), r.site.line)
        installs.setdefault(key, []).append((f"{r.plugin_module}.{r.plugin_class}", r.host_class))
    installed: set[str] = set()
    swapped: set[str] = set()
    handed_on = False
    holders: set[tuple[str, str]] = set()
    escaped = False
    returned: set[tuple[str, str, str]] = set()
    read = False
    values: set[tuple[str, str, str, bool]] = set()
    decorators: set[str] = set()
    arguments: set[tuple[str, str]] = set()
    seen: set[str] = set()
    while family - seen:
        todo = family - seen
        seen |= todo
        names = {p.rpartition(".")[2] for p in todo}
        whole = Words(names)
        for module in plugin.modules:
            text = plugin.index.source(module)
            if not any(n in text for n in names) or not whole.search(text):
                continue
            tree = plugin.index.parsed(module)
            if tree is None:
                handed_on = True
                continue
            found = _references(plugin, module, tree, todo, installs)
            installed |= found.installed
            swapped |= found.swapped
            family |= found.subclasses
            handed_on |= found.handed_on
            escaped |= found.escaped
            holders |= found.holders
            returned |= found.returned
            read |= bool(found.read)
            values |= found.values
            decorators |= found.decorators
            arguments |= found.arguments
    hooks: set[tuple[str, str, bool]] = set()
    if values:  # the class itself returned: it reaches the host only through hooks the host calls
        found_hooks = _value_hooks(plugin, values, shape_of)
        handed_on |= found_hooks is None
        hooks = found_hooks or set()
        escaped |= bool(hooks)  # the host keeps what it builds wherever it likes
    if returned and not escaped:  # `return P(...)`: held wherever each call of that function keeps its result
        kept = _returned_holders(plugin, returned)
        escaped = kept is None
        holders |= kept or set()
    if not holders and not escaped and not installed and not read and not swapped:
        # nothing in the plugin builds it or calls its methods off the class: loaded some way we cannot see
        handed_on = True
    shapes = tuple(s for p in sorted(family) if (s := shape_of(p)) is not None)
    held = None if escaped or handed_on or installed or swapped or decorators or arguments else tuple(
        (s, attr) for holder, attr in sorted(holders) if (s := shape_of(holder)) is not None)
    if held is not None and len(held) < len(holders):
        held = None  # a holder that is no plugin class we can shape
    hook_shapes = tuple((s, name, by_path) for owner, name, by_path in sorted(hooks) if (s := shape_of(owner)) is not None)
    return Lineage(shapes, handed_on, held, tuple(sorted(installed)), hook_shapes, tuple(sorted(swapped)),
                   tuple(sorted(decorators)), tuple(sorted(arguments)))


def _value_hooks(plugin: PluginModel, values: set[tuple[str, str, str, bool]], shape_of: Callable[[str], ClassShape | None],
                 depth: int = 0) -> set[tuple[str, str, bool]] | None:
    """(plugin class, method, by path) of the host hooks the functions `values` return a class through:
    a method of a plugin class with host bases is one (the host calls it); a plugin function counts
    when each plugin reference to it is a call returned as it is by another such function. None when
    the class may reach the host some other way."""
    if depth > _RETURN_DEPTH:
        return None
    out: set[tuple[str, str, bool]] = set()
    further: set[tuple[str, str, str, bool]] = set()
    for fn_module, cls, name, by_path in values:
        if cls:
            shape = shape_of(f"{fn_module}.{cls}")
            if shape is None or not shape.host_bases:
                return None  # a plugin class's own helper: its callers are not followed
            out.add((shape.path, name, by_path))
            continue
        target, calls = f"{fn_module}.{name}", 0
        for module, references in _references_naming(plugin, name):
            if references is None:
                return None
            parent, classes, nodes, local_imports = references
            for node in nodes:
                if not (isinstance(node, ast.Name) and node.id == name and _named_target(
                        plugin, module, node, {target}, local_imports)):
                    continue
                call = parent.get(id(node))
                returner = _returned_from(parent, classes, module, call) if isinstance(call, ast.Call) \
                    and call.func is node else None
                if returner is None:
                    return None  # its result (or the function) goes somewhere not followed
                calls += 1
                further.add((*returner, by_path))
        if not calls:
            return None  # nothing in the plugin calls it: the host may
    if further:
        more = _value_hooks(plugin, further, shape_of, depth + 1)
        if more is None:
            return None
        out |= more
    return out


class _References(NamedTuple):
    subclasses: set[str]
    holders: set[tuple[str, str]]
    handed_on: bool
    escaped: bool
    installed: set[str]
    returned: set[tuple[str, str, str]]  # (module, class qualname or "", function) returning a construction
    read: set[str]  # classes a plain method is read off (`P.__init__(self, ...)`): used, though never built
    values: set[tuple[str, str, str, bool]]  # (module, class qualname or "", function, by path) returning the class
    swapped: set[str]  # host classes it stands in for inside a context manager
    decorators: set[str]  # what its non-inert class decorators call (`construction.decorator_path`)
    arguments: set[tuple[str, str]]  # host functions it is handed to (`construction.type_argument`)


class _ReferenceMap(NamedTuple):
    """What `_references` reads of one module's tree, whatever classes it looks for: each node's
    parent, each class's qualified name, and the nodes that can refer to a class (string constants,
    classes, loaded names and `name.attr` reads), in `ast.walk` order, none of them inert."""

    parent: dict[int, ast.AST]
    classes: dict[int, str]  # id(ClassDef) -> qualified name and a dot
    nodes: tuple[ast.AST, ...]
    local_imports: dict[int, ast.Import | ast.ImportFrom]  # id(Name) -> the function-local import binding it


def _function_imports(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.Import | ast.ImportFrom]:
    """Names a function binds by importing in its own body (`def f(): from .m import C`), nested defs aside."""
    out: dict[str, ast.Import | ast.ImportFrom] = {}
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.ImportFrom):
            out |= {(a.asname or a.name): node for a in node.names if a.name != "*"}
        elif isinstance(node, ast.Import):
            out |= {(a.asname or a.name.partition(".")[0]): node for a in node.names}
        todo.extend(ast.iter_child_nodes(node))
    return out


def _references_naming(plugin: PluginModel, name: str) -> Iterator[tuple[str, tuple | None]]:
    """Each plugin module whose text spells `name`, with its reference map (`_reference_map`, kept per
    module); None in place of the map for a module that does not parse."""
    for module in plugin.modules:
        if name not in plugin.index.source(module):
            continue
        tree = plugin.index.parsed(module)
        yield module, None if tree is None else plugin.index.module_memo(
            module, "reference-map", lambda t=tree: _reference_map(t))


def _reference_map(tree: ast.Module) -> _ReferenceMap:
    parent: dict[int, ast.AST] = {}
    inert: set[int] = set()  # annotations, `__all__` values, docstrings
    classes: dict[int, str] = {}
    local_imports: dict[int, ast.Import | ast.ImportFrom] = {}
    stack: list[tuple[ast.AST, str, dict[str, ast.Import | ast.ImportFrom]]] = [(tree, "", {})]
    while stack:
        node, prefix, scope = stack.pop()
        if isinstance(node, ast.ClassDef):
            classes[id(node)] = prefix = f"{prefix}{node.name}."
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (own := _function_imports(node)):
            scope = scope | own
        elif isinstance(node, ast.Name) and node.id in scope and isinstance(node.ctx, ast.Load):
            local_imports[id(node)] = scope[node.id]
        for child in ast.iter_child_nodes(node):
            parent[id(child)] = node
            stack.append((child, prefix, scope))
        for annotation in _annotations(node):
            inert.update(id(n) for n in walk_tree(annotation))
        if _is_all(node):
            inert.update(id(n) for n in walk_tree(node.value))
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            inert.add(id(body[0].value))
    nodes = tuple(n for n in walk_tree(tree) if id(n) not in inert and (
        isinstance(n, ast.Constant) and isinstance(n.value, str) or isinstance(n, ast.ClassDef)
        or isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        or isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and isinstance(n.ctx, ast.Load)))
    return _ReferenceMap(parent, classes, nodes, local_imports)


def _references(plugin: PluginModel, module: str, tree: ast.Module, targets: set[str],
                installs: dict[tuple[str, int], list[tuple[str, str]]]) -> _References:
    """How one plugin module refers to the classes `targets` (absolute paths); `installs` are the
    statements (module, line) installing a class in place of a host class (path)."""
    # kept per module: every override's lineage walks the modules spelling its class
    parent, classes, nodes, local_imports = plugin.index.module_memo(module, "reference-map",
                                                                     lambda: _reference_map(tree))
    out = _References(set(), set(), False, False, set(), set(), set(), set(), set(), set(), set())
    handed_on = escaped = False
    bare = {t.rpartition(".")[2]: t for t in targets}
    for node in nodes:
        if isinstance(node, ast.Constant):
            value = node.value.replace(":", ".")
            if any(value == t or value == b or value.endswith(f".{b}") and not plugin.names.is_host(value)
                   for b, t in bare.items()):  # a host path names the host's class of that name
                returner = _returned_from(parent, classes, module, node) if value in targets else None
                if returner is not None:
                    out.values.add((*returner, True))  # `return "pkg.mod.P"`: a class-path hook
                else:
                    handed_on = True
            continue
        if isinstance(node, ast.ClassDef) and node.name in bare and f"{module}.{classes[id(node)][:-1]}" in targets:
            # a decorator hands the class to what it calls: judged against the host (`plugin.construction`)
            out.decorators.update(decorator_path(plugin, module, d) for d in node.decorator_list
                                  if _decorator_name(d) not in _INERT_DECORATORS)
            continue
        named = _named_target(plugin, module, node, targets, local_imports)
        if named is None:
            continue
        up = parent.get(id(node))
        if isinstance(up, ast.ClassDef) and node in up.bases:
            qual = classes[id(up)][:-1]
            out.subclasses.add(f"{module}.{qual}")
        elif isinstance(up, ast.Call) and up.func is node:
            holder = _held_in(parent, classes, module, up)
            returner = _returned_from(parent, classes, module, up) if holder is None else None
            if returner is not None:
                out.returned.add(returner)
            elif holder is None:
                escaped = True
            else:
                out.holders.add(holder)
        elif _inert_argument(parent, node):
            continue  # isinstance(x, P), issubclass(C, (P, Q)), isinstance(x, P | Q), super(P, self)
        elif _tested_table_key(plugin, module, tree, parent, node):
            continue  # a key of a module table whose keys are only tested against: `isinstance(x, key)`
        elif isinstance(up, ast.Attribute):
            # `P.build(...)`: a factory of the class may build an instance anywhere; patching a member
            # (`P.m = f`), or reading a plain method (`P.m(self, ...)`, `P.__init__(self, ...)`), builds none
            plain = isinstance(up.ctx, ast.Store | ast.Del) or _plain_method(plugin, named, up.attr)
            escaped |= not plain
            out.read.update({named} if plain else ())
        elif hosts := [h for p, h in installs.get((module, _statement(parent, node).lineno), ()) if p in ("", named)]:
            # the host builds it where it builds the class it replaces; inside a context manager only for a while,
            # and only where host code reads the class off its module then
            (out.swapped if _in_context_manager(parent, node) else out.installed).update(hosts)
        elif (returner := _returned_from(parent, classes, module, node)) is not None:
            out.values.add((*returner, False))  # `return P`: followed to the hooks handing it to the host
        elif built_where_bound(parent, node) or built_by_callee(plugin, module, parent, node):
            escaped = True  # a local factory (`cls = P if c else Q; cls(...)`), a plugin base's constructor building
            # what it is handed: built there, the instance not followed
        elif (argument := type_argument(parent, node)) is not None and not plugin.index.grep(f"def {argument[0]}("):
            out.arguments.add(argument)  # handed to a host function (the plugin defines none of that name)
        else:
            handed_on = True  # passed, assigned, listed: the host may get the class itself
    return _References(out.subclasses, out.holders, handed_on, escaped, out.installed, out.returned, out.read,
                       out.values, out.swapped, out.decorators, out.arguments)


def _in_context_manager(parent: dict[int, ast.AST], node: ast.AST) -> bool:
    """Whether a node lies in a `@contextmanager` function: what it installs holds for a `with` block, at run
    time, when host modules have long bound the names they import (`from mod import Cls`)."""
    fn = _enclosing_function(parent, node)
    return fn is not None and any(_decorator_name(d) == "contextmanager" for d in fn.decorator_list)


def _plain_method(plugin: PluginModel, path: str, name: str) -> bool:
    """Whether `name` is `__init__` or a method the plugin class `path` defines that is neither a
    classmethod nor a staticmethod (reading it off the class builds no instance)."""
    if name == "__init__":
        return True
    module, _, qual = path.rpartition(".")
    while module and module not in plugin.index.modules:
        module, _, head = module.rpartition(".")
        qual = f"{head}.{qual}"
    info = None
    for part in qual.split(".") if module else ():
        info = (info.classes if info is not None else plugin.index.modules[module].classes).get(part)
        if info is None:
            return False
    fn = info.methods.get(name) if info is not None else None
    return fn is not None and not fn.is_classmethod and not fn.is_staticmethod


def _inert_argument(parent: dict[int, ast.AST], node: ast.AST) -> bool:
    """Whether a class is only tested against or named to `super`: an argument of `isinstance`,
    `issubclass`, `super` or `type`, alone, in a tuple or in a `P | Q` union."""
    up = parent.get(id(node))
    while isinstance(up, ast.Tuple) or isinstance(up, ast.BinOp) and isinstance(up.op, ast.BitOr):
        node, up = up, parent.get(id(up))
    return isinstance(up, ast.Call) and node is not up.func and isinstance(up.func, ast.Name) \
        and up.func.id in _INERT_CALLS


def _tested_table_key(plugin: PluginModel, module: str, tree: ast.Module, parent: dict[int, ast.AST],
                      node: ast.AST) -> bool:
    """Whether a class is a key of a module-level table (`TABLE = {P: ...}`) that only its own module
    reads, and only by looping over it (`for cls, v in TABLE.items()`, `for cls in TABLE`) to test
    against each key (`isinstance(x, cls)`): the class is looked at there, never built."""
    table = parent.get(id(node))
    stmt = parent.get(id(table))
    if not (isinstance(table, ast.Dict) and any(k is node for k in table.keys) and parent.get(id(stmt)) is tree):
        return False
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
    if len(targets) != 1 or not isinstance(targets[0], ast.Name) or stmt.value is not table:
        return False
    name = targets[0].id
    whole = Words([name])
    if any(m != module and whole.search(plugin.index.source(m)) for m in plugin.modules):
        return False  # imported elsewhere: read where this module does not see
    return plugin.index.module_memo(module, ("tested-table", name), lambda: _only_tested(tree, parent, name))


def _only_tested(tree: ast.Module, parent: dict[int, ast.AST], name: str) -> bool:
    """Whether every read of the module name `name` is a loop over its keys whose key is only tested against."""
    stores = [n for n in walk_tree(tree) if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)]
    if len(stores) != 1:
        return False
    for read in (n for n in walk_tree(tree) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)):
        up, pairs = parent.get(id(read)), False
        if isinstance(up, ast.Attribute) and up.attr in ("items", "keys") and isinstance(call := parent.get(id(up)), ast.Call):
            read, up, pairs = call, parent.get(id(call)), up.attr == "items"
        if not isinstance(up, ast.For) or up.iter is not read:
            return False
        key = up.target.elts[0] if pairs and isinstance(up.target, ast.Tuple) and len(up.target.elts) == 2 else \
            None if pairs else up.target
        if not isinstance(key, ast.Name):
            return False
        uses = [n for stmt in up.body for n in walk_tree(stmt) if isinstance(n, ast.Name) and n.id == key.id]
        if not all(isinstance(n.ctx, ast.Load) and _inert_argument(parent, n) for n in uses):
            return False
    return True


_RETURN_DEPTH = 3  # functions handing a construction on by returning it, followed before it counts as escaped


def _enclosing_function(parent: dict[int, ast.AST], node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    up = parent.get(id(node))
    while up is not None and not isinstance(up, ast.FunctionDef | ast.AsyncFunctionDef):
        up = parent.get(id(up))
    return up


def _returned_from(parent: dict[int, ast.AST], classes: dict[int, str], module: str,
                   call: ast.expr) -> tuple[str, str, str] | None:
    """(module, class qualname or "", function) when an expression is returned as it is (`return P(...)`,
    `return P`) by a function or method (not a nested one); None otherwise."""
    if not isinstance(parent.get(id(call)), ast.Return):
        return None
    fn = _enclosing_function(parent, call)
    owner = parent.get(id(fn)) if fn is not None else None
    if fn is None or not isinstance(owner, ast.Module | ast.ClassDef):
        return None
    return module, classes[id(owner)][:-1] if isinstance(owner, ast.ClassDef) else "", fn.name


def _returned_holders(plugin: PluginModel, returned: set[tuple[str, str, str]],
                      depth: int = 0) -> set[tuple[str, str]] | None:
    """The (holder class, attribute) pairs keeping the results of the plugin functions `returned`: each
    call of one must store its result straight into `self.attr` of a plugin class (or return it from
    another such function). None when one is used any other way, read without being called, or never
    called by the plugin."""
    if depth > _RETURN_DEPTH:
        return None
    out: set[tuple[str, str]] = set()
    further: set[tuple[str, str, str]] = set()
    for fn_module, cls, name in returned:
        target = f"{fn_module}.{cls}.{name}" if cls else f"{fn_module}.{name}"
        calls = 0
        for module, references in _references_naming(plugin, name):
            if references is None:
                return None
            parent, classes, nodes, local_imports = references
            for node in nodes:
                if cls and isinstance(node, ast.Attribute) and node.attr == name:
                    fn = _enclosing_function(parent, node)
                    me = fn.args.args[0].arg if fn is not None and fn.args.args else ""
                    if node.value.id != me:  # type: ignore[attr-defined]
                        return None  # `other.method(...)`, or the method read off something else
                elif cls or not (isinstance(node, ast.Name) and node.id == name and _named_target(
                        plugin, module, node, {target}, local_imports)):
                    continue
                call = parent.get(id(node))
                if not (isinstance(call, ast.Call) and call.func is node):
                    return None  # the function handed on as a value
                calls += 1
                holder = _held_in(parent, classes, module, call)
                returner = _returned_from(parent, classes, module, call) if holder is None else None
                if holder is not None:
                    out.add(holder)
                elif returner is not None:
                    further.add(returner)
                else:
                    return None
        if not calls:
            return None  # nothing in the plugin calls it: the host may (a hook, an entry point)
    if further - returned:
        more = _returned_holders(plugin, further - returned, depth + 1)
        if more is None:
            return None
        out |= more
    return out


def _statement(parent: dict[int, ast.AST], node: ast.AST) -> ast.AST:
    """The statement holding an expression (its line is where discovery records an installation)."""
    while not isinstance(node, ast.stmt) and id(node) in parent:
        node = parent[id(node)]
    return node


def _named_target(plugin: PluginModel, module: str, node: ast.AST, targets: set[str],
                  local_imports: dict[int, ast.Import | ast.ImportFrom]) -> str | None:
    """Which of `targets` a name (or `name.attr`) refers to, through module-level bindings or an
    import in the enclosing function's body (None: none)."""
    def bound(name: ast.Name) -> str | None:
        local = local_imports.get(id(name))
        if local is None:
            return plugin.names.binding_path(module, name.id)
        if isinstance(local, ast.Import):
            alias = next(a for a in local.names if (a.asname or a.name.partition(".")[0]) == name.id)
            return alias.name if alias.asname else name.id
        alias = next(a for a in local.names if (a.asname or a.name) == name.id)
        return plugin.names.follow(f"{_absolute(plugin, module, local)}.{alias.name}")
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        path = bound(node)
    elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and isinstance(node.ctx, ast.Load):
        head = bound(node.value)
        path = f"{head}.{node.attr}" if head else None
    else:
        return None
    if path is None:
        return None
    return path if path in targets else followed if (followed := plugin.names.follow(path)) in targets else None


def _held_in(parent: dict[int, ast.AST], classes: dict[int, str], module: str,
             call: ast.Call) -> tuple[str, str] | None:
    """(holder class path, attribute) when a construction is stored straight into `self.attr` by a
    method of a plugin class; None when the instance goes anywhere else."""
    stmt = parent.get(id(call))
    if isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1:
        target = stmt.targets[0]
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is call:
        target = stmt.target
    else:
        return None
    fn = parent.get(id(stmt))
    while fn is not None and not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        fn = parent.get(id(fn))  # through if/with/try blocks
    cls = parent.get(id(fn)) if fn is not None else None
    if fn is None or not isinstance(cls, ast.ClassDef) or not fn.args.args:
        return None
    me = fn.args.args[0].arg
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me):
        return None
    return f"{module}.{classes[id(cls)][:-1]}", target.attr


def _annotations(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.arg | ast.AnnAssign):
        return [node.annotation] if node.annotation is not None else []
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return [node.returns] if node.returns is not None else []
    return []


def _is_all(node: ast.AST) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
        node, ast.AugAssign | ast.AnnAssign) else []
    return any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and getattr(node, "value", None) is not None


def _decorator_name(node: ast.expr) -> str:
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
