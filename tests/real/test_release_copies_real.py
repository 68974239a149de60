"""vllm-beam-search-plugin's per-release copies of vLLM's `Scheduler.schedule` (`vendored_scheduler_v024.py`,
`_v026.py`, `_v0261.py`, … picked in `scheduler_adapter.py:_select_vendored_schedule`, which raises when no
branch matches). 0.1.3 → 0.1.4 moved the pin 0.26.0 → 0.28.0 and added `vendored_scheduler_v028.py` with a
branch for it: scanning 0.1.3 against 0.28.0 flags the selector. Whole findings asserted."""

from __future__ import annotations

import pytest

from pinport.findings import Location

ADAPTER = "vllm_beam_search/scheduler_adapter.py"
ORIGINAL = "vllm.v1.core.sched.scheduler.Scheduler.schedule"


def _scan(real_models_of, version: str, old: str, new: str):
    from pinport.scan import scan_models
    models, settings = real_models_of("vllm-beam-search-plugin", version, old, new)
    return scan_models(models, settings, checks=("release-copies",), strict=True)


def test_no_copy_for_vllm_0_28_before_0_1_4_added_one(real_models_of):
    (finding,) = _scan(real_models_of, "0.1.3", "0.26.0", "0.28.0").findings
    assert (finding.code, finding.level.value, finding.status.value, finding.subject) == (
        "PP0810", "error", "drift", ORIGINAL)
    assert finding.plugin == Location(ADAPTER, 28, 0, "_select_vendored_schedule", "raise RuntimeError(")
    assert finding.args == {"function": "_select_vendored_schedule", "stem": "vendored_scheduler",
                            "label": "vllm 0.28.0", "count": 3}
    assert (finding.old.path, finding.old.line, finding.new.path, finding.new.line) == (
        "vllm/v1/core/sched/scheduler.py", 425, "vllm/v1/core/sched/scheduler.py", 476)
    assert finding.details == (
        "no branch is taken on vllm 0.28.0: the function then raises (line 28)",
        "line 21: `release == (0, 24, 0) and (not has_num_running)` picks `vendored_scheduler_v024`",
        "line 23: `release == (0, 26, 0) and has_num_running and (not has_input_budget)` picks "
        "`vendored_scheduler_v026`",
        "line 25: `has_input_budget and release == (0, 26, 1)` picks `vendored_scheduler_v0261`",
        f"the copies' original: `{ORIGINAL}`")


@pytest.mark.parametrize(("version", "old", "new", "expected"), [
    ("0.1.4", "0.28.0", "0.31.0", [("PP0810", "error", "drift", 30)]),  # 0.1.5 added `_v031`
    ("0.1.4", "0.28.0", "0.28.0", []),  # its own pin: the `_v028` branch admits it
    ("0.1.5", "0.31.0", "0.31.0", []),  # the validated release on its own pin
])
def test_each_release_on_its_pin_and_the_next(real_models_of, version, old, new, expected):
    result = _scan(real_models_of, version, old, new)
    assert [(f.code, f.level.value, f.status.value, f.plugin.line) for f in result.findings] == expected
