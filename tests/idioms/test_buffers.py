"""Attributes a plugin sets through `register_buffer` / `register_parameter`: on `self`, or on a
layer its helper receives (`def create_weights(self, layer): layer.register_parameter("w", …)`,
vllm-rbln's quantization methods): reading them is not an undefined member."""

from __future__ import annotations

import pytest

from harness import expect, run_scan
from pinport.checks.undefined import UndefinedCheck

HOST = {"host/layer.py": "class Module:\n    def register_buffer(self, name, value):\n        pass\n\n"
                        "    def register_parameter(self, name, value):\n        pass\n\n\n"
                        "class Layer(Module):\n    def __init__(self):\n        self.quant_method = None\n"}


@pytest.mark.parametrize(("src", "expected"), [
    # a helper receiving the layer registers the parameter on it
    ("from host.layer import Layer\n\n\nclass Method:\n    def create_weights(self, layer):\n"
     "        layer.register_parameter('w13_weight', None)\n\n\nclass MyLayer(Layer):\n"
     "    def scale(self):\n        return self.w13_weight\n", ["no PP0051"]),
    # the class registers a buffer on itself
    ("from host.layer import Layer\n\n\nclass MyLayer(Layer):\n    def __init__(self):\n        super().__init__()\n"
     "        self.register_buffer('cache', None)\n\n    def scale(self):\n        return self.cache\n",
     ["no PP0051"]),
    # negative twin: the name registered is another one
    ("from host.layer import Layer\n\n\nclass MyLayer(Layer):\n    def __init__(self):\n        super().__init__()\n"
     "        self.register_buffer('other', None)\n\n    def scale(self):\n        return self.cache\n",
     ["PP0051 error latent"]),
])
def test_registered_buffers_and_parameters_are_defined(src, expected):
    expect(run_scan(HOST, HOST, {"plug/layer.py": src}, checks=(UndefinedCheck(),)), expected)
