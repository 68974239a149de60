"""Calls the plugin makes into the host (#3 helper signature and return arity, #7 constructors).

Every call in the plugin is resolved, where it can be, to a host callable: imported functions
and classes, `self._helper(...)` inside patch-class methods (they run as methods of the
target) and subclass methods, `self._orig_x(...)` aliases of upstream members, and methods of
objects whose host type is known (annotations, constructor calls, return annotations). The
call's arguments are bound to the judged host's signature as Python would bind them, and a
tuple unpacking of the result is compared with what the host function returns. A call that
uses `*`/`**` is not verifiable; it is reported (informational) only when the callee's
signature changes between OLD and NEW and the call does not just forward its own arguments.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import replace

from ..findings import Arg, Finding, Kind, Location, Severity
from ..model.binding import (
    BOUND,
    CALL,
    CONSTRUCT,
    MISSING,
    TOO_MANY,
    TWICE,
    UNEXPECTED,
    BindProblem,
    Callee,
    bind_call,
    callee_params,
    render_params,
)
from ..model.callsites import iter_call_sites, modules_mentioning
from ..model.inference import Inference, Lookup, Typed, return_arity
from ..model.nodes import chain
from ..model.resolve import CLASS, FUNCTION, METHOD, MODULE, Resolver, Symbol
from ..model.summary import ClassInfo, FunctionInfo, Param, nested_class
from ..model.units import Unit, UnitWalk, local_imports
from ..plugin.records import PatchKind
from .base import HostView, ScanContext

NAME = "calls"

CALL_MISSING = Kind("PP0301", "CallMissingArgument", "`{callee}` requires `{name}` in {label}; the plugin's call "
                    "does not pass it", Severity.ERROR, 3, NAME)
CALL_UNEXPECTED = Kind("PP0302", "CallUnexpectedKeyword", "`{callee}` takes no parameter `{name}` in {label}; the "
                       "plugin's call passes it", Severity.ERROR, 3, NAME)
CALL_TOO_MANY = Kind("PP0303", "CallTooManyPositional", "`{callee}` takes at most {accepted} positional arguments "
                     "in {label}; the plugin's call passes {given}", Severity.ERROR, 3, NAME)
CALL_TWICE = Kind("PP0304", "CallArgumentTwice", "the plugin's call passes `{name}` to `{callee}` positionally and "
                  "by keyword in {label}", Severity.ERROR, 3, NAME)
UNPACK_ARITY = Kind("PP0305", "UnpackArityMismatch", "the plugin unpacks {count} values from `{callee}`, which "
                    "returns {returns} in {label}", Severity.ERROR, 3, NAME)
CALL_UNVERIFIED = Kind("PP0306", "CallUnverified", "`{callee}` changes signature in {label}; the plugin's call "
                       "passes `*`/`**` arguments, so it was not verified", Severity.INFO, 3, NAME)
CTOR_MISSING = Kind("PP0701", "ConstructorMissingArgument", "`{callee}(...)` requires `{name}` in {label}; the "
                    "plugin's call does not pass it", Severity.ERROR, 7, NAME)
CTOR_UNEXPECTED = Kind("PP0702", "ConstructorUnexpectedKeyword", "`{callee}(...)` takes no parameter `{name}` in "
                       "{label}; the plugin's call passes it", Severity.ERROR, 7, NAME)
CTOR_TOO_MANY = Kind("PP0703", "ConstructorTooManyPositional", "`{callee}(...)` takes at most {accepted} positional "
                     "arguments in {label}; the plugin's call passes {given}", Severity.ERROR, 7, NAME)
CTOR_TWICE = Kind("PP0704", "ConstructorArgumentTwice", "the plugin's call passes `{name}` to `{callee}(...)` "
                  "positionally and by keyword in {label}", Severity.ERROR, 7, NAME)
CTOR_UNVERIFIED = Kind("PP0705", "ConstructorCallUnverified", "`{callee}(...)` changes signature in {label}; the "
                       "plugin's call passes `*`/`**` arguments, so it was not verified", Severity.INFO, 7, NAME)

KINDS = (CALL_MISSING, CALL_UNEXPECTED, CALL_TOO_MANY, CALL_TWICE, UNPACK_ARITY, CALL_UNVERIFIED,
         CTOR_MISSING, CTOR_UNEXPECTED, CTOR_TOO_MANY, CTOR_TWICE, CTOR_UNVERIFIED)

_KINDS = {False: {MISSING: CALL_MISSING, UNEXPECTED: CALL_UNEXPECTED, TOO_MANY: CALL_TOO_MANY, TWICE: CALL_TWICE},
          True: {MISSING: CTOR_MISSING, UNEXPECTED: CTOR_UNEXPECTED, TOO_MANY: CTOR_TOO_MANY, TWICE: CTOR_TWICE}}
_SUGGEST = {MISSING: "pass `{name}` the way upstream does", UNEXPECTED: "drop `{name}=` or pass what replaced it",
            TOO_MANY: "match the positional parameters of the new signature",
            TWICE: "pass `{name}` once, in the position or keyword the new signature expects"}
_SITES = 5
_SEARCHED = 40  # modules parsed at most when listing upstream call sites


class _Context:
    """What one scan run of the check shares: plugin-provided members and class targets."""

    def __init__(self, ctx: ScanContext) -> None:
        self.ctx = ctx
        host = ctx.host
        # the plugin's classes against this host: targets, bases, kept `_orig_x` aliases, provided members
        self.typing = ctx.facts.plugin_typing(host)
        self.provided = self.typing.provided
        self.patch_targets = self.typing.patch_targets
        self.subclass_bases = self.typing.subclass_bases
        # host function path -> the plugin function installed in its place (`mod.fn = replacement`);
        # host class path -> the plugin function installed as its `__init__` (`Cls.__init__ = init`)
        self.installed: dict[str, FunctionInfo] = {}
        self.installed_init: dict[str, FunctionInfo] = {}
        for patch in ctx.plugin.surface.patches:
            if patch.kind is PatchKind.ASSIGNMENT and patch.function is not None:
                owner, member = host.replaced_member(patch.owner, patch.name)
                if owner is not None and owner.kind == MODULE and member is not None and member.kind == FUNCTION:
                    self.installed[member.path] = patch.function
                elif owner is not None and owner.kind == CLASS and patch.name == "__init__" and not patch.wrapper:
                    self.installed_init[owner.path] = patch.function
        self.sites: dict[tuple[str, bool], tuple[Location, ...]] = {}
        self.self_attrs: dict[tuple[str, str], dict[str, Typed | None]] = {}
        self.replacements: list[tuple[Symbol, str]] = []  # (replaced host class, plugin class path)
        for r in ctx.plugin.surface.replacements:
            replaced = host.resolve(r.host_class)
            if replaced is not None and replaced.kind == CLASS:
                self.replacements.append((replaced, f"{r.plugin_module}.{r.plugin_class}"))

    def replacement_binding(self, callee: Callee, call: ast.Call) -> str:
        """The plugin replacement of the callee's class (or a subclass of it) whose method takes this
        call, as "Plugin.method": the host builds that class instead (out-of-tree registration)."""
        owner, _, name = callee.sym.path.rpartition(".")
        if callee.mode != BOUND or callee.sym.kind != METHOD:
            return ""
        resolver = self.ctx.facts.plugin_resolver
        for replaced, plugin_cls in self.replacements:
            if owner not in {c.path for c in self.ctx.host.resolver.mro(replaced)}:
                continue
            if taker := _own_method_taking(resolver, plugin_cls, name, call):
                return taker
        return ""

    def subclass_binding(self, call: ast.Call, module: str, unit: Unit) -> str:
        """The plugin subclass override, as "Sub.method", that takes a `self.method(...)` call made in a
        plugin class the call does not bind for: `self` may be that subclass (the host's method is
        then never called from here with these arguments)."""
        func = call.func
        if not unit.cls or not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                                and func.value.id == "self"):
            return ""
        resolver = self.ctx.facts.plugin_resolver
        for sub in self.ctx.facts.plugin_subclasses.get(f"{module}.{unit.cls}", ()):
            if taker := _own_method_taking(resolver, sub, func.attr, call):
                return taker
        return ""

    def plugin_override_binding(self, callee: Callee, call: ast.Call) -> str:
        """The override, as "Plugin.method", that takes a call on an object typed as a host class
        (`self.engine_client.generate(...)`, `engine_client: EngineClient`) in a plugin subclass of that
        class (`class AsyncOmni(EngineClient)` overriding `generate`) that plugin code builds itself: the
        object may be the plugin's."""
        receiver = callee.receiver.path if callee.receiver is not None else callee.sym.owner
        if callee.sym.kind != METHOD or not receiver:
            return ""
        name = callee.sym.path.rpartition(".")[2]
        resolver = self.ctx.facts.plugin_resolver
        for (module, qual), base in self.subclass_bases.items():
            if receiver in {c.path for c in self.ctx.host.resolver.mro(base)}:
                taker = _own_method_taking(resolver, f"{module}.{qual}", name, call)
                if taker and self.typing.built_in_plugin(f"{module}.{qual}"):
                    return taker
        return ""

    def masked(self, cls: Symbol, name: str) -> bool:
        """Whether `cls.name` (a class or module member) is the plugin's own: added or replaced by a patch."""
        if cls.kind == MODULE:
            return (cls.path, name) in self.provided
        for c in self.ctx.host.resolver.mro(cls):
            if (c.path, name) in self.provided:
                return True
            if isinstance(c.obj, ClassInfo) and c.obj.has_member(name):
                return False
        return False


class CallsCheck:
    name = NAME
    cost = 5  # relative run time (tenths of a second of a warm scan), to spread checks over two cores
    drift = (3, 7)
    kinds = KINDS
    description = "every call the plugin makes to a host callable binds to its signature and unpacks its result"

    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        shared = _Context(ctx)
        plugin = ctx.plugin
        for module in plugin.modules:
            for unit in ctx.facts.plugin_units(module):
                yield from self._unit(shared, module, unit)

    # -- one unit -------------------------------------------------------------------------------
    def _unit(self, shared: _Context, module: str, unit: Unit) -> Iterator[Finding]:
        ctx = shared.ctx
        plugin = ctx.plugin
        facts = ctx.facts.plugin_unit_walk(module, unit)
        if not facts.calls:
            return
        local = {k: plugin.names.follow(v) for k, v in local_imports(
            facts, module, plugin.index.is_package(module)).items()}
        lookup = _plugin_lookup(ctx, module, local)
        key = (module, unit.cls or unit.qualname)
        cls_sym, is_patch = shared.typing.self_class(module, unit)
        target, base = (cls_sym, None) if is_patch else (None, cls_sym)
        own: set[str] = set()
        if base is not None and target is None:
            own = _plugin_members(ctx, module, unit.cls, set())

        def masked(cls: Symbol, name: str) -> bool:
            if cls_sym is not None and cls.path == cls_sym.path and name in own:
                return True
            return shared.masked(cls, name)

        if cls_sym is not None and key not in shared.self_attrs:
            shared.self_attrs[key] = shared.typing.unit_self_attrs(module, unit, cls_sym) or {}
        inf = Inference(ctx.host.resolver, lookup, masked=masked, self_attrs=shared.self_attrs.get(key),
                        super_mro=ctx.host.resolver.mro(base) if base is not None and target is None else ())
        if unit.node is not None:
            inf.bind_locals(unit.node, facts, Typed(cls_sym, True) if cls_sym is not None else None)
        for call in facts.calls:
            callee = shared.typing.alias_callee(module, unit, call.func) or inf.callee(call.func)
            if callee is None or not callee.sym.module:
                continue
            if isinstance(call.func, ast.Name):  # name the callee as the plugin imports it: stable across moves
                path = local.get(call.func.id) or plugin.names.binding_path(module, call.func.id)
                if path and plugin.names.is_host(path):
                    callee = callee._replace(via=path)
            site = ctx.facts.plugin_line(module, call.lineno, unit.qualname, call.col_offset)
            guard = facts.guard_at(call.lineno)
            if self._lands_in_replacement(shared, call, callee, unit, local) or \
                    self._lands_on_instance(shared, call, callee, module, unit):
                continue
            fallback = self._fallback_for_binding_call(shared, inf, facts, call, callee)
            for finding in self._judge(shared, call, callee, site, facts.unpacked.get(id(call)), unit):
                if fallback:
                    yield replace(finding, severity=Severity.INFO, details=(
                        f"in the `except TypeError:` fallback of a try whose call of `{callee.sym.path}` binds in "
                        f"{ctx.host.label}: the fallback does not run there", *finding.details))
                    continue
                if guard and finding.level is Severity.ERROR:  # the plugin may already handle both versions
                    finding = replace(finding, severity=Severity.WARNING,
                                      details=(f"the call is guarded by {guard}", *finding.details))
                if finding.level is Severity.ERROR and callee.mode == BOUND and (
                        sub := shared.subclass_binding(call, module, unit)):
                    finding = replace(finding, severity=Severity.WARNING, details=(
                        f"the call binds to the plugin subclass's override `{sub}`: only an instance of a "
                        f"class that does not override it rejects the call", *finding.details))
                elif finding.level is Severity.ERROR and callee.mode == BOUND and (
                        sub := shared.plugin_override_binding(callee, call)):
                    finding = replace(finding, severity=Severity.WARNING, details=(
                        f"the call binds to `{sub}`, the plugin's subclass of the receiver's host class: the "
                        f"object may be the plugin's (only another implementation rejects the call)",
                        *finding.details))
                yield finding

    @staticmethod
    def _fallback_for_binding_call(shared: _Context, inf: Inference, facts: UnitWalk, call: ast.Call,
                                   callee: Callee) -> bool:
        """Whether the call sits in the `except TypeError:` handler of a try whose body calls the same
        callable in a form that binds on this host: the handler is another version's fallback."""
        tried = [c for c in facts.tried_calls(call.lineno) if c is not call]
        if not tried:
            return False
        params = callee_params(shared.ctx.host.resolver, callee)
        same = [c for c in tried if (t := inf.callee(c.func)) is not None and t.sym.path == callee.sym.path]
        return bool(params is not None and same) and all(
            bind_call(params, _spelled_out(c, facts)) == [] for c in same)

    @staticmethod
    def _lands_in_replacement(shared: _Context, call: ast.Call, callee: Callee, unit: Unit,
                              local: dict[str, str]) -> bool:
        """A call of a host function the plugin replaced (`mod.fn = replacement`), looked up when it
        runs (`mod.fn(...)`, or a name imported inside the function), after the plugin loaded: it
        lands in the replacement, so it is judged against that, and binding there is no finding."""
        if not isinstance(unit.node, ast.FunctionDef | ast.AsyncFunctionDef):
            return False
        init = shared.installed_init.get(callee.sym.path) if callee.mode == CONSTRUCT else None
        if init is not None:  # `Cls(...)` looks `__init__` up on the class when it runs: however imported
            return not bind_call(init.signature.params[1:], call)
        installed = shared.installed.get(callee.sym.path) if callee.mode == CALL else None
        if installed is None:
            return False
        late = isinstance(call.func, ast.Attribute) or isinstance(call.func, ast.Name) and call.func.id in local
        return late and not bind_call(installed.signature.params, call)

    @staticmethod
    def _lands_on_instance(shared: _Context, call: ast.Call, callee: Callee, module: str, unit: Unit) -> bool:
        """`self.a.m(...)` in a plugin class that installed a function as `m` on the object it holds in
        `a` (itself, or through a helper it handed `self.a`): the call runs that function, so it is
        judged against it, and binding there is no finding."""
        func = call.func
        table = shared.ctx.facts.instance_methods
        if not table or callee.mode != BOUND or not unit.cls or not isinstance(func, ast.Attribute):
            return False
        head, _, attr = chain(func.value).partition(".")
        if head != "self" or not attr:
            return False
        resolver = shared.ctx.facts.plugin_resolver
        cls = resolver.resolve(f"{module}.{unit.cls}")
        for owner in resolver.mro(cls) if cls is not None and cls.kind == CLASS else ():
            installed = table.get((owner.path, attr, func.attr))
            if installed is not None:
                return not bind_call(installed, call)
        return False

    # -- judging one call -----------------------------------------------------------------------
    def _judge(self, shared: _Context, call: ast.Call, callee: Callee, site: Location, unpack: int | None,
               unit: Unit) -> Iterator[Finding]:
        ctx = shared.ctx
        params = callee_params(ctx.host.resolver, callee)
        if params is None:
            return
        problems = bind_call(params, call)
        subject = _subject(callee)
        # `super().__init__(...)` and `self._orig_init(...)` construct too: #7, like `Cls(...)`
        construct = callee.mode == CONSTRUCT or callee.sym.path.endswith(".__init__")
        other_sym = ctx.other.resolve(subject)
        other_params = None
        if other_sym is not None and other_sym.kind == callee.sym.kind:
            other_params = callee_params(ctx.other.resolver, callee._replace(sym=other_sym))
        changed = other_params is not None and _shape(other_params) != _shape(params)
        if problems is None:
            if changed and ctx.judging_new and not _forwards_own(call, unit):
                kind = CTOR_UNVERIFIED if construct else CALL_UNVERIFIED
                yield self._finding(shared, kind, callee, subject, site, other_sym, params, other_params,
                                    {"name": ""}, "check the call against the new signature by hand", changed)
            problems = []  # the binding is unknown; the unpacking of the result is still judged
        replacement = shared.replacement_binding(callee, call) if problems else ""
        for problem in problems:
            kind = _KINDS[construct][problem.kind]
            args = _problem_args(problem)
            finding = self._finding(shared, kind, callee, subject, site, other_sym, params, other_params, args,
                                    _SUGGEST[problem.kind].format(name=problem.name), changed)
            if replacement and finding.level is Severity.ERROR:  # binds where the plugin's class is built
                finding = replace(finding, severity=Severity.WARNING, details=(
                    f"the call binds to the plugin's `{replacement}`, which the plugin installs in place of "
                    f"the host class (register_oot); any other implementation rejects it", *finding.details))
            yield finding
        if unpack is not None and callee.mode != CONSTRUCT:
            arity = return_arity(ctx.host.index, callee.sym, unpack, ctx.settings.plain_types)
            if arity is not None and arity != unpack:
                returns = "a single value" if arity == 1 else f"{arity} values"
                yield self._finding(shared, UNPACK_ARITY, callee, subject, site, other_sym, params, other_params,
                                    {"name": "", "count": unpack, "returns": returns},
                                    "unpack what the new version returns (see its `return` statements)", changed)

    def _finding(self, shared: _Context, kind: Kind, callee: Callee, subject: str, site: Location,
                 other_sym: Symbol | None, params: tuple[Param, ...], other_params: tuple[Param, ...] | None,
                 args: dict[str, Arg], suggestion: str, changed: bool) -> Finding:
        ctx = shared.ctx
        short = subject.rpartition(".")[2] if callee.mode != CONSTRUCT else callee.sym.path.rpartition(".")[2]
        details: list[str] = []
        sites: tuple[Location, ...] = ()
        syms, sigs = ctx.pair(callee.sym, other_sym), ctx.pair(params, other_params)
        if changed:
            details += [f"{ctx.old.label}: {render_params(short, sigs.old)}",
                        f"{ctx.new.label}: {render_params(short, sigs.new)}"]
            if ctx.judging_new:
                sites = self._upstream_sites(shared, callee)
                details.extend(f"upstream calls it at {s.cited()}" for s in sites)
        return Finding(kind, {"callee": subject, "label": ctx.host.label, **args}, site, subject=subject,
                       suggestion=suggestion, details=tuple(details), sites=sites,
                       old=_defined_at(ctx.old, syms.old, sigs.old, short),
                       new=_defined_at(ctx.new, syms.new, sigs.new, short))

    @staticmethod
    def _upstream_sites(shared: _Context, callee: Callee) -> tuple[Location, ...]:
        """Where NEW itself calls the callee (at most a few), so the plugin can copy the new form."""
        sym = callee.sym
        if callee.mode == CONSTRUCT or sym.path.endswith(".__init__"):
            cls = sym.path if callee.mode == CONSTRUCT else (sym.owner or sym.path.rpartition(".")[0])
            name, text = cls.rpartition(".")[2], None

            def accept(c: Callee) -> bool:
                return c.mode == CONSTRUCT and c.sym.path == cls
        else:
            name = sym.path.rpartition(".")[2]
            if name.startswith("__"):
                return ()
            text = f".{name}(" if sym.kind == METHOD else None

            def accept(c: Callee) -> bool:
                return c.mode != CONSTRUCT and c.sym.path == sym.path
        key = (sym.path, callee.mode == CONSTRUCT)
        if key not in shared.sites:
            new = shared.ctx.new
            candidates = modules_mentioning(new.index, text or f"{name}(", new.resolver.top)[:_SEARCHED]
            found = iter_call_sites(new.resolver, name, accept, text=text, modules=candidates, limit=_SITES)
            shared.sites[key] = tuple(new.site(s.module, s.line, s.unit) for s in found)
        return shared.sites[key]


# -- helpers ------------------------------------------------------------------------------------
def _plugin_lookup(ctx: ScanContext, module: str, local: dict[str, str]) -> Lookup:
    names = ctx.plugin.names

    def lookup(name: str) -> Symbol | None:
        path = local[name] if name in local else names.binding_path(module, name)
        if path is None or not names.is_host(path):
            return None
        return ctx.host.resolve(path)
    return lookup


def _plugin_class(ctx: ScanContext, module: str, qual: str) -> ClassInfo | None:
    """A plugin class's summary by module and qualified name ("Outer.Inner")."""
    return nested_class(ctx.plugin.index.modules.get(module), qual)


def _plugin_members(ctx: ScanContext, module: str, qual: str, seen: set[str]) -> set[str]:
    """Names a plugin class and its plugin-defined bases define (methods, attributes, self.X)."""
    if f"{module}.{qual}" in seen:
        return set()
    seen.add(f"{module}.{qual}")
    info = _plugin_class(ctx, module, qual)
    if info is None:
        return set()
    out = set(info.methods) | set(info.attributes) | set(info.instance_attrs) | set(info.classes)
    names = ctx.plugin.names
    for base in info.bases:
        head, _, rest = base.partition(".")
        path = names.binding_path(module, head)
        if path is None or names.is_host(path):
            continue
        full = f"{path}.{rest}" if rest else path
        mod, _, cls = full.rpartition(".")
        if mod in ctx.plugin.index.modules:
            out |= _plugin_members(ctx, mod, cls, seen)
    return out


def _forwards_own(call: ast.Call, unit: Unit) -> bool:
    """Whether every `*x`/`**x` of the call is the enclosing function's own `*args`/`**kwargs`."""
    if unit.node is None:
        return False
    own = {a.arg for a in (unit.node.args.vararg, unit.node.args.kwarg) if a is not None}
    starred = [a.value for a in call.args if isinstance(a, ast.Starred)] + \
        [k.value for k in call.keywords if k.arg is None]
    return all(isinstance(s, ast.Name) and s.id in own for s in starred)


def _subject(callee: Callee) -> str:
    """A stable name for the callee: the path the call reaches it through, `Cls` for constructors."""
    if callee.mode == CONSTRUCT:
        return callee.via.removesuffix(".__init__") if callee.via.endswith(".__init__") else callee.via
    return callee.via


def _shape(params: tuple[Param, ...]) -> tuple[tuple[str, int, bool], ...]:
    """What binding depends on: names, kinds and which have defaults (not annotations or values)."""
    return tuple((p.name, int(p.kind), p.default is None) for p in params)


def _problem_args(problem: BindProblem) -> dict[str, Arg]:
    return {"name": problem.name, "given": problem.given, "accepted": problem.accepted}


def _defined_at(view: HostView, sym: Symbol | None, params: tuple[Param, ...] | None, short: str) -> Location | None:
    """Where one version defines the callee, with the signature the call binds against as its snippet."""
    if sym is None:
        return None
    if sym.kind == CLASS:  # cite the `__init__` that defines the signature, when there is one
        init = view.resolver.class_member(sym, "__init__")
        if init is not None and init.kind == METHOD and init.module:
            return view.location(init, snippet=f"def __init__ of {render_params(short, params)}")
        return view.location(sym, snippet=f"class {render_params(short, params)}")
    return view.location(sym, snippet=f"def {render_params(short, params)}")


def _own_method_taking(resolver: Resolver, cls: str, name: str, call: ast.Call) -> str:
    """"Cls.name" when plugin class `cls` defines `name` itself and that method binds `call`, else ""."""
    method = resolver.resolve(f"{cls}.{name}")
    if method is None or method.kind != METHOD or not method.path.startswith(cls + "."):
        return ""
    params = callee_params(resolver, Callee(method, BOUND, method.path))
    return f"{cls.rpartition('.')[2]}.{name}" if params is not None and not bind_call(params, call) else ""


def _spelled_out(call: ast.Call, facts: UnitWalk) -> ast.Call:
    """The call with `**name` replaced by the keywords of the dict literal (of string keys) the unit
    assigns to `name` once; the call itself when it has no such unpacking."""
    keywords: list[ast.keyword] = []
    for kw in call.keywords:
        if kw.arg is None and isinstance(kw.value, ast.Name):
            values = [value for _, _, name, value, _ in facts.assigned if name == kw.value.id]
            if len(values) != 1 or not isinstance(values[0], ast.Dict) or not all(
                    isinstance(k, ast.Constant) and isinstance(k.value, str) for k in values[0].keys):
                return call
            keywords += [ast.keyword(arg=k.value, value=v) for k, v in zip(values[0].keys, values[0].values, strict=True)]
        else:
            keywords.append(kw)
    return ast.Call(func=call.func, args=call.args, keywords=keywords)
