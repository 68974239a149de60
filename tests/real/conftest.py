"""Real releases from the package registry, fetched once into the user cache and reused."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from pinport.config import Settings, load_settings
from pinport.findings import ScanResult
from pinport.model.index import IndexCache
from pinport.scan import Models, host_history, load_models, scan_models
from pinport.sources import Cache, SourceTree, fetch_release

PLUGIN_DIST = "arctic-inference"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/real/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.real)


@cache
def _cache() -> Cache:
    return Cache()


@cache
def _vllm(version: str) -> SourceTree:
    return fetch_release("vllm", version, cache=_cache(), prefer="wheel", packages=("vllm",))


@cache
def _plugin(version: str) -> SourceTree:
    return fetch_release(PLUGIN_DIST, version, cache=_cache(), prefer="sdist")


@cache
def _models(plugin_version: str, old: str, new: str) -> tuple[Models, Settings]:
    plugin = _plugin(plugin_version)
    settings = load_settings(plugin.project_root or plugin.root)
    index_cache = IndexCache.in_cache(_cache())
    return load_models(plugin, _vllm(old), _vllm(new), settings, cache=index_cache), settings


@pytest.fixture(scope="session")
def vllm_tree() -> Callable[[str], SourceTree]:
    """vllm_tree("0.26.0") -> the SourceTree of that vLLM wheel's sources."""
    return _vllm


@pytest.fixture(scope="session")
def plugin_tree() -> Callable[[str], SourceTree]:
    """plugin_tree("0.3.0") -> the SourceTree of that arctic-inference sdist."""
    return _plugin


@pytest.fixture(scope="session")
def real_models() -> Callable[[str, str, str], tuple[Models, Settings]]:
    """real_models("0.3.0", "0.26.0", "0.33.0") -> (indexed models, the plugin's settings), memoised."""
    return _models


@cache
def _models_of(dist: str, version: str, old: str, new: str = "") -> tuple[Models, Settings]:
    plugin = fetch_release(dist, version, cache=_cache(), prefer="sdist")
    settings = load_settings(plugin.project_root or plugin.root)
    index_cache = IndexCache.in_cache(_cache())
    old_tree = _vllm(old)
    return load_models(plugin, old_tree, _vllm(new or old), settings, cache=index_cache,
                       history=host_history(old_tree, settings, _cache())), settings


@pytest.fixture(scope="session")
def real_models_of() -> Callable[..., tuple[Models, Settings]]:
    """real_models_of("vllm-rbln", "0.11.2", "0.24.0"[, NEW]) -> any plugin release's models, memoised,
    loaded as `pinport scan` loads them (with the cached releases before OLD: the copies' origins)."""
    return _models_of


@pytest.fixture(scope="session")
def user_cache() -> Path:
    return _cache().root


@cache
def _scan(plugin_version: str, old: str, new: str, checks: tuple[str, ...]) -> ScanResult:
    models, settings = _models(plugin_version, old, new)
    return scan_models(models, settings, checks=checks, strict=True)


@pytest.fixture(scope="session")
def real_scan() -> Callable[..., ScanResult]:
    """real_scan("0.3.0", "0.26.0", "0.33.0", ("imports", ...)) -> the strict scan's result, memoised."""
    return _scan


# The ArcticInference moves most real-test modules judge; each module names the checks it runs
# with a module-scoped `checked` fixture (all checks where it has none).
@pytest.fixture(scope="module")
def checked() -> tuple[str, ...]:
    return ()


@pytest.fixture(scope="module")
def move_18_24(real_scan, checked) -> ScanResult:
    """arctic-inference 0.2.0 moved from its pin 0.18.0 to 0.24.0 (the maintainers' rebase for 0.3.0)."""
    return real_scan("0.2.0", "0.18.0", "0.24.0", checked)


@pytest.fixture(scope="module")
def move_18_26(real_scan, checked) -> ScanResult:
    return real_scan("0.2.0", "0.18.0", "0.26.0", checked)


@pytest.fixture(scope="module")
def move_26_33(real_scan, checked) -> ScanResult:
    """arctic-inference 0.3.0 moved from its pin 0.26.0 to 0.33.0 (the README's job)."""
    return real_scan("0.3.0", "0.26.0", "0.33.0", checked)


@pytest.fixture(scope="module")
def own_pin(real_scan, checked) -> ScanResult:
    """arctic-inference 0.3.0 on its own pin, 0.26.0."""
    return real_scan("0.3.0", "0.26.0", "0.26.0", checked)
