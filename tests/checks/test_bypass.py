"""Silent bypass (#10): parallel implementations of a patched class and the switch that selects them."""

import pytest

from harness import expect, only, run_scan
from pinport.checks.bypass import BypassCheck
from pinport.findings import Severity

CHECK = (BypassCheck(),)
METHODS = "".join(f"    def {m}(self):\n        pass\n\n" for m in ("execute_model", "load_model", "profile_run",
                                                                       "sample_tokens", "capture"))
RUNNER = "class Runner:\n" + METHODS
ENVS = ('import os\n\nenvironment_variables = {\n'
        '    "HOST_USE_V2": lambda: bool(int(os.getenv("HOST_USE_V2", "0"))),\n}\n\n\n'
        'def __getattr__(name):\n    return environment_variables[name]()\n')
WORKER_ENV = """
import host.envs as envs


class Worker:
    def __init__(self):
        self.use_v2 = envs.HOST_USE_V2

    def init_device(self):
        if self.use_v2:
            from host.worker.v2.runner import Runner as RunnerV2
            self.runner = RunnerV2()
        else:
            from host.worker.runner import Runner
            self.runner = Runner()
"""
WORKER_CONFIG = """
from host.config import Config


class Worker:
    def __init__(self, config: Config):
        self.use_v2 = config.use_v2

    def init_device(self):
        if self.use_v2:
            from host.worker.v2.runner import Runner as RunnerV2
            return RunnerV2()
        from host.worker.runner import Runner
        return Runner()
"""
CONFIG = """
import host.envs as envs

DEFAULT_V2_ARCHITECTURES = frozenset({"LlamaForCausalLM", "Qwen3ForCausalLM"})


class Config:
    architecture: str = "LlamaForCausalLM"

    @property
    def use_v2(self) -> bool:
        if envs.HOST_USE_V2 is not None:
            return envs.HOST_USE_V2
        return self.architecture in DEFAULT_V2_ARCHITECTURES
"""
PLUGIN = {"plug/patching.py": "class ArcticPatch:\n    pass\n",
          "plug/patch.py": "from plug.patching import ArcticPatch\nfrom host.worker.runner import Runner\n\n\n"
                           "class RunnerPatch(ArcticPatch[Runner]):\n    def execute_model(self):\n        pass\n\n"
                           "    def load_model(self):\n        pass\n"}
FORCING = {**PLUGIN, "plug/plugin.py": "import os\n\n\ndef register():\n    os.environ['HOST_USE_V2'] = '0'\n"}


def host(worker: str | None, v2: bool = True, **extra: str) -> dict[str, str]:
    files = {"host/envs.py": ENVS, "host/config.py": CONFIG, "host/worker/runner.py": RUNNER, **extra}
    if v2:
        files["host/worker/v2/runner.py"] = RUNNER
    if worker:
        files["host/worker/worker.py"] = worker
    return files


@pytest.mark.parametrize(("old", "new", "plugin", "expected"), [
    # the switch moved from an opt-in environment variable to a config property
    (host(WORKER_ENV), host(WORKER_CONFIG), PLUGIN, ["PP1002 warning drift"]),
    # the same switch on both sides: already there, informational
    (host(WORKER_ENV), host(WORKER_ENV), PLUGIN, ["PP1003 info latent"]),
    (host(WORKER_CONFIG), host(WORKER_CONFIG), PLUGIN, ["PP1003 info latent"]),
    # a parallel implementation new in NEW
    (host(None, v2=False), host(WORKER_CONFIG), PLUGIN, ["PP1001 warning drift"]),
    # no other implementation at all
    (host(None, v2=False), host(None, v2=False), PLUGIN, ["no PP1001", "no PP1002", "no PP1003"]),
])
def test_bypass_kinds(old, new, plugin, expected):
    expect(run_scan(old, new, plugin, checks=CHECK), expected)


def test_selection_change_evidence():
    result = run_scan(host(WORKER_ENV), host(WORKER_CONFIG), PLUGIN, checks=CHECK)
    expect(result, ["PP1002 warning drift"])
    finding = only(result, "PP1002")
    assert finding.status.value == "drift" and finding.level is Severity.WARNING
    assert finding.subject == "host.worker.v2.runner.Runner" and finding.args["name"] == "host.worker.runner.Runner"
    assert (finding.old.path, finding.old.line) == ("host/worker/worker.py", 9)
    assert (finding.new.path, finding.new.line) == ("host/worker/worker.py", 9)
    assert finding.plugin.path == "plug/patch.py" and finding.plugin.line == 5
    details = "\n".join(finding.details)
    assert "host 1.0: self.use_v2 = envs.HOST_USE_V2" in details
    assert 'host 1.0: env HOST_USE_V2 (default "0")' in details
    assert "host 2.0: self.use_v2 = config.use_v2" in details
    assert "config `Config.use_v2` is a property (host/config.py:10)" in details
    assert "DEFAULT_V2_ARCHITECTURES = {LlamaForCausalLM, Qwen3ForCausalLM}" in details
    assert "nothing forces the patched path" in details
    assert "execute_model, load_model" in finding.details[0]


def test_plugin_forcing_the_switch_makes_it_informational():
    result = run_scan(host(WORKER_ENV), host(WORKER_CONFIG), FORCING, checks=CHECK)
    expect(result, ["PP1002 info drift"])
    finding = only(result, "PP1002")
    assert finding.level is Severity.INFO
    assert any(d.startswith("plugin forces HOST_USE_V2='0' at plug/plugin.py:5") for d in finding.details)


def test_unchanged_twin_is_latent_and_says_so_once():
    result = run_scan(host(WORKER_ENV), host(WORKER_ENV), PLUGIN, checks=CHECK)
    expect(result, ["PP1003 info latent"])
    finding = only(result, "PP1003")
    assert finding.status.value == "latent"
    assert any(d.startswith("host 1.0 and host 2.0: host/worker/worker.py:9 selects on") for d in finding.details)


def test_plugin_patching_the_candidate_too_is_covered():
    plugin = {**PLUGIN, "plug/patch2.py": "from plug.patching import ArcticPatch\n"
                                          "from host.worker.v2.runner import Runner\n\n\n"
                                          "class RunnerV2Patch(ArcticPatch[Runner]):\n    def load_model(self):\n"
                                          "        pass\n"}
    expect(run_scan(host(WORKER_ENV), host(WORKER_CONFIG), plugin, checks=CHECK), ["no PP1002"])


SMALL_SUB = "from host.worker.runner import Runner\n\n\nclass Tiny(Runner):\n    def capture(self):\n        pass\n"
OVERRIDE_SUB = ("from host.worker.runner import Runner\n\n\nclass CpuRunner(Runner):\n    def load_model(self):\n"
                "        pass\n")
CALLS_UP = ("from host.worker.runner import Runner\n\n\nclass CpuRunner(Runner):\n    def load_model(self):\n"
            "        super().load_model()\n")
DISPATCHES_UP = ("from host.worker.runner import Runner\n\n\nclass CpuRunner(Runner):\n"
                 "    def load_model(self, *args):\n        return self._load(*args)\n\n"
                 "    def _load(self, *args):\n        return super().load_model(*args)\n")
BASE = "class RunnerBase:\n    def base_only(self):\n        pass\n"
SIBLING = ("from host.worker.base import RunnerBase\n\n\nclass Other(RunnerBase):\n"
           + METHODS.replace("capture", "extra"))
SMALL_SIBLING = "from host.worker.base import RunnerBase\n\n\nclass Other(RunnerBase):\n    def load_model(self):\n" \
                "        pass\n"
ON_BASE = "from host.worker.base import RunnerBase\n\n\nclass Runner(RunnerBase):\n" + METHODS


@pytest.mark.parametrize(("extra", "expected"), [
    ({"host/worker/tiny.py": SMALL_SUB}, ["no PP1003"]),  # a small subclass that does not touch the patched methods
    ({"host/worker/cpu.py": OVERRIDE_SUB}, ["PP1003 info latent"]),  # overrides a patched method: the patch misses it
    ({"host/worker/cpu.py": CALLS_UP}, ["no PP1003"]),  # ... unless it calls up
    ({"host/worker/cpu.py": DISPATCHES_UP}, ["no PP1003"]),  # ... also from the method it dispatches to
    ({"host/worker/base.py": BASE, "host/worker/runner.py": ON_BASE, "host/worker/other.py": SIBLING}, ["PP1003 info latent"]),
    ({"host/worker/base.py": BASE, "host/worker/runner.py": ON_BASE, "host/worker/other.py": SMALL_SIBLING}, ["no PP1003"]),
])
def test_role_rules_keep_noise_low(extra, expected):
    files = host(None, v2=False, **extra)
    result = run_scan(files, files, PLUGIN, checks=CHECK)
    expect(result, expected)


def test_same_name_needs_shared_methods():
    unrelated = {"host/other/runner.py": "class Runner:\n    def unrelated(self):\n        pass\n"}
    files = host(None, v2=False, **unrelated)
    expect(run_scan(files, files, PLUGIN, checks=CHECK), ["no PP1003"])


# -- thresholds: a same-named class must share max(3, 40 %) of the target's public methods; a sibling
# under the same base 50 % of those the base does not give ------------------------------------------------
def _methods(names) -> str:
    return "".join(f"    def {m}(self):\n        pass\n\n" for m in names)


TEN = [f"step_{i}" for i in range(10)]


@pytest.mark.parametrize(("target", "shared", "expected"), [
    (TEN, TEN[:4], ["PP1003 info latent"]),  # 4 of 10: the share itself
    (TEN, TEN[:3], ["no PP1003"]),  # 3 of 10: enough in number, too small a share
    (TEN[:5], TEN[:3], ["PP1003 info latent"]),  # 3 of 5: the minimum in number
    (TEN[:4], TEN[:2], ["no PP1003"]),  # 2 of 4: half, but fewer than 3
])
def test_same_name_share_threshold(target, shared, expected):
    files = {"host/worker/runner.py": "class Runner:\n" + _methods(target),
             "host/worker/v2/runner.py": "class Runner:\n" + _methods(shared + ["other"])}
    plugin = {**PLUGIN, "plug/patch.py": "from plug.patching import ArcticPatch\nfrom host.worker.runner import Runner\n"
                                         "\n\nclass RunnerPatch(ArcticPatch[Runner]):\n    def step_0(self):\n        pass\n"}
    expect(run_scan(files, files, plugin, checks=CHECK), expected)


@pytest.mark.parametrize(("shared", "expected"), [
    (TEN[:5], ["PP1003 info latent"]),  # 5 of the 10 the base does not give: the share itself
    (TEN[:4], ["no PP1003"]),  # 4 of 10
])
def test_sibling_share_threshold(shared, expected):
    files = {"host/worker/base.py": "class RunnerBase:\n" + _methods(["base_only"]),
             "host/worker/runner.py": "from host.worker.base import RunnerBase\n\n\nclass Runner(RunnerBase):\n"
                                      + _methods(TEN),
             "host/worker/other.py": "from host.worker.base import RunnerBase\n\n\nclass Other(RunnerBase):\n"
                                     + _methods(shared)}
    plugin = {**PLUGIN, "plug/patch.py": "from plug.patching import ArcticPatch\nfrom host.worker.runner import Runner\n"
                                         "\n\nclass RunnerPatch(ArcticPatch[Runner]):\n    def step_0(self):\n        pass\n"}
    expect(run_scan(files, files, plugin, checks=CHECK), expected)


BOOT = {"plug/plugin.py": "def register():\n    import plug.patch  # applies the patch\n",
        "pyproject.toml": '[project]\nname = "plug"\n\n[project.entry-points."host.general_plugins"]\n'
                          'plug = "plug.plugin:register"\n'}


@pytest.mark.parametrize(("plugin", "bootstrap"), [
    ({**PLUGIN, **BOOT}, "plug.plugin:register"),  # the force belongs in the entry-point function
    (PLUGIN, None),  # no entry point declared: nothing to name
])
def test_bypass_names_the_plugins_bootstrap(plugin, bootstrap):
    result = run_scan(host(WORKER_ENV), host(WORKER_CONFIG), plugin, checks=CHECK, host="host",
                      plugin_groups=("host.general_plugins",))  # what the synthetic host's profile would say
    expect(result, ["PP1002 warning drift"])
    finding = only(result, "PP1002")
    assert finding.extra.get("bootstrap") == bootstrap
    assert any("plug/plugin.py:1 (register)" in d for d in finding.details) is (bootstrap is not None)


# -- how a candidate is related, stated in the finding -------------------------------------------------
def _patch_of(*methods: str) -> dict[str, str]:
    return {**PLUGIN, "plug/patch.py": "from plug.patching import ArcticPatch\nfrom host.worker.runner import Runner\n"
                                       "\n\nclass RunnerPatch(ArcticPatch[Runner]):\n" + _methods(methods)}


def test_a_subclass_names_at_most_four_overridden_methods():
    files = {"host/worker/runner.py": "class Runner:\n" + _methods(TEN),
             "host/worker/cpu.py": "from host.worker.runner import Runner\n\n\nclass CpuRunner(Runner):\n"
                                   + _methods(TEN[:5])}
    result = run_scan(files, files, _patch_of(*TEN[:5]), checks=CHECK)
    expect(result, ["PP1003 info latent"])
    assert only(result, "PP1003").args["relation"] == "subclass overriding patched step_0, step_1, step_2, step_3"


def test_a_sibling_shares_what_the_common_base_does_not_give():
    """The base gives half the target's methods: a sibling defining 3 of the other 5 is a candidate
    (3 of 10 would be too few)."""
    base = "class RunnerBase:\n" + _methods(TEN[:5])
    files = {"host/worker/base.py": base,
             "host/worker/runner.py": "from host.worker.base import RunnerBase\n\n\nclass Runner(RunnerBase):\n"
                                      + _methods(TEN),
             "host/worker/other.py": "from host.worker.base import RunnerBase\n\n\nclass Other(RunnerBase):\n"
                                     + _methods(TEN[5:8])}
    result = run_scan(files, files, _patch_of("step_5"), checks=CHECK)
    expect(result, ["PP1003 info latent"])
    finding = only(result, "PP1003")
    assert (finding.subject, finding.args["relation"]) == ("host.worker.other.Other", "sibling under RunnerBase")


def test_a_sibling_under_two_shared_bases_names_the_first():
    bases = "class Alpha:\n    pass\n\n\nclass Beta:\n    pass\n"
    head = "from host.worker.bases import Alpha, Beta\n\n\n"
    files = {"host/worker/bases.py": bases,
             "host/worker/runner.py": head + "class Runner(Alpha, Beta):\n" + _methods(TEN),
             "host/worker/other.py": head + "class Other(Alpha, Beta):\n" + _methods(TEN[:6])}
    result = run_scan(files, files, _patch_of("step_0"), checks=CHECK)
    expect(result, ["PP1003 info latent"])
    assert only(result, "PP1003").args["relation"] == "sibling under Alpha"


def test_a_same_named_sibling_is_named_by_its_name():
    """A class both same-named and a sibling is found as "same name" first, and stays so."""
    head = "from host.worker.base import RunnerBase\n\n\nclass Runner(RunnerBase):\n"
    files = {"host/worker/base.py": "class RunnerBase:\n" + _methods(["base_only"]),
             "host/worker/runner.py": head + _methods(TEN), "host/worker/v2/runner.py": head + _methods(TEN)}
    result = run_scan(files, files, _patch_of("step_0"), checks=CHECK)
    expect(result, ["PP1003 info latent"])
    finding = only(result, "PP1003")
    assert (finding.subject, finding.args["relation"]) == ("host.worker.v2.runner.Runner", "same name")


def test_two_patches_of_one_class_report_its_parallel_implementation_once():
    second = ("from plug.patching import ArcticPatch\nfrom host.worker.runner import Runner\n\n\n"
              "class MoreRunnerPatch(ArcticPatch[Runner]):\n    def profile_run(self):\n        pass\n")
    result = run_scan(host(WORKER_ENV), host(WORKER_ENV), {**PLUGIN, "plug/more.py": second}, checks=CHECK)
    expect(result, ["PP1003 info latent"])


@pytest.mark.parametrize(("name", "expected"), [
    # `__flush` in Runner is `_Runner__flush`; CpuRunner's `__flush` is `_CpuRunner__flush`: no override,
    # so Runner's own calls of it still run Runner's member (and its patch) on a CpuRunner
    ("__flush", ["no PP1003"]),
    ("step_0", ["PP1003 info latent"]),  # negative twin: an ordinary name is overridden
])
def test_a_name_mangled_member_is_not_overridden_by_a_subclass(name, expected):
    files = {"host/worker/runner.py": "class Runner:\n" + _methods([*TEN, "__flush"]),
             "host/worker/cpu.py": "from host.worker.runner import Runner\n\n\nclass CpuRunner(Runner):\n"
                                   + _methods([name])}
    result = run_scan(files, files, _patch_of(name), checks=CHECK)
    expect(result, expected)
    if expected[0].startswith("PP1003"):
        finding = only(result, "PP1003")
        assert (finding.subject, finding.args["relation"]) == (
            "host.worker.cpu.CpuRunner", "subclass overriding patched step_0")
