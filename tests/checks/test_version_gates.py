"""The plugin's own version gates (PP0008): code that raises on the host version judged."""

import pytest

from harness import expect, only, run_scan
from pinport.checks.version_gates import VersionGatesCheck

OLD = {"host/__init__.py": "__version__ = '1.0'\n"}
NEW = {"host/__init__.py": "__version__ = '2.0'\n"}
PATCHING = {"plug/patching.py": "class ArcticPatch:\n    pass\n"}


def scan(body: str, *, versions=("1.0", "2.0")):
    plugin = {"plug/__init__.py": "import host\nfrom packaging.version import Version\n\n\n" + body}
    return run_scan(OLD, NEW, {**PATCHING, **plugin}, checks=(VersionGatesCheck(),), versions=versions)


@pytest.mark.parametrize("body", [
    # the tested range in locals bound once, as plugins write it
    "def register():\n    current = Version(host.__version__)\n    newest = Version('2.0')\n"
    "    if current >= newest:\n        raise RuntimeError('unsupported host')\n    print('registered')\n",
    "def register():\n    if not Version(host.__version__) < Version('2.0'):\n        raise ImportError('old host only')\n",
    "def register():\n    assert Version(host.__version__) < Version('2.0'), 'old host only'\n",
])
def test_a_gate_refusing_new_is_an_error_that_the_move_brings(body):
    result = scan(body)
    expect(result, ["PP0008 error drift"])
    found = only(result, "PP0008")
    assert (found.plugin.path, found.plugin.unit) == ("plug/__init__.py", "register")
    assert "`register` raises" in found.message and "on host 2.0" in found.message
    assert found.suggestion.startswith("once the plugin is ported to host 2.0, move the bound in the gate at line")


def test_a_module_level_gate_refuses_the_import():
    result = scan("if Version(host.__version__) >= Version('2.0'):\n    raise RuntimeError('unsupported')\n")
    found = only(result, "PP0008")
    assert (found.level.value, found.status.value, found.plugin.line, found.plugin.unit) == (
        "error", "drift", 5, "<module>")
    assert found.message.startswith("importing `plug` raises `RuntimeError` on host 2.0")


@pytest.mark.parametrize("body", [
    # negative twins: a gate the new version passes, one no version decides, a branch (not a gate),
    # a `return` (a patch skipped on purpose), a limit read from elsewhere, and a rebound local
    "def register():\n    if Version(host.__version__) >= Version('3.0'):\n        raise RuntimeError('x')\n",
    "def register(flag):\n    if flag and Version(host.__version__) >= Version('2.0'):\n        raise RuntimeError('x')\n",
    "def register():\n    if Version(host.__version__) >= Version('2.0'):\n        print('new')\n"
    "    else:\n        raise RuntimeError('x')\n",
    "def register():\n    if Version(host.__version__) >= Version('2.0'):\n        return\n    print('old only')\n",
    "def register(limit):\n    if Version(host.__version__) >= limit:\n        raise RuntimeError('x')\n",
    "def register():\n    limit = Version('2.0')\n    limit = Version('3.0')\n"
    "    if Version(host.__version__) >= limit:\n        raise RuntimeError('x')\n",
])
def test_no_finding_where_the_gate_admits_new_or_is_not_certain(body):
    expect(scan(body), ["no PP0008"])


def test_a_gate_refusing_both_sides_is_latent():
    expect(scan("def register():\n    if Version(host.__version__) >= Version('0.5'):\n        raise RuntimeError('x')\n"),
           ["PP0008 error latent"])
