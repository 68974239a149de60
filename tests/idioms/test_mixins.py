"""Mixins the host makes part of its own class: a worker extension named by a class-path string
(vllm-lens `worker_extension_cls`), or a class whose host base is written for type checkers only.
Either is judged as a member of the host class: its `self` is a host Worker."""

from __future__ import annotations

import pytest

from harness import expect, run_scan
from pinport.checks.instance_attributes import AttributesCheck
from pinport.checks.undefined import UndefinedCheck

OLD = {"host/worker.py": "class Worker:\n    def __init__(self):\n        self.model_runner = None\n"}
NEW = {"host/worker.py": "class Worker:\n    def __init__(self):\n        self.runner = None\n"}
EXT = "class Ext:\n    def capture(self):\n        return self.model_runner\n"
HOSTS = (("worker_extension_cls", "host.worker.Worker"),)


@pytest.mark.parametrize(("platform", "expected"), [
    ("def configure(config):\n    config.worker_extension_cls = 'plug.ext.Ext'\n", ["PP0901 error drift"]),
    ("def engine_args():\n    return dict(worker_extension_cls='plug.ext.Ext')\n", ["PP0901 error drift"]),
    # negative twin: nothing names the class, so nothing defines what it reads
    ("def configure(config):\n    config.worker_extension_cls = None\n", ["PP0051 error latent", "no PP0901"]),
])
def test_worker_extension_is_judged_as_a_member_of_the_worker(platform, expected):
    plugin = {"plug/ext.py": EXT, "plug/platform.py": platform}
    result = run_scan(OLD, NEW, plugin, checks=(AttributesCheck(), UndefinedCheck()), class_path_hosts=HOSTS)
    expect(result, expected)
    assert all(f.plugin.path == "plug/ext.py" and f.plugin.line == 3 for f in result.findings)


CHECKING_IMPORT = "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from host.worker import Worker\n"


@pytest.mark.parametrize(("header", "base", "expected"), [
    (CHECKING_IMPORT, "Worker if TYPE_CHECKING else object", ["PP0901 error drift"]),
    (CHECKING_IMPORT + "    _Base = Worker\nelse:\n    _Base = object\n", "_Base", ["PP0901 error drift"]),
    ("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from host.worker import Worker as _Base\n"
     "else:\n    _Base = object\n", "_Base", ["PP0901 error drift"]),
    # negative twin: a plain mixin, its host unknown: nothing defines what it reads
    (CHECKING_IMPORT, "object", ["PP0051 error latent", "no PP0901"]),
])
def test_type_checking_base_is_the_host_class(header, base, expected):
    plugin = {"plug/ext.py": f"{header}\n\nclass Ext({base}):\n    def capture(self):\n"
                             "        return self.model_runner\n"}
    expect(run_scan(OLD, NEW, plugin, checks=(AttributesCheck(), UndefinedCheck())), expected)
