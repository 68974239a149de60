"""Plugin-load order: a general plugin installs `mod.fn = replacement` when it loads; a call that
looks `fn` up afterwards (`mod.fn(...)`, or a function-local `from mod import fn`) lands in the
replacement and is judged against it, not against the host original."""

from __future__ import annotations

import pytest

from harness import expect, run_scan
from pinport.checks.call_binding import CallsCheck

HOST = {"host/utils.py": "def get_pp_indices(num_layers, rank, size):\n    return 0, num_layers\n"}
BOOT = ("import host.utils\n\n\ndef pp_indices(num_layers, rank, size, offset=0):\n    return offset, num_layers\n\n\n"
        "def register():\n    host.utils.get_pp_indices = pp_indices\n")


@pytest.mark.parametrize(("user", "expected"), [
    # looked up on the module when it runs: the plugin's replacement takes `offset`
    ("import host.utils\n\n\ndef split():\n    return host.utils.get_pp_indices(4, 0, 1, offset=2)\n", ["no PP0302"]),
    # imported inside the function, after the plugin loaded
    ("def split():\n    from host.utils import get_pp_indices\n\n    return get_pp_indices(4, 0, 1, offset=2)\n",
     ["no PP0302"]),
    # negative twin: bound at import time of the module, which may run before the replacement exists
    ("from host.utils import get_pp_indices\n\n\ndef split():\n    return get_pp_indices(4, 0, 1, offset=2)\n",
     ["PP0302 error latent"]),
    # negative twin: the replacement itself rejects the call
    ("def split():\n    from host.utils import get_pp_indices\n\n    return get_pp_indices(4, 0, 1, shift=2)\n",
     ["PP0302 error latent"]),
])
def test_calls_after_plugin_load_are_judged_against_the_replacement(user, expected):
    expect(run_scan(HOST, HOST, {"plug/boot.py": BOOT, "plug/user.py": user}, checks=(CallsCheck(),)), expected)
