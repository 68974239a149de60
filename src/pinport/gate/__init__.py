"""The no-GPU gate: the plugin imported, bootstrapped and verified against a real host installation.

Python API (used by `pinport gate` and by `pinport rebase --apply --gate`)::

    env = make_env("vllm", "0.33.0", cache=Cache())        # or use_python("/path/to/python", "vllm")
    result = run_gate(plugin_root, env, settings, plugin_model, static=scan_result)
    result.steps, result.report.findings, result.failed
"""

from __future__ import annotations

from .env import EnvError, GateEnv, make_env, use_python
from .findings import KINDS
from .report import render_gate
from .run import GateResult, GateStep, PatchCheck, find_entry_point, run_gate

__all__ = ["KINDS", "EnvError", "GateEnv", "GateResult", "GateStep", "PatchCheck", "find_entry_point",
           "make_env", "render_gate", "run_gate", "use_python"]
