"""Attribute chains into typed host objects (#9): several hops, error where the line always runs,
warning behind a condition, and the plugin's own members and assignments respected."""

import pytest

from harness import expect, only, run_scan
from pinport.checks.attribute_chains import ChainsCheck

PATCHING = {"plug/patching.py": "class ArcticPatch:\n    pass\n"}
USE = "plug/use.py"

CONFIG = """
from dataclasses import dataclass


@dataclass
class HFConfig:
    hidden_size: int = 0
    {hf_field}


@dataclass
class ModelConfig:
    hf_config: HFConfig = None
    max_model_len: int = 0


class CacheConfig:
    def __init__(self):
        self.block_size = 16

    def {method}(self):
        return 1


@dataclass
class VllmConfig:
    model_config: ModelConfig = None
    cache_config: CacheConfig = None
"""
RUNNER = """
from host.config import VllmConfig


class Runner:
    def __init__(self, vllm_config: VllmConfig):
        self.vllm_config = vllm_config
        self.model_config = vllm_config.model_config
"""
IMPORTS = "from plug.patching import ArcticPatch\nfrom host.runner import Runner\nfrom host.config import VllmConfig\n\n\n"


def host(hf_field: str = "num_experts: int = 0", method: str = "get_num_blocks") -> dict[str, str]:
    return {"host/config.py": CONFIG.format(hf_field=hf_field, method=method), "host/runner.py": RUNNER}


OLD = host()
NEW = host(hf_field="num_local_experts: int = 0", method="num_blocks")


def scan(plugin: str, old=OLD, new=NEW):
    return run_scan(old, new, {**PATCHING, USE: IMPORTS + plugin}, checks=(ChainsCheck(),))


@pytest.mark.parametrize(("plugin", "expected"), [
    # several hops from self: constructor assignment, then dataclass fields, then a field NEW dropped
    ("class RunnerPatch(ArcticPatch[Runner]):\n    def step(self):\n"
     "        return self.vllm_config.model_config.hf_config.num_experts\n", ["PP0905 error drift RunnerPatch.step:8"]),
    ("class RunnerPatch(ArcticPatch[Runner]):\n    def step(self):\n"
     "        return self.vllm_config.model_config.hf_config.hidden_size\n", ["no PP0905"]),
    # behind a condition: a warning
    ("class RunnerPatch(ArcticPatch[Runner]):\n    def step(self, on):\n        if on:\n"
     "            return self.model_config.hf_config.num_experts\n", ["PP0905 warning drift RunnerPatch.step:9"]),
    ("class RunnerPatch(ArcticPatch[Runner]):\n    def step(self, on):\n"
     "        return on and self.model_config.hf_config.num_experts\n", ["PP0905 warning drift RunnerPatch.step:8"]),
    # guarded by hasattr / getattr with a default / except AttributeError: the plugin handles it
    ("class RunnerPatch(ArcticPatch[Runner]):\n    def step(self):\n        hf = self.model_config.hf_config\n"
     "        if hasattr(hf, 'num_experts'):\n            return self.model_config.hf_config.num_experts\n",
     ["no PP0905"]),
    ("class RunnerPatch(ArcticPatch[Runner]):\n    def step(self):\n        try:\n"
     "            return self.model_config.hf_config.num_experts\n        except AttributeError:\n"
     "            return 0\n", ["no PP0905"]),
    # a parameter annotated with a host class, config reached through config, a method NEW renamed
    ("def go(cfg: VllmConfig):\n    return cfg.cache_config.get_num_blocks()\n", ["PP0905 error drift go:7"]),
    ("def go(cfg: VllmConfig):\n    return cfg.cache_config.block_size\n", ["no PP0905"]),
    # a local typed from a chain
    ("def go(cfg: VllmConfig):\n    hf = cfg.model_config.hf_config\n    return hf.num_experts\n",
     ["PP0905 error drift go:8"]),
    # the plugin adds the member itself
    ("from host.config import HFConfig\n\n\nclass HFPatch(ArcticPatch[HFConfig]):\n    num_experts = 0\n\n\n"
     "def go(cfg: VllmConfig):\n    return cfg.model_config.hf_config.num_experts\n", ["no PP0905"]),
    # an untyped parameter: nothing is known
    ("def go(cfg):\n    return cfg.model_config.hf_config.num_experts\n", ["no PP0905"]),
])
def test_chains(plugin, expected):
    expect(scan(plugin), expected, at=True)


def test_evidence_names_both_sides():
    result = scan("def go(cfg: VllmConfig):\n    return cfg.model_config.hf_config.num_experts\n")
    finding = only(result, "PP0905")
    assert finding.args == {"name": "num_experts", "chain": "cfg.model_config.hf_config", "cls": "HFConfig",
                            "label": "host 2.0"}
    assert finding.subject == "host.config.HFConfig.num_experts"
    assert (finding.old.path, finding.old.line) == ("host/config.py", 7)
    assert (finding.new.path, finding.new.line) == ("host/config.py", 5)  # the class NEW defines


def test_a_read_the_move_fixes():
    expect(scan("def go(cfg: VllmConfig):\n    return cfg.model_config.hf_config.num_local_experts\n"),
           ["PP0905 error fixed"])


PROPOSER = "class Proposer:\n    def propose(self):\n        pass\n\n    def {name}(self):\n        pass\n"
OWNER = ("from host.proposer import Proposer\n\n\nclass Owner:\n    def __init__(self):\n"
         "        self.drafter = Proposer()\n")


@pytest.mark.parametrize(("plugin", "expected"), [
    # the host assigns a Proposer, which NEW no longer gives `load`
    ("class OwnerPatch(ArcticPatch[Owner]):\n    def step(self):\n        self.drafter.load()\n",
     ["PP0905 error drift OwnerPatch.step:8"]),
    # the plugin's patch assigns its own proposer: the host's type no longer applies
    ("class Mine:\n    def load(self):\n        pass\n\n\nclass OwnerPatch(ArcticPatch[Owner]):\n"
     "    def __init__(self):\n        self.drafter = Mine()\n\n    def step(self):\n        self.drafter.load()\n",
     ["no PP0905"]),
    # ... in another patch class of the same target too
    ("class Mine:\n    pass\n\n\nclass InitPatch(ArcticPatch[Owner]):\n    def __init__(self):\n"
     "        self.drafter = Mine()\n\n\nclass OwnerPatch(ArcticPatch[Owner]):\n    def step(self):\n"
     "        self.drafter.load()\n", ["no PP0905"]),
    # a plugin subclass of the host's class: what it defines is its own, what it inherits is the host's
    ("class Mine(Proposer):\n    def load(self):\n        pass\n\n\nclass OwnerPatch(ArcticPatch[Owner]):\n"
     "    def __init__(self):\n        self.drafter = Mine()\n\n    def step(self):\n        self.drafter.load()\n",
     ["no PP0905"]),
    ("class Mine(Proposer):\n    pass\n\n\nclass OwnerPatch(ArcticPatch[Owner]):\n"
     "    def __init__(self):\n        self.drafter = Mine()\n\n    def step(self):\n        self.drafter.load()\n",
     ["PP0905 error drift OwnerPatch.step:15"]),
])
def test_plugin_assigned_attributes(plugin, expected):
    old = {"host/proposer.py": PROPOSER.format(name="load"), "host/owner.py": OWNER}
    new = {"host/proposer.py": PROPOSER.format(name="load_model"), "host/owner.py": OWNER}
    imports = "from plug.patching import ArcticPatch\nfrom host.owner import Owner\nfrom host.proposer import Proposer\n\n\n"
    result = run_scan(old, new, {**PATCHING, USE: imports + plugin}, checks=(ChainsCheck(),))
    expect(result, expected, at=True)


@pytest.mark.parametrize(("param", "chain"), [
    ("c" * 37, "c" * 37 + ".model_config.hf_config"),  # 60 characters: named whole
    ("c" * 38, "c" * 38 + ".model_config.hf_co..."),  # 61: cut to 57 and an ellipsis
])
def test_a_long_chain_is_cut_at_sixty_characters(param, chain):
    result = scan(f"def go({param}: VllmConfig):\n    return {param}.model_config.hf_config.num_experts\n")
    expect(result, ["PP0905 error drift go:7"], at=True)
    assert only(result, "PP0905").args["chain"] == chain
