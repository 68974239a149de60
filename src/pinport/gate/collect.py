"""pytest plugin for the gate's collection step: each collection error, as data, into one JSON file.

Copied next to nothing else and loaded with `-p` by the environment's own pytest; standard
library and pytest only (pinport is not importable there).
"""

from __future__ import annotations

import json
import os

_errors: list[dict] = []
_collected: list[int] = [0]


def _last_error_line(text: str) -> str:
    lines = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    return lines[-1] if lines else (text.strip().splitlines() or [""])[-1]


def pytest_collectreport(report) -> None:
    if report.failed:
        text = str(report.longrepr)
        _errors.append({"nodeid": report.nodeid, "error": _last_error_line(text), "text": text[-4000:]})


def pytest_collection_finish(session) -> None:
    _collected[0] = len(session.items)


def pytest_sessionfinish(session, exitstatus) -> None:
    with open(os.environ["PINPORT_GATE_COLLECT_OUT"], "w", encoding="utf-8") as handle:
        json.dump({"errors": _errors, "collected": _collected[0], "exitstatus": int(exitstatus)}, handle)
