"""Which plugin modules run at all: those imported, from the plugin's bootstrap on.

A release often still ships modules nothing imports any more (vllm-kunlun 0.11.1 keeps a V0-engine
model runner whose worker no entry point, import or class path reaches). What such a module would
break never happens; judging it as a live break is noise. A module is reached from the roots the
project declares — its entry points in any group (the host's plugin groups among them), its
`[project.scripts]`, the gate's `entry-point` and `apply` settings — and from every `__main__` and module
guarded by `if __name__ == "__main__":` (a tool meant to be run); then
through each reached module's imports (anywhere, function-local ones too), strings naming a plugin
module (a class path `"pkg.mod.Cls"` or `"pkg.mod:Cls"`, an import hook's table, a relative name
handed to `importlib.import_module` with `package=`), package walks (`pkgutil.walk_packages`,
`iter_modules`) and the parents of each module reached (importing `a.b.c` runs `a` and `a.b`). A
project declaring no root inside the plugin, or a dynamic import with no module name spelt nearby,
leaves every module reached: nothing is known to be dead.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

from ..config import Settings
from .model import PluginModel
from .project import read_entry_points

_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_RELATIVE = re.compile(r"(\.+)([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")
_DYNAMIC = frozenset({"import_module", "__import__"})
_WALKS = frozenset({"walk_packages", "iter_modules"})


def _scripts(root: Path) -> list[str]:
    """The `module:function` values of `[project.scripts]` and `[project.gui-scripts]`."""
    try:
        project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8-sig")).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    tables = (project.get(key) for key in ("scripts", "gui-scripts")) if isinstance(project, dict) else ()
    return [v for table in tables if isinstance(table, dict) for v in table.values() if isinstance(v, str)]


def declared_roots(plugin: PluginModel, settings: Settings) -> list[str]:
    """The module parts of what the project and settings declare as run: entry points of every group,
    scripts, the gate's entry point and `apply` functions."""
    root = plugin.index.tree.project_root or plugin.index.tree.root
    values = [e.value for e in read_entry_points(root)] + _scripts(root)
    values += [settings.gate.entry_point, *settings.gate.apply]
    return [v.partition(":")[0].strip() for v in values if v.strip()]


def unreached_modules(plugin: PluginModel, settings: Settings) -> frozenset[str]:
    """The scanned plugin modules no root reaches (empty when no declared root is a plugin module)."""
    modules = set(plugin.modules)
    roots = {m for r in declared_roots(plugin, settings) if (m := _longest_module(r, modules))}
    if not roots:
        return frozenset()
    roots |= {m for m in modules if m.rpartition(".")[2] == "__main__" or _runs_as_script(plugin, m)}
    reached: set[str] = set()
    todo = sorted(roots)
    while todo:
        module = todo.pop()
        if module in reached:
            continue
        reached.add(module)
        found = _edges(plugin, module, modules)
        if found is None:
            return frozenset()  # a dynamic import whose name the module does not spell: anything may run
        todo.extend(m for m in found | _parents(module, modules) if m not in reached)
    return frozenset(modules - reached)


def _runs_as_script(plugin: PluginModel, module: str) -> bool:
    """A module with a top-level `if __name__ == "__main__":` is meant to be run (`python -m pkg.tool`)."""
    tree = plugin.index.parsed(module)
    return tree is not None and any(
        isinstance(node, ast.If) and isinstance(test := node.test, ast.Compare) and isinstance(test.left, ast.Name)
        and test.left.id == "__name__" and any(isinstance(c, ast.Constant) and c.value == "__main__"
                                               for c in test.comparators)
        for node in tree.body)


def _parents(module: str, modules: set[str]) -> set[str]:
    parts = module.split(".")
    return {p for i in range(1, len(parts)) if (p := ".".join(parts[:i])) in modules}


def _longest_module(name: str, modules: set[str]) -> str:
    """The longest dotted prefix of `name` (a module, or a path to a class or function in one) that
    is a plugin module; '' if none is."""
    parts = name.split(".")
    return next((m for i in range(len(parts), 0, -1) if (m := ".".join(parts[:i])) in modules), "")


def _below(package: str, modules: set[str]) -> set[str]:
    return {m for m in modules if m.startswith(package + ".")}


def _edges(plugin: PluginModel, module: str, modules: set[str]) -> set[str] | None:
    """The plugin modules importing `module` runs or names; None for a dynamic import whose module
    the module spells nowhere (no string naming a plugin module)."""
    tree = plugin.index.parsed(module)
    if tree is None:
        return set()
    is_package = plugin.index.is_package(module)
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    named = False
    dynamic = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(m for alias in node.names if (m := _longest_module(alias.name, modules)))
        elif isinstance(node, ast.ImportFrom):
            base = _from_base(module, is_package, node)
            found.update(m for alias in node.names
                         if (m := _longest_module(f"{base}.{alias.name}" if base else alias.name, modules)))
            if base and (m := _longest_module(base, modules)):
                found.add(m)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            hits = set(_named_by(node.value, module, package, modules))
            found |= hits
            named = named or bool(hits)
        elif isinstance(node, ast.JoinedStr):
            hits = _spelt_prefix(node, modules)
            found |= hits
            named = named or bool(hits)
        elif isinstance(node, ast.Call) and (name := _callee(node.func)):
            if name in _WALKS:  # what it lists is what a dynamic import beside it loads
                found |= _below(_walked(node, module, is_package, tree, modules), modules)
                named = True
            elif name in _DYNAMIC and node.args and not isinstance(node.args[0], ast.Constant):
                dynamic = True
    return None if dynamic and not named else found


def _from_base(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    keep = len(parts) - node.level + (1 if is_package else 0)
    base = ".".join(parts[:max(keep, 0)])
    return f"{base}.{node.module}" if node.module and base else (node.module or base)


def _named_by(text: str, module: str, package: str, modules: set[str]) -> Iterator[str]:
    """The plugin module a string names: a dotted path (`pkg.mod`, `pkg.mod.Cls`, `pkg.mod:Cls`) or a
    relative one (`.mod`, resolved against the module itself and its package: `package=__name__` or
    `__package__`)."""
    text = text.strip()
    head = text.partition(":")[0].removesuffix(".")  # a prefix `"pkg.models."` names the package
    if _DOTTED.fullmatch(head) and "." in head:
        if m := _longest_module(head, modules):
            yield m
        return
    if relative := _RELATIVE.fullmatch(text):
        level, rest = len(relative[1]), relative[2]
        for base in {module, package}:
            parts = base.split(".")
            anchor = ".".join(parts[:len(parts) - level + 1]) if level - 1 < len(parts) else ""
            if anchor and (m := _longest_module(f"{anchor}.{rest}", modules)):
                yield m


def _spelt_prefix(node: ast.JoinedStr, modules: set[str]) -> set[str]:
    """An f-string starting with a plugin package's dotted name (`f"pkg.models.{name}"`): any module
    below what it spells may be meant."""
    first = node.values[0] if node.values else None
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str) and "." in first.value):
        return set()
    stem = first.value.rpartition(".")[0]
    if not _DOTTED.fullmatch(stem) or stem not in modules:
        return set()
    return _below(stem, modules)


def _callee(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _walked(call: ast.Call, module: str, is_package: bool, tree: ast.Module, modules: set[str]) -> str:
    """The package a `pkgutil` walk lists: `X.__path__` of a plugin module `X` imports, else the
    walking module's own package (`__path__`, or a path it computes)."""
    for arg in (*call.args, *(k.value for k in call.keywords)):
        for node in ast.walk(arg):
            if isinstance(node, ast.Attribute) and node.attr == "__path__":
                if target := _bound_module(tree, module, is_package, ast.unparse(node.value), modules):
                    return target
    return module if is_package else module.rpartition(".")[0]


def _bound_module(tree: ast.Module, module: str, is_package: bool, name: str, modules: set[str]) -> str:
    """The plugin module an import in `tree` binds to `name` ('' when none does)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if (alias.asname or alias.name) == name and alias.name in modules:
                    return alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _from_base(module, is_package, node)
            for alias in node.names:
                full = f"{base}.{alias.name}" if base else alias.name
                if (alias.asname or alias.name) == name and full in modules:
                    return full
    return ""
