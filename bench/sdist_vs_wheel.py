"""Does a host sdist carry the same `.py` files as its wheel, at a fraction of the download?

    python bench/sdist_vs_wheel.py [--version 0.33.0]

Fetches the sdist of vLLM VERSION into the cache (the wheel is normally cached already),
compares every `.py`/`.pyi` file under the package by content hash and prints: files in each,
identical, differing, only in the wheel (by top folder), and both download sizes. The rebase's
stops read every release between OLD and NEW, so the smaller download would matter, if complete.
"""

from __future__ import annotations

import argparse
from collections import Counter

from pinport.sources import Cache, fetch_release
from pinport.sources.package_index import index_config, list_project
from pinport.sources.registry import choose_file


def _size(dist: str, version: str, kind: str) -> int | None:
    config = index_config(None)
    files = [f for f in list_project(dist, config).files if str(f.version) == version]
    chosen = choose_file(files, kind)
    if chosen.kind != kind:
        return None
    with config.open(chosen.url) as response:  # the header only; the body is not read
        length = response.headers.get("Content-Length", "")
    return int(length) if length.isdigit() else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="0.33.0")
    parser.add_argument("--dist", default="vllm")
    args = parser.parse_args()
    cache = Cache()
    wheel = fetch_release(args.dist, args.version, cache=cache, prefer="wheel", packages=("vllm",))
    sdist = fetch_release(args.dist, args.version, cache=cache, prefer="sdist", packages=("vllm",))
    w, s = wheel.files, sdist.files
    same = sum(1 for p in w if s.get(p) == w[p])
    differ = sorted(p for p in w if p in s and s[p] != w[p])
    missing = sorted(p for p in w if p not in s)
    extra = sorted(p for p in s if p not in w)
    print(f"{args.dist} {args.version}: wheel {len(w)} .py files, sdist {len(s)}")
    print(f"  identical {same}, differing {len(differ)}, only in the wheel {len(missing)}, only in the sdist {len(extra)}")
    for top, n in Counter("/".join(p.split("/")[:2]) for p in missing).most_common(6):
        print(f"    only in the wheel: {n:4d} under {top}/")
    for p in differ[:5]:
        print(f"    differs: {p}")
    sizes = {kind: _size(args.dist, args.version, kind) for kind in ("wheel", "sdist")}
    if all(sizes.values()):
        print(f"  download: wheel {sizes['wheel'] / 2**20:.1f} MiB, sdist {sizes['sdist'] / 2**20:.1f} MiB "
              f"({sizes['sdist'] / sizes['wheel']:.0%} of the wheel)")


if __name__ == "__main__":
    main()
