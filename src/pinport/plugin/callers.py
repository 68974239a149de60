"""Host call sites that a plugin replacement cannot accept (the facts behind checks #1 callers/signatures).

When the plugin replaces a host function or method (a patch-class member, `Target.x = fn`, a
function of a module-target patch), every host call of that member lands in the plugin's
function. Only replacements narrower than the member they replace are searched, and only host
files that mention `name(` are parsed, so the cost stays with the few members that can break.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable

from ..model.binding import BOUND, CONSTRUCT, MISSING, UNBOUND, Callee, bind_call, bind_counts
from ..model.callsites import (
    CallSite,
    failing_call_lines,
    iter_call_sites,
    modules_mentioning,
    text_lines,
)
from ..model.host import HostView
from ..model.index import CodeIndex
from ..model.inference import Inference, host_inference, module_lookup
from ..model.nodes import walk_tree
from ..model.resolve import CLASS, EXTERNAL, FUNCTION, METHOD, MODULE, Resolver, Symbol
from ..model.summary import (
    ClassInfo,
    FunctionInfo,
    Param,
    ParamKind,
    has_var_keyword,
    has_var_positional,
)
from ..model.units import Unit, call_name, iter_units, module_units, spans, walk_unit
from ..model.words import Words, word
from .construction import files_only, only_tested_against
from .reach import ClassShape, Lineage
from .receivers import (
    inheriting,
    is_protocol,
    may_hold_outside,
    narrowed_classes,
    outside_packages,
    receiver_classes,
)
from .records import Patch, PatchKind

CALLED_DUNDERS = ("__init__", "__new__")  # dunders whose callers are ordinary calls: Cls(...)
_WIDE = 40  # above this many candidate modules, a name is common enough to narrow the search


def replacement_params(patch: Patch, owner: Symbol) -> tuple[Param, ...] | None:
    """What a host caller supplies to the plugin's replacement (self/cls dropped for methods)."""
    fn = patch.function
    if fn is None:
        return None
    params = fn.signature.params
    if owner.kind == MODULE or fn.is_staticmethod or patch.wrapper == "staticmethod":
        return params
    return params[1:] if params and params[0].kind <= ParamKind.POSITIONAL_OR_KEYWORD else params


def is_narrower(base: tuple[Param, ...], repl: tuple[Param, ...]) -> bool:
    """Whether some call the base accepts can fail on the replacement (the only ones worth searching)."""
    r_var_pos = has_var_positional(repl)
    r_var_kw = has_var_keyword(repl)
    if r_var_pos and r_var_kw:
        return False
    if has_var_positional(base) and not r_var_pos:
        return True
    if has_var_keyword(base) and not r_var_kw:
        return True
    by_name = {p.name: p for p in repl if p.kind in (ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.KEYWORD_ONLY)}
    for p in base:
        if p.kind in (ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.KEYWORD_ONLY) and p.name not in by_name \
                and not r_var_kw:
            return True
    b_slots = [p.name for p in base if p.kind <= ParamKind.POSITIONAL_OR_KEYWORD]
    r_slots = [p.name for p in repl if p.kind <= ParamKind.POSITIONAL_OR_KEYWORD]
    if len(b_slots) > len(r_slots) and not r_var_pos or any(b != r for b, r in zip(b_slots, r_slots, strict=False)):
        return True  # fewer positional slots, or the same ones in another order
    base_names = {p.name: p for p in base}
    return any(p.required and (p.name not in base_names or not base_names[p.name].required) for p in repl)


def agreeing_slots(base: tuple[Param, ...], repl: tuple[Param, ...]) -> int | None:
    """How many leading positional arguments bind alike to `base` and `repl` (the same parameter, or a
    rename in place; a base slot the replacement's `*args` takes while it names no such parameter
    is forwarded as it came); None when every positional argument does. A call passing more hands
    a value to another parameter than the host meant (moved, or keyword-only in the replacement)."""
    theirs = [p.name for p in base if p.kind <= ParamKind.POSITIONAL_OR_KEYWORD]
    ours = [p.name for p in repl if p.kind <= ParamKind.POSITIONAL_OR_KEYWORD]
    named = {p.name for p in repl if p.kind not in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD)}
    their_var, our_var = has_var_positional(base), has_var_positional(repl)
    for i in range(max(len(theirs), len(ours))):
        if i < len(theirs) and i < len(ours):
            if theirs[i] != ours[i] and (theirs[i] in named or ours[i] in theirs):
                return i
        elif i < len(theirs):
            if not our_var or theirs[i] in named:
                return i
        elif not their_var:
            return i
    return None if their_var == our_var else max(len(theirs), len(ours))


def bound_alike(params: tuple[Param, ...], slots: int | None) -> tuple[Param, ...]:
    """`params` taking at most `slots` arguments positionally (later slots keyword-only, no `*args`):
    the calls it accepts bind their positional arguments as `agreeing_slots` found them alike."""
    if slots is None:
        return params
    out, seen = [], 0
    for p in params:
        if p.kind is ParamKind.VAR_POSITIONAL:
            continue
        if p.kind <= ParamKind.POSITIONAL_OR_KEYWORD:
            seen += 1
            if seen > slots:
                p = p._replace(kind=ParamKind.KEYWORD_ONLY)
        out.append(p)
    return tuple(out)


Failures = dict[tuple[str, str], list[tuple[CallSite, int, int]]]
# (replaced member, replacement's params, failures, call sites that might fail left out as host code the plugin replaces)
Failure = tuple[Symbol, tuple[Param, ...], Failures, int]


def host_call_failures(view: HostView, patch: Patch, replaced: frozenset[str],
                       through: frozenset[str] | None = None, in_order: bool = False) -> Failure | None:
    """The judged host's reachable call sites that do not bind to the plugin's replacement.

    (replaced base member, the replacement's parameters as callers see them, failures by
    (problem, parameter), how many call sites that might fail lie in replaced host code); None when the replacement cannot be judged this way (not a function,
    or accepting everything the base does). Call sites inside host functions the plugin itself
    replaces (`replaced`, from `replaced_units`) are left out: that host code never runs once the
    plugin is loaded. ScanFacts keeps the answer: the signatures and callers checks both ask.
    With `through` (attribute names), only host units calling the method on one of those
    attributes (`x.drafter.name(`) are searched, and every failure there is still found.
    With `in_order`, the calls judged are those that pass a positional argument the replacement
    binds to another parameter than the base does (`agreeing_slots`): the ones a moved or
    keyword-only parameter can trip, whether or not they raise; and every call unpacking
    `*args`/`**kwargs`, which could pass anything.
    """
    owner, base = view.replaced_member(patch.owner, patch.name)
    if owner is None or base is None or base.kind not in (FUNCTION, METHOD) or not isinstance(
            base.obj, FunctionInfo) or not base.module:
        return None
    repl = replacement_params(patch, owner)
    if repl is None:
        return None
    fn = base.obj
    as_method = base.kind == METHOD and not fn.is_staticmethod
    base_params = fn.signature.params[1:] if as_method and fn.signature.params else fn.signature.params
    if in_order:
        repl = bound_alike(base_params, agreeing_slots(base_params, repl))
    elif not is_narrower(base_params, repl):
        return None
    constructor = patch.name in CALLED_DUNDERS
    if constructor and owner.kind != CLASS:
        return None
    search = owner.path.rpartition(".")[2] if constructor else patch.name
    resolver = view.resolver

    def accept(c: Callee) -> bool:
        if constructor:
            return c.mode == CONSTRUCT and c.sym.path == owner.path
        if c.sym.path != base.path:
            return False
        if c.receiver is None or owner.kind != CLASS:
            return True
        # the receiver may be the patched class, a subclass, or a base whose instance is one
        return owner.path in {x.path for x in resolver.mro(c.receiver)} or \
            c.receiver.path in {x.path for x in resolver.mro(owner)}

    failing: Failures = {}
    skipped = 0
    method = not constructor and base.kind == METHOD
    lines = _candidates(view, owner, search, method, repl, through)
    for site in iter_call_sites(resolver, search, accept, modules=sorted(lines), lines=lines):
        if f"{site.module}.{site.unit}" in replaced:
            skipped += 1
            continue  # inside host code the plugin replaces: never runs once patched
        params = (fn.signature.params[:1] + repl) if site.callee.mode == UNBOUND and as_method else repl
        if fn.is_staticmethod and site.callee.mode != BOUND and patch.function is not None and not in_order:
            # a plain function set in place of a staticmethod: called through the class, it gets every argument
            params = patch.function.signature.params
        problems = bind_call(params, site.call)
        if in_order and problems is None:  # `*args` at the call may fill any slot, `**kwargs` pass any name
            star = "*" if any(isinstance(a, ast.Starred) for a in site.call.args) else "**"
            failing.setdefault(("unpacked", star), []).append((site, -1, len(repl)))
        for problem in problems or ():
            failing.setdefault((problem.kind, problem.name), []).append((site, problem.given, problem.accepted))
    return base, repl, failing, skipped


def override_reached(view: HostView, patch: Patch, replaced: frozenset[str], implicit: Iterable[str] = (),
                     lineage_of: Callable[[], Lineage | None] = lambda: None,
                     runs: Callable[[str, str], bool] = lambda module, unit: True,
                     plugin_stores: Callable[[str], tuple[tuple[ClassShape | None, bool, bool], ...] | None] = lambda attr: None,
                     in_order: bool = False,
                     dispatched: Callable[[str, Unit, ast.expr], bool] = lambda module, unit, node: True) -> bool:
    """Whether host code may call an ordinary subclass's override in a way it cannot accept (with
    `in_order`: passing a positional argument the override binds to another parameter than the base).

    False only when no host call of the member's name that can reach the plugin's class could
    fail against the override: each `.name(` call in the host either binds to the override (say,
    positionally with the same arity), lies in host code the plugin replaces, or cannot run on an
    instance of the plugin's class (`lineage`): its receiver is typed as a class that instance is
    not; it is `self.name(...)` in a host method the plugin class does not run (it derives from
    another class, or a plugin class of its MRO overrides that method without calling up); or it
    is `self.attr.name(...)` where only the plugin builds the class and stores it in `attr` of a
    plugin class that does not run that host method. Or there is no call (only the plugin calls
    it). A receiver of unknown type counts as reaching; so does naming the member as a string
    (`collective_rpc("name")`, `getattr(x, "name")`), a bare reference (`fn = x.name`) that can
    reach the class, and reaching it without naming it (`implicit`: `forward` through
    `Module.__call__`). A constructor counts as reached unless only plugin code builds the class,
    or it is installed in place of host classes every host construction of which binds to it.
    `lineage_of()` gives where the class's instances can be; it is asked only when needed. A call
    that could fail counts only in a host unit that may still run (`runs(module, unit)`: some host
    path the plugin has not replaced reaches it, `plugin.host_paths.HostPaths`). A bare reference that
    a dispatcher hands out only on a route the plugin's platform never takes (`dispatched(module,
    unit, node)` False: `plugin.dispatch`) does not reach.
    """
    owner, base = view.replaced_member(patch.owner, patch.name)
    name = patch.name
    if owner is None or owner.kind != CLASS or base is None or base.kind != METHOD or patch.function is None \
            or name in implicit:
        return True
    repl = replacement_params(patch, owner)
    if name.startswith("__"):
        lineage = lineage_of() if name == "__init__" else None
        if lineage is None or lineage.handed_on or not files_only(view, lineage.decorators) or repl is None or \
                not only_tested_against(view, lineage.arguments) or _builds_subclasses(view, lineage):
            return True
        return any(_construction_fails(view, path, repl, replaced) for path in lineage.installed_as) or \
            any(_construction_fails(view, path, repl, replaced, off_module=True) for path in lineage.swapped) or \
            bool(lineage.hooks) and _hook_construction_fails(view, lineage, repl, replaced)
    index, resolver = view.index, view.resolver
    if repl is None:
        return True
    # a positional call that binds may still hand a value to the wrong parameter: past the slots that agree,
    # every positional argument counts (`bound_alike`)
    base_params = _callers_params(base)
    slots = agreeing_slots(base_params, repl)
    if in_order and slots is None:
        return False
    judged = bound_alike(base_params if in_order else repl, slots)
    for module in {m for q in "\"'" for m in modules_mentioning(index, f"{q}{name}{q}", resolver.top)}:
        calls = dispatched_calls(index, module, name)  # `collective_rpc("name", args=(...))`: a call with those
        if calls is None or any(bind_counts(judged, given, keywords) and not bind_counts(base_params, given, keywords)
                                for given, keywords in calls):  # one the host's own member rejects names another's
            return True
    related = {c.path for c in resolver.mro(owner)}
    lineage = lineage_of()  # asked only now: the answers above need no walk over the plugin
    meets = _Meeting(view, lineage) if lineage is not None else None

    outside = outside_packages(view, owner, [(*s.outside_bases, *meets.host_mro(s)) for s in meets.lineage.family]
                               if meets is not None else ())

    def opened(attr: str, holder: str) -> bool:
        """Whether the plugin may store its instance in `attr` of an instance of the host class (or module)
        `holder`: a store through `self` lands on instances of its own class (on `holder`'s when it derives
        from it); storing `self` stores an instance of that class (the plugin's when it is of its family)."""
        stores = plugin_stores(attr)
        if stores is None:
            return True
        family = {s.path for s in meets.lineage.family} if meets is not None else None
        for shape, on_self, of_self in stores:
            mro = _host_mro(view, shape) if shape is not None else {"?"}
            if on_self and holder not in mro and "?" not in mro:
                continue  # on an instance of a plugin class no `holder` is
            if of_self and shape is not None and family is not None and shape.path not in family:
                continue  # an instance of another plugin class
            return True
        return False

    def may_be(cls: Symbol) -> bool:
        """Whether the plugin's instance may be an instance of `cls` (a host class, or another package's)."""
        if cls.kind != CLASS:  # a host module is no instance; another package's value may be one of its subclasses
            return cls.kind != MODULE and may_hold_outside(cls, outside, resolver.tops)
        if is_protocol(resolver, cls):
            return True  # met by structure: any class with the members may stand there
        return meets.instance_of(cls.path) if meets is not None else \
            cls.path in related or owner.path in {x.path for x in resolver.mro(cls)}

    def reaches(node: ast.expr, inference: Inference, module: str, unit: Unit) -> bool:
        callee = inference.callee(node)
        if callee is not None and callee.sym.path != base.path and not (
                callee.sym.owner in related and _virtual(node, unit, callee.sym, base)):
            return False  # another class's member of that name
        if isinstance(node, ast.Attribute) and (_read_off_outside(node.value, inference) or _is_module(node.value, inference)):
            return False  # `torch.cuda.set_stream`, `vllm.utils.fn`: a member of a module, not of an instance
        typed = inference.infer(node.value) if callee is None and isinstance(node, ast.Attribute) else None
        if typed is not None and typed.sym is not None and typed.sym.kind == CLASS and typed.sym.module:
            # a bare `Cls.name` or `x.name` read off a host class (or its instance) the plugin's instances are not
            return meets.instance_of(typed.sym.path) if meets is not None else \
                typed.sym.path in related or owner.path in {c.path for c in resolver.mro(typed.sym)}
        if meets is not None and isinstance(node, ast.Attribute):
            verdict = meets.receiver(node.value, unit, module)
            if verdict is not None:
                return verdict
        if callee is None and isinstance(node, ast.Attribute):
            held = narrowed_classes(view, module, unit, node.value) or receiver_classes(view, module, unit, node.value,
                                                                                        opened)
            if held is not None:  # every class the host declares it holds: the plugin's instance may be none
                return any(may_be(c) for c in held)
        if callee is None or callee.receiver is None:
            return True  # a receiver of unknown type may be the plugin's instance
        receiver = callee.receiver
        if meets is not None:
            return meets.instance_of(receiver.path)
        return receiver.path in related or owner.path in {c.path for c in resolver.mro(receiver)}

    candidates = _candidates(view, owner, name, True, judged)
    bare = {m: lines for m in modules_mentioning(index, f".{name}", resolver.top)
            if (lines := referenced_bare(index, m, name))}
    for module in sorted(set(candidates) | set(bare)):
        lines = candidates.get(module, ())
        refs = bare.get(module, ())
        tree = index.parsed(module)
        for unit in iter_units(tree) if tree is not None else ():
            if not any(spans(unit, line) for line in (*lines, *refs)) or f"{module}.{unit.qualname}" in replaced:
                continue
            walk = walk_unit(index, module, unit)
            nodes: list[ast.expr] = [c.func for c in walk.calls if call_name(c) == name and any(
                c.lineno <= line <= (c.end_lineno or c.lineno) for line in lines) and _fits(base, c)]
            if refs:
                nodes += [n for n in _bare_references(unit, name) if n.lineno in refs and dispatched(module, unit, n)]
            inference = host_inference(resolver, module, unit, walk) if nodes else None
            if inference is not None and any(reaches(n, inference, module, unit) for n in nodes) \
                    and runs(module, unit.qualname):
                return True
    return False


def _virtual(node: ast.expr, unit: Unit, member: Symbol, base: Symbol) -> bool:
    """Whether `self.name` in a host method reads `member` (of a base of `base`'s class), which `base` overrides:
    on an instance of that subclass the read gets `base` (`self.forward_cuda` in CustomOp's dispatcher
    is RMSNorm's own forward_cuda on an RMSNorm)."""
    return bool(base.owner) and bool(member.owner) and _is_self(node, unit) and base.owner != member.owner \
        and member.path.rpartition(".")[2] == base.path.rpartition(".")[2]


def _is_self(node: ast.expr, unit: Unit) -> bool:
    me = unit.node.args.args[0].arg if unit.cls and unit.node is not None and unit.node.args.args else ""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and bool(me) and node.value.id == me


def _read_off_outside(node: ast.expr, inference: Inference) -> bool:
    """Whether an expression is a chain of attribute reads off a name imported from outside the host
    (`torch.cuda`): a module of another package or what it holds, never the plugin's instance."""
    while isinstance(node, ast.Attribute):
        node = node.value
    if not isinstance(node, ast.Name) or node.id in inference.env:
        return False
    sym = inference.lookup(node.id)
    return sym is not None and sym.kind == EXTERNAL and not sym.path.startswith("builtins.")


def _host_mro(view: HostView, shape: ClassShape) -> set[str]:
    """The host classes an instance of a plugin class is (its host bases' MROs, what it is installed for); a
    base the host does not define may be anything ("?")."""
    out = set(shape.stands_for)
    for base in shape.host_bases:
        sym = view.resolve(base)
        out |= {c.path for c in view.resolver.mro(sym)} if sym is not None else {base, "?"}
    return out


def _is_module(node: ast.expr, inference: Inference) -> bool:
    """Whether an expression denotes a host module (`vllm.utils`, an imported module's name): what is read
    off it is the module's own member, never an instance's."""
    typed = inference.infer(node)
    return typed is not None and typed.sym is not None and typed.sym.kind == MODULE


def _is_own_attribute(node: ast.expr, unit: Unit) -> bool:
    """`self.attr` in a method (`self` its first parameter)."""
    me = unit.node.args.args[0].arg if unit.node is not None and unit.node.args.args else ""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and bool(me) and node.value.id == me


class _Meeting:
    """Whether host code can meet an instance of the plugin class a `Lineage` describes."""

    def __init__(self, view: HostView, lineage: Lineage) -> None:
        self.view, self.lineage = view, lineage
        self._mro: dict[str, frozenset[str]] = {}
        self._across: bool | None = None

    def host_mro(self, shape: ClassShape) -> frozenset[str]:
        if shape.path not in self._mro:
            out: set[str] = set(shape.stands_for)
            for base in shape.host_bases:
                sym = self.view.resolve(base)
                out |= {c.path for c in self.view.resolver.mro(sym)} if sym is not None else {base}
            self._mro[shape.path] = frozenset(out)
        return self._mro[shape.path]

    def instance_of(self, host_class: str) -> bool:
        """Whether an instance of the plugin class may be a `host_class` (or stand where the host builds one)."""
        installed = {s.path for p in (*self.lineage.installed_as, *self.lineage.swapped)
                     if (s := self.view.resolve(p)) is not None}
        return host_class in installed or any(host_class in self.host_mro(s) for s in self.lineage.family)

    def runs(self, shapes: Iterable[ClassShape], host_class: str, method: str) -> bool:
        """Whether host code of `host_class.method` may run on an instance of one of `shapes`."""
        return any(host_class in self.host_mro(s) and method not in s.replaces for s in shapes)

    def receiver(self, node: ast.expr, unit: Unit, module: str) -> bool | None:
        """Whether the receiver of a call in host `unit` may be the plugin's instance, judged from
        where that instance can be (None: not decided here). `self.name(...)` runs on it only in a
        host method it runs; `self.attr.name(...)`, when only the plugin builds it and keeps it in
        `attr` of its own classes, only in a host method such a holder runs."""
        if not unit.cls or unit.node is None:
            return None
        cls = self.view.resolve(f"{module}.{unit.cls}")
        if cls is None or cls.kind != CLASS:
            return None
        method = unit.qualname.rpartition(".")[2]
        me = unit.node.args.args[0].arg if unit.node.args.args else ""
        if isinstance(node, ast.Call) and len(node.args) == 2 and (
                isinstance(node.func, ast.Name) and node.func.id == "cast" or
                isinstance(node.func, ast.Attribute) and node.func.attr == "cast"):
            node = node.args[1]  # typing.cast(T, value) is the value
        if isinstance(node, ast.Name) and node.id == me or _is_super_call(node):
            return self.runs(self.lineage.family, cls.path, method)
        holders = self.lineage.holders
        if holders is None or not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                                   and node.value.id == me):
            return None
        if any(attr == node.attr for _, attr in holders):
            return self.runs([h for h, attr in holders if attr == node.attr], cls.path, method)
        if self.runs([h for h, _ in holders], cls.path, method) or self.handed_across():
            return None  # a holder's own attribute, or one the host may copy a holder's value into
        return False

    def handed_across(self) -> bool:
        """Whether host code reads a holder's attribute off anything but `self` (`runner.drafter`): the
        instance may then be stored in another object's attribute."""
        if self._across is None:
            index, top = self.view.index, self.view.resolver.top
            self._across = any(read_off_others(index, m, attr) for attr in {a for _, a in self.lineage.holders or ()}
                               for m in modules_mentioning(index, f".{attr}", top))
        return self._across


def read_off_others(index: CodeIndex, module: str, attr: str) -> bool:
    """Whether a host module reads `x.attr` off anything but `self`."""
    def build() -> bool:
        tree = index.parsed(module)
        return tree is None or any(isinstance(n, ast.Attribute) and n.attr == attr and not (
            isinstance(n.value, ast.Name) and n.value.id == "self") for n in walk_tree(tree))
    return index.module_memo(module, ("read-off-others", attr), build)


def _construction_fails(view: HostView, path: str, params: tuple[Param, ...], replaced: frozenset[str],
                        unpacked: bool = False, off_module: bool = False) -> bool:
    """Whether host code may build the host class `path`, which the plugin's class replaces, with
    arguments the plugin's constructor (`params`) rejects, or build it without naming a call
    (the class handed on as a value). With `unpacked`, a call passing `*args` counts as failing.
    With `off_module` (the class swapped for a while at run time), only reads of the class off its
    module (`mod.Cls`) count: a name a host module imported is bound."""
    resolver = view.resolver
    cls = view.resolve(path)
    if cls is None or cls.kind != CLASS:
        return True
    short = cls.path.rpartition(".")[2]
    whole = word(short)
    for module in modules_mentioning(view.index, short, resolver.top):
        if not whole.search(view.index.source(module)):
            continue  # only longer names contain it (`ModelOptFp8MoEMethod`)
        tree = view.index.parsed(module)
        aliases = view.index.module_memo(module, ("class-aliases", short, off_module),
                                         lambda t=tree: class_aliases(t, short, off_module)) \
            if tree is not None else None
        if aliases is None:
            return True
        lines = text_lines(view.index, module, f"{short}(")
        for unit in iter_units(tree):
            local = {a for a, first, last in aliases if unit.node is not None and first <= unit.node.lineno <= last
                     or unit.node is None and first == 0}
            if f"{module}.{unit.qualname}" in replaced or not local and not any(spans(unit, line) for line in lines):
                continue
            walk = walk_unit(view.index, module, unit)
            calls = [c for c in walk.calls if call_name(c) == short and (
                not off_module or isinstance(c.func, ast.Attribute))]
            through = [c for c in walk.calls if isinstance(c.func, ast.Name) and c.func.id in local]
            starred = [c for c in (*calls, *through) if any(isinstance(a, ast.Starred) for a in c.args)]
            if any(bind_call(params, call) for call in through) or unpacked and starred:
                return True  # `cls = A if ... else Host; cls(...)`: built with these arguments
            inference = host_inference(resolver, module, unit, walk) if calls else None
            for call in calls:
                callee = inference.callee(call.func) if inference is not None else None
                if callee is None or callee.sym.path == cls.path and bind_call(params, call):
                    return True
    return False


def _hook_construction_fails(view: HostView, lineage: Lineage, params: tuple[Param, ...],
                             replaced: frozenset[str]) -> bool:
    """Whether host code may build the plugin's class, which it gets only from the hooks `lineage.hooks`
    return it by (`impl_cls = backend.get_impl_cls(); impl_cls(...)`; a class-path string resolved
    by a one-argument call, `cls = resolve(platform.get_communicator_cls())`), with arguments its
    constructor (`params`) rejects. Each host call of a hook is followed: its result (through
    `cast(T, x)`) called, or kept in a local name that is called, tested (`is`, `==`,
    `isinstance`), read (`x.attr`) or subclassed by a class handed on only by the same hook. A call
    whose receiver is a host class the hook's plugin class is not (`self.backend = HostBackend`)
    runs another class's hook. Anything else counts as failing: the result may go anywhere."""
    index, resolver = view.index, view.resolver
    meeting = _Meeting(view, lineage)
    for hook in sorted({name for _, name, _ in lineage.hooks}):
        owners = [s for s, name, _ in lineage.hooks if name == hook]
        by_path = any(p for _, name, p in lineage.hooks if name == hook)
        if any(not _hook_named_only_in_tables(index.parsed(m), hook)
               for q in "\"'" for m in modules_mentioning(index, f"{q}{hook}{q}", resolver.top)):
            return True  # called by name (`getattr(backend, "hook")()`)
        for module in modules_mentioning(index, f".{hook}", resolver.top):
            tree = index.parsed(module)
            if tree is None:
                return True
            lines = text_lines(index, module, f".{hook}")
            for unit in iter_units(tree):
                if not any(spans(unit, line) for line in lines) or f"{module}.{unit.qualname}" in replaced:
                    continue
                parents = _parents(unit)
                inference = host_inference(resolver, module, unit, walk_unit(index, module, unit))
                for node in parents:
                    if not (isinstance(node, ast.Attribute) and node.attr == hook and isinstance(node.ctx, ast.Load)):
                        continue
                    if not _receiver_may_be(view, inference, module, unit, node.value, owners, meeting):
                        continue
                    call = parents[node]
                    if not (isinstance(call, ast.Call) and call.func is node):
                        return True  # the hook itself handed on
                    value = _unwrapped(parents, call)
                    if by_path:
                        up = parents.get(value)
                        if not (isinstance(up, ast.Call) and up.args == [value] and not up.keywords):
                            return True  # the path goes somewhere not followed
                        value = _unwrapped(parents, up)  # the one-argument call resolving it
                    if _class_value_fails(unit, parents, value, params, {hook}):
                        return True
    return False


def _parents(unit: Unit) -> dict[ast.AST, ast.AST]:
    """Each node under a unit's body -> its parent (the body's statements map to nothing)."""
    out: dict[ast.AST, ast.AST] = {}
    for root in unit.body:
        out.setdefault(root, None)  # type: ignore[arg-type]
        for node in ast.walk(root):
            for child in ast.iter_child_nodes(node):
                out[child] = node
    return out


def _unwrapped(parents: dict[ast.AST, ast.AST], node: ast.expr) -> ast.expr:
    """The expression whose value is `node`'s: `typing.cast(T, node)` is `node`."""
    up = parents.get(node)
    while isinstance(up, ast.Call) and len(up.args) == 2 and up.args[1] is node and call_name(up) == "cast":
        node, up = up, parents.get(up)
    return node


def _receiver_may_be(view: HostView, inference: Inference, module: str, unit: Unit, receiver: ast.expr,
                     owners: list[ClassShape], meeting: _Meeting) -> bool:
    """Whether the receiver of a host hook call may be one of the plugin classes `owners` (or an instance):
    not when it is typed as a host class none of them derives from, or is `self.attr` that the class only
    ever sets to host classes (the class objects themselves, never the plugin's)."""
    typed = inference.infer(receiver)
    if typed is not None and typed.sym is not None and typed.sym.kind == CLASS and typed.sym.module:
        return any(typed.sym.path in meeting.host_mro(s) for s in owners)
    if not (unit.cls and _is_own_attribute(receiver, unit)):
        return True
    cls = view.resolve(f"{module}.{unit.cls}")
    if cls is None or not isinstance(cls.obj, ClassInfo):
        return True
    assigned = cls.obj.instance_attrs.get(receiver.attr, ())  # type: ignore[attr-defined]
    lookup = module_lookup(view.resolver, module)
    held = [Inference(view.resolver, lookup).dotted(a.expr.strip(), lookup) if re.fullmatch(r"[\w.]+", a.expr.strip())
            else None for a in assigned]
    return not held or any(h is None or h.kind != CLASS for h in held)


def _class_value_fails(unit: Unit, parents: dict[ast.AST, ast.AST], value: ast.expr, params: tuple[Param, ...],
                       hooks: set[str]) -> bool:
    """Whether a class value in a host unit may be built with arguments `params` rejects, or go where
    it is not followed (see `_hook_construction_fails`)."""
    up = parents.get(value)
    if isinstance(up, ast.Call) and up.func is value:
        return _construction_rejects(unit, parents, up, params, hooks)
    if isinstance(up, ast.Attribute) and not isinstance(parents.get(up), ast.Call) or isinstance(up, ast.Compare):
        return False  # a class attribute read, an identity or equality test
    if not (isinstance(up, ast.Assign) and len(up.targets) == 1 and isinstance(up.targets[0], ast.Name)):
        return True
    name = up.targets[0].id
    for use in parents:
        if not (isinstance(use, ast.Name) and use.id == name and isinstance(use.ctx, ast.Load)):
            continue
        at = parents.get(use)
        if isinstance(at, ast.Call) and at.func is use:
            if _construction_rejects(unit, parents, at, params, hooks):
                return True
        elif isinstance(at, ast.ClassDef) and use in at.bases:
            if not _handed_on_only_by(parents, at, hooks) or any(
                    _construction_rejects(unit, parents, c, params, hooks) for c in _super_inits(at)):
                return True
        elif not (isinstance(at, ast.Compare) or isinstance(at, ast.Attribute) and not isinstance(
                parents.get(at), ast.Call) or isinstance(at, ast.Call) and call_name(at) in _INSPECTING):
            return True
    return False


def _construction_rejects(unit: Unit, parents: dict[ast.AST, ast.AST], call: ast.Call, params: tuple[Param, ...],
                          hooks: set[str]) -> bool:
    """Whether a host construction may pass what `params` rejects. One forwarding `*args, **kwargs`
    from the `__init__` of a class the hooks alone hand on passes what the hooks' other callers do."""
    problems = bind_call(params, call)
    if problems is not None:
        return bool(problems)
    if has_var_keyword(params) and not any(isinstance(a, ast.Starred) for a in call.args):
        # `f(a, b, **extra)` into a `**kwargs`: the positional ones and the named keywords decide; `extra` may
        # supply what seems missing, and the override takes any other name
        given = bind_counts(params, len(call.args), [k.arg for k in call.keywords if k.arg])
        return any(p.kind != MISSING for p in given)
    fn = parents.get(call)
    while fn is not None and not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        fn = parents.get(fn)
    cls = parents.get(fn) if fn is not None else None
    args = fn.args if fn is not None else None
    forwards = args is not None and fn.name == "__init__" and args.vararg and args.kwarg and len(args.args) == 1 \
        and not args.kwonlyargs and len(call.args) == 1 and isinstance(call.args[0], ast.Starred) \
        and isinstance(call.args[0].value, ast.Name) and call.args[0].value.id == args.vararg.arg \
        and len(call.keywords) == 1 and call.keywords[0].arg is None \
        and isinstance(call.keywords[0].value, ast.Name) and call.keywords[0].value.id == args.kwarg.arg
    return not (forwards and isinstance(cls, ast.ClassDef) and _handed_on_only_by(parents, cls, hooks))


def _super_inits(cls: ast.ClassDef) -> list[ast.Call]:
    """The `super().__init__(...)` calls of a class's own `__init__` (none: it inherits the base's)."""
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    return [n for n in ast.walk(init) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "__init__" and _is_super_call(n.func.value)] if init is not None else []


def _handed_on_only_by(parents: dict[ast.AST, ast.AST], cls: ast.ClassDef, hooks: set[str]) -> bool:
    """Whether a class defined in a host unit is only handed on as what a hook returns (`def hook():
    return Cls`, `{"hook": lambda: Cls}`), tested against, or named inside its own body: its
    instances are then built where the hook's results are."""
    for use in parents:
        if not (isinstance(use, ast.Name) and use.id == cls.name and isinstance(use.ctx, ast.Load)):
            continue
        at = parents.get(use)
        fn = parents.get(at) if isinstance(at, ast.Return) else None
        if isinstance(fn, ast.FunctionDef) and fn.name in hooks:
            continue
        if isinstance(at, ast.Lambda) and isinstance(table := parents.get(at), ast.Dict) and any(
                isinstance(k, ast.Constant) and k.value in hooks and v is at for k, v in zip(table.keys, table.values,
                                                                                          strict=True)):
            continue
        if isinstance(at, ast.Call) and call_name(at) in (*_INSPECTING, "super"):
            continue
        return False
    return True


def _hook_named_only_in_tables(tree: ast.Module | None, hook: str) -> bool:
    """Whether a host module spells a hook's name only as a key of a table of overrides
    (`{"hook": lambda: Cls}`) or in docstrings: it defines a hook there, it does not call one."""
    if tree is None:
        return False
    keys = {id(k) for n in ast.walk(tree) if isinstance(n, ast.Dict) for k in n.keys if k is not None}
    docs = {id(b[0].value) for n in ast.walk(tree) if isinstance(b := getattr(n, "body", None), list) and b
            and isinstance(b[0], ast.Expr) and isinstance(b[0].value, ast.Constant)}
    return not any(isinstance(n, ast.Constant) and n.value == hook and id(n) not in keys | docs for n in ast.walk(tree))


_GENERICS = frozenset({"list", "dict", "set", "frozenset", "tuple", "type", "List", "Dict", "Set", "Tuple", "Type"})


def constructions_bind(view: HostView, patch: Patch, replaced: frozenset[str]) -> bool:
    """Whether every host construction of a class whose `__init__` the plugin replaces passes
    positionally only what binds to the same parameters of the replacement as of the original: the
    class's own and those of the host subclasses inheriting `__init__`, the class bound to a local
    and called (`class_aliases`). False where a host subclass defines its own `__init__` (its call
    up is not judged here), the class is named as a string or handed on, or a call unpacks `*args`."""
    owner, base = view.replaced_member(patch.owner, patch.name)
    if patch.name != "__init__" or owner is None or owner.kind != CLASS or base is None \
            or not isinstance(base.obj, FunctionInfo):
        return False
    repl = replacement_params(patch, owner)
    if repl is None:
        return False
    base_params = _callers_params(base)
    params = bound_alike(base_params, agreeing_slots(base_params, repl))
    params = tuple(p for p in params if p.kind is not ParamKind.VAR_POSITIONAL)  # a `*args` call may fill any slot
    every, inherit_init = inheriting(view, owner, ""), inheriting(view, owner, "__init__")
    index, top = view.index, view.resolver.top
    if any(named_dynamically(index, m, c.path.rpartition(".")[2]) for c in every for q in "\"'"
           for m in modules_mentioning(index, f"{q}{c.path.rpartition('.')[2]}{q}", top)):
        return False
    inherits = {c.path for c in inherit_init}
    for sub in every:  # a host subclass with its own __init__ reaches the replacement by calling up
        if sub.path not in inherits and not _calls_up_alike(view, sub, params):
            return False
    return not any(_construction_fails(view, c.path, params, replaced, unpacked=True) for c in inherit_init)


def _calls_up_alike(view: HostView, sub: Symbol, params: tuple[Param, ...]) -> bool:
    """Whether a host subclass's own `__init__` calls `super().__init__(...)` only in ways `params` takes."""
    fn = sub.obj.methods.get("__init__") if isinstance(sub.obj, ClassInfo) else None
    tree = view.index.parsed(sub.module) if sub.module else None
    node = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "__init__"
                 and fn is not None and n.lineno == fn.line), None) if tree is not None else None
    if node is None:
        return False
    ups = [c for c in ast.walk(node) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
           and c.func.attr == "__init__" and _is_super_call(c.func.value)]
    return all(not any(isinstance(a, ast.Starred) for a in c.args) and not bind_call(params, c) for c in ups)


def class_aliases(tree: ast.Module, name: str, off_module: bool = False) -> tuple[tuple[str, int, int], ...] | None:
    """How a module uses a host class `name` that a plugin class stands in for, as its constructions
    see it: (local name, first, last line of its function; 0, 0 at module level) for each name the
    class is bound to (`cls = Host`, `cls = A if c else Host`) and then only called or type-tested
    through; None when the class is handed on otherwise (a table entry, a factory argument: built
    where no call names it). Inert: calling it, subclassing, annotating, type tests (`isinstance`,
    any comparison), a generic's parameter (`list[Host]()`) and members read off it (`Host.__init__`,
    `Host.forward_static`), which run the host's own code, not the stand-in's construction."""
    inert: set[int] = set()
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, ast.Call):
            inert.add(id(node.func))
            if isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass"):
                inert.update(id(n) for a in node.args[1:] for n in ast.walk(a))
        elif isinstance(node, ast.ClassDef):
            inert.update(id(n) for b in node.bases for n in ast.walk(b))
        elif isinstance(node, ast.Compare):
            inert.update(id(n) for n in ast.walk(node))
        elif isinstance(node, ast.Attribute):
            inert.add(id(node.value))
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in _GENERICS:
            inert.update(id(n) for n in ast.walk(node.slice))
        for annotation in (getattr(node, "annotation", None), getattr(node, "returns", None)):
            if isinstance(annotation, ast.AST):
                inert.update(id(n) for n in ast.walk(annotation))
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    out: set[tuple[str, int, int]] = set()
    for n in ast.walk(tree):
        if not ((isinstance(n, ast.Name) and n.id == name and not off_module
                 or isinstance(n, ast.Attribute) and n.attr == name) and isinstance(n.ctx, ast.Load) and id(n) not in inert):
            continue
        up: ast.AST = n
        handed = False  # handed to a function (`maybe_get_oot_by_class(Host)`): only a type test may use what it gives
        while isinstance(parent := parents.get(id(up)), ast.IfExp | ast.Tuple | ast.Call) and \
                up is not getattr(parent, "test", None) and up is not getattr(parent, "func", None):
            handed |= isinstance(parent, ast.Call)
            up = parent
        assign = parents.get(id(up))
        if not (isinstance(assign, ast.Assign) and assign.value is up and len(assign.targets) == 1
                and isinstance(assign.targets[0], ast.Name)):
            return None
        scope = parents.get(id(assign))
        while scope is not None and not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            scope = parents.get(id(scope))
        alias = assign.targets[0].id
        uses = [u for u in ast.walk(scope or tree) if isinstance(u, ast.Name) and u.id == alias
                and isinstance(u.ctx, ast.Load)]
        if any(id(u) not in inert or (handed or isinstance(up, ast.Tuple)) and id(u) in called for u in uses):
            return None  # the alias goes on as a value (or a tuple of classes is called)
        span = (scope.lineno, scope.end_lineno or scope.lineno) if scope is not None else (0, 0)
        out.add((alias, *span))
    return tuple(sorted(out))


def class_as_value(tree: ast.Module, name: str, off_module: bool = False) -> bool:
    """Whether a module uses a class named `name` other than by calling it, testing against it,
    annotating or subclassing it (a registry entry, a factory argument: it may be built anywhere);
    with `off_module`, only a read off another object (`mod.Cls`) counts.

    One walk, stopping at the first such use: what makes a use inert is decided at an enclosing
    node (the call, the `isinstance` call, the class statement, the annotated node), which the walk
    (breadth first) reaches before the use."""
    inert: set[int] = set()
    for node in walk_tree(tree):
        if isinstance(node, ast.Name | ast.Attribute):
            if (node.attr if isinstance(node, ast.Attribute) else None if off_module else node.id) == name \
                    and isinstance(node.ctx, ast.Load) and id(node) not in inert:
                return True
            continue
        if isinstance(node, ast.Call):
            inert.add(id(node.func))
            if isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass"):
                inert.update(id(n) for a in node.args[1:] for n in walk_tree(a))
        elif isinstance(node, ast.ClassDef):  # a host subclass derives from the host's own class
            inert.update(id(n) for b in node.bases for n in walk_tree(b))
        for annotation in (getattr(node, "annotation", None), getattr(node, "returns", None)):
            if isinstance(annotation, ast.AST):
                inert.update(id(n) for n in walk_tree(annotation))
    return False


def _is_super_call(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def _builds_subclasses(view: HostView, lineage: Lineage) -> bool:
    """Whether a host base registers its subclasses as they are defined (`__init_subclass__`): the host
    may then build the plugin's class without being handed it."""
    meeting = _Meeting(view, lineage)
    for shape in lineage.family:
        for path in meeting.host_mro(shape):
            sym = view.resolve(path)
            if sym is not None and isinstance(sym.obj, ClassInfo) and "__init_subclass__" in sym.obj.methods:
                return True
    return False


def named_dynamically(index: CodeIndex, module: str, name: str) -> bool:
    """Whether a host module spells `name` as a string that may reach the member by name
    (`collective_rpc("name")`, `getattr(x, "name")`, a table of method names). Not: a docstring,
    an `__all__` entry (the export of a function of that name) or the attribute `hasattr` tests
    (a call that follows is a `.name(` call of its own)."""
    return index.module_memo(module, ("named-dynamically", name), lambda: _named_dynamically(index.parsed(module), name))


def dispatched_calls(index: CodeIndex, module: str, name: str) -> tuple[tuple[int, tuple[str, ...]], ...] | None:
    """The calls a host module makes of a member by naming it as a string, each as (positional arguments,
    keyword names): the first argument of a call that hands on only its literal `args=(...)` and
    `kwargs={...}` (`collective_rpc("name", args=(x,))` calls `name(x)`), also as the first of such
    `args` (`collective_rpc("execute", args=("name",))` -> `execute("name")`). None when the name is
    spelt any other way that may reach the member (`getattr(x, "name")`, a table of names)."""
    return index.module_memo(module, ("dispatched", name), lambda: _dispatched_calls(index.parsed(module), name))


def _dispatched_calls(tree: ast.Module | None, name: str) -> tuple[tuple[int, tuple[str, ...]], ...] | None:
    if tree is None:
        return None
    inert = _inert_strings(tree)
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    out: list[tuple[int, tuple[str, ...]]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and node.value == name) or id(node) in inert:
            continue
        call = parents.get(id(node))
        if isinstance(call, ast.Call) and call.args[:1] == [node]:
            given = _handed_on_arguments(call)
        else:  # the first of the literal `args` a dispatching call hands on: the rest go with it
            tup, keyword = call, parents.get(id(call))
            outer = parents.get(id(keyword))
            given = (len(tup.elts) - 1, ()) if isinstance(tup, ast.Tuple) and tup.elts[:1] == [node] and isinstance(
                keyword, ast.keyword) and keyword.arg == "args" and isinstance(outer, ast.Call) and \
                _handed_on_arguments(outer) is not None and isinstance(outer.args[0], ast.Constant) else None
        if given is None:
            return None
        out.append(given)
    return tuple(out)


def _handed_on_arguments(call: ast.Call) -> tuple[int, tuple[str, ...]] | None:
    """(positional count, keyword names) a call naming a member as its only positional argument hands to
    it: its literal `args=(...)` and `kwargs={"k": ...}` (other keywords are the dispatcher's own)."""
    if len(call.args) != 1 or any(k.arg is None for k in call.keywords):
        return None
    given, keywords = 0, ()
    for k in call.keywords:
        if k.arg == "args":
            if not isinstance(k.value, ast.Tuple | ast.List) or any(isinstance(e, ast.Starred) for e in k.value.elts):
                return None
            given = len(k.value.elts)
        elif k.arg == "kwargs" and not (isinstance(k.value, ast.Constant) and k.value.value is None):
            if not isinstance(k.value, ast.Dict) or not all(isinstance(x, ast.Constant) and isinstance(x.value, str)
                                                            for x in k.value.keys):
                return None
            keywords = tuple(x.value for x in k.value.keys)  # type: ignore[union-attr]
    return given, keywords


def _named_dynamically(tree: ast.Module | None, name: str) -> bool:
    if tree is None:
        return True
    inert = _inert_strings(tree)
    return any(isinstance(n, ast.Constant) and n.value == name and id(n) not in inert for n in ast.walk(tree))


def _inert_strings(tree: ast.Module) -> set[int]:
    """Strings of a module that name nothing: docstrings, `__all__` entries, the attribute `hasattr` tests,
    and a keyword's string naming a function the same call is handed (`register_op(op_name="f", op_func=f)`:
    the label of that function, which the call gets itself, never a member looked up by that name)."""
    inert: set[int] = set()
    for node in walk_tree(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            inert.add(id(body[0].value))  # a docstring
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) and any(
                isinstance(t, ast.Name) and t.id == "__all__"
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])) and node.value is not None:
            inert.update(id(n) for n in walk_tree(node.value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "hasattr" \
                and len(node.args) == 2:
            inert.add(id(node.args[1]))
        elif isinstance(node, ast.Call) and node.keywords:
            handed = {a.id for a in (*node.args, *(k.value for k in node.keywords)) if isinstance(a, ast.Name)}
            inert.update(id(k.value) for k in node.keywords if k.arg is not None and isinstance(k.value, ast.Constant)
                         and k.value.value in handed)
    return inert


def handed_on(view: HostView, patch: Patch) -> bool:
    """Whether host code may reach the replaced member other than by a call naming it, which no call
    site judges: it spells the name as a string (`named_dynamically`), reads `x.name` without
    calling it (`referenced_bare`), or, for a module function, reads the bare name as a value. For a
    constructor: a host subclass exists, or the class is named as a string or used as a value. Any
    other dunder always is."""
    index, top, name = view.index, view.resolver.top, patch.name
    if name.startswith("__") and name.endswith("__") and name not in CALLED_DUNDERS:
        return True  # run by the language (`obj(x)` -> `__call__`, a dataclass's `__post_init__`), never named
    owner, _ = view.replaced_member(patch.owner, name)
    if name in CALLED_DUNDERS and owner is not None and owner.kind == CLASS:
        # built, not called by name: the class is what may escape, and a host subclass runs the member too
        short = owner.path.rpartition(".")[2]
        return len(inheriting(view, owner, "")) > 1 or any(
            named_dynamically(index, m, short) for q in "\"'" for m in modules_mentioning(index, f"{q}{short}{q}", top)
        ) or any(index.module_memo(m, ("class-as-value", short), lambda m=m: (t := index.parsed(m)) is None
                                   or class_as_value(t, short)) for m in modules_mentioning(index, short, top))
    if any(named_dynamically(index, m, name) for q in "\"'" for m in modules_mentioning(index, f"{q}{name}{q}", top)):
        return True
    if any(referenced_bare(index, m, name) for m in modules_mentioning(index, f".{name}", top)):
        return True
    return owner is not None and owner.kind == MODULE and any(
        index.module_memo(m, ("named-bare", name), lambda m=m: named_bare(index.parsed(m), name))
        for m in modules_mentioning(index, name, top))


def named_bare(tree: ast.Module | None, name: str) -> bool:
    """Whether a module reads the plain name `name` other than to call it (`hooks = [name]`); one walk
    (a call comes before its callee, breadth first), stopping at the first."""
    if tree is None:
        return True
    called: set[int] = set()
    for n in walk_tree(tree):
        if isinstance(n, ast.Call):
            called.add(id(n.func))
        elif isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and id(n) not in called:
            return True
    return False


def referenced_bare(index: CodeIndex, module: str, name: str) -> tuple[int, ...]:
    """Lines where a host module reads `x.name` other than to call it (`fn = self.name`, a callback
    handed on): the member may then run from anywhere. A comment, or `callable(x.name)`, is not."""
    def build() -> tuple[int, ...]:
        if not re.search(rf"\.{re.escape(name)}\b(?!\s*\()", index.source(module)):
            return ()  # the text never reads it other than as a call: no parse needed
        return _referenced_bare(index.parsed(module), name)
    return index.module_memo(module, ("referenced-bare", name), build)


def _referenced_bare(tree: ast.Module | None, name: str) -> tuple[int, ...]:
    return tuple(sorted({n.lineno for n in _bare_references(tree, name)})) if tree is not None else (1,)


def _bare_references(node: ast.AST, name: str) -> list[ast.Attribute]:
    """The `x.name` reads under `node` (a tree or a unit) that are not calls of it (nor iterated or
    subscripted: a method is neither, so such a read is some other member of that name). One walk:
    what rules a read out is decided at an enclosing node, which comes first, breadth first."""
    called: set[int] = set()
    roots = node.body if isinstance(node, Unit) else [node]
    out: list[ast.Attribute] = []
    for root in roots:
        for n in walk_tree(root):
            if isinstance(n, ast.Attribute):
                if n.attr == name and isinstance(n.ctx, ast.Load) and id(n) not in called:
                    out.append(n)
                continue
            if isinstance(n, ast.Compare) and any(isinstance(c, ast.Constant) and c.value is None
                                                  for c in n.comparators):
                called.add(id(n.left))  # `x.name is None`: data, a method never is
            elif isinstance(n, ast.Call):
                called.add(id(n.func))
                if isinstance(n.func, ast.Name) and n.func.id == "callable":
                    called.update(id(a) for a in n.args)
            elif isinstance(n, ast.For | ast.AsyncFor | ast.comprehension):
                called.add(id(n.iter))  # iterated: data, never a method
            elif isinstance(n, ast.Subscript):
                called.add(id(n.value))  # subscripted: data, never a method
    return out


def _fits(base: Symbol, call: ast.Call) -> bool:
    """Whether a host call may be one of the host's own member `base` (through an instance, or through
    the class with `self` first): one that binds to neither calls some other callable of that name,
    since the host's code works on its own pin."""
    fn = base.obj
    if not isinstance(fn, FunctionInfo):
        return True
    return any(bind_call(params, call) in (None, []) for params in {_callers_params(base), fn.signature.params})


def _callers_params(base: Symbol) -> tuple[Param, ...]:
    """What a host caller supplies to a host method (self/cls dropped)."""
    fn = base.obj
    if not isinstance(fn, FunctionInfo):
        return ()
    return fn.signature.params[0 if fn.is_staticmethod else 1:]


def replaced_units(view: HostView, patches: Iterable[Patch]) -> frozenset[str]:
    """Host functions and methods (by module path + qualified name) the plugin replaces in `view`."""
    out = set()
    for p in patches:
        if p.kind in (PatchKind.MEMBER, PatchKind.ASSIGNMENT) and p.function is not None:
            _, base = view.replaced_member(p.owner, p.name)
            if base is not None and base.module:
                out.add(f"{base.module}.{base.path[len(base.module) + 1:]}")
    return frozenset(out)


def _candidates(view: HostView, owner: Symbol, name: str, method: bool, repl: tuple[Param, ...],
                through: frozenset[str] | None = None) -> dict[str, tuple[int, ...]]:
    """Host modules (and lines) worth parsing for calls of `name` that may not bind to `repl`.

    Text first: a method is only ever called as `x.name(`, and each call's arguments are
    judged from its text (`failing_call_lines`). A `self.name(`/`super().name(` call can
    only reach the patched member from a class related to the owner (judged from the
    summaries, without parsing). When `x.name(` is common (`forward`), a module calling it
    on another receiver must also name the owner or one of its bases. With `through`, a line
    whose receivers are all read and none of them is one of those attributes is left out.
    """
    index = view.index
    resolver = view.resolver
    found = modules_mentioning(index, f".{name}(" if method else f"{name}(", resolver.top)
    if owner.kind != CLASS or not method:
        return {m: lines for m in found if (lines := failing_call_lines(index, m, name, repl, method=False))}
    wide = len(found) > _WIDE
    bases = {c.path for c in resolver.mro(owner)}
    related = [c.path.rpartition(".")[2] for c in resolver.mro(owner) if c.module] if wide else []
    named = Words(related) if related else None
    receiver = re.compile(rf"(\w+(?:\(\))?)\s*\.{re.escape(name)}\(")
    out: dict[str, tuple[int, ...]] = {}
    for module in found:
        text = index.lines(module)
        kept = []
        for line in failing_call_lines(index, module, name, repl, method=True):
            receivers = {r.group(1) for r in receiver.finditer(text[line - 1])} or {"?"}
            if through is not None and "?" not in receivers and not receivers & through:
                continue  # not called on one of the attributes asked about
            if receivers <= {"self", "cls", "super()"}:
                cls = _enclosing_class(resolver, module, line)
                if cls is None or not (cls.path in bases or owner.path in {c.path for c in resolver.mro(cls)}):
                    continue  # `self.name(` in a class the patched member cannot reach
            elif named is not None and module != owner.module and not named.search(index.source(module)):
                continue
            kept.append(line)
        if kept:
            out[module] = tuple(kept)
    return out


def _enclosing_class(resolver: Resolver, module: str, line: int) -> Symbol | None:
    """The innermost class of a module whose body spans a line (from the summary: no parse)."""
    classes, prefix, found = resolver.index.modules[module].classes, module, None
    while True:
        hit = next(((n, c) for n, c in classes.items() if c.line <= line <= c.end_line), None)
        if hit is None:
            break
        prefix = f"{prefix}.{hit[0]}"
        found, classes = prefix, hit[1].classes
    sym = resolver.resolve(found) if found else None
    return sym if sym is not None and sym.kind == CLASS else None


def instance_calls_reached(view: HostView, patch: Patch, replaced: frozenset[str]) -> bool:
    """Whether host code may call an instance of the patched class, so that the replaced member runs
    without a call naming it (`self.mlp(x)` -> `Module.__call__` -> `forward`), in a way the
    replacement rejects.

    False only when the host builds the class (and any host subclass inheriting the member) only
    as `self.attr = Cls(...)` in methods of host classes, never hands the class on as a value, and
    every host read of such an attribute is a call that binds to the replacement (`self.mlp(h)`,
    positionally with the same arity) or reads a member off the instance (`self.mlp.weight`).
    Reads of `self.attr` in classes unrelated to the holders cannot meet the instance; a read off
    anything else, a call it rejects, the attribute named as a string or handed on as a value
    count as reaching. Code in host units the plugin replaces never runs.
    """
    owner, base = view.replaced_member(patch.owner, patch.name)
    if owner is None or owner.kind != CLASS or base is None or base.kind != METHOD:
        return True
    repl = replacement_params(patch, owner)
    if repl is None:
        return True
    holders: set[tuple[str, str]] = set()
    for cls in inheriting(view, owner, patch.name):
        stored = _stored_constructions(view, cls, replaced)
        if stored is None:
            return True
        holders |= stored
    if not holders:
        return True  # the host never builds it: built some way we cannot see (or by the plugin)
    index, resolver = view.index, view.resolver
    holder_mros = {h: {c.path for c in resolver.mro(s)} for h, _ in holders if (s := view.resolve(h)) is not None}
    for attr in sorted({a for _, a in holders}):
        if any(_read_by_name(index, m, attr) for q in "\"'" for m in modules_mentioning(index, f"{q}{attr}{q}",
                                                                                          resolver.top)):
            return True
        reader = re.compile(rf"(\w+)\s*\.{re.escape(attr)}\b")
        holder_word = _holder_names(holder_mros)
        for module in modules_mentioning(index, f".{attr}", resolver.top):
            names = bool(holder_word.search(index.source(module)))
            text = index.lines(module)
            lines = [line for line in text_lines(index, module, f".{attr}") if names or any(
                r.group(1) == "self" and _may_hold(view, module, line, holder_mros)
                for r in reader.finditer(text[line - 1]))]  # from the text and summaries: most modules unparsed
            if not lines:
                continue
            if index.parsed(module) is None:
                return True
            names_holder = None
            for unit in module_units(index, module):
                if not any(spans(unit, line) for line in lines) or f"{module}.{unit.qualname}" in replaced:
                    continue
                inference = None
                for receiver, use in _attribute_uses(unit, attr):
                    if use is not None and not (isinstance(use, ast.Call) and bind_call(repl, use) != []):
                        continue  # a member read off it, or a call it accepts
                    if receiver is None:  # off the unit's `self`
                        if _related_to_holders(view, module, unit, holder_mros):
                            return True
                        continue  # `self.attr` of a class no holder is, derives from or gives methods to
                    if inference is None:
                        inference = host_inference(resolver, module, unit, walk_unit(index, module, unit))
                    typed = inference.infer(receiver)
                    if typed is not None and typed.sym is not None and typed.sym.kind == CLASS:
                        mro = {c.path for c in resolver.mro(typed.sym)}
                        if any(typed.sym.path in bases or h in mro for h, bases in holder_mros.items()):
                            return True
                        continue  # typed as a class no holder can be
                    if names_holder is None:
                        names_holder = bool(_holder_names(holder_mros).search(index.source(module)))
                    if names_holder:
                        return True  # of unknown type, where the holder is named: it may be one
    return False


def _may_hold(view: HostView, module: str, line: int, holder_mros: dict[str, set[str]]) -> bool:
    """Whether `self` on a host line may be a holder (its enclosing class, from the summary, is related)."""
    cls = _enclosing_class(view.resolver, module, line)
    if cls is None:
        return True
    mro = {c.path for c in view.resolver.mro(cls)}
    return any(cls.path in bases or holder in mro for holder, bases in holder_mros.items())


def _read_by_name(index: CodeIndex, module: str, attr: str) -> bool:
    """Whether a host module reads an attribute by its name as a string (`getattr(x, "attr")`,
    `attrgetter("attr")`): the value then goes where we do not follow."""
    def build() -> bool:
        tree = index.parsed(module)
        return tree is None or any(
            isinstance(n, ast.Call) and call_name(n) in ("getattr", "attrgetter") and any(
                isinstance(a, ast.Constant) and a.value == attr for a in n.args) for n in walk_tree(tree))
    return index.module_memo(module, ("read-by-name", attr), build)


def _holder_names(holder_mros: dict[str, set[str]]) -> Words:
    return Words(h.rpartition(".")[2] for h in holder_mros)


def _stored_constructions(view: HostView, cls: Symbol, replaced: frozenset[str]) -> set[tuple[str, str]] | None:
    """(holder class path, attribute) of each host construction of `cls`, when every one is stored
    straight into `self.attr` by a host method; None when one goes anywhere else or the class is
    handed on as a value."""
    index, resolver = view.index, view.resolver
    short = cls.path.rpartition(".")[2]
    whole = word(short)
    out: set[tuple[str, str]] = set()
    for module in modules_mentioning(index, short, resolver.top):
        if not whole.search(index.source(module)):
            continue
        tree = index.parsed(module)
        if tree is None or index.module_memo(module, ("class-as-value", short), lambda t=tree: class_as_value(t, short)):
            return None
        lines = text_lines(index, module, f"{short}(")
        for unit in module_units(index, module):
            if not any(spans(unit, line) for line in lines) or f"{module}.{unit.qualname}" in replaced:
                continue
            walk = walk_unit(index, module, unit)
            calls = [c for c in walk.calls if call_name(c) == short]
            inference = host_inference(resolver, module, unit, walk) if calls else None
            stores = _self_stores(unit)
            for call in calls:
                callee = inference.callee(call.func) if inference is not None else None
                if callee is not None and callee.sym.path != cls.path:
                    continue  # another class of that name
                if id(call) not in stores or not unit.cls:
                    return None
                holder = view.resolve(f"{module}.{unit.cls}")
                out.add((holder.path if holder is not None else f"{module}.{unit.cls}", stores[id(call)]))
    return out


def _self_stores(unit: Unit) -> dict[int, str]:
    """id(call) -> attribute, for each `self.attr = call(...)` statement of a method."""
    if not unit.cls or unit.node is None or not unit.node.args.args or _is_static(unit.node):
        return {}
    me = unit.node.args.args[0].arg
    out: dict[int, str] = {}
    for node in walk_tree(unit.node):
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
            node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me \
                and isinstance(node.value, ast.Call):
            out[id(node.value)] = target.attr
    return out


def _attribute_uses(unit: Unit, attr: str) -> list[tuple[ast.expr | None, ast.Call | ast.Attribute | None]]:
    """Each read of `x.attr` in a unit: (its receiver, None when it is the unit's `self`; its use):
    the call when it is called, the member read off it (`x.attr.weight`, `isinstance(x.attr, C)`),
    None when the value goes anywhere else."""
    me = unit.node.args.args[0].arg if unit.cls and unit.node is not None and unit.node.args.args \
        and not _is_static(unit.node) else ""
    out: list[tuple[ast.expr | None, ast.Call | ast.Attribute | None]] = []
    for root in unit.body:
        parents: dict[int, ast.AST] = {}
        for node in walk_tree(root):
            for child in ast.iter_child_nodes(node):
                parents[id(child)] = node
            if not (isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.ctx, ast.Load)):
                continue
            up = parents.get(id(node))
            use: ast.Call | ast.Attribute | None = None
            if isinstance(up, ast.Call) and up.func is node or isinstance(up, ast.Attribute):
                use = up
            elif isinstance(up, ast.Call) and isinstance(up.func, ast.Name) and up.func.id in _INSPECTING:
                use = node  # looked at, not handed on
            mine = isinstance(node.value, ast.Name) and node.value.id == me
            out.append((None if mine else node.value, use))
    return out


def _is_static(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)


_INSPECTING = ("isinstance", "issubclass", "hasattr", "getattr", "callable", "type")


def _related_to_holders(view: HostView, module: str, unit: Unit, holder_mros: dict[str, set[str]]) -> bool:
    """Whether `self` in a host unit may be a holder: the unit's class is a holder's class, base or subclass."""
    cls = view.resolve(f"{module}.{unit.cls}") if unit.cls else None
    if cls is None or cls.kind != CLASS:
        return bool(unit.cls)  # a class we cannot resolve may be one
    mro = {c.path for c in view.resolver.mro(cls)}
    return any(cls.path in bases or holder in mro for holder, bases in holder_mros.items())
