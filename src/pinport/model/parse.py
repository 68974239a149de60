"""Parse one module (never import it) into a ModuleSummary.

Only statement lists are walked (module body, class bodies, the branches of module-level
if/try/with), never expression trees or function bodies: that keeps a summary close to the
cost of `ast.parse` itself. Facts that need function bodies (`self.X = ...` assignments,
`global` names) come from a regex pass over the class's source lines, which costs far less
than a tree walk; checks that need more ask the model for the parsed tree of one file.
"""

from __future__ import annotations

import ast
import re
import warnings
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Iterable, Iterator

from ..sources.tree import decode_source, normalise_newlines, python_lines
from .summary import (
    Binding,
    BindingKind,
    ClassAttr,
    ClassInfo,
    FunctionInfo,
    InstanceAttr,
    ModuleSummary,
    Param,
    ParamKind,
    Signature,
)


# group 2 is an annotation (`self.x: int = ...`); the expression is a lookahead so that the
# scan goes on inside it and finds chained targets (`self.a = self.b = None`).
# An annotation may spread over lines inside brackets (`self.x: dict[\n  K, V\n] = {}`), nested 3 deep.
def _bracketed(depth: int) -> str:
    inner = r"[^\[\]()]" if depth == 0 else rf"[^\[\]()]|{_bracketed(depth - 1)}"
    return rf"\[(?:{inner})*\]|\((?:{inner})*\)"


_SELF_ASSIGN = re.compile(rf"self\.([A-Za-z_]\w*)[ \t]*(:(?:[^=\n\[(]|{_bracketed(3)})*)?=(?!=)(?=[ \t]*(.*))")
# `self.a, self.b = f()`, also mixed with other targets: `self.groups, self.support, _ = init(...)`
_TARGET = r"\*?[A-Za-z_][\w.]*"
_SELF_TUPLE = re.compile(rf"^[ \t]*\(?((?:{_TARGET}[ \t]*,[ \t]*)+{_TARGET})([ \t]*,?[ \t]*\)?[ \t]*)=(?!=)[ \t]*(.*)",
                         re.MULTILINE)
_SELF_TUPLE_HINT = re.compile(r"self\.\w+[ \t]*,|,[ \t]*\*?self\.")
_SELF_TARGET = re.compile(r"\*?self\.(\w+)")
_GLOBAL = re.compile(r"^[ \t]+global[ \t]+([\w, \t]+)$", re.MULTILINE)
_EXPR_LIMIT = 160
# What one file may cost: `ast` holds about 200 bytes per source byte (a 5 MB module takes over
# 1 GB and half a minute), and the largest file of any vLLM release is 0.35 MB.
MAX_SOURCE_BYTES = 2 * 2**20


def dotted(node: ast.AST | None) -> str:
    """`a.b.c` for a Name/Attribute chain, the base of a subscript, else ''."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Subscript):
        return dotted(node.value) if not parts else ""
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    if isinstance(node, ast.Call):  # decorators like @functools.lru_cache(maxsize=None)
        return dotted(node.func) if not parts else ""  # `get_logger().info` is no name chain
    return ""


def _base_text(node: ast.expr) -> str:
    """A class base as `ClassInfo.bases` keeps it: its dotted text; `*name` for bases unpacked from a
    sequence built at run time (`class M(*bases)`), which no lookup resolves, so the class counts as
    one with an outside base whose members are unknown; "?" for any other expression."""
    if isinstance(node, ast.Starred):
        return f"*{dotted(node.value) or '?'}"
    return dotted(node) or "?"


def _short(node: ast.AST | None, lines: list[str]) -> str | None:
    """Source text of a default or annotation, sliced from its line (cheaper than ast.unparse)."""
    if node is None:
        return None
    if isinstance(node, ast.Name):
        return node.id
    end = getattr(node, "end_lineno", None)
    if end == node.lineno and 0 < end <= len(lines):
        line = lines[end - 1]
        if line.isascii():
            text = line[node.col_offset:node.end_col_offset]
        else:  # ast columns count UTF-8 bytes
            text = line.encode()[node.col_offset:node.end_col_offset].decode(errors="replace")
    else:
        text = f"{dotted(node.func)}(...)" if isinstance(node, ast.Call) else "..."
    return text if len(text) <= 60 else text[:57] + "..."


def signature_of(args: ast.arguments, returns: ast.AST | None, lines: list[str]) -> Signature:
    """The Signature of a def's argument list, defaults aligned the way Python aligns them."""
    params: list[Param] = []
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    for i, a in enumerate(positional):
        kind = ParamKind.POSITIONAL_ONLY if i < len(args.posonlyargs) else ParamKind.POSITIONAL_OR_KEYWORD
        default = _short(args.defaults[i - first_default], lines) if i >= first_default else None
        params.append(Param(a.arg, kind, default, _short(a.annotation, lines)))
    if args.vararg:
        params.append(Param(args.vararg.arg, ParamKind.VAR_POSITIONAL, None, _short(args.vararg.annotation, lines)))
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        params.append(Param(a.arg, ParamKind.KEYWORD_ONLY, _short(d, lines) if d is not None else None,
                            _short(a.annotation, lines)))
    if args.kwarg:
        params.append(Param(args.kwarg.arg, ParamKind.VAR_KEYWORD, None, _short(args.kwarg.annotation, lines)))
    return Signature(tuple(params), _short(returns, lines))


def function_info(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> FunctionInfo:
    return FunctionInfo(
        name=node.name,
        line=node.lineno,
        end_line=node.end_lineno or node.lineno,
        signature=signature_of(node.args, node.returns, lines),
        decorators=tuple(d for d in (dotted(x) for x in node.decorator_list) if d),
        is_async=isinstance(node, ast.AsyncFunctionDef),
    )


def resolve_relative(module: str, is_package: bool, level: int, name: str | None) -> str:
    """Absolute module path of `from <level dots><name> import ...` inside `module`."""
    if level == 0:
        return name or ""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    base = ".".join(parts)
    if name:
        return f"{base}.{name}" if base else name
    return base


def _value_text(lines: list[str], node: ast.AST) -> str:
    line = lines[node.lineno - 1] if 0 < node.lineno <= len(lines) else ""
    if not line.isascii():  # ast columns count UTF-8 bytes
        line = line.encode()[node.col_offset:].decode(errors="replace")
        return line[:_EXPR_LIMIT].strip()
    return line[node.col_offset:][:_EXPR_LIMIT].strip()


def _target_names(target: ast.expr) -> Iterator[ast.Name]:
    """The names an assignment target binds: through tuples and `*x`, not inside `a.b` or `a[i]`."""
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, ast.Tuple | ast.List):
        for elt in target.elts:
            yield from _target_names(elt)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


def _is_type_checking(test: ast.AST) -> bool:
    return dotted(test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def _string_list(node: ast.AST) -> tuple[str, ...] | None:
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        items = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return tuple(items) if len(items) == len(node.elts) else None
    return None


class _ModuleVisitor:
    """Collects bindings, classes and functions from the statement lists of one module."""

    def __init__(self, module: str, is_package: bool, lines: list[str]) -> None:
        self.module = module
        self.is_package = is_package
        self.lines = lines
        self.summary = ModuleSummary(line_count=len(lines))
        self.dicts: dict[str, ast.Dict] = {}
        self.getattr_node: ast.FunctionDef | None = None
        self.stars: list[str] = []
        # every def of each class body by id(ClassInfo), including setters and redefinitions that
        # `methods` does not keep, so their `self.X = ...` lines still count
        self.defs: dict[int, list[FunctionInfo]] = {}

    def bind(self, binding: Binding) -> None:
        old = self.summary.bindings.get(binding.name)
        # An unconditional binding beats a conditional or TYPE_CHECKING-only one of the same name.
        if old is None or not binding.type_checking or old.type_checking:
            self.summary.bindings[binding.name] = binding

    def body(self, stmts: list[ast.stmt], conditional: bool = False, tc: bool = False) -> None:
        for node in stmts:
            self.statement(node, conditional, tc)

    def statement(self, node: ast.stmt, conditional: bool, tc: bool) -> None:
        s = self.summary
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            info = function_info(node, self.lines)
            s.functions[node.name] = info
            self.bind(Binding(node.name, BindingKind.FUNCTION, node.lineno, conditional=conditional,
                              type_checking=tc))
            if node.name == "__getattr__":
                s.has_getattr = True
                self.getattr_node = node  # type: ignore[assignment]
        elif isinstance(node, ast.ClassDef):
            s.classes[node.name] = self.class_info(node)
            self.bind(Binding(node.name, BindingKind.CLASS, node.lineno, conditional=conditional,
                              type_checking=tc))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.bind(Binding(alias.asname, BindingKind.IMPORT, node.lineno, alias.name,
                                      conditional=conditional, type_checking=tc))
                else:
                    top = alias.name.split(".")[0]
                    self.bind(Binding(top, BindingKind.IMPORT, node.lineno, top, conditional=conditional,
                                      type_checking=tc))
        elif isinstance(node, ast.ImportFrom):
            base = resolve_relative(self.module, self.is_package, node.level, node.module)
            for alias in node.names:
                if alias.name == "*":
                    if not tc:
                        self.stars.append(base)
                    continue
                self.bind(Binding(alias.asname or alias.name, BindingKind.IMPORT_FROM, node.lineno,
                                  f"{base}.{alias.name}" if base else alias.name,
                                  conditional=conditional, type_checking=tc))
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            self.assignment(node, conditional, tc)
        elif isinstance(node, ast.If):
            is_tc = _is_type_checking(node.test)
            self.body(node.body, True, tc or is_tc)
            self.body(node.orelse, True, tc)
        elif isinstance(node, ast.Try | ast.TryStar):
            self.body(node.body, True, tc)
            for handler in node.handlers:
                self.body(handler.body, True, tc)
            self.body(node.orelse, True, tc)
            self.body(node.finalbody, conditional, tc)
        elif isinstance(node, ast.With | ast.AsyncWith | ast.For | ast.AsyncFor | ast.While):
            if isinstance(node, ast.For | ast.AsyncFor):
                for name in _target_names(node.target):
                    self.bind(Binding(name.id, BindingKind.ASSIGN, node.lineno, conditional=True))
            self.body(node.body, True, tc)
            self.body(getattr(node, "orelse", []), True, tc)

    def assignment(self, node: ast.Assign | ast.AnnAssign | ast.AugAssign, conditional: bool,
                   tc: bool) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        for target in targets:
            for name in _target_names(target):
                if name.id == "__all__" and value is not None:
                    names = _string_list(value)
                    if names is not None:
                        prior = self.summary.all_names or ()
                        self.summary.all_names = (prior + names) if isinstance(node, ast.AugAssign) else names
                    continue
                if isinstance(node, ast.AugAssign) and name.id in self.summary.bindings:
                    continue
                if isinstance(value, ast.Dict) and target is name:
                    self.dicts[name.id] = value
                text = _value_text(self.lines, value) if value is not None else ""
                self.bind(Binding(name.id, BindingKind.ASSIGN, node.lineno, value=text,
                                  conditional=conditional, type_checking=tc))

    def class_info(self, node: ast.ClassDef) -> ClassInfo:
        info = ClassInfo(
            name=node.name,
            line=node.lineno,
            end_line=node.end_lineno or node.lineno,
            bases=tuple(_base_text(b) for b in node.bases),
            decorators=tuple(d for d in (dotted(x) for x in node.decorator_list) if d),
            keywords=tuple((k.arg or "**", dotted(k.value) or "?") for k in node.keywords),
        )
        duplicates: list[tuple[str, int]] = []
        self.defs[id(info)] = []
        self.class_body(node.body, info, duplicates)
        info.duplicate_methods = tuple(duplicates)
        return info

    def class_body(self, stmts: list[ast.stmt], info: ClassInfo, duplicates: list[tuple[str, int]]) -> None:
        for stmt in stmts:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                fn = function_info(stmt, self.lines)
                self.defs[id(info)].append(fn)
                old = info.methods.get(stmt.name)
                # property setters reuse the getter's name; that is not a duplicate definition
                if old is not None and not fn.is_property and not any(
                        d.endswith("overload") for d in old.decorators):
                    duplicates.append((old.name, old.line))
                if old is None or not any(d.endswith((".setter", ".deleter")) for d in fn.decorators):
                    info.methods[stmt.name] = fn
            elif isinstance(stmt, ast.ClassDef):
                info.classes[stmt.name] = self.class_info(stmt)
            elif isinstance(stmt, ast.Assign | ast.AnnAssign):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    for name in _target_names(target):
                        if name.id == "__slots__" and stmt.value is not None:
                            info.slots = _string_list(stmt.value) or ()
                        ann = _short(stmt.annotation, self.lines) if isinstance(stmt, ast.AnnAssign) else None
                        val = _value_text(self.lines, stmt.value) if stmt.value is not None else ""
                        info.attributes[name.id] = ClassAttr(name.id, stmt.lineno, ann, val)
            elif isinstance(stmt, ast.If | ast.Try | ast.With):
                for branch in (getattr(stmt, "body", []), getattr(stmt, "orelse", []),
                               getattr(stmt, "finalbody", [])):
                    self.class_body(branch, info, duplicates)
                for handler in getattr(stmt, "handlers", []):
                    self.class_body(handler.body, info, duplicates)

    def assign_instance_attrs(self, info: ClassInfo, hits: list[tuple[int, str, str]]) -> None:
        """Give each method's `self.X = ...` lines (see module docstring) to the class, nested ones first."""
        for nested in info.classes.values():
            self.assign_instance_attrs(nested, hits)
        skip = [(c.line, c.end_line) for c in info.classes.values()]
        lines = [h[0] for h in hits]
        found: dict[str, list[InstanceAttr]] = {}
        for method in self.defs.get(id(info), ()):  # in source order
            lo, hi = bisect_left(lines, method.line), bisect_right(lines, method.end_line)
            for lineno, name, expr in hits[lo:hi]:
                if not any(a <= lineno <= b for a, b in skip):
                    found.setdefault(name, []).append(InstanceAttr(name, lineno, method.name, expr))
        info.instance_attrs = {k: tuple(v) for k, v in found.items()}

    def finish(self, source_text: str) -> ModuleSummary:
        s = self.summary
        s.star_imports = tuple(dict.fromkeys(self.stars))
        if s.classes and "self." in source_text:
            hits = _self_assignments(source_text)
            for info in s.classes.values():
                self.assign_instance_attrs(info, hits)
        for line, match in _line_matches(source_text, _GLOBAL, "global"):
            for name in match.group(1).split(","):
                name = name.strip()
                if name and name not in s.bindings:
                    s.bindings[name] = Binding(name, BindingKind.GLOBAL, line, conditional=True)
        if self.getattr_node is not None:
            s.lazy_exports = self.lazy_exports(self.getattr_node)
        return s

    def lazy_exports(self, fn: ast.FunctionDef) -> dict[str, str]:
        """Names a module-level `__getattr__` serves: keys of the dicts it reads, names it compares."""
        exports: dict[str, str] = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and node.id in self.dicts:
                table = self.dicts[node.id]
                for key, value in zip(table.keys, table.values, strict=True):
                    if isinstance(key, ast.Constant) and isinstance(key.value, str):
                        exports[key.value] = self.lazy_target(key.value, value)
            elif isinstance(node, ast.Compare) and len(node.ops) == 1:
                right = node.comparators[0]
                if isinstance(node.ops[0], ast.Eq) and isinstance(right, ast.Constant) and isinstance(right.value, str):
                    exports.setdefault(right.value, "")
                elif isinstance(node.ops[0], ast.In) and (names := _string_list(right)):
                    for name in names:
                        exports.setdefault(name, "")
        for name in self.summary.all_names or ():
            if name not in self.summary.bindings:
                exports.setdefault(name, "")
        return exports

    def lazy_target(self, key: str, value: ast.AST) -> str:
        """'pkg.mod.attr' from values such as '.mod:attr', 'pkg.mod', ('pkg.mod', 'attr')."""
        if isinstance(value, ast.Tuple) and (parts := _string_list(value)) and len(parts) == 2:
            mod, attr = parts
        elif isinstance(value, ast.Constant) and isinstance(value.value, str) and " " not in value.value:
            mod, _, attr = value.value.partition(":")
            attr = attr or key
        else:
            return ""
        level = len(mod) - len(mod.lstrip("."))
        base = resolve_relative(self.module, self.is_package, level, mod.lstrip(".") or None)
        return f"{base}.{attr}" if base else ""


def _with_lines(text: str, matches: Iterable[re.Match[str]]) -> Iterator[tuple[int, re.Match[str]]]:
    """Pair each match (in text order) with its 1-based line, counting newlines in C, not Python."""
    line, last = 1, 0
    for match in matches:
        line += text.count("\n", last, match.start())
        last = match.start()
        yield line, match


def _line_matches(text: str, pattern: re.Pattern[str], needle: str) -> Iterator[tuple[int, re.Match[str]]]:
    """(1-based line, match) of `pattern` at the start of each line holding `needle`, in text order: what
    `_with_lines(text, pattern.finditer(text))` yields for a MULTILINE pattern that starts with `^` and
    never crosses a line end, without trying it at every other line start."""
    line, last, pos = 1, 0, text.find(needle)
    while pos >= 0:
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        match = pattern.match(text, start, end)
        if match is not None:
            line += text.count("\n", last, start)
            last = start
            yield line, match
        pos = text.find(needle, end)


def _is_self_assignment(text: str, m: re.Match[str]) -> bool:
    """Drop `myself.x =`, `a.self.x =`, and annotation-shaped matches inside expressions.

    `buf[self.i:n] = v`, `{self.k: f(a=1)}` and `f"{self.x:>3}", end=""` look like an annotated
    assignment to the regex; a real `self.x: T = v` always starts its line.
    """
    start = m.start()
    if start and (text[start - 1].isalnum() or text[start - 1] in "_."):
        return False
    if m.group(3)[:1] in ("}", "!", ":"):  # f"{self.x=}", f"{self.x=!r}": a debug f-string
        return False
    return m.group(2) is None or not text[text.rfind("\n", 0, start) + 1:start].strip()


def _self_assignments(text: str) -> list[tuple[int, str, str]]:
    """(line, attribute, assigned expression) for every `self.X = ...` in the file, by line."""
    # The pattern starts with a literal so the regex engine can scan fast.
    hits = [(line, m.group(1), m.group(3)[:_EXPR_LIMIT].strip())
            for line, m in _with_lines(text, _SELF_ASSIGN.finditer(text)) if _is_self_assignment(text, m)]
    if _SELF_TUPLE_HINT.search(text):
        known = {(line, name) for line, name, _ in hits}  # the last element also matches one by one
        for line, m in _line_matches(text, _SELF_TUPLE, "self."):  # a line without it adds no name
            parts = [_SELF_TARGET.fullmatch(part.strip()) for part in m.group(1).split(",")]
            if not all(parts) and m.group(2)[-1:] not in (" ", "\t"):
                continue  # `f(\n    self.x, y=2)`: a keyword argument, not a mixed tuple target (`self.x, y = ...`)
            names = (t.group(1) for t in parts if t)
            hits.extend((line, name, m.group(3)[:_EXPR_LIMIT]) for name in names if (line, name) not in known)
        hits.sort()
    return hits


class RecentTrees:
    """The last trees summaries were built from, each handed once to the next full parse of its text.

    A check asking for a module's whole tree (`parse_module`) almost always asks just after its summary
    was built from that same tree: on a cold scan of vllm-rbln, 340 of 430 such requests came within the
    last 32 modules summarised. A tree weighs about 27 times its source, so only a few are kept; one
    index owns them (nothing outlives its scan)."""

    def __init__(self, limit: int = 32) -> None:
        self._trees: OrderedDict[str, ast.Module] = OrderedDict()
        self._limit = limit

    def keep(self, text: str, tree: ast.Module) -> None:
        self._trees[text] = tree
        if len(self._trees) > self._limit:
            self._trees.popitem(last=False)

    def take(self, text: str) -> ast.Module | None:
        """The kept tree of `text`, given up: the caller keeps it from now on."""
        return self._trees.pop(text, None)


def summarize(source: bytes | str, module: str, is_package: bool,
              recent: RecentTrees | None = None) -> ModuleSummary:
    """The ModuleSummary of one file's source; a file that cannot be parsed (syntax, nesting too deep
    for the parser, over the size limit) yields an empty summary saying why, so the scan goes on.
    With `recent`, the tree is kept there for the next full parse of the same text."""
    if len(source) > MAX_SOURCE_BYTES:
        return ModuleSummary(syntax_error=f"{len(source) / 2**20:.1f} MB, over the "
                                          f"{MAX_SOURCE_BYTES // 2**20} MB one file may cost to parse")
    text = decode_source(source) if isinstance(source, bytes) else normalise_newlines(source)
    try:
        tree = _parse(text)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", 0) or 0
        return ModuleSummary(syntax_error=f"line {line}: {getattr(exc, 'msg', str(exc))}", error_line=line)
    except (RecursionError, MemoryError) as exc:
        return ModuleSummary(syntax_error=f"nested too deeply for Python's parser ({type(exc).__name__})")
    if recent is not None:
        recent.keep(text, tree)
    try:
        visitor = _ModuleVisitor(module, is_package, python_lines(text))
        visitor.body(tree.body)
        return visitor.finish(text)
    except RecursionError:
        return ModuleSummary(syntax_error="nested too deeply to summarise (RecursionError)")


def parse_module(text: str, recent: RecentTrees | None = None) -> ast.Module | None:
    """The full tree of decoded source, or None when it does not parse (or is too deep to); a tree
    `recent` kept for this text is taken instead of parsing again."""
    if len(text) > MAX_SOURCE_BYTES:
        return None
    kept = recent.take(text) if recent is not None else None
    if kept is not None:
        return kept
    try:
        return _parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _parse(text: str) -> ast.Module:
    """`ast.parse`, without the warnings it prints about the analysed code (invalid escapes ...)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)
