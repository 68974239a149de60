"""A host dispatcher that picks one member per platform (vLLM CustomOp's `dispatch_forward`, kept in
`self._forward_method` and run by `forward(*args, **kwargs)`): an override of a member the plugin's
platform never dispatches is reached only where host code names it (model/forwarding.py
`dispatch_route`, plugin/dispatch.py). Each case has its reachable twin (the warning stays)."""

from __future__ import annotations

import pytest

from harness import expect, run_scan
from pinport.checks.override_signature import SignaturesCheck

PLATFORMS = """
import enum


class PlatformEnum(enum.Enum):
    CUDA = enum.auto()
    XPU = enum.auto()
    OOT = enum.auto()


class Platform:
    _enum: PlatformEnum

    def is_xpu(self) -> bool:
        return self._enum == PlatformEnum.XPU

    def is_out_of_tree(self) -> bool:
        return self._enum == PlatformEnum.OOT


current_platform = Platform()
"""

CUSTOM_OP = """
from host.platforms import current_platform


class CustomOp:
    def __init__(self):
        self._forward_method = self.dispatch_forward()

    def forward(self, *args, **kwargs):
        return self._forward_method(*args, **kwargs)

    def forward_native(self, *args, **kwargs):
        raise NotImplementedError

    def forward_cuda(self, *args, **kwargs):
        return self.forward_native(*args, **kwargs)

    def forward_xpu(self, *args, **kwargs):
        return self.forward_native(*args, **kwargs)

    def forward_oot(self, *args, **kwargs):
        return self.forward_native(*args, **kwargs)

    def dispatch_forward(self):
        if not self.enabled():
            return self.forward_native
        if current_platform.is_xpu():
            return self.forward_xpu
        elif current_platform.is_out_of_tree():
            return self.forward_oot
        else:
            return self.forward_cuda

    def enabled(self):
        return True

    @classmethod
    def register_oot(cls, _decorated_op_cls=None, name=None):
        return _decorated_op_cls


class Norm(CustomOp):
    def forward_native(self, x, residual=None):
        return x


class Block:
    def __init__(self):
        self.norm = Norm()

    def forward(self, x):
        return self.norm(x)
"""
HOST = {"host/platforms.py": PLATFORMS, "host/custom_op.py": CUSTOM_OP}

# the override requires `residual`, which the native path makes optional: a one-argument layer call fails
NORM = ("from host.custom_op import CustomOp, Norm\n\n\nclass MyNorm(Norm):\n"
        "    def {member}(self, x, residual):\n        return x\n\n\n"
        "CustomOp.register_oot(_decorated_op_cls=MyNorm, name=\"Norm\")\n")
PLATFORM = ("from host.platforms import Platform, PlatformEnum\n\n\nclass MyPlatform(Platform):\n"
            "    _enum = PlatformEnum.{enum}\n")
BOOT = "def register():\n    return \"plug.platform.MyPlatform\"\n\n\ndef register_ops():\n    import plug.norm  # noqa: F401\n"
GROUPS = ('[project.entry-points."host.general_plugins"]\nops = "plug.boot:register_ops"\n\n',
          '[project.entry-points."host.platform_plugins"]\nplug = "plug.boot:register"\n')


def boot(platform: bool = True) -> dict[str, str]:
    """The plugin's entry points: a general one importing its ops, and (with `platform`) the platform one."""
    return {"plug/boot.py": BOOT, "pyproject.toml": '[project]\nname = "plug"\n\n' + GROUPS[0] + (
        GROUPS[1] if platform else "")}


def scan(member: str, enum: str, platform: bool = True, **settings: object):
    plugin = {"plug/norm.py": NORM.format(member=member), "plug/platform.py": PLATFORM.format(enum=enum),
              **boot(platform)}
    options = {"plugin_groups": ("host.general_plugins", "host.platform_plugins"), "platform_instances": ("host.platforms.current_platform",)}
    return run_scan(HOST, HOST, plugin, checks=(SignaturesCheck(),), **{**options, **settings})


@pytest.mark.parametrize(("member", "enum", "level"), [
    # a CUDA platform: `is_xpu()` is false, so the dispatcher never hands out forward_xpu
    ("forward_xpu", "CUDA", "info"),
    # an out-of-tree platform passes the `is_xpu()` test too, and takes the forward_oot route
    ("forward_xpu", "OOT", "info"),
    # the route the platform takes: every layer call reaches the override
    ("forward_oot", "OOT", "warning"),
    # an XPU platform takes the forward_xpu route
    ("forward_xpu", "XPU", "warning"),
    # the fallback after every test failed: a CUDA platform takes it
    ("forward_cuda", "CUDA", "warning"),
    # an earlier route taken (is_out_of_tree) means the fallback is never reached
    ("forward_cuda", "OOT", "info"),
])
def test_a_member_the_plugins_platform_never_dispatches_is_not_reached(member, enum, level):
    expect(scan(member, enum), [f"PP0107 {level} latent MyNorm.{member}:5"], at=True)


def test_without_a_platform_entry_point_every_route_may_run():
    """No entry point hands the host a platform class: which route runs is unknown, so the warning stays."""
    expect(scan("forward_xpu", "CUDA", platform=False), ["PP0107 warning latent MyNorm.forward_xpu:5"], at=True)


def test_without_the_platform_instance_setting_no_guard_is_decided():
    """The host profile names the object the guards ask (`platform-instances`); without it nothing is decided."""
    expect(scan("forward_xpu", "CUDA", platform_instances=()), ["PP0107 warning latent MyNorm.forward_xpu:5"],
           at=True)


def test_a_plugin_platform_answering_the_predicate_itself_is_read_first():
    """The plugin's platform overrides `is_xpu` to answer true: the forward_xpu route is taken."""
    plugin_platform = PLATFORM.format(enum="CUDA") + "\n    def is_xpu(self) -> bool:\n        return self._enum == PlatformEnum.CUDA\n"
    plugin = {"plug/norm.py": NORM.format(member="forward_xpu"), "plug/platform.py": plugin_platform, **boot()}
    result = run_scan(HOST, HOST, plugin, checks=(SignaturesCheck(),), plugin_groups=("host.general_plugins", "host.platform_plugins"),
                      platform_instances=("host.platforms.current_platform",))
    expect(result, ["PP0107 warning latent MyNorm.forward_xpu:5"], at=True)


def test_a_bare_reference_outside_a_dispatcher_still_reaches():
    """The host also hands forward_xpu on elsewhere (`fn = op.forward_xpu`): a CUDA platform does not stop that."""
    host = {**HOST, "host/use.py": "def pick(op):\n    fn = op.forward_xpu\n    return fn\n"}
    plugin = {"plug/norm.py": NORM.format(member="forward_xpu"), "plug/platform.py": PLATFORM.format(enum="CUDA"),
              **boot()}
    result = run_scan(host, host, plugin, checks=(SignaturesCheck(),), plugin_groups=("host.general_plugins", "host.platform_plugins"),
                      platform_instances=("host.platforms.current_platform",))
    expect(result, ["PP0107 warning latent MyNorm.forward_xpu:5"], at=True)


@pytest.mark.parametrize(("enum", "level"), [
    # the host class defines forward_cuda itself: the dispatcher's `self.forward_cuda` is the instance's own
    # member, the plugin's override on a plugin instance, and a CUDA platform takes that route
    ("CUDA", "warning"),
    # negative twin: an out-of-tree platform never takes it
    ("OOT", "info"),
])
def test_a_dispatcher_reads_the_member_the_instances_class_defines(enum, level):
    host = {**HOST, "host/custom_op.py": CUSTOM_OP.replace(
        "class Norm(CustomOp):\n    def forward_native(self, x, residual=None):\n        return x\n",
        "class Norm(CustomOp):\n    def forward_native(self, x, residual=None):\n        return x\n\n"
        "    def forward_cuda(self, x, residual=None):\n        return x\n")}
    plugin = {"plug/norm.py": NORM.format(member="forward_cuda"), "plug/platform.py": PLATFORM.format(enum=enum),
              **boot()}
    result = run_scan(host, host, plugin, checks=(SignaturesCheck(),),
                      plugin_groups=("host.general_plugins", "host.platform_plugins"),
                      platform_instances=("host.platforms.current_platform",))
    expect(result, [f"PP0107 {level} latent MyNorm.forward_cuda:5"], at=True)
