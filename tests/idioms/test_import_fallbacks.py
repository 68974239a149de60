"""A host name imported in a `try` and defined again in its `except ImportError:` handler (a stand-in for
running without the host, vllm-musa's `class Platform: pass`): with the host installed the import runs,
so the plugin class's base is the host class. With its negative twins; whole findings asserted."""

from __future__ import annotations

import pytest

from harness import expect, run_scan
from pinport.checks.call_binding import CallsCheck
from pinport.checks.undefined import UndefinedCheck

PLATFORM = """
class Platform:
    @classmethod
    def physical_id(cls, device_id):
        return device_id

    @classmethod
    def device_name(cls, device_id=0):
        return ""
"""
PLUGIN = """
try:
    from host.platforms import Platform
except {caught}:
    class Platform:
        pass


class Mine(Platform):
    @classmethod
    def device_name(cls, device_id=0):
        return str(cls.physical_id(device_id))
"""


@pytest.mark.parametrize(("caught", "expected"), [
    ("ImportError", ["no PP0051"]),
    ("(ImportError, AttributeError)", ["no PP0051"]),
    ("ModuleNotFoundError", ["no PP0051"]),
    # negative twin: a handler for another error is no import fallback; the class defined last is the base
    ("KeyError", ["PP0051 error latent"]),
])
def test_the_host_import_with_a_fallback_is_the_base(caught, expected):
    host = {"host/platforms.py": PLATFORM}
    result = run_scan(host, host, {"plug/platform.py": PLUGIN.format(caught=caught)}, checks=(UndefinedCheck(),))
    expect(result, expected)
    if expected[0].startswith("PP0051"):
        (finding,) = result.findings
        assert (finding.plugin.path, finding.plugin.line, finding.plugin.unit, finding.args["name"], finding.old,
                finding.new) == ("plug/platform.py", 11, "Mine.device_name", "physical_id", None, None)


@pytest.mark.parametrize(("caught", "expected"), [
    ("ImportError", ["PP0302 error latent"]),
    ("KeyError", ["no PP0302"]),  # negative twin: the stand-in class is the base, its calls are not the host's
])
def test_calls_through_the_host_base_behind_a_fallback_are_judged(caught, expected):
    """Seen as the host class, the plugin class's calls on `cls` bind to the host's methods: a keyword
    the host method does not take is found (the stand-in class would hide it)."""
    host = {"host/platforms.py": PLATFORM}
    plugin = PLUGIN.format(caught=caught).replace("cls.physical_id(device_id)", "cls.physical_id(device_id, raw=True)")
    result = run_scan(host, host, {"plug/platform.py": plugin}, checks=(CallsCheck(),))
    expect(result, expected)
    if expected[0].startswith("PP0302"):
        (finding,) = result.findings
        assert (finding.plugin.path, finding.plugin.line, finding.plugin.unit, finding.args["name"], finding.subject,
                finding.old.path, finding.old.line, finding.new.path, finding.new.line) == (
            "plug/platform.py", 11, "Mine.device_name", "raw", "host.platforms.Platform.physical_id",
            "host/platforms.py", 3, "host/platforms.py", 3)
