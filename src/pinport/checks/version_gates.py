"""The plugin's own version gates: code that refuses the host version judged (pins, phase 0).

A plugin may state the host versions it supports in code rather than in a pin: `register()` raises
`RuntimeError` when `Version(vllm.__version__) >= Version("0.17.0")`, or an `assert` checks the
version on import. Past such a gate nothing of the function runs, so on a host the gate refuses the
plugin does not load at all, whatever else a port fixes. The finding sits on the gate; the bound to
move is in its test. Only tests certain from the text are judged (`plugin.version_guards`).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding, Kind, Severity
from ..plugin.version_guards import Gate, refuses
from .base import ScanContext

NAME = "version-gates"

REFUSES_HOST = Kind("PP0008", "PluginRefusesHostVersion", "{where} raises `{raised}` on {label}: its version gate "
                    "`{test}` refuses it", Severity.ERROR, None, NAME)

KINDS = (REFUSES_HOST,)


class VersionGatesCheck:
    name = NAME
    cost = 1  # relative run time (tenths of a second of a warm scan), to spread checks over two cores
    shares = ()
    drift = ()
    kinds = KINDS
    description = "no version gate of the plugin refuses the host version judged"

    def run(self, ctx: ScanContext) -> Iterator[Finding]:
        version = ctx.host.index.tree.version
        for gate in ctx.facts.version_gates:
            if refuses(gate, version):
                yield self._finding(ctx, gate)

    @staticmethod
    def _finding(ctx: ScanContext, gate: Gate) -> Finding:
        where = f"`{gate.qualname}`" if gate.qualname else f"importing `{gate.module}`"
        site = ctx.facts.plugin_line(gate.module, gate.line, gate.qualname or "<module>")
        details = (f"the test is {'true' if gate.refuses_when else 'false'} on {ctx.host.label}, so "
                   f"{'the rest of ' + where if gate.qualname else 'the module'} does not run there",)
        return Finding(REFUSES_HOST, {"where": where, "raised": gate.raised, "label": ctx.host.label,
                                      "test": gate.text}, site, subject=gate.module, details=details,
                       suggestion=f"once the plugin is ported to {ctx.host.label}, move the bound in the gate at "
                                  f"line {gate.line} so that it admits {ctx.host.label}")


__all__ = ["KINDS", "VersionGatesCheck"]
