"""The ordered registry of checks. Where is check #N? The `drift` column below says.

| check        | module                   | drift numbers |
|--------------|--------------------------|---------------|
| imports      | imports.py               | #4, #5, #6    |
| signatures   | override_signature.py    | #1, #2        |
| aliases      | aliases.py               | aliases, patch targets, deletions |
| calls        | call_binding.py          | #3, #7        |
| defaults     | call_defaults.py         | #7 defaults the plugin's calls rely on |
| factories    | factories.py             | #7 keywords forwarded to constructors |
| values       | closed_values.py         | #7 strings in a host's closed sets |
| callers      | replaced_callers.py      | #1 host callers of replaced members |
| attributes   | instance_attributes.py   | #9            |
| chains       | attribute_chains.py      | #9 typed attribute chains |
| bypass       | bypass.py                | #10           |
| undefined    | undefined.py             | config-gated gaps, duplicate methods |
| host-kinds   | host_kinds.py            | #6 kind changes, env flags, TypedDict keys |
| load-timing  | load_timing.py           | #11           |
| forks        | forks.py                 | #8 forked files |
| copied-lines | copied_lines.py          | #8 second sites |
| source-patches | source_patches.py      | #8 source-text patches |
| release-copies | release_copies.py      | #8 per-release copies picked by version |
| mirrors      | mirrors.py               | #12           |
| version-gates | version_gates.py        | pins: the plugin's own gate refuses the host version |

The rows are in registry order (`CHECKS`), the order checks run and are listed in;
tests/test_architecture.py keeps the two in step.
"""

from __future__ import annotations

from ..errors import ConfigError
from .aliases import AliasesCheck
from .attribute_chains import ChainsCheck
from .base import Check, ScanContext
from .bypass import BypassCheck
from .call_binding import CallsCheck
from .call_defaults import DefaultsCheck
from .closed_values import ClosedValuesCheck
from .copied_lines import CopiedLinesCheck
from .factories import FactoriesCheck
from .forks import ForksCheck
from .host_kinds import HostKindsCheck
from .imports import ImportsCheck
from .instance_attributes import AttributesCheck
from .load_timing import LoadTimingCheck
from .mirrors import MirrorsCheck
from .override_signature import SignaturesCheck
from .release_copies import ReleaseCopiesCheck
from .replaced_callers import ReplacedCallersCheck
from .source_patches import SourcePatchesCheck
from .undefined import UndefinedCheck
from .version_gates import VersionGatesCheck

CHECKS: tuple[Check, ...] = (
    ImportsCheck(), SignaturesCheck(), AliasesCheck(), CallsCheck(), DefaultsCheck(), FactoriesCheck(),
    ClosedValuesCheck(), ReplacedCallersCheck(), AttributesCheck(), ChainsCheck(),
    BypassCheck(), UndefinedCheck(), HostKindsCheck(), LoadTimingCheck(), ForksCheck(), CopiedLinesCheck(),
    SourcePatchesCheck(), ReleaseCopiesCheck(), MirrorsCheck(), VersionGatesCheck(),
)


def select_checks(names: tuple[str, ...] | list[str] | None = None) -> tuple[Check, ...]:
    """The checks named (all when empty), in registry order; an unknown name is a ConfigError."""
    if not names:
        return CHECKS
    known = {c.name for c in CHECKS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(f"unknown check '{unknown[0]}' (known: {', '.join(c.name for c in CHECKS)})")
    return tuple(c for c in CHECKS if c.name in names)


__all__ = ["CHECKS", "Check", "ScanContext", "select_checks"]
