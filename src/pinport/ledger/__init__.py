"""The evolution ledger: probe values across every pin the plugin ever had, with anomaly flags."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..config import Settings
from ..errors import ConfigError, SourceNotFound
from ..pins import ReadFile
from .flags import Flag, FlagKind, flag_host, flag_row
from .git import GitRepo
from .history import Column, ColumnKind, load_columns, reader, version_key
from .probes import AUTO, MANUAL, Probe, default_probes, load_probes, parse_probes

__all__ = [
    "AUTO",
    "MANUAL",
    "AutoProbes",
    "Cell",
    "Column",
    "ColumnKind",
    "Flag",
    "FlagKind",
    "HostReader",
    "Ledger",
    "Probe",
    "Row",
    "build_ledger",
    "default_probes",
    "load_probes",
    "parse_probes",
]

# The seam for automatic probes: given the newest column and a reader of its files, the
# probes derived from the plugin's patch surface there (parameter lists of overrides and
# module-function replacements, `_orig_*` targets, host import paths, fork fingerprints).
# Patch discovery (`pinport.plugin`) provides it; the ledger files its probes under "auto".
AutoProbes = Callable[[Column, ReadFile], Iterable[Probe]]

# The seam for the host cross-check: (host version, path in the host tree) -> text or None.
HostReader = Callable[[str, str], str | None]


@dataclass(frozen=True)
class Cell:
    """A probe's value in one column; `has_file` tells 'no match' from 'file absent'."""

    value: str | None
    has_file: bool


@dataclass(frozen=True)
class Row:
    probe: Probe
    cells: tuple[Cell, ...]  # aligned with Ledger.columns

    @property
    def values(self) -> tuple[str | None, ...]:
        return tuple(cell.value for cell in self.cells)


@dataclass(frozen=True)
class Ledger:
    """Columns oldest pin first, rows manual probes then auto probes (each in given order), flags."""

    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    flags: tuple[Flag, ...]

    @property
    def pins(self) -> tuple[str, ...]:
        return tuple(column.pin for column in self.columns)


def _rows(probes: Sequence[Probe], readers: Sequence[ReadFile]) -> list[Row]:
    texts: list[dict[str, str | None]] = [{} for _ in readers]  # per column: file -> text
    rows = []
    for probe in probes:
        cells = []
        for cache, read in zip(texts, readers, strict=True):
            if probe.file not in cache:
                cache[probe.file] = read(probe.file)
            text = cache[probe.file]
            cells.append(Cell(probe.evaluate(text), text is not None))
        if not any(cell.has_file for cell in cells):
            raise ConfigError(f"probe '{probe.label}': file '{probe.file}' exists in no column")
        rows.append(Row(probe, tuple(cells)))
    return rows


def _flags(row: Row, pins: Sequence[str], host: HostReader | None) -> list[Flag]:
    probe = row.probe
    flags = flag_row(probe.label, pins, row.values)
    if host is not None and probe.host_pattern is not None and len(pins) >= 2:
        old, new = (probe.evaluate_host(host(pin, probe.host_file)) for pin in pins[-2:])
        flags += flag_host(probe.label, pins, row.values, (old, new))
    return flags


def repo_has_pin(columns: Sequence[Column], pin: str) -> bool:
    return any(version_key(c.pin) == version_key(pin) for c in columns)


def build_ledger(
    repo: Path,
    settings: Settings,
    probes: Sequence[Probe],
    *,
    branch_pattern: str | None = None,
    include_worktree: bool = True,
    auto_probes: AutoProbes | None = None,
    host: HostReader | None = None,
    planned: str | None = None,
) -> Ledger:
    """Read every pin's snapshot through git objects, evaluate the probes, raise the flags.

    Args:
        repo: the plugin root (the git work tree or a folder inside it).
        probes: the manual probes, in display order.
        branch_pattern: rebase branches to include; default `settings.rebase_branch_pattern`.
        include_worktree: add the files on disk; for its pin it wins over branch and history.
        auto_probes: derives probes at the newest column; they form the "auto" section.
        host: reads host files per pin; enables HOST_CHANGED for probes with a host counterpart.
        planned: a pin the plugin is moving to (the rebase's NEW): when no column has it, the
            work tree stands for it as the last column, so what did not move yet is flagged.

    Raises:
        SourceNotFound: not a git repository, or no pin in any column.
        ConfigError: a probe whose file exists in no column.
    """
    with GitRepo(repo) as git:
        columns = load_columns(
            git, settings, branch_pattern=branch_pattern, include_worktree=include_worktree
        )
        if not columns:
            raise SourceNotFound(
                f"{repo}: no {settings.host_dist} pin in history, rebase branches or work tree"
            )
        if planned and not repo_has_pin(columns, planned) and not git.bare:
            head = git.head()
            columns.append(Column(planned, ColumnKind.WORKTREE, head, "", "the working tree as the new pin",
                                  planned=True))
        readers = [reader(git, column) for column in columns]
        probes = list(probes)
        if auto_probes is not None:
            derived = auto_probes(columns[-1], readers[-1])
            probes += [dataclasses.replace(p, section=AUTO) for p in derived]
        labels = [p.label for p in probes]
        if duplicate := next((x for x in labels if labels.count(x) > 1), None):
            raise ConfigError(f"probe '{duplicate}' is defined twice")
        ordered = sorted(probes, key=lambda p: p.section != MANUAL)  # stable within a section
        rows = _rows(ordered, readers)
    pins = [column.pin for column in columns]
    flags = tuple(flag for row in rows for flag in _flags(row, pins, host))
    return Ledger(tuple(columns), tuple(rows), flags)
