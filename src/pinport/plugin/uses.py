"""What the plugin's code says about `self` and host objects, gathered in one walk.

Several checks read the same plugin uses (attributes, undefined names, host kinds, bypass): the
`self.X` reads and stores of every function, locals annotated or returned as host classes,
`isinstance` and `except` targets, environment variables set, and the plugin functions that run
as methods of host classes. `ScanFacts` (facts.py) walks each plugin module once per scan and
keeps the result, so both runs of every check (judging NEW, then OLD) share it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from ..findings import Location
from ..model.index import CodeIndex
from ..model.nodes import branches, chain, walk_tree
from ..model.parse import resolve_relative, signature_of
from ..model.summary import ClassInfo, Param, nested_class
from .helper_functions import instance_method_setters
from .model import PluginModel
from .records import PatchKind

FnNode = ast.FunctionDef | ast.AsyncFunctionDef
_IDENT = re.compile(r"[A-Za-z_][\w.]*")
ATTRIBUTE_GUARDS = {"AttributeError", "Exception", "BaseException"}
_REGISTERS = ("register_buffer", "register_parameter", "register_module")  # torch.nn.Module setters by name


def _annotation_text(node: ast.AST | None) -> str:
    """The class chain an annotation names: `X`, `"X"`, `X | None`, `Optional[X]`; '' otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value.strip()
        return text if _IDENT.fullmatch(text) else ""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        for side in (node.left, node.right):
            if not (isinstance(side, ast.Constant) and side.value is None):
                return _annotation_text(side)
    if isinstance(node, ast.Subscript) and chain(node.value).rpartition(".")[2] == "Optional":
        return _annotation_text(node.slice)
    return chain(node)


def caught_names(node: ast.Try | ast.TryStar) -> set[str]:
    """The exception names a `try` catches (last dotted part); a bare `except:` counts as BaseException."""
    caught = set()
    for h in node.handlers:
        for t in (h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]):
            caught.add("BaseException" if t is None else chain(t).rpartition(".")[2])
    return caught


def param_names(args: ast.arguments) -> set[str]:
    """Every name a function or lambda binds as a parameter, `*args` and `**kwargs` included."""
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    names.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    return names


# -- one pass over the plugin ---------------------------------------------------------------------

@dataclass
class SelfUse:
    """`self.X` reads (nodes in order), stores, the members used on each `self.X`, and guarded names."""

    reads: dict[str, list[ast.Attribute]] = field(default_factory=dict)
    stores: set[str] = field(default_factory=set)
    members: dict[str, dict[str, ast.Attribute]] = field(default_factory=dict)
    guarded: set[str] = field(default_factory=set)  # under hasattr/getattr-with-default/except AttributeError
    dynamic: bool = False  # `self.__dict__`, `vars(self)`, `setattr(self, name, ...)`: unverifiable


@dataclass
class FunctionUses:
    """What one plugin function says about `self` and host objects, names resolved to absolute paths."""

    module: str
    qualname: str
    node: FnNode
    self_name: str = ""  # first parameter of a method (not a staticmethod), '' otherwise
    params: frozenset[str] = frozenset()
    use: SelfUse = field(default_factory=SelfUse)
    typed: dict[str, str] = field(default_factory=dict)  # local name -> annotated class path
    called: dict[str, str] = field(default_factory=dict)  # local name (or call key) -> callee path
    stores: dict[str, int] = field(default_factory=dict)
    reads: list[tuple[ast.Attribute, str, str]] = field(default_factory=list)  # (node, "name"|"call", key)
    keys: list[tuple[ast.AST, str, str, bool]] = field(default_factory=list)  # (node, var, key, is_get)


@dataclass
class PluginUses:
    """Every function's uses, plugin classes by line, loose stores, host-class uses and env-var sets."""

    functions: list[FunctionUses] = field(default_factory=list)
    by_name: dict[tuple[str, str], FunctionUses] = field(default_factory=dict)  # (module, qualname)
    classes: dict[tuple[str, int], ast.ClassDef] = field(default_factory=dict)  # (module, line)
    loose: set[str] = field(default_factory=set)  # attribute names stored on anything but `self`
    # attribute names any method stores on its `self` (as Python parses it: multi-line annotated and
    # parenthesised tuple targets too)
    self_stores: set[str] = field(default_factory=set)
    class_uses: list[tuple[str, str, ast.AST, str, str]] = field(default_factory=list)  # module, unit, node, path, how
    env_sets: list[tuple[str, str, ast.AST, str, str]] = field(default_factory=list)  # module, unit, node, var, value
    # `helper(self.a, ...)` in a method: (module, class qualname, position, "a", line, column) -> helper path
    handed: dict[tuple[str, str, int, str, int, int], str] = field(default_factory=dict)
    # `self.a.m = fn` in a method: (module, class qualname, "a", "m", the function's qualname, the value)
    instance_sets: list[tuple[str, str, str, str, str, ast.expr]] = field(default_factory=list)


def _first_param(node: FnNode, in_class: bool) -> str:
    """A method's instance (or class) parameter; for a plain function only if named so (`Host.m = fn`)."""
    if any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list):
        return ""
    params = [*node.args.posonlyargs, *node.args.args]
    first = params[0].arg if params else ""
    return first if in_class or first in ("self", "cls") else ""


class _FactWalker:
    """One walk of one plugin module; handlers by node type, everything else walked generically."""

    def __init__(self, plugin: PluginModel, module: str, out: PluginUses) -> None:
        self.plugin, self.module, self.out = plugin, module, out
        self.units: list[str] = []
        self.in_class: list[bool] = [False]
        self.frames: list[FunctionUses] = []
        self.guard = 0  # inside `try:` with an AttributeError handler
        self.local: dict[str, str] = {}  # imports anywhere in the current top-level statement
        self.raw: list[tuple[dict, str, str]] = []  # (table, key, chain) resolved when the statement ends
        self.uses: list[tuple[str, ast.AST, str, str]] = []
        self.sets: list[tuple[str, ast.AST, str, str]] = []
        self.handlers = {
            ast.Import: self.visit_Import, ast.ImportFrom: self.visit_ImportFrom, ast.ClassDef: self.visit_ClassDef,
            ast.FunctionDef: self.visit_FunctionDef, ast.AsyncFunctionDef: self.visit_FunctionDef,
            ast.Lambda: self.visit_Lambda, ast.Name: self.visit_Name, ast.AnnAssign: self.visit_AnnAssign,
            ast.Assign: self.visit_Assign, ast.Attribute: self.visit_Attribute, ast.Subscript: self.visit_Subscript,
            ast.Call: self.visit_Call, ast.ExceptHandler: self.visit_ExceptHandler, ast.Try: self.visit_Try,
            ast.TryStar: self.visit_Try, ast.If: self.visit_If, ast.IfExp: self.visit_If}
        self.known = _Known()  # tests the enclosing branches decide (`if a and b:` -> `b` is true inside)

    def visit(self, node: ast.AST) -> None:
        handler = self.handlers.get(type(node))
        if handler is not None:
            handler(node)
        else:
            for child in branches(node):  # no handler looks at a context or an operator
                self.visit(child)

    def generic(self, node: ast.AST) -> None:
        for child in branches(node):
            self.visit(child)

    def top(self, stmt: ast.stmt) -> None:
        self.local, self.raw, self.uses, self.sets = {}, [], [], []
        self.visit(stmt)
        for table, key, text in self.raw:
            path = self.path(text)
            if path:
                table[key] = path
            else:
                table.pop(key, None)
        for unit, node, text, how in self.uses:
            path = self.path(text)
            if path and self.plugin.names.is_host(path):
                self.out.class_uses.append((self.module, unit, node, path, how))
        self.out.env_sets.extend((self.module, *entry) for entry in self.sets)

    def path(self, text: str) -> str | None:
        head, _, rest = text.partition(".")
        base = self.local.get(head) or self.plugin.names.binding_path(self.module, head)
        return (f"{base}.{rest}" if rest else base) if base else None

    @property
    def unit(self) -> str:
        return ".".join(self.units) or "<module>"

    def _later(self, table: dict, key: object, text: str) -> None:
        if text:
            table[key] = text
            self.raw.append((table, key, text))

    def _self_frame(self, name: str) -> FunctionUses | None:
        """The method whose `self` this name is: the innermost frame binding it, if as its first parameter."""
        for frame in reversed(self.frames):
            if name == frame.self_name:
                return frame
            if name in frame.params:
                return None
        return None

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            head = alias.name.split(".")[0]
            self.local[alias.asname or head] = alias.name if alias.asname else head

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = resolve_relative(self.module, self.plugin.index.is_package(self.module), node.level, node.module)
        for alias in node.names:
            if alias.name != "*":
                self.local[alias.asname or alias.name] = self.plugin.names.follow(f"{base}.{alias.name}")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.out.classes[(self.module, node.lineno)] = node
        for part in (*node.bases, *node.keywords, *node.decorator_list):
            self.visit(part)
        self.units.append(node.name)
        self.in_class.append(True)
        for stmt in node.body:
            self.visit(stmt)
        self.in_class.pop()
        self.units.pop()

    def visit_FunctionDef(self, node: FnNode) -> None:
        for part in (*node.decorator_list, *node.args.defaults, *node.args.kw_defaults):
            if part is not None:
                self.visit(part)
        self.units.append(node.name)
        facts = FunctionUses(self.module, self.unit, node, _first_param(node, self.in_class[-1]),
                              frozenset(param_names(node.args)))
        for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs):
            facts.stores[a.arg] = 1
            self._later(facts.typed, a.arg, _annotation_text(a.annotation))
        self.frames.append(facts)
        self.in_class.append(False)
        known, self.known = self.known, _Known()  # a nested def runs later: what held here may not
        for stmt in node.body:
            self.visit(stmt)
        self.known = known
        self.in_class.pop()
        self.frames.pop()
        self.units.pop()
        facts.reads = [r for r in facts.reads if r[1] == "call" or r[2] in facts.typed or r[2] in facts.called]
        facts.keys = [k for k in facts.keys if k[1] in facts.typed]
        self.out.functions.append(facts)
        self.out.by_name[(self.module, facts.qualname)] = facts

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        params = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
        shadowed = [f for f in self.frames if f.self_name in params]
        saved = [(f, f.self_name) for f in shadowed]
        for f in shadowed:  # `lambda self: ...` binds its own self
            f.self_name = ""
        known, self.known = self.known, _Known()
        self.generic(node)
        self.known = known
        for f, name in saved:
            f.self_name = name

    def visit_Try(self, node: ast.Try) -> None:
        guarded = bool(caught_names(node) & ATTRIBUTE_GUARDS)
        self.guard += guarded
        for stmt in node.body:
            self.visit(stmt)
        self.guard -= guarded
        for part in (*node.handlers, *node.orelse, *node.finalbody):
            self.visit(part)

    def visit_If(self, node: ast.If | ast.IfExp) -> None:
        """A branch the enclosing tests rule out never runs: its reads are no uses (`x if self.a else
        self.b` inside `if self.a:` never reads `self.b`)."""
        self.visit(node.test)
        verdict = self.known.decide(node.test)
        outer = self.known
        for taken, branch in ((True, node.body), (False, node.orelse)):
            if verdict is (not taken):
                continue
            self.known = outer.given(node.test, taken, node)
            for child in branch if isinstance(branch, list) else [branch]:
                self.visit(child)
        self.known = outer

    def visit_Name(self, node: ast.Name) -> None:
        if self.frames and not isinstance(node.ctx, ast.Load):
            stores = self.frames[-1].stores
            stores[node.id] = stores.get(node.id, 0) + 1

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if self.frames and isinstance(node.target, ast.Name):
            self._later(self.frames[-1].typed, node.target.id, _annotation_text(node.annotation))
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)

    def visit_Assign(self, node: ast.Assign) -> None:
        target = node.targets[0]
        if self.frames and len(node.targets) == 1 and isinstance(target, ast.Name) and isinstance(node.value, ast.Call):
            self._later(self.frames[-1].called, target.id, chain(node.value.func))
        if isinstance(target, ast.Subscript) and chain(target.value) == "os.environ":
            self._env(node, target.slice, node.value)
        for t in node.targets:
            if isinstance(t, ast.Attribute) and (held := self._self_chain(t.value)):
                frame, attr = held
                self.out.instance_sets.append((self.module, frame.qualname.rpartition(".")[0], attr, t.attr,
                                               frame.qualname, node.value))
        self.generic(node)

    def _self_chain(self, node: ast.expr) -> tuple[FunctionUses, str] | None:
        """(the method, "a.b") for `self.a.b` in a method of a class, None for anything else."""
        text = chain(node) if isinstance(node, ast.Attribute) and self.frames else ""
        head, _, rest = text.partition(".")
        frame = self._self_frame(head) if rest else None
        return (frame, rest) if frame is not None and "." in frame.qualname else None

    def visit_Attribute(self, node: ast.Attribute) -> None:
        value = node.value
        frame = self._self_frame(value.id) if isinstance(value, ast.Name) and self.frames else None
        if frame is not None:
            use = frame.use
            if node.attr == "__dict__":
                use.dynamic = True
            elif isinstance(node.ctx, ast.Load):
                if self.guard:
                    use.guarded.add(node.attr)
                use.reads.setdefault(node.attr, []).append(node)
            else:
                use.stores.add(node.attr)
                self.out.self_stores.add(node.attr)
            return
        if not isinstance(node.ctx, ast.Load):
            self.out.loose.add(node.attr)
        elif self.frames:
            if isinstance(value, ast.Name):
                self.frames[-1].reads.append((node, "name", value.id))
            elif isinstance(value, ast.Call) and (text := chain(value.func)):
                key = f"call:{id(value)}"
                self._later(self.frames[-1].called, key, text)
                self.frames[-1].reads.append((node, "call", key))
            elif isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and (
                    owner := self._self_frame(value.value.id)) is not None:
                owner.use.members.setdefault(value.attr, {}).setdefault(node.attr, node)
        self.visit(value)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if (self.frames and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name)
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
            self.frames[-1].keys.append((node, node.value.id, node.slice.value, False))
        self.generic(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = chain(node.func)
        args = node.args
        if isinstance(node.func, ast.Attribute) and node.func.attr in _REGISTERS and args and isinstance(
                args[0], ast.Constant) and isinstance(args[0].value, str):
            self._registered(node.func.value, args[0].value)
        frame = self._self_frame(chain(args[0])) if args and isinstance(args[0], ast.Name) and self.frames else None
        if isinstance(node.func, ast.Name):  # `install(self.handler, ...)`: a helper handed a held object
            for position, arg in enumerate(args):
                if held := self._self_chain(arg):
                    key = (self.module, held[0].qualname.rpartition(".")[0], position, held[1], node.lineno,
                           node.col_offset)
                    self._later(self.out.handed, key, node.func.id)
        if func in ("isinstance", "issubclass") and len(args) == 2:
            for item in args[1].elts if isinstance(args[1], ast.Tuple) else [args[1]]:
                if text := chain(item):
                    self.uses.append((self.unit, item, text, f"{func}()"))
        elif frame is not None and func in ("hasattr", "getattr", "setattr", "delattr", "vars"):
            key = args[1] if len(args) > 1 else None
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                if func in ("setattr", "delattr"):
                    frame.use.stores.add(key.value)
                elif func == "hasattr" or len(args) > 2:
                    frame.use.guarded.add(key.value)
            elif func in ("setattr", "vars"):
                frame.use.dynamic = True
        elif func == "setattr" and len(args) > 1 and isinstance(args[1], ast.Constant):
            self.out.loose.add(str(args[1].value))
        elif func in ("os.environ.setdefault", "os.putenv") and len(args) == 2:
            self._env(node, args[0], args[1])
        elif func == "os.environ.update":
            for kw in node.keywords:
                if kw.arg:
                    self._env(node, ast.Constant(kw.arg), kw.value)
        elif (self.frames and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and args
              and isinstance(node.func.value, ast.Name) and isinstance(args[0], ast.Constant)
              and isinstance(args[0].value, str)):
            self.frames[-1].keys.append((node, node.func.value.id, args[0].value, True))
        self.generic(node)

    def _registered(self, receiver: ast.expr, name: str) -> None:
        """`x.register_buffer("name", ...)` / `register_parameter` sets the attribute `name` on `x`
        (`self`, or a layer a helper is handed), as an assignment `x.name = ...` would."""
        frame = self._self_frame(receiver.id) if isinstance(receiver, ast.Name) and self.frames else None
        if frame is not None:
            frame.use.stores.add(name)
        self.out.loose.add(name)  # like `x.name = ...`: a member some plugin code gives an object

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        for item in node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]:
            if text := chain(item):
                self.uses.append((self.unit, item, text, "except clause"))
        self.generic(node)

    def _env(self, node: ast.AST, key: ast.AST, value: ast.AST) -> None:
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            self.sets.append((self.unit, node, key.value, ast.unparse(value)))


class _Known:
    """Pure tests (`self.a`, `flag`: Name/Attribute chains) the enclosing branches decide, each with the
    branch statement it holds in: a test that statement assigns anywhere is not known."""

    __slots__ = ("facts", "stores")

    def __init__(self, facts: tuple[tuple[str, bool, ast.AST], ...] = (),
                 stores: dict[int, frozenset[str]] | None = None) -> None:
        self.facts = facts
        self.stores = stores if stores is not None else {}  # id(branch statement) -> chains it assigns

    def given(self, test: ast.expr, outcome: bool, scope: ast.AST) -> _Known:
        """What holds inside the branch taken when `test` is `outcome`."""
        found = tuple((key, value, scope) for key, value in _implied(test, outcome))
        return _Known(self.facts + found, self.stores) if found else self

    def decide(self, test: ast.expr) -> bool | None:
        """True/False when the known tests decide `test`, None otherwise."""
        if not self.facts:
            return None
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.decide(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            verdicts = [self.decide(v) for v in test.values]
            short = isinstance(test.op, ast.Or)  # `or` is decided by one true term, `and` by one false
            if short in verdicts:
                return short
            return (not short) if all(v is not None for v in verdicts) else None
        key = chain(test)
        for known, value, scope in reversed(self.facts) if key else ():
            if known == key:
                return None if key in self._stored(scope) else value
        return None

    def _stored(self, scope: ast.AST) -> frozenset[str]:
        found = self.stores.get(id(scope))
        if found is None:
            found = self.stores[id(scope)] = frozenset(
                chain(n) for n in walk_tree(scope) if isinstance(n, ast.Name | ast.Attribute)
                and not isinstance(n.ctx, ast.Load))
        return found


def _implied(test: ast.expr, outcome: bool) -> list[tuple[str, bool]]:
    """(chain, value) pairs that hold whenever `test` evaluates to `outcome`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _implied(test.operand, not outcome)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) == outcome:  # all terms agree
        return [pair for v in test.values for pair in _implied(v, outcome)]
    key = chain(test) if not isinstance(test, ast.BoolOp) else ""
    return [(key, outcome)] if key else []


def walk_plugin(plugin: PluginModel) -> PluginUses:
    """Everything the plugin's code says about host objects, in one walk (ScanFacts keeps it)."""
    out = PluginUses()
    for module in plugin.modules:
        tree = plugin.index.parsed(module)
        walker = _FactWalker(plugin, module, out)
        for stmt in tree.body if tree is not None else ():
            walker.top(stmt)
    return out


# -- plugin functions whose `self` is a host class instance -----------------------------------------
def self_name(node: FnNode) -> str | None:
    """The name of the instance (or class) parameter, None for static methods and bare functions."""
    if any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list):
        return None
    params = [*node.args.posonlyargs, *node.args.args]
    return params[0].arg if params else None


def is_classmethod(node: FnNode) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "classmethod" for d in node.decorator_list)


@dataclass(frozen=True)
class HostMethod:
    """A plugin function run as a method of host classes: patch member, override or `Host.x = fn`."""

    module: str
    qualname: str
    site: Location
    owners: tuple[str, ...]  # host class paths as the plugin wrote them
    plugin_class: str  # the plugin class's qualified name ('' for an assigned module function)
    is_patch: bool  # self is the target itself (patch class, assignment) rather than a plugin subclass
    node: FnNode
    wrapper: str = ""  # classmethod/staticmethod applied on assignment

    @property
    def instance(self) -> bool:
        """Whether the first parameter is an instance (not a class)."""
        return self.wrapper != "classmethod" and not is_classmethod(self.node)


def find_host_methods(plugin: PluginModel) -> list[HostMethod]:
    """Every plugin function whose `self` is an instance of a host class, owners merged per function."""
    grouped: dict[tuple[str, str], tuple[Location, list[str], str, bool, str]] = {}
    for p in plugin.surface.patches:
        if p.function is None or p.kind is PatchKind.ALIAS or p.function.name == "<lambda>" or \
                p.wrapper == "staticmethod":
            continue
        if p.kind is PatchKind.ASSIGNMENT:
            scope = p.site.unit if p.site.unit != "<module>" else ""
            quals = [f"{scope}.{p.function.name}"] if scope else []
            qual = next((q for q in quals if plugin.function_node(p.plugin_module, q)), p.function.name)
            entry = grouped.setdefault((p.plugin_module, qual), (p.site, [], "", True, p.wrapper))
        else:
            entry = grouped.setdefault((p.plugin_module, p.site.unit),
                                       (p.site, [], p.via, p.kind is PatchKind.MEMBER, ""))
        if p.owner not in entry[1]:
            entry[1].append(p.owner)
    out = []
    for (module, qual), (site, owners, via, is_patch, wrapper) in sorted(grouped.items()):
        node = plugin.function_node(module, qual)
        if node is not None and self_name(node):
            out.append(HostMethod(module, qual, site, tuple(owners), via, is_patch, node, wrapper))
    return out


def self_use(uses: PluginUses, method: HostMethod) -> SelfUse:
    """How a host method uses its `self` (from the one walk over the plugin)."""
    found = uses.by_name.get((method.module, method.qualname))
    return found.use if found is not None else SelfUse(dynamic=True)


def plugin_class_info(index: CodeIndex, module: str, qualname: str) -> ClassInfo | None:
    return nested_class(index.modules.get(module), qualname)


def added_members(plugin: PluginModel, methods: list[HostMethod], uses: PluginUses) -> dict[str, frozenset[str]]:
    """Host class path (as written) -> members the plugin adds to it or stores on its `self`."""
    by_owner: dict[str, set[str]] = {}
    for p in plugin.surface.patches:
        if p.kind in (PatchKind.MEMBER, PatchKind.ASSIGNMENT):
            by_owner.setdefault(p.owner, set()).add(p.name)
    for method in methods:
        if method.is_patch:
            stores = self_use(uses, method).stores
            for owner in method.owners:
                by_owner.setdefault(owner, set()).update(stores)
    return {k: frozenset(v) for k, v in sorted(by_owner.items())}


def self_reads(node: ast.AST) -> dict[str, int]:
    """`self.X` read in a function (first line of each), minus what the function assigns itself."""
    args = getattr(node, "args", None)
    first = args.posonlyargs + args.args if isinstance(args, ast.arguments) else []
    me = first[0].arg if first else "self"
    reads: dict[str, int] = {}
    stores: set[str] = set()
    for sub in walk_tree(node):
        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == me:
            if isinstance(sub.ctx, ast.Load):
                line = getattr(sub, "lineno", 0)
                reads[sub.attr] = min(reads.get(sub.attr, line), line)
            else:
                stores.add(sub.attr)
    return {k: v for k, v in reads.items() if k not in stores}


def instance_methods(plugin: PluginModel, uses: PluginUses) -> dict[tuple[str, str, str], tuple[Param, ...]]:
    """(plugin class path, held attribute "a", method "m") -> the parameters of the function the plugin
    installs as `self.a.m` on the object it holds: set directly in a method (`self.a.m = fn`), or by a
    plugin helper the class hands the object (`install(self.a)`, assigning `a.m = fn`). A call
    `self.a.m(...)` in that class calls the installed function, not the method of `a`'s class."""
    out: dict[tuple[str, str, str], tuple[Param, ...]] = {}
    setters: dict[str, dict[int, dict[str, FnNode | ast.Lambda]]] = {}
    for (module, cls, position, attr, _line, _col), path in sorted(uses.handed.items()):
        owner, _, name = path.rpartition(".")
        if path not in setters:
            helper = plugin.function_node(owner, name) if owner in plugin.index.modules else None
            setters[path] = instance_method_setters(helper) if helper is not None else {}
        for method, fn in setters[path].get(position, {}).items():
            out[(f"{module}.{cls}", attr, method)] = _params(plugin.index, owner, fn)
    for module, cls, attr, method, scope, value in uses.instance_sets:
        where, installed = module, value if isinstance(value, ast.Lambda) else None
        if isinstance(value, ast.Name):  # a def nested in the method, else a plugin function it names
            installed = plugin.function_node(module, f"{scope}.{value.id}")
            if installed is None and (path := plugin.names.binding_path(module, value.id)):
                where, _, name = path.rpartition(".")
                installed = plugin.function_node(where, name)
        if installed is not None:
            out[(f"{module}.{cls}", attr, method)] = _params(plugin.index, where, installed)
    return out


def _params(index: CodeIndex, module: str, fn: FnNode | ast.Lambda) -> tuple[Param, ...]:
    return signature_of(fn.args, None, index.lines(module)).params
