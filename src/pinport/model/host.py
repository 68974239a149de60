"""One host version as the checks see it: its index, its resolver, how to cite a symbol, and the
derived facts several checks share (member lookup, related classes, environment flags).

Every derived fact is computed on first use and memoised on the view itself, so both runs of a
scan (judging NEW, then OLD) and every check ask each question of one host version once.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from ..findings import Location
from .binding import BOUND, Callee
from .callsites import modules_mentioning, text_lines
from .index import CodeIndex
from .inference import function_node, host_inference
from .nodes import walk_tree
from .resolve import (
    CLASS,
    EXTERNAL,
    FUNCTION,
    INERT_BASES,
    METHOD,
    MODULE,
    Resolver,
    Symbol,
    inert_member,
    own_member,
)
from .summary import ClassInfo, FunctionInfo, ParamKind
from .units import Unit, UnitWalk, call_name, module_units, spans, walk_unit

_IDENT = re.compile(r"[A-Za-z_][\w.]*")
_SETATTR = re.compile(r"setattr\(\s*self\s*,\s*([A-Za-z_]\w*)\s*,")
_CLASS_HEADER = re.compile(r"^[ \t]*class[ \t]+\w+[ \t]*\(([^)]*)\)", re.MULTILINE)
_REGISTERS = ("register_buffer", "register_parameter", "register_module")  # torch.nn.Module setters by name
_HELPER_DEPTH = 3  # how many helpers deep an argument's attributes are followed
_RELATED_LIMIT = 120  # modules searched for related classes; a bigger package is searched one level deep


def package_of(module: str) -> str:
    """Where related classes are looked for: the module's package (`vllm.v1.worker`)."""
    return module.rpartition(".")[0] or module


def _base_words(source: str) -> frozenset[str]:
    """The words of the base lists of a module's class statements."""
    return frozenset(word for match in _CLASS_HEADER.finditer(source) for word in re.findall(r"\w+", match.group(1)))


@dataclass(frozen=True)
class HostView:
    """One host version: its index, a resolver over it, how to cite a symbol, and its shared facts."""

    index: CodeIndex
    resolver: Resolver
    env_module: str = ""  # the last part of the host's environment-flag module names (a host-profile setting)
    _memo: dict[Hashable, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def label(self) -> str:
        return self.index.label

    def memo(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """A derived fact of this host version, computed once (used by model/ modules on this view)."""
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]

    # -- citing ------------------------------------------------------------------------------------
    def resolve(self, path: str) -> Symbol | None:
        return self.resolver.resolve(path)

    def location(self, sym: Symbol | None, snippet: str | None = None) -> Location | None:
        """Evidence for a symbol: its file and line in this tree, with the line's text."""
        if sym is None or not sym.module or sym.module not in self.index.paths:
            return None
        if snippet is None:
            snippet = f"module {sym.path}" if sym.kind == MODULE else self.index.line_text(sym.module, sym.line)
        return Location(self.index.paths[sym.module], sym.line, 0, sym.path, snippet)

    def def_location(self, sym: Symbol | None) -> Location | None:
        """`location`, with a function's signature (`def f(a, b=1)`) as the snippet."""
        if sym is None or not isinstance(sym.obj, FunctionInfo):
            return self.location(sym)
        return self.location(sym, snippet=f"def {sym.obj.name}{sym.obj.signature.render()}")

    # -- members -----------------------------------------------------------------------------------
    def member(self, cls: Symbol, name: str, instance: bool = True) -> Symbol | None:
        """What reading `name` on `cls` (on an instance of it, with `instance`) finds: through the MRO
        past inert bases (the `INERT_BASES` rule `Resolver.class_member` shares), an EXTERNAL symbol
        when an outside base or a class on the way serves any name (`__getattr__`, `self.__dict__`,
        `setattr(self, key, ...)`). `class_member` answers "does the class define it" instead."""
        for owner in self.resolver.mro(cls):
            if owner.kind == EXTERNAL:
                if owner.path in INERT_BASES:
                    if (supplied := inert_member(owner, name)) is not None:
                        return supplied
                    continue
                return Symbol(EXTERNAL, f"{owner.path}.{name}", "", owner=owner.path)
            info = owner.obj
            if not isinstance(info, ClassInfo):
                continue
            found = own_member(owner, info, name, instance)
            if found is not None:
                return found
            if "__getattr__" in info.methods or "__getattribute__" in info.methods or self._dynamic(owner):
                return Symbol(EXTERNAL, f"{owner.path}.{name}", "", owner=owner.path)
        return None

    def _dynamic(self, owner: Symbol) -> bool:
        """`self.__dict__`, or `setattr(self, key, ...)` with a key never read back: members are unknowable."""
        info = owner.obj
        if not isinstance(info, ClassInfo) or not owner.module:
            return False

        def build() -> bool:
            text = "\n".join(self.index.lines(owner.module)[info.line - 1:info.end_line])
            # `setattr(self, name, new)` after `getattr(self, name)` only replaces members that exist
            return "self.__dict__" in text or any(f"getattr(self, {m.group(1)}" not in text
                                                  for m in _SETATTR.finditer(text))
        return self.memo(("dynamic", owner.path), build)

    def replaced_member(self, owner_path: str, name: str) -> tuple[Symbol | None, Symbol | None]:
        """(owner symbol, its member `name`): what a patch of `owner_path.name` replaces here."""
        owner = self.resolve(owner_path)
        if owner is None or owner.kind not in (CLASS, MODULE):
            return owner, None
        if owner.kind == CLASS:
            return owner, self.resolver.class_member(owner, name)
        return owner, self.resolver.module_attr(owner.module, name)

    def resolve_annotation(self, module: str, text: str | None) -> Symbol | None:
        """The host class an annotation text names (`X`, `"X"`, `X | None`, `Optional[X]`) in a host module."""
        if not text:
            return None
        text = text.strip().strip("'\"")
        inner = re.fullmatch(r"(?:typing\.)?Optional\[(.+)\]", text)
        for part in re.split(r"\s*\|\s*", inner.group(1) if inner else text):
            if part != "None" and _IDENT.fullmatch(part):
                sym = self.resolver.resolve_in(module, part)
                return sym if sym is not None and sym.kind == CLASS else None
        return None

    def returned_class(self, sym: Symbol | None) -> Symbol | None:
        """The class a host callable produces: a class itself, or a function's return annotation."""
        if sym is None:
            return None
        if sym.kind == CLASS:
            return sym
        if sym.kind in (FUNCTION, METHOD) and isinstance(sym.obj, FunctionInfo):
            return self.resolve_annotation(sym.module, sym.obj.signature.returns)
        return None

    def calls_super(self, cls: Symbol, method: str) -> bool:
        """Whether `cls` calls the base's `method` (`super().method(`), so a patch of the base still runs:
        from its own `method`, or from the methods it dispatches to (`forward` -> `forward_native`)."""
        info = cls.obj if isinstance(cls.obj, ClassInfo) else None
        if info is None or method not in info.methods:
            return False
        text = "\n".join(self.index.lines(cls.module)[info.line - 1:info.end_line])
        return f"super().{method}(" in text or re.search(rf"super\([^)]*\)\.{re.escape(method)}\(", text) is not None

    def only_called(self, module: str, name: str, *, at_run_time: bool = False) -> bool:
        """Whether every use of the global `name` in `module` calls it (`Name(...)`, or an annotation,
        which is not evaluated there): a factory function standing in for that class works the same.
        `at_run_time` counts only the uses inside functions: where `module` defines the class, its
        module-level uses (a base, a table) ran at import, before any plugin could replace the name."""
        def build() -> bool:
            tree = self.index.parsed(module)
            if tree is None:
                return False
            calls, annotated, inside = set(), set(), set()
            for node in walk_tree(tree):
                if isinstance(node, ast.Call):
                    calls.add(id(node.func))
                for part in _annotations(node):
                    annotated.update(id(n) for n in walk_tree(part))
                if at_run_time and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                    for part in (node.body if isinstance(node.body, list) else [node.body]):
                        inside.update(id(n) for n in walk_tree(part))
            uses = [n for n in walk_tree(tree) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                    and (not at_run_time or id(n) in inside)]
            return bool(uses) and all(id(n) in calls or id(n) in annotated for n in uses)
        return self.memo(("only-called", module, name, at_run_time), build)

    def read_elsewhere_as_attribute(self, module: str, name: str) -> bool:
        """Whether a module other than `module` reads `<module>.name` other than by calling it (a
        replacement of the module attribute reaches those reads; `from module import name` binds the
        original at import and does not see it)."""
        def build() -> bool:
            for other in self.index.grep(f".{name}"):
                tree = self.index.parsed(other) if other != module else None
                if tree is None:
                    continue
                calls = {id(n.func) for n in walk_tree(tree) if isinstance(n, ast.Call)}
                if any(isinstance(n, ast.Attribute) and n.attr == name and id(n) not in calls for n in walk_tree(tree)):
                    return True
            return False
        return self.memo(("read-as-attribute", module, name), build)

    # -- related classes ---------------------------------------------------------------------------
    def related_modules(self, prefix: str) -> list[str]:
        """Modules where classes related to one in package `prefix` are looked for: it and its sub-packages."""
        depth = prefix.count(".")
        inside = [m for m in self.index.modules if m == prefix or m.startswith(prefix + ".")]
        near = [m for m in inside if m.count(".") <= depth + 2]
        return near if len(near) <= _RELATED_LIMIT else [m for m in inside if m.count(".") <= depth + 1]

    def _base_mentions(self, prefix: str) -> dict[str, set[str]]:
        """Base name -> modules (of the related ones) with a class statement listing it; one regex pass."""
        def build() -> dict[str, set[str]]:
            out: dict[str, set[str]] = {}
            for mod in self.related_modules(prefix):
                for word in self.index.module_memo(mod, "base-words", lambda mod=mod: _base_words(self.index.source(mod))):
                    out.setdefault(word, set()).add(mod)
            return out
        return self.memo(("bases", prefix), build)

    def class_index(self, prefix: str, bases: frozenset[str]) -> dict[str, list[tuple[str, str]]]:
        """Base name -> [(module, class)] for top-level classes of the related modules that list one of
        `bases` (last dotted parts); only modules whose class statements name one are loaded."""
        def build() -> dict[str, list[tuple[str, str]]]:
            out: dict[str, list[tuple[str, str]]] = {}
            mentions = self._base_mentions(prefix)
            modules = self.index.modules
            for mod in sorted(set().union(*(mentions.get(b, set()) for b in bases))):
                for name, info in modules[mod].classes.items():
                    for base in info.bases:
                        leaf = base.rpartition(".")[2]
                        if leaf in bases:
                            out.setdefault(leaf, []).append((mod, name))
            return out
        return self.memo(("classes", prefix, tuple(sorted(bases))), build)

    def subclasses(self, cls: Symbol) -> list[Symbol]:
        """Host classes under `cls`'s package whose MRO contains `cls` (transitively), by path."""
        def build() -> list[Symbol]:
            found: dict[str, Symbol] = {}
            todo = [cls]
            while todo:
                parent = todo.pop()
                leaf = parent.path.rpartition(".")[2]
                for mod, name in self.class_index(package_of(cls.module), frozenset({leaf})).get(leaf, ()):
                    sym = self.resolve(f"{mod}.{name}")
                    if sym is not None and sym.kind == CLASS and sym.path not in found and sym.path != cls.path \
                            and any(b.path == parent.path for b in self.resolver.bases(sym)):
                        found[sym.path] = sym
                        todo.append(sym)
            return [found[k] for k in sorted(found)]
        return self.memo(("subclasses", cls.path), build)

    # -- environment flags -------------------------------------------------------------------------
    @property
    def env_modules(self) -> list[str]:
        """The host's environment-flag modules (`vllm.envs`): a module named `env_module` with a lazy table."""
        def build() -> list[str]:
            modules = self.index.modules  # iterating names is cheap; summaries load on access
            return sorted(m for m in modules if m.rpartition(".")[2] == self.env_module
                          and (modules[m].lazy_exports or modules[m].has_getattr))
        return self.memo("envs", build)

    def env_flag_defined(self, module: str, name: str) -> bool:
        """Whether `module.name` exists at run time: in the lazy table or bound outside TYPE_CHECKING."""
        summary = self.index.modules.get(module)
        if summary is None:
            return False
        if summary.has_getattr and not summary.lazy_exports:
            return True  # a `__getattr__` whose table was not recognised: anything may exist
        binding = summary.bindings.get(name)
        return name in summary.lazy_exports or (binding is not None and not binding.type_checking)

    def is_env_flag_read(self, base: str, name: str) -> bool:
        """`base.name` is an environment-flag read (an upper-case name on an env module)."""
        return base in self.env_modules and name.isupper()

    def reads_env(self, var: str) -> bool:
        """Whether the host reads environment variable `var`: its envs table, else any source mentioning it."""
        if any(var in self.index.modules[m].lazy_exports for m in self.env_modules):
            return True

        def build() -> bool:  # rare: only for a variable the envs table lacks
            return any(self.index.grep(q) for q in (f'"{var}"', f"'{var}'"))
        return self.memo(("reads-env", var), build)

    def env_flag_line(self, module: str, flag: str) -> int:
        """Line of `"FLAG":` in an env module's source (evidence), else 1."""
        for i, line in enumerate(self.index.lines(module), 1):
            if f'"{flag}"' in line or f"'{flag}'" in line:
                return i
        return 1

    # -- source, for evidence and for checks that need a body ----------------------------------------
    def line_text(self, module: str, line: int) -> str:
        """The stripped text of one line of a host module ('' past its end)."""
        return self.index.line_text(module, line)

    def site(self, module: str, line: int, unit: str = "") -> Location:
        """A host location (path, line, the line's text) inside unit `unit`: a call site, a flag read."""
        return Location(self.index.paths[module], line, 0, unit, self.line_text(module, line)[:100])

    def units(self, module: str) -> list[Unit]:
        """The code units (functions, methods, module and class bodies) of a parsed host module."""
        return module_units(self.index, module)

    def walk_unit(self, module: str, unit: Unit) -> UnitWalk:
        """One walk over a unit: its calls, imports, assignments, guards (kept on the index)."""
        return walk_unit(self.index, module, unit)

    def function_node(self, sym: Symbol) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The parsed `def` of a host function or method symbol."""
        if not sym.module or not isinstance(sym.obj, FunctionInfo):
            return None
        return function_node(self.index, sym.module, sym.obj.line)

    def units_calling(self, name: str) -> list[tuple[str, Unit, int]]:
        """(module, function unit, line of its first call) for every host function calling `name(...)`:
        a text prefilter, then the parsed units of the few modules that mention it (its own `def` aside)."""
        def build() -> list[tuple[str, Unit, int]]:
            out = []
            for module in modules_mentioning(self.index, f"{name}(", self.resolver.top):
                where = [ln for ln in text_lines(self.index, module, f"{name}(")
                         if not self.line_text(module, ln).startswith(f"def {name}(")]
                for unit in self.units(module) if where else ():
                    if unit.node is None or not any(spans(unit, ln) for ln in where):
                        continue
                    lines = [c.lineno for c in self.walk_unit(module, unit).calls if call_name(c) == name]
                    if lines:
                        out.append((module, unit, min(lines)))
            return out
        return self.memo(("calling", name), build)

    # -- attributes host helpers set on an argument ---------------------------------------------
    def attributes_set_on(self, fn: Symbol, param: str, depth: int = _HELPER_DEPTH) -> frozenset[str]:
        """Attributes a host function sets on its parameter `param`: `layer.x = ...` (annotated too),
        `layer.register_buffer("x", ...)` / `register_parameter` / `register_module`, `setattr(layer,
        "x", ...)`, and what the host helpers it hands `layer` on to set (a few calls deep)."""
        def build() -> frozenset[str]:
            node = self.function_node(fn)
            if node is None:
                return frozenset()
            found = set(parameter_stores(node, param))
            unit = next((u for u in self.units(fn.module) if isinstance(u.node, ast.FunctionDef | ast.AsyncFunctionDef)
                         and u.node.lineno == node.lineno), None) if depth > 1 else None
            if unit is not None:
                found |= self.attributes_from_calls(fn.module, unit, param, depth - 1)
            return frozenset(found)
        return self.memo(("sets-on", fn.path, param, depth), build)

    def attributes_from_calls(self, module: str, unit: Unit, name: str, depth: int = _HELPER_DEPTH) -> frozenset[str]:
        """Attributes the host callables a host unit calls with its local `name` as an argument set on
        it (`create_weights(self, layer)` handing `layer` to a helper that assigns `layer.w = ...`)."""
        walk = self.walk_unit(module, unit)
        calls = [c for c in walk.calls if _passes(c, name)]
        if not calls:
            return frozenset()
        inference = host_inference(self.resolver, module, unit, walk)
        found: set[str] = set()
        for call in calls:
            callee = inference.callee(call.func)
            for param in receiving_params(callee, call, name) if callee is not None else ():
                found |= self.attributes_set_on(callee.sym, param, depth)
        return frozenset(found)

    def attributes_from_helpers(self, cls: Symbol) -> frozenset[str]:
        """Attributes host helpers set on instances of `cls` (through its MRO) when its methods hand
        them `self`: `init_state(self)` assigning `layer._x = ...`, `quant_method.create_weights(self)`
        calling `layer.register_parameter("w", ...)`. Asked only for a member no lookup finds."""
        def build() -> frozenset[str]:
            found: set[str] = set()
            for owner in self.resolver.mro(cls):
                if owner.kind != CLASS or not isinstance(owner.obj, ClassInfo) or not owner.module:
                    continue
                methods = {m.line for m in owner.obj.methods.values()}
                for unit in self.units(owner.module):
                    node = unit.node
                    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno in methods and \
                            unit.qualname.startswith(owner.path[len(owner.module) + 1:] + ".") and node.args.args:
                        found |= self.attributes_from_calls(owner.module, unit, node.args.args[0].arg)
            return frozenset(found)
        return self.memo(("helper-attributes", cls.path), build)


def _passes(call: ast.Call, name: str) -> bool:
    return any(isinstance(a, ast.Name) and a.id == name for a in (*call.args, *(k.value for k in call.keywords)))


def receiving_params(callee: Callee, call: ast.Call, name: str) -> list[str]:
    """The callee's parameters that receive the local `name` in this call (positionally or by keyword)."""
    fn = callee.sym.obj
    if not isinstance(fn, FunctionInfo) or callee.sym.kind not in (FUNCTION, METHOD):
        return []
    positional = [p.name for p in fn.signature.params if p.kind <= ParamKind.POSITIONAL_OR_KEYWORD]
    if callee.mode == BOUND and not fn.is_staticmethod:
        positional = positional[1:]
    out = []
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            break
        if isinstance(arg, ast.Name) and arg.id == name and i < len(positional):
            out.append(positional[i])
    out.extend(k.arg for k in call.keywords if k.arg and isinstance(k.value, ast.Name) and k.value.id == name)
    return out


def parameter_stores(node: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> set[str]:
    """Attributes one function sets on its parameter `param` itself (no call followed)."""
    found: set[str] = set()
    for sub in walk_tree(node):
        if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store) and isinstance(sub.value, ast.Name) \
                and sub.value.id == param:
            found.add(sub.attr)
        elif isinstance(sub, ast.Call) and len(sub.args) >= 2:
            func, key = sub.func, sub.args[0]
            if isinstance(func, ast.Attribute) and func.attr in _REGISTERS and isinstance(func.value, ast.Name) \
                    and func.value.id == param and isinstance(key, ast.Constant) and isinstance(key.value, str):
                found.add(key.value)
            elif isinstance(func, ast.Name) and func.id == "setattr" and isinstance(key, ast.Name) and \
                    key.id == param and isinstance(sub.args[1], ast.Constant) and isinstance(sub.args[1].value, str):
                found.add(sub.args[1].value)
    return found


def _annotations(node: ast.AST) -> list[ast.AST]:
    """The annotation expressions a node carries (of a variable, a parameter, a return)."""
    if isinstance(node, ast.AnnAssign):
        return [node.annotation]
    if isinstance(node, ast.arg):
        return [node.annotation] if node.annotation is not None else []
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return [node.returns] if node.returns is not None else []
    return []
