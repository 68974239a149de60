"""Host kinds and flags (#6): a class that became a factory, environment flags and TypedDict keys that vanished.

These are the host facts that break silently: `isinstance(x, Host)` raises TypeError once
`Host` is a function; `envs.VLLM_X` raises AttributeError from the envs module's lazy table
even though a TYPE_CHECKING declaration still names it; an environment variable the plugin
sets stops doing anything; a TypedDict key read by the plugin is no longer produced.

The module also holds what several checks share: one memoised pass over the plugin's code
(`plugin_facts`) and host member lookups that see past inert external bases.
"""

from __future__ import annotations

import ast
import re
import weakref
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field

from ..findings import Finding, Kind, Location, Severity
from ..model.index import CodeIndex
from ..model.parse import resolve_relative
from ..model.resolve import (
    ATTRIBUTE,
    CLASS,
    EXTERNAL,
    FUNCTION,
    INSTANCE_ATTR,
    METHOD,
    MODULE,
    Symbol,
)
from ..model.summary import ClassInfo, FunctionInfo
from ..plugin.model import PluginModel
from ..plugin.records import Guard, PatchKind
from .base import HostView, ScanContext

NAME = "host-kinds"

CLASS_BECAME_FUNCTION = Kind("PP0610", "ClassBecameFunction", "`{name}` is used as a class here ({how}), but "
                             "{label} defines it as a function", Severity.ERROR, 6, NAME)
FUNCTION_BECAME_CLASS = Kind("PP0611", "FunctionBecameClass", "the plugin replaces `{name}` with a function, but "
                             "{label} defines it as a class", Severity.ERROR, 6, NAME)
ENV_FLAG_REMOVED = Kind("PP0612", "EnvFlagRemoved", "environment flag `{name}` is read from `{module}`, which no "
                        "longer defines it in {label}: AttributeError", Severity.ERROR, 6, NAME)
ENV_VAR_NOT_READ = Kind("PP0613", "EnvVarNotRead", "the plugin sets `{name}`, which {label} no longer reads: the "
                        "setting has no effect", Severity.WARNING, 6, NAME)
TYPEDDICT_KEY_MISSING = Kind("PP0614", "TypedDictKeyMissing", "key `{name}` is read from a `{cls}`, which {label} "
                             "no longer declares", Severity.ERROR, 6, NAME)

KINDS = (CLASS_BECAME_FUNCTION, FUNCTION_BECAME_CLASS, ENV_FLAG_REMOVED, ENV_VAR_NOT_READ, TYPEDDICT_KEY_MISSING)

FnNode = ast.FunctionDef | ast.AsyncFunctionDef
# External bases that add no members a plugin would read: member lookups look past them.
INERT_BASES = {"abc.ABC", "typing.Generic", "typing.Protocol", "typing_extensions.Protocol", "builtins.object",
                "object", "enum.Enum", "typing.NamedTuple", "typing.TypedDict", "typing_extensions.TypedDict"}
_IDENT = re.compile(r"[A-Za-z_][\w.]*")
_ATTRIBUTE_GUARDS = {"AttributeError", "Exception", "BaseException"}
_GUARD_SEVERITY = {Guard.TYPE_CHECKING: Severity.INFO, Guard.TRY: Severity.WARNING, Guard.VERSION: Severity.WARNING}
_MEMO: weakref.WeakKeyDictionary[CodeIndex, dict[Hashable, object]] = weakref.WeakKeyDictionary()


def memo(index: CodeIndex, key: Hashable, build: Callable[[], object]) -> object:
    """Compute a fact about one index once, kept as long as the index lives (checks run twice a scan)."""
    table = _MEMO.setdefault(index, {})
    if key not in table:
        table[key] = build()
    return table[key]


def plugin_memo(plugin: PluginModel, key: str, build: Callable[[], object]) -> object:
    """`memo` for facts of one plugin model: its surface depends on the settings, not only the index.

    The value must not reference the index or the model (a weak-keyed table would then keep it)."""
    table: dict = memo(plugin.index, ("plugin", key), dict)  # type: ignore[assignment]
    hit = table.get(id(plugin))
    if hit is None or hit[0]() is not plugin:
        hit = table[id(plugin)] = (weakref.ref(plugin), build())
    return hit[1]


def chain(node: ast.AST | None) -> str:
    """`a.b.c` for a pure Name/Attribute chain, else ''."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    parts.append(node.id)
    return ".".join(reversed(parts))


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


# -- one pass over the plugin ---------------------------------------------------------------------
def children(node: ast.AST) -> list[ast.AST]:
    """Child nodes in field order; several times faster than ast.iter_child_nodes."""
    out: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if type(value) is list:
            out.extend(v for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


@dataclass
class SelfUse:
    """`self.X` reads (nodes in order), stores, the members used on each `self.X`, and guarded names."""

    reads: dict[str, list[ast.Attribute]] = field(default_factory=dict)
    stores: set[str] = field(default_factory=set)
    members: dict[str, dict[str, ast.Attribute]] = field(default_factory=dict)
    guarded: set[str] = field(default_factory=set)  # under hasattr/getattr-with-default/except AttributeError
    dynamic: bool = False  # `self.__dict__`, `vars(self)`, `setattr(self, name, ...)`: unverifiable


@dataclass
class FunctionFacts:
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
class PluginFacts:
    functions: list[FunctionFacts] = field(default_factory=list)
    by_name: dict[tuple[str, str], FunctionFacts] = field(default_factory=dict)  # (module, qualname)
    classes: dict[tuple[str, int], ast.ClassDef] = field(default_factory=dict)  # (module, line)
    loose: set[str] = field(default_factory=set)  # attribute names stored on anything but `self`
    class_uses: list[tuple[str, str, ast.AST, str, str]] = field(default_factory=list)  # module, unit, node, path, how
    env_sets: list[tuple[str, str, ast.AST, str, str]] = field(default_factory=list)  # module, unit, node, var, value


def _first_param(node: FnNode, in_class: bool) -> str:
    """A method's instance (or class) parameter; for a plain function only if named so (`Host.m = fn`)."""
    if any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list):
        return ""
    params = [*node.args.posonlyargs, *node.args.args]
    first = params[0].arg if params else ""
    return first if in_class or first in ("self", "cls") else ""


class _FactWalker:
    """One walk of one plugin module; handlers by node type, everything else walked generically."""

    def __init__(self, plugin: PluginModel, module: str, out: PluginFacts) -> None:
        self.plugin, self.module, self.out = plugin, module, out
        self.units: list[str] = []
        self.in_class: list[bool] = [False]
        self.frames: list[FunctionFacts] = []
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
            ast.TryStar: self.visit_Try}

    def visit(self, node: ast.AST) -> None:
        handler = self.handlers.get(type(node))
        if handler is not None:
            handler(node)
        else:
            for child in children(node):
                self.visit(child)

    def generic(self, node: ast.AST) -> None:
        for child in children(node):
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

    def _later(self, table: dict, key: str, text: str) -> None:
        if text:
            table[key] = text
            self.raw.append((table, key, text))

    def _self_frame(self, name: str) -> FunctionFacts | None:
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
        facts = FunctionFacts(self.module, self.unit, node, _first_param(node, self.in_class[-1]),
                              frozenset(_params_of(node)))
        for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs):
            facts.stores[a.arg] = 1
            self._later(facts.typed, a.arg, _annotation_text(a.annotation))
        self.frames.append(facts)
        self.in_class.append(False)
        for stmt in node.body:
            self.visit(stmt)
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
        self.generic(node)
        for f, name in saved:
            f.self_name = name

    def visit_Try(self, node: ast.Try) -> None:
        caught = set()
        for h in node.handlers:
            for t in (h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]):
                caught.add("BaseException" if t is None else chain(t).rpartition(".")[2])
        guarded = bool(caught & _ATTRIBUTE_GUARDS)
        self.guard += guarded
        for stmt in node.body:
            self.visit(stmt)
        self.guard -= guarded
        for part in (*node.handlers, *node.orelse, *node.finalbody):
            self.visit(part)

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
        self.generic(node)

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
        frame = self._self_frame(chain(args[0])) if args and isinstance(args[0], ast.Name) and self.frames else None
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

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        for item in node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]:
            if text := chain(item):
                self.uses.append((self.unit, item, text, "except clause"))
        self.generic(node)

    def _env(self, node: ast.AST, key: ast.AST, value: ast.AST) -> None:
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            self.sets.append((self.unit, node, key.value, ast.unparse(value)))


def _params_of(node: FnNode) -> set[str]:
    args = node.args
    return {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, *(x for x in (args.vararg, args.kwarg)
                                                                             if x is not None))}


def plugin_facts(plugin: PluginModel) -> PluginFacts:
    """Everything the plugin's code says about host objects, gathered in one walk and kept."""
    def build() -> PluginFacts:
        out = PluginFacts()
        for module in plugin.modules:
            tree = plugin.index.parsed(module)
            walker = _FactWalker(plugin, module, out)
            for stmt in tree.body if tree is not None else ():
                walker.top(stmt)
        return out
    return plugin_memo(plugin, "facts", build)  # type: ignore[return-value]


# -- host member lookups ----------------------------------------------------------------------------
def _own_member(owner: Symbol, info: ClassInfo, name: str, instance: bool) -> Symbol | None:
    path = f"{owner.path}.{name}"
    if name in info.methods:
        return Symbol(METHOD, path, owner.module, info.methods[name].line, info.methods[name], owner.path)
    if name in info.attributes:
        return Symbol(ATTRIBUTE, path, owner.module, info.attributes[name].line, info.attributes[name], owner.path)
    if name in info.classes:
        return Symbol(CLASS, path, owner.module, info.classes[name].line, info.classes[name], owner.path)
    if instance and (name in info.instance_attrs or name in info.slots):
        assigned = info.instance_attrs.get(name)
        return Symbol(INSTANCE_ATTR, path, owner.module, assigned[0].line if assigned else info.line,
                      assigned[0] if assigned else None, owner.path)
    return None


def host_member(view: HostView, cls: Symbol, name: str, instance: bool = True) -> Symbol | None:
    """`name` on `cls` through its MRO, past inert external bases; an EXTERNAL symbol when unknowable."""
    for owner in view.resolver.mro(cls):
        if owner.kind == EXTERNAL:
            if owner.path in INERT_BASES:
                continue
            return Symbol(EXTERNAL, f"{owner.path}.{name}", "", owner=owner.path)
        info = owner.obj
        if not isinstance(info, ClassInfo):
            continue
        found = _own_member(owner, info, name, instance)
        if found is not None:
            return found
        if "__getattr__" in info.methods or "__getattribute__" in info.methods or _sets_dynamically(view, owner):
            return Symbol(EXTERNAL, f"{owner.path}.{name}", "", owner=owner.path)
    return None


_SETATTR = re.compile(r"setattr\(\s*self\s*,\s*([A-Za-z_]\w*)\s*,")


def _sets_dynamically(view: HostView, owner: Symbol) -> bool:
    """`self.__dict__`, or `setattr(self, key, ...)` with a key never read back: members are unknowable."""
    info = owner.obj
    if not isinstance(info, ClassInfo) or not owner.module:
        return False

    def build() -> bool:
        text = "\n".join(view.index.lines(owner.module)[info.line - 1:info.end_line])
        if "self.__dict__" in text:
            return True
        # `setattr(self, name, new)` after `getattr(self, name)` only replaces members that exist
        return any(f"getattr(self, {m.group(1)}" not in text for m in _SETATTR.finditer(text))
    return memo(view.index, f"dynamic:{owner.path}", build)  # type: ignore[return-value]


def resolve_annotation(view: HostView, module: str, text: str | None) -> Symbol | None:
    """The host class an annotation text names (`X`, `"X"`, `X | None`, `Optional[X]`) in a host module."""
    if not text:
        return None
    text = text.strip().strip("'\"")
    inner = re.fullmatch(r"(?:typing\.)?Optional\[(.+)\]", text)
    for part in re.split(r"\s*\|\s*", inner.group(1) if inner else text):
        if part != "None" and _IDENT.fullmatch(part):
            sym = view.resolver.resolve_in(module, part)
            return sym if sym is not None and sym.kind == CLASS else None
    return None


def returned_class(view: HostView, sym: Symbol | None) -> Symbol | None:
    """The class a host callable produces: a class itself, or a function's return annotation."""
    if sym is None:
        return None
    if sym.kind == CLASS:
        return sym
    if sym.kind in (FUNCTION, METHOD) and isinstance(sym.obj, FunctionInfo):
        return resolve_annotation(view, sym.module, sym.obj.signature.returns)
    return None


def package_of(module: str) -> str:
    """Where related classes are looked for: the module's package (`vllm.v1.worker`)."""
    return module.rpartition(".")[0] or module


_RELATED_LIMIT = 120  # modules searched for related classes; a bigger package is searched one level deep


def related_modules(view: HostView, prefix: str) -> list[str]:
    """Modules where classes related to one in package `prefix` are looked for: it and its sub-packages."""
    depth = prefix.count(".")
    inside = [m for m in view.index.modules if m == prefix or m.startswith(prefix + ".")]
    near = [m for m in inside if m.count(".") <= depth + 2]
    return near if len(near) <= _RELATED_LIMIT else [m for m in inside if m.count(".") <= depth + 1]


_CLASS_HEADER = re.compile(r"^[ \t]*class[ \t]+\w+[ \t]*\(([^)]*)\)", re.MULTILINE)


def _base_mentions(view: HostView, prefix: str) -> dict[str, set[str]]:
    """Base name -> modules (of the related ones) with a class statement listing it; one regex pass."""
    def build() -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for mod in related_modules(view, prefix):
            for match in _CLASS_HEADER.finditer(view.index.source(mod)):
                for word in re.findall(r"\w+", match.group(1)):
                    out.setdefault(word, set()).add(mod)
        return out
    return memo(view.index, f"bases:{prefix}", build)  # type: ignore[return-value]


def class_index(view: HostView, prefix: str, bases: frozenset[str]) -> dict[str, list[tuple[str, str]]]:
    """Base name -> [(module, class)] for top-level classes of the related modules that list one of
    `bases` (last dotted parts); only modules whose class statements name one are loaded."""
    def build() -> dict[str, list[tuple[str, str]]]:
        out: dict[str, list[tuple[str, str]]] = {}
        mentions = _base_mentions(view, prefix)
        modules = view.index.modules
        for mod in sorted(set().union(*(mentions.get(b, set()) for b in bases))):
            for name, info in modules[mod].classes.items():
                for base in info.bases:
                    leaf = base.rpartition(".")[2]
                    if leaf in bases:
                        out.setdefault(leaf, []).append((mod, name))
        return out
    return memo(view.index, f"classes:{prefix}:{','.join(sorted(bases))}", build)  # type: ignore[return-value]


def subclasses(view: HostView, cls: Symbol) -> list[Symbol]:
    """Host classes under `cls`'s package whose MRO contains `cls` (transitively), by path."""
    def build() -> list[Symbol]:
        found: dict[str, Symbol] = {}
        todo = [cls]
        while todo:
            parent = todo.pop()
            leaf = parent.path.rpartition(".")[2]
            for mod, name in class_index(view, package_of(cls.module), frozenset({leaf})).get(leaf, ()):
                sym = view.resolve(f"{mod}.{name}")
                if sym is not None and sym.kind == CLASS and sym.path not in found and sym.path != cls.path and any(
                        b.path == parent.path for b in view.resolver.bases(sym)):
                    found[sym.path] = sym
                    todo.append(sym)
        return [found[k] for k in sorted(found)]
    return memo(view.index, f"subclasses:{cls.path}", build)  # type: ignore[return-value]


def env_modules(view: HostView) -> list[str]:
    """The host's environment-flag modules (`vllm.envs`): a module named `envs` with a lazy table."""
    def build() -> list[str]:
        modules = view.index.modules  # iterating names is cheap; summaries load on access
        return sorted(m for m in modules if m.rpartition(".")[2] == "envs"
                      and (modules[m].lazy_exports or modules[m].has_getattr))
    return memo(view.index, "envs", build)  # type: ignore[return-value]


def env_flag_defined(view: HostView, module: str, name: str) -> bool:
    """Whether `module.name` exists at run time: in the lazy table or bound outside TYPE_CHECKING."""
    summary = view.index.modules.get(module)
    if summary is None:
        return False
    if summary.has_getattr and not summary.lazy_exports:
        return True  # a `__getattr__` whose table was not recognised: anything may exist
    binding = summary.bindings.get(name)
    return name in summary.lazy_exports or (binding is not None and not binding.type_checking)


def is_env_flag_read(view: HostView, base: str, name: str) -> bool:
    """For the imports check: `base.name` is an environment-flag read that EnvFlagRemoved reports."""
    return base in env_modules(view) and name.isupper()


def host_reads_env(view: HostView, var: str) -> bool:
    """Whether the host reads environment variable `var`: its envs table, else any source mentioning it."""
    if any(var in view.index.modules[m].lazy_exports for m in env_modules(view)):
        return True

    def build() -> bool:  # rare: only for a variable the envs table lacks
        quoted = (f'"{var}"', f"'{var}'")
        return any(q in view.index.source(m) for m in view.index.modules for q in quoted)
    return memo(view.index, f"reads-env:{var}", build)  # type: ignore[return-value]


def _is_typeddict(view: HostView, cls: Symbol) -> bool:
    return any(s.path.rpartition(".")[2] == "TypedDict" or (
        isinstance(s.obj, ClassInfo) and any(b.rpartition(".")[2] == "TypedDict" for b in s.obj.bases))
        for s in view.resolver.mro(cls))


# -- the check -----------------------------------------------------------------------------------
class HostKindsCheck:
    name = NAME
    drift = (6,)
    kinds = KINDS
    description = "host names keep their kind, environment flags and TypedDict keys the plugin uses still exist"

    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        facts = plugin_facts(ctx.plugin)
        yield from self._class_uses(ctx, facts)
        yield from self._replacements(ctx)
        yield from self._env_flags(ctx)
        yield from self._env_sets(ctx, facts)
        yield from self._typeddict_keys(ctx, facts)

    @staticmethod
    def _site(ctx: ScanContext, module: str, unit: str, node: ast.AST) -> Location:
        line = getattr(node, "lineno", 0)
        return Location(ctx.plugin.index.paths[module], line, getattr(node, "col_offset", 0), unit,
                        ctx.plugin.index.line_text(module, line))

    def _class_uses(self, ctx: ScanContext, facts: PluginFacts) -> Iterator[Finding]:
        seen: set[tuple[str, str, str]] = set()
        for module, unit, node, path, how in facts.class_uses:
            sym = ctx.host.resolve(path)
            if sym is None or sym.kind != FUNCTION or (module, unit, path) in seen:
                continue
            seen.add((module, unit, path))
            made = returned_class(ctx.host, sym)
            yield Finding(CLASS_BECAME_FUNCTION, {"name": path.rpartition(".")[2], "how": how, "label": ctx.host.label},
                          self._site(ctx, module, unit, node), subject=path,
                          suggestion=f"test against `{made.path}`, the class the factory returns" if made else
                          "test against the class the factory returns",
                          **ctx.evidence(path, host_sym=sym))

    def _replacements(self, ctx: ScanContext) -> Iterator[Finding]:
        for patch in ctx.plugin.surface.patches:
            if patch.function is None or patch.kind not in (PatchKind.ASSIGNMENT, PatchKind.MEMBER):
                continue
            owner = ctx.host.resolve(patch.owner)
            if owner is None or owner.kind != MODULE:
                continue
            member = ctx.host.resolver.module_attr(owner.module, patch.name)
            if member is not None and member.kind == CLASS:
                yield Finding(FUNCTION_BECAME_CLASS, {"name": patch.target, "label": ctx.host.label}, patch.site,
                              subject=patch.target, severity=_GUARD_SEVERITY.get(patch.guard),
                              suggestion="patch the class's methods instead of replacing it with a function",
                              **ctx.evidence(patch.target, host_sym=member))

    def _env_flags(self, ctx: ScanContext) -> Iterator[Finding]:
        modules = env_modules(ctx.host)
        seen: set[tuple[str, str, str]] = set()
        for use in ctx.plugin.surface.uses:
            for module in modules:
                if not use.path.startswith(module + "."):
                    continue
                flag = use.path[len(module) + 1:].split(".")[0]
                key = (use.site.path, use.site.unit, flag)
                if not flag.isupper() or key in seen or env_flag_defined(ctx.host, module, flag):
                    continue
                seen.add(key)
                subject = f"{module}.{flag}"
                other = ctx.other.index.modules.get(module)
                there = ctx.other.location(Symbol(ATTRIBUTE, subject, module, _table_line(ctx.other, module, flag)))
                yield Finding(ENV_FLAG_REMOVED, {"name": flag, "module": module, "label": ctx.host.label}, use.site,
                              subject=subject, severity=_GUARD_SEVERITY.get(use.guard),
                              suggestion=f"find what replaced `{flag}` in {ctx.host.label} (a config field?)",
                              **({"old": there, "new": None} if ctx.judging_new and other else
                                 {"old": None, "new": there if other else None}))

    def _env_sets(self, ctx: ScanContext, facts: PluginFacts) -> Iterator[Finding]:
        prefix = ctx.settings.host.upper() + "_"
        for module, unit, node, var, value in facts.env_sets:
            if not var.startswith(prefix) or host_reads_env(ctx.host, var) or not host_reads_env(ctx.other, var):
                continue
            yield Finding(ENV_VAR_NOT_READ, {"name": var, "label": ctx.host.label}, self._site(ctx, module, unit, node),
                          subject=var, details=(f"plugin sets {var}={value}",),
                          suggestion=f"find what selects this behaviour in {ctx.host.label} and force it there")

    def _typeddict_keys(self, ctx: ScanContext, facts: PluginFacts) -> Iterator[Finding]:
        for fn in facts.functions:
            seen: set[tuple[str, str]] = set()
            for node, var, key, is_get in fn.keys:
                cls_path = fn.typed.get(var, "")
                if not ctx.plugin.names.is_host(cls_path) or (cls_path, key) in seen:
                    continue
                here, there = ctx.host.resolve(cls_path), ctx.other.resolve(cls_path)
                if here is None or there is None or here.kind != CLASS or there.kind != CLASS or not _is_typeddict(
                        ctx.host, here):
                    continue
                seen.add((cls_path, key))
                if host_member(ctx.host, here, key, instance=False) is not None:
                    continue
                found = host_member(ctx.other, there, key, instance=False)
                if found is None or found.kind == EXTERNAL:
                    continue
                subject = f"{cls_path}.{key}"
                yield Finding(TYPEDDICT_KEY_MISSING, {"name": key, "cls": cls_path.rpartition(".")[2],
                                                      "label": ctx.host.label},
                              self._site(ctx, fn.module, fn.qualname, node), subject=subject,
                              severity=Severity.WARNING if is_get else None,
                              details=("read with .get(): silently None",) if is_get else (),
                              suggestion=f"read what {ctx.host.label} puts in the dict instead",
                              **ctx.evidence(subject, host_sym=here, other_sym=found))


def _table_line(view: HostView, module: str, flag: str) -> int:
    """Line of `"FLAG":` in an envs module's source (evidence), else 1."""
    for i, line in enumerate(view.index.lines(module), 1):
        if f'"{flag}"' in line or f"'{flag}'" in line:
            return i
    return 1


__all__ = ["KINDS", "HostKindsCheck", "is_env_flag_read"]
