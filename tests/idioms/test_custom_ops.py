"""CustomOp-style idioms: `del Host.method` (fall back to the base's member), flags the plugin adds
to the host's environment table, and registry patch strings whose target moved."""

from __future__ import annotations

import pytest

from harness import expect, run_scan
from pinport.checks.aliases import AliasesCheck
from pinport.checks.host_kinds import HostKindsCheck

OPS_OLD = {"host/ops.py": "class CustomOp:\n    def forward_oot(self, x):\n        return x\n\n\n"
                          "class RMSNorm(CustomOp):\n    def forward_oot(self, x):\n        return x * 2\n"}
OPS_NEW = {"host/ops.py": "class CustomOp:\n    def forward_oot(self, x):\n        return x\n\n\n"
                          "class RMSNorm(CustomOp):\n    eps = 1e-6\n"}


@pytest.mark.parametrize(("src", "expected"), [
    # NEW moved the member to the base: `del` on the subclass raises AttributeError at import
    ("from host.ops import RMSNorm\n\ndel RMSNorm.forward_oot\n", ["PP0007 error drift"]),
    # a class attribute is the class's own member: deleting it works
    ("from host.ops import RMSNorm\n\ndel RMSNorm.eps\n", ["PP0007 error fixed"]),
    # negative twin: deleting what is not a host class member is not judged
    ("class Local:\n    x = 1\n\n\ndel Local.x\n", ["no PP0007"]),
])
def test_del_of_a_host_member_needs_the_class_to_define_it(src, expected):
    expect(run_scan(OPS_OLD, OPS_NEW, {"plug/ops.py": src}, checks=(AliasesCheck(),)), expected)


ENVS = {"host/envs.py": "import os\n\nenvironment_variables = {\n"
                        "    'HOST_A': lambda: os.getenv('HOST_A'),\n}\n\n\n"
                        "def __getattr__(name):\n    return environment_variables[name]()\n"}
READ = "from host import envs\n\n\ndef on():\n    return envs.HOST_PLUGIN_FLAG\n"


@pytest.mark.parametrize(("boot", "expected"), [
    ("import os\n\nfrom host import envs\n\n"
     "envs.environment_variables['HOST_PLUGIN_FLAG'] = lambda: os.getenv('HOST_PLUGIN_FLAG')\n", ["no PP0612"]),
    ("import os\n\nimport host.envs as envs\n\n"
     "envs.environment_variables.update({'HOST_PLUGIN_FLAG': lambda: os.getenv('HOST_PLUGIN_FLAG')})\n",
     ["no PP0612"]),
    # negative twin: a flag nobody adds to the table is missing
    ("import os\n\nFLAGS = {'HOST_PLUGIN_FLAG': lambda: os.getenv('HOST_PLUGIN_FLAG')}\n", ["PP0612 error latent"]),
])
def test_flags_the_plugin_adds_to_the_env_table_exist(boot, expected):
    plugin = {"plug/boot.py": boot, "plug/use.py": READ}
    expect(run_scan(ENVS, ENVS, plugin, checks=(HostKindsCheck(),)), expected)


WORKER_OLD = {"host/worker.py": "class Worker:\n    def execute(self, batch):\n        return batch\n"}
WORKER_NEW = {"host/engine/worker.py": "class Worker:\n    def execute(self, batch):\n        return batch\n",
              "host/engine/__init__.py": ""}


@pytest.mark.parametrize(("target", "expected"), [
    # the module moved in NEW: the registry fails when it applies the patch
    ("host.worker.Worker.execute", ["PP0003 error drift"]),
    # negative twin: the target moved with it
    ("host.engine.worker.Worker.execute", ["PP0003 error fixed"]),
])
def test_registry_target_string_must_resolve(target, expected):
    src = (f"def register_patch(*, target):\n    return lambda f: f\n\n\n@register_patch(target={target!r})\n"
           "def execute(self, batch):\n    return batch\n")
    result = run_scan(WORKER_OLD, WORKER_NEW, {"plug/patches.py": src}, checks=(AliasesCheck(),))
    expect(result, expected)


CUSTOM_OP = ("class CustomOp:\n    def forward(self, *args, **kwargs):\n        return self.forward_oot(*args, **kwargs)\n\n"
             "    def forward_oot(self, *args, **kwargs):\n        # out-of-tree ops default to the native path\n"
             "        return self.forward_native(*args, **kwargs)\n\n\n"
             "class Rope(CustomOp):\n    def forward_native(self, positions, query, key=None{extra}):\n"
             "        return query\n")


@pytest.mark.parametrize(("extra", "expected"), [
    # NEW's native path takes `offsets`: the plugin's forward_oot receives it too
    (", offsets=None", ["PP0101 warning drift"]),
    # negative twin: the native path is unchanged
    ("", ["no PP0101"]),
])
def test_assigned_forward_oot_is_judged_against_the_native_path(extra, expected):
    from pinport.checks.override_signature import SignaturesCheck
    old = {"host/rope.py": CUSTOM_OP.format(extra="")}
    new = {"host/rope.py": CUSTOM_OP.format(extra=extra)}
    plugin = {"plug/rope.py": "from host.rope import Rope\n\n\ndef rope_oot(self, positions, query, key=None):\n"
                              "    return query\n\n\nRope.forward_oot = rope_oot\n"}
    result = run_scan(old, new, plugin, checks=(SignaturesCheck(),))
    expect(result, expected)
    assert all(f.args["base"] == "host.rope.Rope.forward_native" for f in result.findings)
