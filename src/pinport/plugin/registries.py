"""Patch targets a plugin names indirectly: by a string, or only for type checkers.

Two shapes seen in real plugins: a decorator (or a decorator factory called on the object) whose
arguments spell the host path — `@register_patch(target="vllm.mod.Cls.meth")` (vllm-rbln),
`@patch("vllm.mod", "Cls.meth")` — and a declarative patch class whose body states the target
(`target_module = "vllm.mod"`, `target_class = "Cls"`). Either way the decorated function or the
class's members end up on the host object, so discovery records them as patches of that target.
A mixin may also state its host class only for type checkers (`class Ext(Worker if TYPE_CHECKING
else object)`, or a base name bound to the host class under `if TYPE_CHECKING:` and to `object`
otherwise): at run time the host makes it part of that class, so it is judged as one.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from ..model.parse import dotted, resolve_relative

_CHECKING = ("TYPE_CHECKING", "typing.TYPE_CHECKING")

_TARGET_KEYWORDS = frozenset({"target", "target_path", "path"})
_MODULE_KEYS = frozenset({"target_module", "module_name", "target_module_name"})
_CLASS_KEYS = frozenset({"target_class", "target_cls", "class_name", "target_class_name"})
_PATH_KEYS = frozenset({"target", "target_path"})
_PATCH_WORDS = ("patch", "replace", "override")


def _text(node: ast.expr | None) -> str | None:
    """The value of a string literal, None for anything else."""
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _is_path(text: str | None) -> bool:
    return bool(text) and all(part.isidentifier() for part in text.split("."))  # type: ignore[union-attr]


def string_target(call: ast.Call, is_host: Callable[[str], bool]) -> str | None:
    """The host dotted path a registry call names, or None when it names none.

    `target="vllm.m.C.f"` (any callee); positional `("vllm.m", "C.f")` or `("vllm.m.C.f")` only when
    the callee's name says it patches (`patch`, `register_patch`, `replace`, …): a string argument of
    any other decorator (`@timed("vllm.step")`) is a label, not a target.
    """
    for kw in call.keywords:
        if kw.arg in _TARGET_KEYWORDS and _is_path(text := _text(kw.value)) and is_host(text):  # type: ignore[arg-type]
            return text
    name = dotted(call.func).rpartition(".")[2].lower()
    if not any(word in name for word in _PATCH_WORDS):
        return None
    texts = [_text(a) for a in call.args[:2]]
    if texts and _is_path(texts[0]) and is_host(texts[0]):  # type: ignore[arg-type]
        if len(texts) == 2 and _is_path(texts[1]):
            return f"{texts[0]}.{texts[1]}"
        return texts[0]
    return None


def declared_target(node: ast.ClassDef, is_host: Callable[[str], bool]) -> str | None:
    """The host path a declarative patch class states in its body (`target_module` + `target_class`,
    or one full `target` path), or None."""
    found: dict[str, str] = {}
    for stmt in node.body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else (
            stmt.target if isinstance(stmt, ast.AnnAssign) else None)
        if isinstance(target, ast.Name) and (text := _text(stmt.value)) is not None:  # type: ignore[union-attr]
            found[target.id.lower().lstrip("_")] = text
    module = next((found[k] for k in _MODULE_KEYS if k in found), None)
    if module is not None:
        cls = next((found[k] for k in _CLASS_KEYS if k in found), "")
        path = f"{module}.{cls}" if cls else module
    else:
        path = next((found[k] for k in _PATH_KEYS if k in found), "")
    return path if _is_path(path) and is_host(path) else None


def is_declaration(name: str) -> bool:
    """Whether a class-body name only describes a declarative patch (its target, its versions)."""
    key = name.lower().lstrip("_")
    return key in _MODULE_KEYS | _CLASS_KEYS | _PATH_KEYS or "version" in key


def is_type_checking(node: ast.expr) -> bool:
    return dotted(node) in _CHECKING


def checking_bases(tree: ast.Module, module: str, is_package: bool) -> dict[str, str | ast.expr]:
    """Module names bound to a class only for type checkers and to a stand-in otherwise
    (`if TYPE_CHECKING: from m import Worker as Base` … `else: Base = object`): name -> the imported
    dotted path, or the expression assigned under TYPE_CHECKING."""
    out: dict[str, str | ast.expr] = {}
    for stmt in tree.body:
        if not (isinstance(stmt, ast.If) and is_type_checking(stmt.test) and stmt.orelse):
            continue
        fallback = {t.id for s in stmt.orelse if isinstance(s, ast.Assign) for t in s.targets
                    if isinstance(t, ast.Name)}
        for sub in stmt.body:
            if isinstance(sub, ast.ImportFrom):
                base = resolve_relative(module, is_package, sub.level, sub.module)
                out.update({a.asname or a.name: f"{base}.{a.name}" for a in sub.names
                            if (a.asname or a.name) in fallback})
            elif isinstance(sub, ast.Assign):
                out.update({t.id: sub.value for t in sub.targets if isinstance(t, ast.Name) and t.id in fallback})
    return out
