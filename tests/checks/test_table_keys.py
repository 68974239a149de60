"""A plugin class used only as a key of a module table that is read only to test against its keys
(`for cls, v in TABLE.items(): if isinstance(m, cls)`) is not handed to the host (plugin/reach.py
`_tested_table_key`): where only the plugin builds it, its constructor's mismatch is info. Each
case has its twin where the table hands the class on (the warning stays)."""

from __future__ import annotations

import pytest

from harness import expect, run_scan
from pinport.checks.override_signature import SignaturesCheck

HOST = {"host/passes.py": "class InductorPass:\n    def __init__(self, config):\n        self.config = config\n"}
PASS = "from host.passes import InductorPass\n\n\nclass MyPass(InductorPass):\n    def __init__(self, vllm_config):\n" \
       "        super().__init__(vllm_config)\n"
# only the plugin builds it, into its own manager's attribute
MANAGER = "from plug.passes import MyPass\n\n\nclass Manager:\n    def __init__(self, config):\n" \
          "        self.extra = MyPass(config)\n"
TABLE = "from plug.passes import MyPass\n\nSHARDS = {{MyPass: 1}}\n\n\ndef shards(module):\n{body}"
TESTED = "    for cls, count in SHARDS.items():\n        if isinstance(module, cls):\n            return count\n" \
         "    return None\n"


@pytest.mark.parametrize(("body", "others", "level"), [
    # the keys are only tested against: the class is looked at, never built or handed on
    (TESTED, {}, "info"),
    # the same loop over the keys alone
    ("    for cls in SHARDS:\n        if isinstance(module, cls):\n            return 1\n    return None\n", {}, "info"),
    # a key built: the class goes where the loop takes it
    ("    for cls, count in SHARDS.items():\n        return cls(count)\n", {}, "warning"),
    # the table returned whole: its keys go anywhere
    ("    return SHARDS\n", {}, "warning"),
    # the table imported by another module, which may hand its keys on
    (TESTED, {"plug/other.py": "from plug.table import SHARDS\n\n\ndef all_shards():\n    return list(SHARDS)\n"},
     "warning"),
])
def test_a_class_only_keying_a_tested_table_is_not_handed_on(body, others, level):
    plugin = {"plug/passes.py": PASS, "plug/manager.py": MANAGER, "plug/table.py": TABLE.format(body=body), **others}
    result = run_scan(HOST, HOST, plugin, checks=(SignaturesCheck(),))
    expect(result, [f"PP0101 {level} latent MyPass.__init__:5", "PP0201 info latent MyPass.__init__:5"], at=True)
