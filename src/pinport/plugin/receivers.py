"""The classes a host call's receiver can hold, from what the host declares (the facts behind the reachability rule).

A host call `x.name(...)` reaches a plugin override only when `x` may be an instance of the plugin's class.
Inference types what it can; a receiver it cannot type counts as reaching. Host code often says more than
inference reads: a parameter annotated with another package's class (`weight: torch.Tensor`), an attribute
declared in the class body or a method (`drafter: A | B | None`), set from such a parameter (`self.buffer =
buffer`), from another package's construction (`context.socket(...)` off `context = Context()`), from a
factory (a method or function) whose returns are constructions (`self.speculator = init_speculator(...)`),
read through a property, a local copy (`comm = self.comm`), a tuple item or `with` target of an annotated
host function, a module-level name, a host module; or a type test around the call narrows it (`if
isinstance(x, A):`, `assert isinstance(x, A | B)`). Each gives a set of classes; a receiver whose classes
are known, none of which the plugin's instance can be, cannot reach it. An attribute set anywhere we do not
follow (by other host code off another object, by the plugin where its store may land) stays unknown.

Classes are symbols: CLASS (the host's), MODULE (no instance) or EXTERNAL (another package's). Another
package's value may be the plugin's instance only when it is of a package the plugin's classes derive from
(an `nn.Module` annotation may be the plugin's layer), of the standard library (`Any`, `object`,
containers), or of the host itself (a path the host does not define); what another package's value gives
(a method's result, arithmetic, an item) is that package's.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable, Iterable
from typing import NamedTuple

from ..model.callsites import modules_mentioning, modules_subclassing
from ..model.host import HostView
from ..model.index import CodeIndex
from ..model.inference import function_node, module_lookup, split_top
from ..model.nodes import walk_tree
from ..model.resolve import CLASS, EXTERNAL, FUNCTION, METHOD, MODULE, Resolver, Symbol
from ..model.summary import BindingKind, ClassAttr, ClassInfo, FunctionInfo
from ..model.units import Unit, iter_units, local_imports, module_units, walk_unit

Held = tuple[Symbol, ...]
Opened = Callable[[str, str], bool]  # (attribute, host class or module) the plugin may store in itself
_DEPTH = 8  # factories and copies followed (a cycle guard: deeper counts as unknown)
_OPEN_TOPS = frozenset({"builtins", "typing_extensions", "__future__"}) | frozenset(sys.stdlib_module_names)


def receiver_classes(view: HostView, module: str, unit: Unit, node: ast.expr, opened: Opened) -> Held | None:
    """The classes the receiver of a host call may be an instance of, as the host declares them (None:
    unknown); `opened(attr, holder)` tells whether the plugin may store in `attr` of an instance of the host
    class `holder` (or of the host module `holder`): what it stores there may be anything."""
    if not isinstance(node, ast.Name | ast.Attribute | ast.Call | ast.BinOp | ast.Subscript):
        return None
    return _Classes(view, opened).value(module, unit, node, 0)


def narrowed_classes(view: HostView, module: str, unit: Unit, node: ast.expr) -> Held | None:
    """The classes a type test narrows a receiver to where it is called: inside `if isinstance(x, A | B):`
    (or `if c and isinstance(x, (A, B)):`), or after `assert isinstance(x, A)` in the same block (None: no
    such test, or one naming other than classes)."""
    want = ast.dump(node)
    parents: dict[int, ast.AST] = {}
    for root in unit.body:
        for n in walk_tree(root):
            for child in ast.iter_child_nodes(n):
                parents[id(child)] = n
    at: ast.AST = node
    while (up := parents.get(id(at))) is not None:
        tests: list[ast.expr] = []
        if isinstance(up, ast.If) and any(at is stmt for stmt in up.body):
            tests = [up.test]
        for block in (getattr(up, "body", None), getattr(up, "orelse", None), getattr(up, "finalbody", None)):
            if isinstance(block, list) and any(at is stmt for stmt in block):
                tests += [stmt.test for stmt in block[:block.index(at)] if isinstance(stmt, ast.Assert)]
        for test in tests:
            for part in test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]:
                if isinstance(part, ast.Call) and isinstance(part.func, ast.Name) and part.func.id == "isinstance" \
                        and len(part.args) == 2 and ast.dump(part.args[0]) == want:
                    return _type_test_classes(view, module, unit, part.args[1])
        at = up
    return None


def _type_test_classes(view: HostView, module: str, unit: Unit, node: ast.expr) -> Held | None:
    """The classes an `isinstance` test's second argument names (`A`, `(A, B)`, `A | B`)."""
    parts = list(node.elts) if isinstance(node, ast.Tuple) else [node]
    out: list[Symbol] = []
    while parts:
        part = parts.pop()
        if isinstance(part, ast.BinOp) and isinstance(part.op, ast.BitOr):
            parts += [part.left, part.right]
            continue
        sym = _dotted(view, module, _local(view, module, unit), part)
        if sym is None or sym.kind not in (CLASS, EXTERNAL):
            return None
        out.append(sym)
    return tuple(out)


def outside_packages(view: HostView, owner: Symbol, family_bases: Iterable[Iterable[str]]) -> frozenset[str]:
    """The other packages whose classes the plugin's instance may be one of: those the host class it
    overrides derives from and those of each plugin class's bases (`family_bases`; `torch` for an
    `nn.Module`)."""
    paths = {c.path for c in view.resolver.mro(owner) if c.kind != CLASS}
    for bases in family_bases:
        paths.update(bases)
    return frozenset(p.partition(".")[0] for p in paths)


def is_protocol(resolver: Resolver, cls: Symbol) -> bool:
    """Whether a host class is a `typing.Protocol`: an instance of any class with its members is one."""
    return any(c.kind == EXTERNAL and c.path.rpartition(".")[2] == "Protocol" for c in resolver.mro(cls))


def may_hold_outside(sym: Symbol, outside: Iterable[str], host_tops: Iterable[str]) -> bool:
    """Whether a value of another package's class `sym` may be the plugin's instance: `outside` names the
    packages the plugin's classes derive from; the standard library and the host stay open."""
    top = sym.path.partition(".")[0]
    return top in _OPEN_TOPS or top in set(outside) or top in set(host_tops)


def annotation_classes(view: HostView, text: str | None, module: str, local: dict[str, str] | None = None) -> Held | None:
    """The classes an annotation admits (`A`, `"A"`, `A | B | None`, `Optional[A]`, `Union[A, B]`); None
    when one part is anything else (a generic, a type variable, a callable type)."""
    if not text:
        return None
    text = text.strip().strip("'\"")
    for prefix in ("Optional[", "typing.Optional[", "Union[", "typing.Union["):
        if text.startswith(prefix) and text.endswith("]"):
            parts = split_top(text[len(prefix):-1], ",")
            break
    else:
        parts = split_top(text, "|")
    lookup = module_lookup(view.resolver, module, local)
    out: list[Symbol] = []
    for part in (p.strip().strip("'\"") for p in parts):
        if part == "None":
            continue
        if not part.replace(".", "").replace("_", "").isalnum():
            return None
        head, *rest = part.split(".")
        sym = lookup(head)
        for name in rest:
            sym = view.resolver.member(sym, name) if sym is not None else None
        if sym is None or sym.kind not in (CLASS, EXTERNAL):
            return None
        out.append(sym)
    return tuple(out)


class _Classes:
    """One question's walk over host declarations: `opened(attr, holder)` tells where the plugin stores
    itself (what it stores may be anything); a local met again while its own assignments are followed adds nothing
    (`x = x.view(...)`); past `_DEPTH` steps the answer is unknown."""

    def __init__(self, view: HostView, opened: Opened) -> None:
        self.view, self.opened = view, opened
        self.naming: set[tuple[str, str, str]] = set()

    def attribute(self, module: str, cls_name: str, attr: str, depth: int) -> Held | None:
        """The classes `self.attr` of a host class can hold: its declared annotation in the class body
        (`attr: T`) of the class or a base, else what every assignment to it in the class, its bases and
        its host subclasses stores. None when one is unknown."""
        view = self.view
        cls = view.resolve(f"{module}.{cls_name}")
        if cls is None or cls.kind != CLASS or depth > _DEPTH:
            return None
        mro = view.resolver.mro(cls)
        for owner in mro:  # the declaration every store is written against, the plugin's too
            declared = owner.obj.attributes.get(attr) if isinstance(owner.obj, ClassInfo) else None
            if declared is not None and declared.annotation:
                return annotation_classes(view, declared.annotation, owner.module)
            if (in_method := self._declared(owner, attr)) is not None:
                return in_method
        member = view.resolver.class_member(cls, attr)
        if member is not None and member.kind == METHOD and isinstance(member.obj, FunctionInfo) \
                and member.obj.is_property:
            return self._factory(module, cls_name, attr, depth + 1)  # a property: what it returns
        class_level = member is not None and (member.kind in (METHOD, CLASS) or isinstance(member.obj, ClassAttr)
                                              and member.obj.value.strip() not in ("", "None"))
        if class_level or self.opened(attr, cls.path) or _stored_off_others(view, attr):
            return None  # a class-level value, an attribute the plugin or other host code may set
        out: list[Symbol] = []
        stores = 0
        for owner in (*mro, *inheriting(view, cls, "")[1:]):
            if not isinstance(owner.obj, ClassInfo) or not owner.module:
                continue
            for assigned in owner.obj.instance_attrs.get(attr, ()):
                held = self._stored(owner, assigned.method, assigned.line, attr, depth)
                if held is None:
                    return None
                out += held
                stores += 1
        return tuple(out) if stores else None  # never set in these classes: set where we do not look

    def _declared(self, owner: Symbol, attr: str) -> Held | None:
        """What a declaration `self.attr: T` (with or without a value) in a method of `owner` that sets the
        attribute admits (None: no such declaration, or one of unknown classes)."""
        info = owner.obj
        if not isinstance(info, ClassInfo) or not owner.module:
            return None
        for method in sorted({a.method for a in info.instance_attrs.get(attr, ())}):
            fn = info.methods.get(method)
            unit = _function_unit(self.view, owner.module, fn) if fn is not None else None
            for node in walk_tree(unit.node) if unit is not None and unit.node is not None else ():
                if isinstance(node, ast.AnnAssign) and _is_self_attr(node.target, unit, attr):
                    return annotation_classes(self.view, ast.unparse(node.annotation), owner.module,
                                              _local(self.view, owner.module, unit))
        return None

    def _stored(self, owner: Symbol, method: str, line: int, attr: str, depth: int) -> Held | None:
        """What one `self.attr = value` (or `self.attr: T = value`) statement of a method of `owner` stores."""
        fn = owner.obj.methods.get(method) if isinstance(owner.obj, ClassInfo) else None
        unit = _function_unit(self.view, owner.module, fn) if fn is not None else None
        if unit is None or unit.node is None:
            return None
        for node in walk_tree(unit.node):
            if not isinstance(node, ast.Assign | ast.AnnAssign) or node.lineno != line:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if not any(_is_self_attr(t, unit, attr) or isinstance(t, ast.Attribute) and t.attr == attr
                       and isinstance(t.value, ast.Name) and t.value.id == "self" for t in targets):
                continue  # (`self` may be a local of a static factory: `self = Cls.__new__(Cls)`)
            if isinstance(node, ast.AnnAssign):
                return annotation_classes(self.view, ast.unparse(node.annotation), owner.module,
                                          _local(self.view, owner.module, unit))
            return self.value(owner.module, unit, node.value, depth + 1) if node.value is not None else None
        return None

    def value(self, module: str, unit: Unit, node: ast.expr, depth: int) -> Held | None:
        """The classes the value of an expression in a host unit can be an instance of (None: unknown)."""
        if depth > _DEPTH:
            return None
        if isinstance(node, ast.Constant) and node.value is None:
            return ()
        if isinstance(node, ast.IfExp):
            return _union(self.value(module, unit, node.body, depth), self.value(module, unit, node.orelse, depth))
        if isinstance(node, ast.BinOp | ast.Subscript):  # the left operand's `__add__`, `__getitem__`: its package's
            left = self.value(module, unit, node.left if isinstance(node, ast.BinOp) else node.value, depth + 1)
            return left if left is not None and all(s.kind == EXTERNAL for s in left) else None
        if isinstance(node, ast.Name):
            return self._name(module, unit, node.id, depth)
        if isinstance(node, ast.Attribute) and unit.cls and _is_self_attr(node, unit, node.attr):
            return self.attribute(module, unit.cls, node.attr, depth + 1)
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        if isinstance(func, ast.Attribute) and unit.cls and _is_self_attr(func, unit, func.attr):
            return self._factory(module, unit.cls, func.attr, depth + 1)
        if isinstance(func, ast.Attribute):
            receiver = self.value(module, unit, func.value, depth + 1)
            if receiver is not None and all(s.kind == EXTERNAL for s in receiver):
                return receiver  # what a method of another package's value gives is that package's
        if isinstance(func, ast.Name) and (nested := _nested_def(unit, func.id)) is not None:
            return annotation_classes(self.view, ast.unparse(nested.returns), module, _local(self.view, module, unit)) \
                if nested.returns is not None else None
        return self._called(module, unit, func, None, depth)

    def _called(self, module: str, unit: Unit, func: ast.expr, item: int | None, depth: int) -> Held | None:
        """What a call of `func` (a dotted name) gives: a host class its instance, another package's callable
        a value of that package (`torch.softmax(...)`, `Context()`), a host function its return annotation (with
        `item`, that element of a `tuple[...]`)."""
        sym = _dotted(self.view, module, _local(self.view, module, unit), func)
        if sym is None:
            return None
        if item is None and sym.kind in (CLASS, EXTERNAL):
            return (sym,)
        if sym.kind != FUNCTION or not isinstance(sym.obj, FunctionInfo) or not sym.module:
            return None
        returns = sym.obj.signature.returns
        if item is not None:
            returns = _tuple_item(returns, item)
        elif not returns:  # an unannotated factory: what each of its returns gives
            unit = _function_unit(self.view, sym.module, sym.obj)
            return self._returned(sym.module, unit, depth + 1) if unit is not None else None
        return annotation_classes(self.view, returns, sym.module)

    def _name(self, module: str, unit: Unit, name: str, depth: int) -> Held | None:
        """A bare name in a unit: a parameter by its annotation (never rebound), else a local by what each
        assignment to it gives (a tuple unpacked from a host function by that element of its annotation)."""
        walk = walk_unit(self.view.index, module, unit)
        fn = unit.node
        if fn is None and unit.qualname != "<module>":
            return None
        key = (module, unit.qualname, name)
        if key in self.naming:
            return ()  # met again while its own assignments are followed: adds nothing new
        assigned = [(line, col, value, ann) for line, col, n, value, ann in walk.assigned if n == name]
        local = _local(self.view, module, unit)
        imported = self._imported(local[name], depth) if name in local else ()  # (a conditional import may go with
        if name in walk.shadowed and imported is not None:  # an assignment: `if HAS_X: import x.y as z` / `else:
            imported = _union(imported, self._shadowing(module, unit, name))  # z = Placeholder()`)
        if imported is None:
            return None
        params = {a.arg: a for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)} if fn else {}
        if not assigned and name not in params:
            return imported if name in local or name in walk.shadowed else \
                self._global(module, name, depth) if fn is not None else None
        if name in params:  # by its annotation, and what the body rebinds it to (`x = x.float()`)
            first = fn.args.args[0].arg if unit.cls and fn.args.args and fn is not None and not any(
                isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list) else ""
            param = params[name]
            declared = annotation_classes(self.view, ast.unparse(param.annotation), module, local) \
                if param.annotation is not None and name != first else None
            if declared is None:
                return None
            imported = (*imported, *declared)
        self.naming.add(key)
        try:
            out: list[Symbol] = list(imported)
            for line, col, value, ann in assigned:
                if ann is not None:
                    held = annotation_classes(self.view, ast.unparse(ann), module, _local(self.view, module, unit))
                elif isinstance(value, ast.expr):
                    held = self.value(module, unit, value, depth + 1)
                else:
                    held = self._unpacked(module, unit, name, line, col)
                if held is None:
                    return None
                out += held
            return tuple(out)
        finally:
            self.naming.discard(key)

    def _shadowing(self, module: str, unit: Unit, name: str) -> Held | None:
        """What the parameters of defs nested in a unit that take a name admit, by their annotations
        (`def fn(x, capturer: Capturer = capturer)`); None when one is unannotated or an except handler
        binds it."""
        out: list[Symbol] = []
        for node in (n for root in unit.body for n in walk_tree(root)):
            if isinstance(node, ast.ExceptHandler) and node.name == name:
                return None
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) or node is unit.node:
                continue
            a = node.args
            for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg):
                if arg is None or arg.arg != name:
                    continue
                held = annotation_classes(self.view, ast.unparse(arg.annotation), module, _local(self.view, module, unit)) \
                    if arg.annotation is not None and arg not in (a.vararg, a.kwarg) else None
                if held is None:
                    return None
                out += held
        return tuple(out)

    def _global(self, module: str, name: str, depth: int) -> Held | None:
        """A module-level name of a host module: what each of its module-level bindings gives."""
        index = self.view.index
        binding = index.modules[module].bindings.get(name) if module in index.modules else None
        if binding is None or binding.kind not in (BindingKind.ASSIGN, BindingKind.IMPORT, BindingKind.IMPORT_FROM) \
                or depth > _DEPTH or self.opened(name, module) or name in _rebound_globals(index, module):
            return None  # a def or class (no instance), rebound by a function (`global x`), or set by the plugin
        loose = next((u for u in module_units(index, module) if u.qualname == "<module>"), None)
        return self._name(module, loose, name, depth + 1) if loose is not None else None

    def _imported(self, path: str, depth: int) -> Held | None:
        """What an imported name gives: a host module (which holds no instance), another package's name (a value
        of that package), a host module's module-level name what its own bindings give."""
        index = self.view.index
        if path.partition(".")[0] not in self.view.resolver.tops:
            return (Symbol(EXTERNAL, path, ""),)
        if path in index.modules:
            return (Symbol(MODULE, path, path, 1),)
        module, _, name = path.rpartition(".")
        return self._global(module, name, depth + 1)

    def _entered(self, module: str, unit: Unit, name: str, line: int) -> Held | None:
        """`with cm(...) as name`: what a host `@contextmanager` function yields, by its `Iterator[T]` annotation."""
        for node in (n for root in unit.body for n in walk_tree(root)):
            if not isinstance(node, ast.With | ast.AsyncWith):
                continue
            for item in node.items:
                var = item.optional_vars
                if isinstance(var, ast.Name) and var.id == name and var.lineno == line \
                        and isinstance(item.context_expr, ast.Call):
                    sym = _dotted(self.view, module, _local(self.view, module, unit), item.context_expr.func)
                    if sym is None or sym.kind != FUNCTION or not isinstance(sym.obj, FunctionInfo) or not any(
                            d.rpartition(".")[2] == "contextmanager" for d in sym.obj.decorators):
                        return None
                    return annotation_classes(self.view, _yielded(sym.obj.signature.returns), sym.module)
        return None

    def _unpacked(self, module: str, unit: Unit, name: str, line: int, col: int) -> Held | None:
        """`a, b = fn(...)`: the element of a host function's `tuple[A, B]` return annotation `name` takes;
        `with cm(...) as a`: what the context manager yields."""
        for node in (n for root in unit.body for n in walk_tree(root)):
            if isinstance(node, ast.Assign) and node.lineno == line and node.col_offset == col \
                    and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple) \
                    and isinstance(node.value, ast.Call):
                names = [e.id if isinstance(e, ast.Name) else None for e in node.targets[0].elts]
                if name in names and not any(isinstance(e, ast.Starred) for e in node.targets[0].elts):
                    return self._called(module, unit, node.value.func, names.index(name), _DEPTH)
        return self._entered(module, unit, name, line)

    def _factory(self, module: str, cls_name: str, method: str, depth: int) -> Held | None:
        """What `self.method(...)` returns, for a method of a host class: its return annotation, else the
        union of what each `return` gives (a bare `return` nothing)."""
        view = self.view
        cls = view.resolve(f"{module}.{cls_name}")
        sym = view.resolver.class_member(cls, method, instance=True) if cls is not None and cls.kind == CLASS else None
        if sym is None or sym.kind != METHOD or not isinstance(sym.obj, FunctionInfo) or not sym.module:
            return None
        if sym.obj.signature.returns:
            return annotation_classes(view, sym.obj.signature.returns, sym.module)
        owner = view.resolve(sym.owner) if sym.owner else None
        unit = _function_unit(view, owner.module, sym.obj) if owner is not None else None
        return self._returned(sym.module, unit, depth) if unit is not None else None

    def _returned(self, module: str, unit: Unit, depth: int) -> Held | None:
        """The union of what each `return` of a host function gives (a bare `return` nothing)."""
        if unit.node is None or depth > _DEPTH:
            return None
        out: list[Symbol] = []
        for node in _own_returns(unit.node):
            held = self.value(module, unit, node.value, depth) if node.value is not None else ()
            if held is None:
                return None
            out += held
        return tuple(out)


def _stored_off_others(view: HostView, attr: str) -> bool:
    """Whether host code stores `x.attr` off anything but `self` (`runner.drafter = d`), or names it as a
    string (`setattr(x, "attr", v)`): the attribute may then hold what that code stores."""
    index = view.index

    def build(module: str) -> bool:
        tree = index.parsed(module)
        if tree is None:
            return True
        for n in walk_tree(tree):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(
                n, ast.AnnAssign | ast.AugAssign) else []
            if any(isinstance(t, ast.Attribute) and t.attr == attr and not (
                    isinstance(t.value, ast.Name) and t.value.id == "self") for t in targets):
                return True
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr" \
                    and len(n.args) >= 2 and isinstance(n.args[1], ast.Constant) and n.args[1].value == attr:
                return True
        return False
    modules = {m for text in (f".{attr}", f'"{attr}"', f"'{attr}'") for m in modules_mentioning(index, text,
                                                                                               view.resolver.top)}
    return any(index.module_memo(m, ("stored-off-others", attr), lambda m=m: build(m)) for m in sorted(modules))


def _rebound_globals(index: CodeIndex, module: str) -> frozenset[str]:
    """The names a host module's functions rebind (`global x`): what the module binds them to is not all."""
    def build() -> frozenset[str]:
        tree = index.parsed(module)
        return frozenset(n for g in walk_tree(tree) if isinstance(g, ast.Global) for n in g.names) \
            if tree is not None else frozenset()
    return index.module_memo(module, ("rebound-globals",), build)


def _union(*parts: Held | None) -> Held | None:
    return None if any(p is None for p in parts) else tuple(s for p in parts for s in p)  # type: ignore[union-attr]


def _local(view: HostView, module: str, unit: Unit) -> dict[str, str]:
    """The names a unit imports inside its body."""
    return local_imports(walk_unit(view.index, module, unit), module, view.index.is_package(module))


def _nested_def(unit: Unit, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """A def of that name directly in a unit's body (a local helper)."""
    return next((n for n in unit.node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                 and n.name == name), None) if unit.node is not None else None


def _yielded(text: str | None) -> str | None:
    """T of a generator's `Iterator[T]`, `Generator[T, ...]` return annotation."""
    text = (text or "").strip()
    head, _, rest = text.partition("[")
    if head.rpartition(".")[2] in ("Iterator", "Generator", "AsyncIterator", "AsyncGenerator") and text.endswith("]"):
        return split_top(rest[:-1], ",")[0].strip()
    return None


def _tuple_item(text: str | None, item: int) -> str | None:
    """The `item`-th element of a `tuple[A, B, ...]` annotation (None when it is no such tuple)."""
    text = (text or "").strip()
    for prefix in ("tuple[", "Tuple[", "typing.Tuple["):
        if text.startswith(prefix) and text.endswith("]"):
            parts = [p.strip() for p in split_top(text[len(prefix):-1], ",")]
            return parts[item] if item < len(parts) and "..." not in parts else None
    return None


def _own_returns(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Return]:
    """The `return` statements of a def itself (not of defs or lambdas nested in it)."""
    out: list[ast.Return] = []
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return):
            out.append(node)
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            todo.extend(ast.iter_child_nodes(node))
    return out


def _dotted(view: HostView, module: str, local: dict[str, str], func: ast.expr) -> Symbol | None:
    """What a dotted name (`Cls`, `mod.fn`, `pkg.Thing`) denotes as a host unit sees it."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return None
    sym = module_lookup(view.resolver, module, local)(func.id)
    for name in reversed(parts):
        sym = view.resolver.member(sym, name) if sym is not None else None
    return sym


def _function_unit(view: HostView, module: str, fn: FunctionInfo) -> Unit | None:
    """The unit of a host function or method (found by the line its def starts at)."""
    node = function_node(view.index, module, fn.line)
    return next((u for u in module_units(view.index, module) if u.node is node), None) \
        if node is not None else None


def _is_self_attr(node: ast.expr, unit: Unit, attr: str) -> bool:
    """`self.attr` in a method (`self` its first parameter)."""
    me = unit.node.args.args[0].arg if unit.node is not None and unit.node.args.args else ""
    return isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name) \
        and bool(me) and node.value.id == me


def inheriting(view: HostView, owner: Symbol, name: str) -> list[Symbol]:
    """The host class and its host subclasses that inherit its member `name` (from the summaries)."""
    resolver = view.resolver
    out, todo, seen = [owner], [owner], {owner.path}
    while todo:
        short = todo.pop().path.rpartition(".")[2]
        for module in modules_subclassing(view.index, short, resolver.top):
            classes = [(module, n, c) for n, c in view.index.modules[module].classes.items()]
            while classes:
                prefix, cls_name, info = classes.pop()
                classes.extend((f"{prefix}.{cls_name}", n, c) for n, c in info.classes.items())
                if not any(b.rpartition(".")[2] == short for b in info.bases):
                    continue
                sym = view.resolve(f"{prefix}.{cls_name}")
                if sym is None or sym.path in seen or owner.path not in {c.path for c in resolver.mro(sym)}:
                    continue
                seen.add(sym.path)
                if name not in info.methods:
                    out.append(sym)
                    todo.append(sym)
    return out


class Store(NamedTuple):
    """One plugin store into `x.attr`: the plugin class whose method makes it ("" outside one), whether `x`
    is that method's `self` (else it may be any object), and whether the value is `self` (an instance of
    that class; else it may be anything)."""

    cls: str
    on_self: bool
    of_self: bool


def plugin_stores(index: CodeIndex, modules: Iterable[str], attr: str) -> tuple[Store, ...] | None:
    """Each plugin store of something other than `None` in an attribute `attr`; None when plugin code names
    the attribute as a string other than to read it (`setattr(x, "attr", value)`): it may store anything."""
    out: list[Store] = []
    for module in modules:
        if attr not in index.source(module):
            continue
        tree = index.parsed(module)
        if tree is None or _names_as_string(tree, attr):
            return None
        for unit in iter_units(tree):
            fn = unit.node
            me = fn.args.args[0].arg if unit.cls and fn is not None and fn.args.args and not any(
                isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list) else None
            for node in (n for root in unit.body for n in walk_tree(root)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                    node, ast.AnnAssign | ast.AugAssign) else []
                value = getattr(node, "value", None)
                if isinstance(value, ast.Constant) and value.value is None:
                    continue
                of_self = isinstance(value, ast.Name) and value.id == me
                out += [Store(f"{module}.{unit.cls}" if unit.cls else "", isinstance(t.value, ast.Name)
                              and t.value.id == me, of_self)
                        for t in targets if isinstance(t, ast.Attribute) and t.attr == attr]
    return tuple(out)


def _names_as_string(tree: ast.Module, attr: str) -> bool:
    """Whether a module spells an attribute's name as a string other than to read or test it (`getattr(x,
    "attr")`, `hasattr`), as a table's key or item (`d["attr"]`) or in a comparison."""
    inert: set[int] = set()
    for n in walk_tree(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("getattr", "hasattr") \
                and len(n.args) >= 2:
            inert.add(id(n.args[1]))
        elif isinstance(n, ast.Dict):
            inert.update(id(k) for k in n.keys if k is not None)
        elif isinstance(n, ast.Subscript):
            inert.add(id(n.slice))
        elif isinstance(n, ast.Compare):
            inert.update(id(c) for c in (n.left, *n.comparators))
        elif isinstance(n, ast.Constant) and n.value == attr and id(n) not in inert:
            return True
    return False
