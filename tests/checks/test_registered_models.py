"""Registered model classes (plugin/registered_models.py): the host builds and calls a model class the plugin
registers with its model registry only by keyword (settings `model-registrars`, `registered-model-calls`), so a
positional-order or kind mismatch of its override is info; a mismatch that call trips stays a warning."""

from __future__ import annotations

import pytest

from harness import run_scan
from pinport.checks.override_signature import SignaturesCheck

HOST = {
    "host/models/base.py": """
        class ModelBase:
            def __init__(self, vllm_config, prefix=""):
                self.prefix = prefix

            def forward(self, input_ids, positions, intermediate_tensors=None, inputs_embeds=None):
                return input_ids
    """,
    "host/models/registry.py": """
        class _Registry:
            def __init__(self):
                self.models = {}

            def register_model(self, model_arch, model_cls):
                self.models[model_arch] = model_cls

            def build(self, arch, config):
                return self.models[arch](vllm_config=config, prefix="")


        ModelRegistry = _Registry()
    """,
}
IMPLICIT = {"called_implicitly": ("forward",)}  # torch runs `forward` when the host calls the model, as vLLM's profile says
SETTINGS = {**IMPLICIT, "model_registrars": ("register_model(model_arch, model_cls)",),
            "registered_model_calls": ("__init__(vllm_config, prefix)", "__init__(vllm_config)",
                                       "forward(input_ids, positions, intermediate_tensors, inputs_embeds, **)")}
MODEL = """
from host.models.base import ModelBase


class MyModel(ModelBase):
    def __init__(self{init}):
        self.ready = True

    def forward(self{forward}):
        return input_ids
"""
TABLE = {
    "plug/registry.py": '_MODELS = {"MyArch": ("mine", "MyModel")}\n',
    "plug/setup.py": """
        def register():
            from host.models.registry import ModelRegistry

            from plug.registry import _MODELS

            for arch, (mod, cls) in _MODELS.items():
                ModelRegistry.register_model(arch, f"plug.{mod}:{cls}")
    """,
}


def _model(result) -> list[tuple]:
    return sorted((f.code, f.level.value, f.plugin.line, f.args.get("param")) for f in result.findings
                  if f.plugin and f.plugin.path == "plug/mine.py" and f.level.value != "info")


@pytest.mark.parametrize("register", [
    'from host.models.registry import ModelRegistry\nfrom plug.mine import MyModel\n\n'
    'ModelRegistry.register_model("MyArch", MyModel)\n',
    'from host.models.registry import ModelRegistry\n\nModelRegistry.register_model("MyArch", "plug.mine:MyModel")\n',
    None,  # a loop over a plugin table spelling "pkg.mod:Cls" strings
])
@pytest.mark.parametrize(("init", "forward", "settings", "warned"), [
    # keyword-only vllm_config/prefix, forward taking positions in **kwargs: the host's keyword calls bind
    (", config=None, *args, vllm_config=None, prefix='', **kwargs", ", input_ids, **kwargs", SETTINGS, []),
    # without the profile's statement of how the host calls a registered model: both stay warnings
    (", config=None, *args, vllm_config=None, prefix='', **kwargs", ", input_ids, **kwargs", IMPLICIT,
     [("PP0101", "warning", 8, "positions"), ("PP0104", "warning", 5, "prefix"),
      ("PP0104", "warning", 5, "vllm_config")]),
    # vllm_config positional-only: the keyword call cannot pass it
    (", vllm_config, /, *, prefix=''", ", input_ids, **kwargs", SETTINGS, [("PP0104", "warning", 5, "prefix"),
                                                                            ("PP0104", "warning", 5, "vllm_config")]),
    # prefix required: the second way the host builds it (vllm_config alone) does not pass it
    (", *, vllm_config, prefix", ", input_ids, **kwargs", SETTINGS, [("PP0104", "warning", 5, "prefix"),
                                                                       ("PP0104", "warning", 5, "vllm_config"),
                                                                       ("PP0107", "warning", 5, "prefix")]),
    # an extra required positional no host call passes; a forward without **kwargs drops the runner's extras
    (", vllm_config, extra, *, prefix=''", ", input_ids, positions, intermediate_tensors=None, inputs_embeds=None",
     SETTINGS, [("PP0104", "warning", 5, "prefix"), ("PP0201", "warning", 5, "extra")]),
])
def test_a_registered_model_is_built_and_called_by_keyword(register, init, forward, settings, warned):
    plugin = {"plug/mine.py": MODEL.format(init=init, forward=forward),
              **({"plug/setup.py": register} if register is not None else TABLE)}
    result = run_scan(HOST, HOST, plugin, checks=(SignaturesCheck(),), **settings)
    assert _model(result) == warned


@pytest.mark.parametrize("setup", [
    'from plug.mine import MyModel\n\nMODELS = {"MyArch": MyModel}\n',
    # the plugin's own registry's `register_model`, not the host's: what it does with the class is not stated
    'from plug.mine import MyModel\n\n\nclass Models:\n    def register_model(self, arch, cls):\n'
    '        self.cls = cls\n\n\nModels().register_model("MyArch", MyModel)\n',
])
def test_an_unregistered_model_class_keeps_its_warnings(setup):
    """The same model only named in a table no host registrar takes: nothing says the host calls it by keyword."""
    plugin = {"plug/mine.py": MODEL.format(init=", config=None, *args, vllm_config=None, prefix='', **kwargs",
                                           forward=", input_ids, **kwargs"),
              "plug/setup.py": setup}
    result = run_scan(HOST, HOST, plugin, checks=(SignaturesCheck(),), **SETTINGS)
    assert _model(result) == [("PP0101", "warning", 8, "positions"), ("PP0104", "warning", 5, "prefix"),
                              ("PP0104", "warning", 5, "vllm_config")]
