"""Config-gated gaps: names and `self.` members the plugin uses that nothing defines, and shadowed methods.

Code on a path no test takes (a feature flag, a rare config) can call what exists nowhere:
shift-parallel capture called `self._register_shift_cudagraph_keys`, defined neither in the
plugin nor in the host. Plain names are judged with Python's scoping rules, flow-insensitively
like pyflakes; `self.X` is reported only when neither host version, through the MRO, nor any
plugin code defines `X` (the attributes check owns "OLD had it, NEW does not"). A second `def`
of the same name in one class body silently replaces the first.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

from ..facts import ScanFacts
from ..findings import Finding, Kind, Severity
from ..model.host import HostView
from ..model.nodes import branches
from ..model.resolve import CLASS, EXTERNAL, INERT_BASES, Symbol, inert_member
from ..model.summary import ClassInfo
from ..plugin.uses import (
    HostMethod,
    caught_names,
    param_names,
    plugin_class_info,
    self_name,
)
from .base import ScanContext

NAME = "undefined"

UNDEFINED_NAME = Kind("PP0050", "UndefinedName", "`{name}` is used here but defined nowhere in scope: NameError "
                      "when this line runs", Severity.ERROR, None, NAME)
UNDEFINED_MEMBER = Kind("PP0051", "UndefinedSelfMember", "`self.{name}` is used here, but neither the plugin nor "
                        "`{cls}` in {label} defines `{name}`", Severity.ERROR, None, NAME)
DUPLICATE_METHOD = Kind("PP0052", "DuplicateMethod", "`{cls}` defines `{name}` twice; this first definition is "
                        "silently replaced by the one at line {line}", Severity.WARNING, None, NAME)

KINDS = (UNDEFINED_NAME, UNDEFINED_MEMBER, DUPLICATE_METHOD)

_BUILTINS = frozenset(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__", "__path__", "__package__",
                                        "__loader__", "__builtins__", "__annotations__", "__debug__", "__class__",
                                        "__module__", "__qualname__", "__dict__", "WindowsError", "reveal_type"}
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


# -- scoping ---------------------------------------------------------------------------------------
class _Scope:
    """Names a scope binds and the loads it could not settle yet (settled when the scope closes)."""

    __slots__ = ("kind", "names", "loads")

    def __init__(self, kind: str, names: set[str] | None = None) -> None:
        self.kind = kind  # module, function, class, comprehension
        self.names: set[str] = names or set()
        self.loads: list[tuple[str, ast.Name, bool]] = []  # (name, node, seen from inside a function)


class _NameChecker:
    """One walk of a module with Python's scoping; a load is judged when its scope closes (pyflakes-style)."""

    def __init__(self) -> None:
        self.scopes: list[_Scope] = []
        self.units: list[str] = []
        self.unit_of: dict[int, str] = {}
        self.guard = 0  # inside `try:` with a NameError handler
        self.star = False

    def run(self, tree: ast.Module) -> list[tuple[str, ast.Name]]:
        module = _Scope("module")
        self.scopes = [module]
        for stmt in tree.body:
            self.visit(stmt)
        free = [(name, node) for name, node, _ in module.loads if name not in module.names and name not in _BUILTINS]
        return [(self.unit_of[id(node)], name, node) for name, node in free]  # type: ignore[misc]

    def _open(self, scope: _Scope, unit: str | None, body: list[ast.AST]) -> None:
        self.scopes.append(scope)
        if unit:
            self.units.append(unit)
        for node in body:
            self.visit(node)
        if unit:
            self.units.pop()
        self.scopes.pop()
        parent = self.scopes[-1]
        for name, node, from_function in scope.loads:
            if name in scope.names and not (scope.kind == "class" and from_function):
                continue
            parent.loads.append((name, node, from_function or scope.kind == "function"))

    def _bind(self, name: str) -> None:
        scope = self.scopes[-1]
        if scope.kind == "comprehension":  # a walrus binds in the enclosing function (or module)
            scope = next(s for s in reversed(self.scopes) if s.kind != "comprehension")
        scope.names.add(name)

    def visit(self, node: ast.AST) -> None:
        kind = type(node)
        if kind is ast.Name:
            if isinstance(node.ctx, ast.Load):
                if not self.guard:
                    self.scopes[-1].loads.append((node.id, node, False))
                    self.unit_of[id(node)] = ".".join(self.units) or "<module>"
            else:
                self.scopes[-1].names.add(node.id)
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            self.scopes[-1].names.add(node.name)
            for part in (*node.decorator_list, *node.args.defaults, *(d for d in node.args.kw_defaults if d)):
                self.visit(part)
            self._open(_Scope("function", param_names(node.args)), node.name, node.body)
        elif kind is ast.Lambda:
            for part in (*node.args.defaults, *(d for d in node.args.kw_defaults if d)):
                self.visit(part)
            self._open(_Scope("function", param_names(node.args)), None, [node.body])
        elif kind is ast.ClassDef:
            self.scopes[-1].names.add(node.name)
            for part in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
                self.visit(part)
            self._open(_Scope("class"), node.name, node.body)
        elif kind in _COMPREHENSIONS:
            parts: list[ast.AST] = []
            for g in node.generators:
                parts.extend((g.target, g.iter, *g.ifs))
            parts.extend((node.key, node.value) if kind is ast.DictComp else (node.elt,))
            self._open(_Scope("comprehension"), None, parts)
        elif kind is ast.NamedExpr:
            self._bind(node.target.id)
            self.visit(node.value)
        elif kind is ast.Import or kind is ast.ImportFrom:
            for alias in node.names:
                if alias.name == "*":
                    self.star = True
                else:
                    self.scopes[-1].names.add(alias.asname or alias.name.split(".")[0] if kind is ast.Import
                                              else alias.asname or alias.name)
        elif kind is ast.Global or kind is ast.Nonlocal:
            self.scopes[-1].names.update(node.names)
            if kind is ast.Global:
                self.scopes[0].names.update(node.names)
        elif kind is ast.Try or kind is ast.TryStar:
            guarded = "NameError" in caught_names(node)
            self.guard += guarded
            for stmt in node.body:
                self.visit(stmt)
            self.guard -= guarded
            for part in (*node.handlers, *node.orelse, *node.finalbody):
                self.visit(part)
        elif kind is ast.AnnAssign:
            for part in (node.target, node.value):  # the annotation is not evaluated at run time here
                if part is not None:
                    self.visit(part)
        elif kind is ast.arg:
            return  # annotations only
        else:
            if kind is ast.ExceptHandler or kind is ast.MatchAs or kind is ast.MatchStar:
                if node.name:
                    self.scopes[-1].names.add(node.name)
            elif kind is ast.MatchMapping and node.rest:
                self.scopes[-1].names.add(node.rest)
            for child in branches(node):  # contexts and operators bind and load nothing
                self.visit(child)


_DYNAMIC = ("globals()", "exec(", "eval(", "import *")


def _undefined_names(facts: ScanFacts) -> list[tuple[str, str, str, ast.Name]]:
    """(module, unit, name, first node) for every unresolvable Name load, once per unit and name."""
    def build() -> list[tuple[str, str, str, ast.Name]]:
        out = []
        for module in facts.plugin.modules:
            tree = facts.plugin_tree(module)
            if tree is None or facts.plugin_mentions(module, _DYNAMIC):
                continue  # `from x import *`, `globals()[...]`: the module's names are unknowable
            checker = _NameChecker()
            missing = checker.run(tree)
            if checker.star:
                continue
            seen: set[tuple[str, str]] = set()
            for unit, name, node in sorted(missing, key=lambda m: (m[2].lineno, m[2].col_offset)):
                if (unit, name) not in seen:
                    seen.add((unit, name))
                    out.append((module, unit, name, node))
        return out
    return facts.keep("undefined-names", build)


# -- members defined anywhere ------------------------------------------------------------------------
def _member_names(modules: dict) -> frozenset[str]:
    names: set[str] = set()
    for summary in modules.values():
        stack = list(summary.classes.values())
        while stack:
            info = stack.pop()
            names.update(info.methods, info.attributes, info.instance_attrs, info.slots, info.classes)
            stack.extend(info.classes.values())
    return frozenset(names)


def host_defines(view: HostView, cls: Symbol, name: str, instance: bool = True) -> bool:
    """Whether `cls` (through its MRO) or one of its subclasses in the host defines `name`."""
    if view.member(cls, name, instance) is not None:
        return True
    return any(isinstance(s.obj, ClassInfo) and s.obj.has_member(name) for s in view.subclasses(cls))


def _plugin_names(facts: ScanFacts) -> frozenset[str]:
    def build() -> frozenset[str]:
        names = set(_member_names(facts.plugin.index.modules)) | facts.uses.loose | facts.uses.self_stores
        for summary in facts.plugin.index.modules.values():
            names.update(summary.functions, summary.bindings)
        # module summaries list the classes of module and class bodies; a class built inside a function
        # (`def make(): class Method(Base): ...`) defines its members too
        for node in facts.uses.classes.values():
            names.update(_class_body_names(node))
        return frozenset(names)
    return facts.keep("plugin-names", build)


def _class_body_names(node: ast.ClassDef) -> set[str]:
    """The names a class statement's own body binds: its defs, nested classes and assignments."""
    names: set[str] = set()
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
            for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


class UndefinedCheck:
    name = NAME
    cost = 1.6  # relative run time (tenths of a second of a warm scan), to spread checks over two cores
    drift = ()
    kinds = KINDS
    description = "names and self members the plugin uses are defined somewhere; no method is defined twice"

    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        for module, unit, name, node in _undefined_names(ctx.facts):
            yield Finding(UNDEFINED_NAME, {"name": name}, ctx.plugin_site(module, unit, node), subject=name,
                          suggestion=f"define or import `{name}`, or remove the code path that uses it")
        yield from self._unit_members(ctx)
        yield from self._plugin_class_members(ctx)
        yield from self._duplicates(ctx)

    @staticmethod
    def _nowhere(ctx: ScanContext, name: str, owners: tuple[str, ...] = ()) -> bool:
        """Neither the plugin nor, in either host version, an owner's MRO or subclasses define `name`."""
        if name in _plugin_names(ctx.facts) or (name.startswith("__") and name.endswith("__")):
            return False
        for view in (ctx.old, ctx.new):
            for path in owners:
                sym = view.resolve(path)
                if sym is None or sym.kind != CLASS or host_defines(view, sym, name):
                    return False
        return True

    def _unit_members(self, ctx: ScanContext) -> Iterator[Finding]:
        for unit in ctx.facts.host_methods:
            if unit.plugin_class and unit.qualname.startswith(unit.plugin_class + ".") and not _has_instance(unit.node):
                continue  # a helper in a class body written without `@staticmethod`: no instance
            use = ctx.facts.self_use(unit)
            owners = [ctx.host.resolve(o) for o in unit.owners]
            if use.dynamic or any(o is None or o.kind != CLASS for o in owners):
                continue
            for attr, nodes in sorted(use.reads.items()):
                if attr in use.stores or attr in use.guarded or not self._nowhere(ctx, attr, unit.owners):
                    continue
                if attr in frozenset().union(*(ctx.facts.provided_by_plugin(ctx.host, o) for o in owners)):  # type: ignore[arg-type]
                    continue
                if self._given_elsewhere(ctx, unit, owners, attr):  # type: ignore[arg-type]
                    continue
                cls = owners[0].path.rpartition(".")[2]  # type: ignore[union-attr]
                node, guard = self._first_read(ctx, unit, nodes)
                yield Finding(UNDEFINED_MEMBER, {"name": attr, "cls": cls, "label": ctx.host.label},
                              ctx.plugin_site(unit.module, unit.qualname, node),
                              subject=f"{unit.owners[0]}.{attr}", severity=Severity.WARNING if guard else None,
                              details=(f"every read runs only behind {guard}",) if guard else (),
                              suggestion=f"define `{attr}` in the plugin, or remove the code path that uses it")

    @staticmethod
    def _first_read(ctx: ScanContext, unit: HostMethod, nodes: list[ast.Attribute]) -> tuple[ast.Attribute, str]:
        """The first read no host-version test guards, or (every read is guarded: code for another host
        version, `if vllm_version_is("0.29.0"): self.x`) the first read and why it is guarded."""
        found = next((u for u in ctx.facts.plugin_units(unit.module) if u.node is unit.node), None)
        if found is None:
            return nodes[0], ""
        walk = ctx.facts.plugin_unit_walk(unit.module, found)
        guards = [g if "version" in (g := walk.guard_at(n.lineno)) else "" for n in nodes]
        return next(((n, "") for n, g in zip(nodes, guards, strict=True) if not g), (nodes[0], guards[0]))

    @staticmethod
    def _given_elsewhere(ctx: ScanContext, unit: HostMethod, owners: list[Symbol], attr: str) -> bool:
        """Set by a host helper handed `self`, or possibly by a base from outside plugin and host."""
        return attr in ctx.facts.host_helper_sets(ctx.host, owners, unit) or bool(
            unit.plugin_class and not unit.is_patch and ctx.facts.foreign_base(unit.module, unit.plugin_class))

    def _plugin_class_members(self, ctx: ScanContext) -> Iterator[Finding]:
        """`self.X` in classes of the plugin's own (no host or unknown base) that nothing defines."""
        plugin = ctx.plugin
        attached = {(u.module, u.qualname) for u in ctx.facts.host_methods}
        resolver = ctx.facts.plugin_resolver
        for fn in ctx.facts.uses.functions:
            cls_qual, _, _ = fn.qualname.rpartition(".")
            if not cls_qual or (fn.module, fn.qualname) in attached:
                continue
            info = plugin_class_info(plugin.index, fn.module, cls_qual)
            if info is None or not _has_instance(fn.node) or \
                    fn.node not in _direct_methods(ctx.facts, fn.module, info, cls_qual):
                continue
            sym = resolver.resolve(f"{fn.module}.{cls_qual}")
            if sym is None or sym.kind != CLASS or any(s.kind == EXTERNAL and s.path not in INERT_BASES
                                                       for s in resolver.mro(sym)[1:]):
                continue
            members = [s.obj for s in resolver.mro(sym) if isinstance(s.obj, ClassInfo)]
            use = fn.use
            below = self._bases_below(ctx, sym)
            if use.dynamic or below is None:
                continue
            for attr, nodes in sorted(use.reads.items()):
                if (attr in use.stores or attr in use.guarded or any(m.has_member(attr) for m in members)
                        or any(inert_member(s, attr) for s in resolver.mro(sym)[1:] if s.kind == EXTERNAL)
                        or any("__getattr__" in m.methods for m in members) or not self._nowhere(ctx, attr)
                        or any(host_defines(view, base, attr) for view, base in below)):
                    continue
                yield Finding(UNDEFINED_MEMBER, {"name": attr, "cls": cls_qual, "label": ctx.plugin.label},
                              ctx.plugin_site(fn.module, fn.qualname, nodes[0]), subject=f"{fn.module}.{cls_qual}.{attr}",
                              suggestion=f"define `{attr}` in `{cls_qual}`, or remove the code path that uses it")

    @staticmethod
    def _bases_below(ctx: ScanContext, cls: Symbol) -> list[tuple[HostView, Symbol]] | None:
        """The host classes (in each host version) that the plugin's subclasses of a plugin class derive
        from: a mixin's `self` is one of those subclasses (`class Mixin:` used as `class S(Mixin,
        HostScheduler)`), so what they define is defined. None when one derives from a class outside
        plugin and host (its members are unknown)."""
        resolver = ctx.facts.plugin_resolver
        found: list[tuple[HostView, Symbol]] = []
        for path in ctx.facts.plugin_subclasses.get(cls.path, ()):
            sub = resolver.resolve(path)
            for base in resolver.mro(sub)[1:] if sub is not None else ():
                if base.kind != EXTERNAL or base.path in INERT_BASES:
                    continue
                if not ctx.plugin.names.is_host(base.path):
                    return None
                found.extend((view, host) for view in (ctx.old, ctx.new)
                             if (host := view.resolve(base.path)) is not None and host.kind == CLASS)
        return found

    def _duplicates(self, ctx: ScanContext) -> Iterator[Finding]:
        plugin = ctx.plugin
        for module in plugin.modules:
            summary = plugin.index.modules[module]
            stack = [(info, name) for name, info in summary.classes.items()]
            while stack:
                info, qual = stack.pop()
                stack.extend((c, f"{qual}.{n}") for n, c in info.classes.items())
                direct = _direct_defs(ctx.facts, module, info, qual)
                for name, line in info.duplicate_methods:
                    later = [n.lineno for n in direct.get(name, ()) if n.lineno > line]
                    if not later or line not in {n.lineno for n in direct.get(name, ())}:
                        continue  # one of them sits in an if/try branch: a deliberate alternative
                    site = ctx.facts.plugin_line(module, line, f"{qual}.{name}")
                    yield Finding(DUPLICATE_METHOD, {"name": name, "cls": qual, "line": later[0]}, site,
                                  subject=f"{module}.{qual}.{name}",
                                  details=(f"redefined at line {later[0]}",),
                                  suggestion="merge the two definitions or delete the dead one")


def _has_instance(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a class-body function takes an instance (or class): not a static method, and its first
    parameter is named for one (`self`, `cls`, `_self`…). `def _dbg(x):` in a class body is a helper
    written without `@staticmethod`; its `x.shape` is no member of the class."""
    name = self_name(node)
    return name is not None and ("self" in name or "cls" in name)


def _direct_defs(facts: ScanFacts, module: str, info: ClassInfo, qual: str) -> dict[str, list[ast.AST]]:
    """Methods defined directly in a class body (not in an if/try branch), by name."""
    def build() -> dict[str, list[ast.AST]]:
        node = facts.uses.classes.get((module, info.line))
        out: dict[str, list[ast.AST]] = {}
        for stmt in node.body if node is not None else ():
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                out.setdefault(stmt.name, []).append(stmt)
        return out
    return facts.keep(("direct", module, qual), build)


def _direct_methods(facts: ScanFacts, module: str, info: ClassInfo, qual: str) -> list[ast.AST]:
    return [n for nodes in _direct_defs(facts, module, info, qual).values() for n in nodes]


__all__ = ["KINDS", "UndefinedCheck", "host_defines"]
