"""A plugin unit's upstream counterpart decides what became of the lines copied into it.

A line copied into a patched method (or into a plugin class that copies a host class of the same
name) came from that member upstream, not from whichever host file happens to hold a similar line:
`param.data.copy_(loaded_weight)` in a copied `weight_loader` is judged against upstream's
`weight_loader`, never against `weight_utils.py`'s `param.data.copy_(tmp_param)`. Inside the
counterpart a line is unchanged when NEW still has it, changed when NEW has a close rewrite
anywhere in the member (moved lines included), removed only when it has none. A rewrite is a
line OLD's member does not have: a line both keep is itself, not another line's new form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from ..model.host import HostView
from ..model.resolve import CLASS, Symbol
from ..model.summary import FunctionInfo
from .model import PluginModel
from .records import PatchKind
from .similarity import line_tokens, token_ratio
from .uses import plugin_class_info

_ALIAS = re.compile(r"^self\.([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([A-Za-z_][A-Za-z0-9_]*)$")
_REWRITE = 0.6  # token similarity for "NEW rewrote this line" inside the counterpart


@dataclass(frozen=True)
class Counterpart:
    """The upstream member a plugin unit copies, at OLD and at NEW (lines stripped, first line number)."""

    module: str
    old_path: str
    old_start: int
    old_lines: tuple[str, ...]
    new_path: str  # "" when NEW no longer has the member
    new_start: int
    new_lines: tuple[str, ...]

    @cached_property
    def squashed(self) -> tuple[list[str], set[str]]:
        """OLD lines (in order) and NEW lines with all whitespace removed: the cheap first test."""
        return [_squash(x) for x in self.old_lines], {_squash(x) for x in self.new_lines}

    @cached_property
    def aliases(self) -> set[str]:
        return _aliases(self.old_lines) | _aliases(self.new_lines)

    @cached_property
    def new_forms(self) -> list[tuple[str, ...]]:
        """NEW lines as alias-normalised tokens (built only when a copied line changed)."""
        return [_normal(line_tokens(x), self.aliases) for x in self.new_lines]

    @cached_property
    def rewrites(self) -> list[int]:
        """Indices of the NEW lines OLD's member lacks (modulo layout): the candidate new forms."""
        old = set(self.squashed[0])
        return [j for j, x in enumerate(self.new_lines) if _squash(x) not in old]


def _squash(text: str) -> str:
    return "".join(text.split())


def _aliases(lines: tuple[str, ...]) -> set[str]:
    """Attributes a member sets straight from a same-named local (`self.n = n`): the two are one value."""
    return {m.group(1) for x in lines if (m := _ALIAS.match(x)) and m.group(1) == m.group(2)}


def _normal(toks: list[str], aliases: set[str]) -> tuple[str, ...]:
    out: list[str] = []
    i = 0
    while i < len(toks):
        if toks[i] == "self" and i + 2 < len(toks) and toks[i + 1] == "." and toks[i + 2] in aliases:
            out.append(toks[i + 2])
            i += 3
            continue
        out.append(toks[i])
        i += 1
    return tuple(out)


def match_in_counterpart(text: str, part: Counterpart) -> tuple[int, str, int, str, float] | None:
    """(OLD line, OLD text, NEW line or 0, NEW text, score) when `text` copies a line of the counterpart
    at OLD that NEW changed or removed; None when NEW keeps it or the line is the plugin's own."""
    if part.old_lines == part.new_lines or text in part.new_lines:
        return None  # the member did not change, or NEW still has the line as it is
    old_squashed, new_squashed = part.squashed
    mine_squashed = _squash(text)
    if mine_squashed in new_squashed or mine_squashed not in old_squashed:
        return None  # NEW keeps it (modulo layout), or it is not a line of this member: the plugin's own
    old_index = old_squashed.index(mine_squashed)
    mine = _normal(line_tokens(text), part.aliases)
    new_forms = part.new_forms
    if mine in new_forms:
        return None  # NEW still writes it (perhaps elsewhere in the member, or through an alias)
    if not part.new_path:
        return None  # the member itself is gone: the signatures check reports that once
    scored = [(token_ratio(list(mine), list(new_forms[j]), _REWRITE), -j) for j in part.rewrites if new_forms[j]]
    score, neg = max(scored, default=(0.0, 0))
    if score >= _REWRITE:
        return part.old_start + old_index, part.old_lines[old_index], part.new_start - neg, part.new_lines[-neg], 1.0
    return part.old_start + old_index, part.old_lines[old_index], 0, "", 1.0


def _member_lines(view: HostView, sym: Symbol | None) -> tuple[str, int, tuple[str, ...]]:
    if sym is None or not isinstance(sym.obj, FunctionInfo) or sym.module not in view.index.paths:
        return "", 0, ()
    fn = sym.obj
    lines = view.index.lines(sym.module)[fn.line - 1:fn.end_line]
    return view.index.paths[sym.module], fn.line, tuple(x.strip() for x in lines)


def _counterpart(old: HostView, new: HostView, old_sym: Symbol | None, new_sym: Symbol | None) -> Counterpart | None:
    old_path, old_start, old_lines = _member_lines(old, old_sym)
    if not old_lines or old_sym is None:
        return None
    new_path, new_start, new_lines = _member_lines(new, new_sym)
    return Counterpart(old_sym.module, old_path, old_start, old_lines, new_path, new_start, new_lines)


def unit_counterparts(plugin: PluginModel, old: HostView, new: HostView,
                      surface: set[str]) -> dict[tuple[str, str], Counterpart]:
    """(plugin module, unit) -> the upstream member it copies: the member a patch replaces, or the
    same-named method of a same-named class in a host module the plugin touches."""
    out: dict[tuple[str, str], Counterpart] = {}
    for patch in plugin.surface.patches:
        if patch.function is None or patch.kind is PatchKind.ALIAS:
            continue
        part = _counterpart(old, new, old.replaced_member(patch.owner, patch.name)[1],
                            new.replaced_member(patch.owner, patch.name)[1])
        if part is not None:
            out.setdefault((patch.plugin_module, patch.site.unit), part)
    defined_in: dict[str, list[str]] = {}  # class name -> surface modules defining it at OLD
    for host_module in sorted(surface):
        for name in old.index.modules[host_module].classes:
            defined_in.setdefault(name, []).append(host_module)
    for module in plugin.modules:
        summary = plugin.index.modules.get(module)
        for name in sorted(summary.classes) if summary is not None else ():
            info = plugin_class_info(plugin.index, module, name)
            for host_module in defined_in.get(name, ()):
                old_cls, new_cls = old.resolve(f"{host_module}.{name}"), new.resolve(f"{host_module}.{name}")
                if info is None or old_cls is None or old_cls.kind != CLASS:
                    continue
                for method in sorted(info.methods):
                    new_member = new.resolver.class_member(new_cls, method) \
                        if new_cls is not None and new_cls.kind == CLASS else None
                    part = _counterpart(old, new, old.resolver.class_member(old_cls, method), new_member)
                    if part is not None:
                        out.setdefault((module, f"{name}.{method}"), part)
                break
    return out
