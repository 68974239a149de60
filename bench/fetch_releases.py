"""Fetch real releases into the user cache ahead of tests and benchmarks (idempotent).

    python bench/fetch_releases.py                # the releases the benchmarks and tests use
    python bench/fetch_releases.py --all-vllm     # plus every vLLM release 0.8.1 .. 0.33.0
"""

from __future__ import annotations

import argparse
import sys
import time

from packaging.version import Version

from pinport.errors import PinportError
from pinport.sources import Cache, fetch_release, list_versions

PLUGIN_PINS = {  # arctic-inference release -> the vLLM version it pins (DOMAIN.md)
    "0.0.4": "0.8.1", "0.0.6": "0.8.4", "0.0.7": "0.8.4", "0.0.8": "0.9.0.1", "0.0.9": "0.9.2",
    "0.1.0": "0.10.1", "0.1.1": "0.10.1", "0.1.2": "0.11.0", "0.2.0": "0.18.0", "0.3.0": "0.26.0",
}
EXTRA_VLLM = ("0.24.0", "0.33.0")


def all_vllm_versions(low: str = "0.8.1", high: str = "0.33.0") -> list[str]:
    return [v for v in list_versions("vllm")
            if Version(low) <= Version(v) <= Version(high) and not Version(v).is_prerelease]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--all-vllm", action="store_true")
    args = parser.parse_args()
    cache = Cache()
    vllm = sorted(set(PLUGIN_PINS.values()) | set(EXTRA_VLLM), key=Version)
    if args.all_vllm:
        vllm = all_vllm_versions()
    try:
        for version in PLUGIN_PINS:
            fetch_release("arctic-inference", version, cache=cache, prefer="sdist")
        for version in vllm:
            started = time.perf_counter()
            tree = fetch_release("vllm", version, cache=cache, prefer="wheel", packages=("vllm",))
            print(f"vllm {version}: {len(tree.files)} files ({time.perf_counter() - started:.1f}s)", flush=True)
    except PinportError as exc:
        print(f"fetch_releases: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
