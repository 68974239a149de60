"""Source-text patches: `(old, new)` string pairs a plugin applies to a host module's *text* at import.

vllm-musa keeps them in files beside its modules (`patches/vllm__v1__worker__gpu_worker.patch.py`, not
importable: the dot before `py` is no identifier), each holding `PATCHES = [(old, new), ...]`; its patcher
globs `*.patch.py`, turns the file name into the target module (`__` -> `.`), reads that module's file
and writes back `source.replace(old, new)` for every `old` it finds. Found here by parsing, never by
running: the module-level literal list or tuple of string pairs, the target from a `TARGET` /
`TARGET_MODULE` / `MODULE` string constant when the file states one, else from its name; and the patcher
(the plugin module naming the `.patch.py` files) with whether it raises on an `old` it does not find.
"""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass

from .model import PluginModel
from .similarity import block_ratio, line_tokens

SUFFIX = ".patch.py"
NEAR = 0.75  # token similarity from which a block of the host text is shown as the pair's new place
_PAIRS = "PATCHES"
_TARGET_NAMES = ("TARGET", "TARGET_MODULE", "MODULE")


@dataclass(frozen=True)
class TextPatch:
    """One `(old, new)` pair and the line it starts on in its patch file."""

    old: str
    new: str
    line: int


@dataclass(frozen=True)
class PatchFile:
    """A patch file: its path in the plugin tree, the host module its pairs rewrite, the pairs."""

    path: str
    target: str
    pairs: tuple[TextPatch, ...]
    target_line: int = 0  # the line of a stated target constant (0: the target is the file's name)


@dataclass(frozen=True)
class Patcher:
    """The plugin code that applies the pairs: where, and whether a pair it does not find raises."""

    path: str
    line: int  # the `old in source` test, else the line naming the patch files
    strict: bool  # raises (or asserts) when an `old` is not in the text, instead of skipping it


@dataclass(frozen=True)
class SourcePatches:
    files: tuple[PatchFile, ...] = ()
    patcher: Patcher | None = None


def _string(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _assigned(tree: ast.Module, names: tuple[str, ...]) -> list[tuple[str, ast.AST]]:
    """(name, value) of module-level assignments to one of `names`, in order."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.Assign):
            out += [(t.id, node.value) for t in node.targets if isinstance(t, ast.Name) and t.id in names]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id in names \
                and node.value is not None:
            out.append((node.target.id, node.value))
    return out


def _pairs(value: ast.AST) -> tuple[TextPatch, ...]:
    """The literal `(old, new)` string pairs of a list or tuple (other entries are not pairs: skipped)."""
    if not isinstance(value, ast.List | ast.Tuple):
        return ()
    out = []
    for item in value.elts:
        if isinstance(item, ast.Tuple | ast.List) and len(item.elts) == 2:
            old, new = _string(item.elts[0]), _string(item.elts[1])
            if old and new is not None:
                out.append(TextPatch(old, new, item.lineno))
    return tuple(out)


def read_patch_file(path: str, text: str) -> PatchFile | None:
    """The pairs and target of one `.patch.py` file's text (None when it parses to no pair)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    pairs = tuple(p for _, value in _assigned(tree, (_PAIRS,)) for p in _pairs(value))
    if not pairs:
        return None
    stated = [(v, value.lineno) for _, value in _assigned(tree, _TARGET_NAMES) if (v := _string(value))]
    if stated:
        target, line = stated[0]
    else:
        target, line = path.rpartition("/")[2].removesuffix(SUFFIX).replace("__", "."), 0
    return PatchFile(path, target, pairs, line)


def _skips_or_raises(tree: ast.Module) -> tuple[int, bool]:
    """(line of the `old in text` test, whether a miss raises) in the patcher's module: strict when an
    `if old not in text:` raises or an `assert old in text` stands; otherwise a miss is skipped."""
    line, strict = 0, False
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare) and \
                isinstance(node.test.ops[0], ast.In):
            return node.lineno, True
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1):
            continue
        op = node.test.ops[0]
        if isinstance(op, ast.NotIn) and any(isinstance(n, ast.Raise) for s in node.body for n in ast.walk(s)):
            return node.lineno, True
        if isinstance(op, ast.In) and not line:
            line = node.lineno
    return line, strict


def _patcher(plugin: PluginModel) -> Patcher | None:
    """The first plugin module (in name order) whose text names the `.patch.py` files."""
    for module in plugin.modules:
        if SUFFIX not in plugin.index.source(module):
            continue
        tree = plugin.index.parsed(module)
        if tree is None:
            continue
        named = next((n.lineno for n in ast.walk(tree) if (s := _string(n)) is not None and SUFFIX in s), 0)
        test, strict = _skips_or_raises(tree)
        return Patcher(plugin.index.paths[module], test or named, strict)
    return None


def find_source_patches(plugin: PluginModel, host: str) -> SourcePatches:
    """The plugin's `.patch.py` files under its packages whose target is a `host` module, and their patcher."""
    tree = plugin.index.tree
    folders = tuple(p.replace(".", "/") + "/" for p in plugin.packages)
    files = []
    for path in tree.files:
        if path.endswith(SUFFIX) and path.startswith(folders):
            found = read_patch_file(path, tree.read_text(path))
            if found is not None and (found.target == host or found.target.startswith(host + ".")):
                files.append(found)
    return SourcePatches(tuple(files), _patcher(plugin) if files else None)


def text_line(text: str, old: str) -> int:
    """The line where `old` first occurs in `text` (as `old in text` finds it), 0 when it does not."""
    at = text.find(old)
    return text.count("\n", 0, at) + 1 if at >= 0 else 0


def nearest_block(lines: list[str], old: str) -> tuple[int, str] | None:
    """(first line, text) of the block of `lines` most like `old` (as many lines, compared by tokens,
    layout ignored), when it is at least `NEAR` alike: where a pair that no longer applies would now go."""
    wanted = [line_tokens(x) for x in old.splitlines() or [old]]
    count, best, at = len(wanted), NEAR, 0
    for i in range(len(lines) - count + 1):
        block = [line_tokens(x) for x in lines[i:i + count]]
        if not block[0]:
            continue
        score = block_ratio(wanted, block)
        if score > best or (score == best and not at):
            best, at = score, i + 1
    if not at:
        return None
    return at, "\n".join(x.strip() if count == 1 else x for x in lines[at - 1:at - 1 + count])


def counterpart_block(before: list[str], after: list[str], line: int, count: int) -> tuple[int, str] | None:
    """(first line, text) in `after` of the `count` lines at `line` of `before`, by a line diff of the
    two texts: where the text a pair matched went when upstream rewrote it (None when it was deleted)."""
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    at = line - 1
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if not i1 <= at < i2:
            continue
        if op == "delete" or j1 == j2:
            return None
        if op == "equal":
            start = j1 + at - i1
        else:  # a rewritten run: the line of it most like the one matched before
            wanted = [line_tokens(before[at])]
            start = max(range(j1, j2), key=lambda j: (block_ratio(wanted, [line_tokens(after[j])]), -j))
        return start + 1, "\n".join(x.strip() if count == 1 else x for x in after[start:start + count])
    return None


__all__ = ["SUFFIX", "PatchFile", "Patcher", "SourcePatches", "TextPatch", "counterpart_block", "find_source_patches", "nearest_block", "read_patch_file",
           "text_line"]
