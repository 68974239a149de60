from __future__ import annotations

import json
import re

from pinport.ledger import AUTO, Cell, Column, ColumnKind, Flag, FlagKind, Ledger, Probe, Row
from pinport.ledger.render import render_json, render_markdown, render_text

PINS = [f"0.{minor}.0" for minor in range(8, 20)]  # 12 columns


def column(pin: str, i: int) -> Column:
    if pin == PINS[-1]:
        return Column(pin, ColumnKind.WORKTREE, "f" * 40, "2024-02-01", "wip", dirty=True)
    if pin == PINS[-2]:
        return Column(
            pin, ColumnKind.BRANCH, "e" * 40, "2024-01-31", "port", branch="rebase/vllm_v0.18"
        )
    return Column(
        pin, ColumnKind.HISTORY, f"{i:02d}" * 20, f"2024-01-{i + 1:02d}", f"bump to {pin}"
    )


LONG = "batch_descriptors: list[BatchDescriptor], cudagraph_runtime_mode: CUDAGraphMode"


def ledger(flags: tuple[Flag, ...] = ()) -> Ledger:
    columns = tuple(column(pin, i) for i, pin in enumerate(PINS))
    shape = [Cell(None, False)] * 6 + [Cell("(2, n)", True)] * 3 + [Cell("(n, 2)", True)] * 3
    params = [Cell(None, True)] * 2 + [Cell(f"{LONG}, v{i}", True) for i in range(10)]
    auto = [Cell("a|b", True)] * 12
    rows = (
        Row(Probe("fca.kv_cache_shape", "a.py", "x"), tuple(shape)),
        Row(Probe("runner.capture_cudagraphs.params", "r.py", "x"), tuple(params)),
        Row(Probe("Runner.forward", "r.py", "x", section=AUTO), tuple(auto)),
    )
    return Ledger(columns, rows, flags)


FLAGS = (
    Flag(
        FlagKind.STALLED,
        "fca.kv_cache_shape",
        ("0.14.0", "0.15.0", "0.16.0"),
        ("(2, n)", "(x)", "(x)"),
    ),
    Flag(FlagKind.VANISHED, "runner.capture_cudagraphs.params", ("0.18.0", "0.19.0"), (LONG, None)),
)


def test_text_table_stays_aligned_with_many_columns() -> None:
    text = render_text(ledger(), cell_width=12)
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("probe "))
    shape = next(line for line in lines if line.startswith("fca.kv_cache_shape"))
    params = next(line for line in lines if line.startswith("runner.capture_cudagraphs.params"))
    for pin in PINS:  # every header pin starts where its column's cells start
        at = header.index(pin)
        assert shape[at - 2 : at] == "  " and params[at - 2 : at] == "  "
    assert re.split(r"\s{2,}", shape)[1:] == ["∅"] * 6 + ["(2, n)", "=", "=", "(n, 2)", "=", "="]
    assert "—" in params and "batch_descr…" in params and LONG not in params
    assert max(len(line) for line in lines if line.startswith(("probe ", "fca", "runner"))) < 200
    assert "[probes]" in lines and any(line.startswith("[auto") for line in lines)


def test_text_legend_and_flags() -> None:
    text = render_text(ledger(FLAGS))
    assert "  0.8.0   commit 00000000  2024-01-01  bump to 0.8.0" in text
    assert "  0.18.0  branch rebase/vllm_v0.18  eeeeeeee  2024-01-31  port" in text
    assert "  0.19.0  working tree (uncommitted changes) on ffffffff  2024-02-01  wip" in text
    assert "flags (advisory)" in text
    assert (
        "  STALLED  fca.kv_cache_shape: " in text
        and "  VANISHED  runner.capture_cudagraphs" in text
    )
    assert "      0.19.0  —" in text  # the vanished value
    assert "no flags" in render_text(ledger())


def test_json_keeps_full_values() -> None:
    data = json.loads(render_json(ledger(FLAGS)))
    assert data["pins"] == PINS
    assert data["columns"][-2] == {
        "pin": "0.18.0",
        "kind": "branch",
        "commit": "e" * 40,
        "short": "eeeeeeee",
        "date": "2024-01-31",
        "subject": "port",
        "branch": "rebase/vllm_v0.18",
        "dirty": False,
    }
    params = data["rows"][1]
    assert params["cells"][2] == {"value": f"{LONG}, v0", "has_file": True}
    assert params["cells"][0] == {"value": None, "has_file": True}
    assert data["rows"][2]["section"] == "auto"
    assert data["flags"][1] == {
        "kind": "VANISHED",
        "probe": "runner.capture_cudagraphs.params",
        "columns": ["0.18.0", "0.19.0"],
        "values": [LONG, None],
        "message": "present at 0.18.0, absent at 0.19.0",
    }


def test_markdown_ledger() -> None:
    text = render_markdown(ledger(FLAGS))
    assert text.startswith("# Evolution ledger\n")
    assert "| 0.18.0 | branch `rebase/vllm_v0.18` | `eeeeeeee` | 2024-01-31 | port |" in text
    assert "| 0.19.0 | working tree (uncommitted changes) | `ffffffff` | 2024-02-01 | wip |" in text
    assert f"`{LONG}, v9`" in text  # full values
    assert "| `Runner.forward` | `a\\|b` | = |" in text  # pipes escaped inside cells
    assert "## Auto (derived" in text
    assert (
        "- **VANISHED** `runner.capture_cudagraphs.params`: present at 0.18.0, absent at 0.19.0."
        in text
    )
    assert "No flags." in render_markdown(ledger())


