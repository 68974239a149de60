"""Hand-built findings for the renderer tests: drift and latent, with and without each location."""

from __future__ import annotations

import pytest

from pinport.findings import Finding, Kind, Location, ScanResult, Severity, Status

PARAM_REMOVED = Kind("PP0201", "ParameterRemoved", "{name} lost parameter {param}",
                     Severity.ERROR, 2, "override_signature")
IMPORT_MOVED = Kind("PP0401", "ImportMoved", "{name} moved to {module}", Severity.WARNING, 4,
                    "imports")
UNDEFINED = Kind("PP0001", "UndefinedName", "{name} is defined nowhere", Severity.INFO, None,
                 "gaps")
BYPASS = Kind("PP1001", "ParallelImplementation", "{name} has a parallel implementation",
              Severity.WARNING, 10, "bypass")

RUNNER = "arctic_inference/vllm/model_runner.py"
UTILS = "arctic_inference/utils.py"
HUNK = ("@@ -10,3 +10,3 @@", " def f(x):", "-    return x.unbind(0)", "+    return x.unbind(1)")


def _signature_finding() -> Finding:
    return Finding(
        PARAM_REMOVED, {"name": "_bookkeeping_sync", "param": "spec_decode_metadata"},
        Location(RUNNER, 42, 4, "GPUModelRunnerPatch._bookkeeping_sync", "def _bookkeeping_sync("),
        old=Location("vllm/v1/worker/gpu_model_runner.py", 1800, 4, "GPUModelRunner._bookkeeping_sync",
                     "def _bookkeeping_sync(self, out, spec_decode_metadata):"),
        new=Location("vllm/v1/worker/gpu_model_runner.py", 1850, 4, "GPUModelRunner._bookkeeping_sync",
                     "def _bookkeeping_sync(self, out):"),
        subject="vllm.v1.worker.gpu_model_runner.GPUModelRunner._bookkeeping_sync",
        suggestion="drop spec_decode_metadata from the override",
        details=HUNK,
    )


def _import_finding() -> Finding:
    return Finding(
        IMPORT_MOVED, {"name": "is_quantized_kv_cache", "module": "vllm.utils.torch_utils"},
        Location(RUNNER, 7, 0, "<module>", "from vllm.utils import is_quantized_kv_cache"),
        old=Location("vllm/utils/__init__.py", 120, 0, "<module>", "def is_quantized_kv_cache(x):"),
        subject="vllm.utils.is_quantized_kv_cache",
        suggestion="import it from vllm.utils.torch_utils",
    )


def _latent_finding() -> Finding:
    return Finding(
        UNDEFINED, {"name": "_register_shift_cudagraph_keys"},
        Location(UTILS, 3, 8, "shift_capture", "self._register_shift_cudagraph_keys()"),
        subject="_register_shift_cudagraph_keys",
        status=Status.LATENT,
        details=tuple(f"call site {i}" for i in range(30)),
    )


def _host_wide_finding() -> Finding:
    return Finding(
        BYPASS, {"name": "GPUModelRunner"}, None,
        new=Location("vllm/v1/worker/gpu/model_runner.py", 30, 0, "GPUModelRunner",
                     "class GPUModelRunner:"),
        subject="vllm.v1.worker.gpu_model_runner.GPUModelRunner",
    )


@pytest.fixture
def result() -> ScanResult:
    findings = (_signature_finding(), _import_finding(), _latent_finding(), _host_wide_finding())
    fixed = (Finding(IMPORT_MOVED, {"name": "old_helper", "module": "vllm.x"},
                     Location(UTILS, 1), status=Status.FIXED),)
    return ScanResult(
        plugin_label="arctic-inference@main", old_label="vllm 0.26.0", new_label="vllm 0.27.0",
        findings=tuple(sorted(findings, key=Finding.sort_key)),
        checks=("imports", "override_signature", "bypass", "mirrors"),
        files_scanned=12, seconds=1.5, fixed=fixed,
    )


@pytest.fixture
def empty_result() -> ScanResult:
    return ScanResult("plugin", "old", "new", ())


@pytest.fixture
def one_finding():
    """Build a single-finding ScanResult around a Finding made with the given overrides."""

    def make(**overrides) -> ScanResult:
        fields = {"kind": IMPORT_MOVED, "args": {"name": "a", "module": "b"},
                  "plugin": Location(UTILS, 5, 2, "f", "x = 1")}
        fields.update(overrides)
        return ScanResult("plugin", "old", "new", (Finding(**fields),))

    return make
