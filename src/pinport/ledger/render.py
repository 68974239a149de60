"""The ledger as an aligned text table, a Markdown document (EVOLUTION.md) or JSON; wording lives here."""

from __future__ import annotations

import json

from . import Cell, Column, ColumnKind, Flag, FlagKind, Ledger, Row
from .probes import AUTO, MANUAL

SAME = "="  # the same value as the column to the left
NO_MATCH = "—"  # the file is there, the regex does not match
NO_FILE = "∅"  # the file is absent
MORE = "…"  # truncated; the full value is in the JSON output
MARKERS = (
    f"{SAME} same as the column to its left   {NO_MATCH} no match   "
    f"{NO_FILE} file absent   {MORE} truncated (full values: --format json)"
)
_SECTIONS = {MANUAL: "probes", AUTO: "auto (derived from the patch surface at the newest pin)"}


def describe_flag(flag: Flag) -> str:
    """One sentence saying what the flag means for this probe."""
    pins = flag.columns
    if flag.kind is FlagKind.STALLED:
        return (
            f"changed on every earlier bump, unchanged from {pins[-2]} to {pins[-1]} "
            "(a missed port?)"
        )
    if flag.kind is FlagKind.VANISHED:
        return f"present at {pins[0]}, absent at {pins[1]}"
    if flag.kind is FlagKind.REVERTED:
        return f"{pins[2]} is back to the value of {pins[0]}, after {pins[1]} had another"
    return f"upstream changed from {pins[0]} to {pins[1]}, the plugin side did not"


def describe_column(column: Column) -> str:
    """Where a column's snapshot comes from: branch or commit, short sha, date, subject."""
    commit = f"{column.short}  {column.date}  {column.subject}".rstrip()
    if column.planned:
        return "the working tree, standing for the new pin (planned)"
    if column.kind is ColumnKind.WORKTREE:
        state = "uncommitted changes" if column.dirty else "clean"
        return f"working tree ({state}) on {commit}" if column.commit else f"working tree ({state})"
    if column.kind is ColumnKind.BRANCH:
        return f"branch {column.branch}  {commit}"
    return f"commit {commit}"


def _cells(row: Row) -> list[tuple[str, bool]]:
    """(text, is a marker) per cell: a value only where it differs from the column to its left."""
    shown = []
    previous: Cell | None = None
    for cell in row.cells:
        if cell.value is None:
            shown.append((NO_MATCH if cell.has_file else NO_FILE, True))
        elif previous is not None and previous.value == cell.value:
            shown.append((SAME, True))
        else:
            shown.append((cell.value, False))
        previous = cell
    return shown


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + MORE


def _cut_change(value: str, before: str | None, width: int) -> str:
    """Cut a value that differs from `before`; when the difference lies past the cut, show it."""
    if len(value) <= width or before is None:
        return _cut(value, width)
    same = next(
        (i for i, (a, b) in enumerate(zip(value, before, strict=False)) if a != b),
        min(len(value), len(before)),
    )
    if same < width - 1:
        return _cut(value, width)
    return _cut(MORE + value[max(0, same - 4) :], width)


def _cut_label(label: str, width: int) -> str:
    """Cut from the middle: the kind in front and the member name at the end both stay readable."""
    if len(label) <= width:
        return label
    head = width // 3
    return label[:head] + MORE + label[len(label) - (width - head - 1) :]


def _text_cells(row: Row, width: int) -> list[str]:
    values = (None, *row.values)
    return [
        text if marker else _cut_change(text, before, width)
        for (text, marker), before in zip(_cells(row), values, strict=False)
    ]


def _sections(ledger: Ledger) -> list[tuple[str, list[Row]]]:
    return [
        (_SECTIONS[s], rows)
        for s in (MANUAL, AUTO)
        if (rows := [r for r in ledger.rows if r.probe.section == s])
    ]


def _headline(ledger: Ledger) -> str:
    counts = [
        (len(ledger.columns), "pin"),
        (len(ledger.rows), "probe"),
        (len(ledger.flags), "flag"),
    ]
    pins, probes, flags = (f"{n} {word}{'s' * (n != 1)}" for n, word in counts)
    return f"{pins} ({' → '.join(ledger.pins)}), {probes}, {flags}"


def render_text(ledger: Ledger, *, cell_width: int = 18) -> str:
    """An aligned table, one column per pin; long values cut to `cell_width` characters."""
    label_width = min(48, max([len("probe")] + [len(r.probe.label) for r in ledger.rows]))
    body = [
        (
            title,
            [(_cut_label(r.probe.label, label_width), _text_cells(r, cell_width)) for r in rows],
        )
        for title, rows in _sections(ledger)
    ]
    widths = [
        max([len(pin)] + [len(cells[i]) for _, rows in body for _, cells in rows])
        for i, pin in enumerate(ledger.pins)
    ]

    def line(first: str, cells: list[str]) -> str:
        parts = [first.ljust(label_width)] + [
            c.ljust(w) for c, w in zip(cells, widths, strict=True)
        ]
        return "  ".join(parts).rstrip()

    out = [f"Evolution ledger: {_headline(ledger)}", "", line("probe", list(ledger.pins))]
    for title, rows in body:
        out.append(f"[{title}]")
        out += [line(label, cells) for label, cells in rows]
    if ledger.rows:
        out += ["", MARKERS]
    pin_width = max((len(pin) for pin in ledger.pins), default=0)
    out += ["", "columns"]
    out += [f"  {c.pin.ljust(pin_width)}  {describe_column(c)}" for c in ledger.columns]
    out += ["", "flags (advisory)" if ledger.flags else "no flags"]
    for flag in ledger.flags:
        out.append(f"  {flag.kind.value}  {flag.probe}: {describe_flag(flag)}")
        side = "host " if flag.kind is FlagKind.HOST_CHANGED else ""
        before: str | None = None
        for pin, value in zip(flag.columns, flag.values, strict=True):
            # a long value that differs from the line above is shown where it differs
            shown = NO_MATCH if value is None else _cut_change(value, before, 4 * cell_width)
            out.append(f"      {side}{pin.ljust(pin_width)}  {shown}")
            before = value
    return "\n".join(out) + "\n"


def _code(value: str) -> str:
    value = value.replace("|", "\\|")
    return f"`` {value} ``" if "`" in value else f"`{value}`"


def _md_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def render_markdown(ledger: Ledger) -> str:
    """EVOLUTION.md: the legend, one table per section with full values, and the flags."""
    out = [
        "# Evolution ledger",
        "",
        _headline(ledger) + ".",
        "",
        "## Columns",
        "",
        _md_row(["Pin", "Source", "Commit", "Date", "Subject"]),
        _md_row(["---"] * 5),
    ]
    for c in ledger.columns:
        source = {
            ColumnKind.HISTORY: "commit",
            ColumnKind.BRANCH: f"branch `{c.branch}`",
            ColumnKind.WORKTREE: "working tree"
            + (" (uncommitted changes)" * c.dirty)
            + (" as the new pin (planned)" * c.planned),
        }
        out.append(
            _md_row(
                [
                    c.pin,
                    source[c.kind],
                    f"`{c.short}`" if c.commit else "",
                    c.date,
                    c.subject.replace("|", "\\|"),
                ]
            )
        )
    for title, rows in _sections(ledger):
        out += [
            "",
            f"## {title[0].upper()}{title[1:]}",
            "",
            _md_row(["Probe", *ledger.pins]),
            _md_row(["---"] * (len(ledger.pins) + 1)),
        ]
        out += [
            _md_row([_code(r.probe.label), *(t if marker else _code(t) for t, marker in _cells(r))])
            for r in rows
        ]
    if ledger.rows:
        out += ["", MARKERS.replace(f"   {MORE} truncated (full values: --format json)", "")]
    out += ["", "## Flags", ""]
    if not ledger.flags:
        out.append("No flags.")
    for flag in ledger.flags:
        side = "host " if flag.kind is FlagKind.HOST_CHANGED else ""
        evidence = ", ".join(
            f"{side}{pin} {NO_MATCH if v is None else _code(v)}"
            for pin, v in zip(flag.columns, flag.values, strict=True)
        )
        out.append(
            f"- **{flag.kind.value}** {_code(flag.probe)}: {describe_flag(flag)}. "
            f"Evidence: {evidence}."
        )
    return "\n".join(out) + "\n"


def ledger_as_dict(ledger: Ledger) -> dict:
    """Everything the ledger holds, with full values; the JSON output."""
    return {
        "pins": list(ledger.pins),
        "columns": [
            {
                "pin": c.pin,
                "kind": c.kind.value,
                "commit": c.commit,
                "short": c.short,
                "date": c.date,
                "subject": c.subject,
                "branch": c.branch,
                "dirty": c.dirty,
            }
            for c in ledger.columns
        ],
        "rows": [
            {
                "label": r.probe.label,
                "section": r.probe.section,
                "file": r.probe.file,
                "regex": r.probe.regex,
                "host_file": r.probe.host_file,
                "host_regex": r.probe.host_regex,
                "cells": [{"value": c.value, "has_file": c.has_file} for c in r.cells],
            }
            for r in ledger.rows
        ],
        "flags": [
            {
                "kind": f.kind.value,
                "probe": f.probe,
                "columns": list(f.columns),
                "values": list(f.values),
                "message": describe_flag(f),
            }
            for f in ledger.flags
        ],
    }


def render_json(ledger: Ledger) -> str:
    return json.dumps(ledger_as_dict(ledger), indent=2, ensure_ascii=False) + "\n"
