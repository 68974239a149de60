"""Which routes of a host dispatcher run under the plugin's platform (vLLM CustomOp's `dispatch_forward`).

A host class that picks its implementation once (`if current_platform.is_xpu(): return
self.forward_xpu`, `model.forwarding.DispatchRoute`) runs a member only on the platforms its
guards admit. The plugin names its platform: an entry point hands the host a class path
(`def register(): return "pkg.platform.MyPlatform"`), and that class answers the platform
predicates (`is_xpu()`: `return self._enum == PlatformEnum.XPU`, with `_enum = PlatformEnum.CUDA`
on the class). A route whose guard the plugin's platform answers against is never taken, so its
member's override is reached only where host code names it.
"""

from __future__ import annotations

import ast

from ..model.forwarding import DispatchRoute
from ..model.host import HostView
from ..model.index import CodeIndex
from ..model.inference import function_node
from ..model.nodes import walk_tree
from ..model.resolve import CLASS, EXTERNAL, Resolver
from ..model.summary import ClassInfo
from .model import PluginModel

_Owner = tuple[CodeIndex, str, ClassInfo]  # where a class of the platform's MRO is read: index, module, summary


def platform_classes(plugin: PluginModel, resolver: Resolver) -> tuple[str, ...]:
    """Plugin classes an entry point returns by class-path string: the platforms the host runs on."""
    out: list[str] = []
    for entry in plugin.entry_points:
        module, _, attr = entry.value.partition(":")
        fn = plugin.function_node(module.strip(), attr.strip()) if attr else None
        for node in walk_tree(fn) if fn is not None else ():
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Constant) \
                    and isinstance(node.value.value, str):
                sym = resolver.resolve(node.value.value.replace(":", "."))
                if sym is not None and sym.kind == CLASS and sym.module in plugin.index.modules:
                    out.append(sym.path)
    return tuple(dict.fromkeys(out))


class PlatformGuards:
    """Decides dispatch guards that ask the plugin's platform (`instances`: the host objects standing
    for it, setting `platform-instances`) a predicate its class answers with a constant."""

    def __init__(self, view: HostView, plugin: PluginModel, resolver: Resolver, instances: tuple[str, ...]) -> None:
        self.view, self.plugin, self.instances = view, plugin, frozenset(instances)
        self.platforms = [self._mro(resolver, path) for path in platform_classes(plugin, resolver)] \
            if instances else []

    def possible(self, module: str, route: DispatchRoute) -> bool:
        """False when the plugin's platform answers one of the route's guards against it."""
        for guard in route.guards:
            value = self.value(module, guard.test)
            if value is not None and value is not guard.holds:
                return False
        return True

    def value(self, module: str, test: ast.expr) -> bool | None:
        """What a guard evaluates to on the plugin's platform; None when it does not ask it, or the
        answer is not a constant comparison."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.value(module, test.operand)
            return None if inner is None else not inner
        if not (isinstance(test, ast.Call) and not test.args and not test.keywords
                and isinstance(test.func, ast.Attribute) and isinstance(test.func.value, ast.Name)):
            return None
        sym = self.view.resolver.module_attr(module, test.func.value.id)
        if sym is None or sym.path not in self.instances or not self.platforms:
            return None
        answers = {_predicate(mro, test.func.attr) for mro in self.platforms}
        return answers.pop() if len(answers) == 1 else None

    def _mro(self, resolver: Resolver, path: str) -> list[_Owner]:
        """The plugin platform class's MRO, plugin classes first, then the host classes they derive from."""
        sym = resolver.resolve(path)
        out: list[_Owner] = []
        seen: set[str] = set()
        for cls in resolver.mro(sym) if sym is not None else ():
            if cls.kind == CLASS and isinstance(cls.obj, ClassInfo) and cls.module:
                out.append((self.plugin.index, cls.module, cls.obj))
            elif cls.kind == EXTERNAL and (host := self.view.resolve(cls.path)) is not None:
                for base in self.view.resolver.mro(host):
                    if base.path not in seen and isinstance(base.obj, ClassInfo) and base.module:
                        seen.add(base.path)
                        out.append((self.view.index, base.module, base.obj))
        return out


def _predicate(mro: list[_Owner], name: str) -> bool | None:
    """`name()` on an instance of the class `mro` describes, when its first definition returns
    `self.attr == Value` and the first class attribute `attr` is a dotted constant: whether they agree."""
    owner = next(((index, module, info) for index, module, info in mro if name in info.methods), None)
    if owner is None:
        return None
    index, module, info = owner
    node = function_node(index, module, info.methods[name].line)
    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))] \
        if node is not None and node.args.args else []
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return None
    test = body[0].value
    me = node.args.args[0].arg  # type: ignore[union-attr]
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
            and isinstance(test.left, ast.Attribute) and isinstance(test.left.value, ast.Name)
            and test.left.value.id == me):
        return None
    attr = next((i.attributes[test.left.attr] for _, _, i in mro if test.left.attr in i.attributes), None)
    wanted, have = _dotted(ast.unparse(test.comparators[0])), _dotted(attr.value if attr is not None else "")
    return None if not wanted or not have else wanted[-2:] == have[-2:]


def _dotted(text: str) -> list[str]:
    """The parts of a dotted name (`PlatformEnum.CUDA`); empty for anything else."""
    parts = text.strip().split(".")
    return parts if len(parts) >= 2 and all(p.isidentifier() for p in parts) else []
