"""Other real vLLM plugins: found, pinned and scanned with no settings (tests/real/plugins.toml)."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

import pytest

from pinport.config import load_settings
from pinport.pins import find_pins, read_pin
from pinport.sources import Cache, fetch_release, list_versions

PLUGINS = tomllib.loads((Path(__file__).parent / "plugins.toml").read_text(encoding="utf-8"))
RELEASES = sorted({(dist, v) for dist, spec in PLUGINS.items()
                   for pair in spec["pairs"] for v in pair[:2]} |
                  {(dist, spec["validated"]) for dist, spec in PLUGINS.items() if spec["validated"]})
PINS = {(dist, before): old for dist, spec in PLUGINS.items() for before, _, old, _ in spec["pairs"]} | {
    (dist, after): new for dist, spec in PLUGINS.items() for _, after, _, new in spec["pairs"]}


@cache
def host_versions() -> tuple[str, ...]:
    return tuple(list_versions("vllm"))


def release(dist: str, version: str):
    return fetch_release(dist, version, cache=Cache(), prefer="sdist")


def _reader(root: Path):
    def read(rel: str) -> str | None:
        try:
            return (root / rel).read_text(encoding="utf-8")
        except OSError:
            return None

    def listing() -> list[str]:
        return sorted(p.relative_to(root).as_posix() for pattern in ("*", "*/*") for p in root.glob(pattern)
                      if p.is_file())
    return read, listing


@pytest.mark.parametrize(("dist", "version"), sorted(PINS))
def test_pin_read_without_settings(dist, version):
    tree = release(dist, version)
    root = tree.project_root or tree.root
    settings = load_settings(root)
    assert settings.profile == "" and settings.plugin_package == ""
    read, listing = _reader(root)
    assert read_pin(settings, read, listing, host_versions) == PINS[(dist, version)]


def test_local_version_pin_and_its_span():
    tree = release("vllm-rbln", "0.11.2")
    read, listing = _reader(tree.root)
    (statement,) = find_pins(read, "vllm", listing)
    assert (statement.file, statement.requirement, statement.exact) == (
        "vllm_rbln-0.11.2.dist-info/METADATA", "vllm==0.24.0+cpu", "0.24.0+cpu")
    assert read(statement.file)[statement.start:statement.end] == "vllm==0.24.0+cpu"


def test_readme_install_line_is_the_only_exact_pin():
    tree = release("vllm-musa", "0.1.1")
    read, listing = _reader(tree.project_root or tree.root)
    statements = find_pins(read, "vllm", listing)
    assert [s.requirement for s in statements if s.exact] == ["vllm==0.13.0"]
    assert read_pin(load_settings(tree.project_root), read, listing) == "0.13.0"


@pytest.mark.parametrize(("dist", "version"), RELEASES)
def test_plugin_found_and_scanned_without_settings(dist, version, real_models_of):
    models, _ = real_models_of(dist, version, PINS.get((dist, version)) or "0.30.0")
    assert models.plugin.packages == tuple(PLUGINS[dist]["packages"])
    assert models.plugin.modules and not any(m.startswith(("tests", "examples")) for m in models.plugin.modules)
