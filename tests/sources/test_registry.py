import socket
import threading
from pathlib import Path

import pytest
from packaging.version import Version

from pinport.errors import NetworkUnavailable, SourceNotFound, VersionNotFound
from pinport.sources.package_index import IndexFile
from pinport.sources.registry import choose_file, fetch_release, list_versions

from .conftest import make_sdist, make_wheel

WHEEL_FILES = {
    "demo_pkg/__init__.py": "",
    "demo_pkg/core.py": "core = 1\n",
    "demo_pkg/stubs.pyi": "x: int\n",
    "demo_pkg/data.txt": "not source",
    "demo_helper/__init__.py": "",
    "top_module.py": "",
}
SDIST_FILES = {
    "pyproject.toml": '[project]\nname = "demo-pkg"\n',
    "setup.py": "",
    "setup.cfg": "",
    "README.md": "",
    "demo_pkg/__init__.py": "",
    "demo_pkg/vllm/model_runner.py": "runner = 1\n",
    "demo_pkg/proto/spec.proto": "syntax",
    "tests/__init__.py": "",
    "tests/test_x.py": "",
    "csrc/kernel.cu": "",
}


@pytest.fixture
def index(fake_index):
    folder = fake_index.folder
    fake_index.add(make_wheel(folder, "demo-pkg", "1.0.0", WHEEL_FILES))
    fake_index.add(
        make_wheel(
            folder,
            "demo-pkg",
            "1.0.0",
            {"demo_pkg/__init__.py": "linux"},
            tag="cp311-cp311-manylinux_2_28_x86_64",
        )
    )
    fake_index.add(make_sdist(folder, "demo-pkg", "1.0.0", SDIST_FILES))
    fake_index.add(make_sdist(folder, "demo-pkg", "1.1.0", SDIST_FILES, fmt="zip"))
    fake_index.add(make_wheel(folder, "demo-pkg", "0.9.0", WHEEL_FILES))
    fake_index.add(make_sdist(folder, "demo-pkg", "2.0.0rc1", SDIST_FILES))
    bad = folder / "demo_pkg-notaversion.tar.gz"
    bad.write_bytes(b"")
    fake_index.add(bad, project="demo-pkg")
    return fake_index


@pytest.mark.parametrize("mode", ["json", "html"])
def test_list_versions(index, mode):
    index.mode = mode
    assert list_versions("demo-pkg", indexes=[index.url]) == ["0.9.0", "1.0.0", "1.1.0", "2.0.0rc1"]
    assert list_versions("Demo_Pkg", indexes=[index.url])  # names are canonicalised


@pytest.mark.parametrize("mode", ["json", "html"])
def test_wheel_download_and_extract(index, cache, mode):
    index.mode = mode
    seen: list[tuple] = []
    tree = fetch_release(
        "demo-pkg", "1.0.0", cache=cache, indexes=[index.url], progress=lambda *a: seen.append(a)
    )
    assert (tree.label, tree.version, tree.package) == ("demo-pkg 1.0.0", "1.0.0", "demo_pkg")
    assert list(tree.files) == [
        "demo_helper/__init__.py",
        "demo_pkg/__init__.py",
        "demo_pkg/core.py",
        "demo_pkg/stubs.pyi",
    ]  # every package shipped
    assert tree.read_text("demo_pkg/__init__.py") == ""  # the pure wheel, not the linux one
    assert "Requires-Dist: torch==2.0.1" in tree.metadata
    assert not (tree.root / "demo_pkg" / "data.txt").exists()
    assert not (tree.root / "top_module.py").exists()
    assert tree.project_root is None
    entry = cache.root / "wheels" / "demo-pkg-1.0.0"
    assert sorted(p.name for p in entry.iterdir()) == ["manifest.json", "tree", "verified.json"]  # no archive kept
    descriptions = {d for d, *_ in seen}
    assert "downloading demo_pkg-1.0.0-py3-none-any.whl" in descriptions
    assert "extracting demo_pkg-1.0.0-py3-none-any.whl" in descriptions
    size = (index.folder / "demo_pkg-1.0.0-py3-none-any.whl").stat().st_size
    assert ("downloading demo_pkg-1.0.0-py3-none-any.whl", size, size) in seen


def test_wheel_packages_select_the_tree(index, cache):
    tree = fetch_release(
        "demo-pkg", "1.0.0", cache=cache, indexes=[index.url], packages=("demo_helper",)
    )
    assert tree.package == "demo_helper" and list(tree.files) == ["demo_helper/__init__.py"]
    with pytest.raises(SourceNotFound, match="no package 'nope'"):
        fetch_release("demo-pkg", "1.0.0", cache=cache, indexes=[index.url], packages=("nope",))


@pytest.mark.parametrize("version", ["1.0.0", "1.1.0"])  # .tar.gz and .zip
def test_sdist_download_and_extract(index, cache, version):
    tree = fetch_release("demo-pkg", version, cache=cache, prefer="sdist", indexes=[index.url])
    assert tree.root == tree.project_root
    for rel in (
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "demo_pkg/proto/spec.proto",
        "tests/test_x.py",
    ):
        assert (tree.root / rel).is_file(), rel
    assert not (tree.root / "README.md").exists() and not (tree.root / "csrc").exists()
    assert list(tree.files) == ["demo_pkg/__init__.py", "demo_pkg/vllm/model_runner.py"]
    assert tree.package == "demo_pkg"
    assert f"Version: {version}" in tree.metadata


def test_prefer_sdist_falls_back_to_a_wheel(index, cache):
    tree = fetch_release("demo-pkg", "0.9.0", cache=cache, prefer="sdist", indexes=[index.url])
    assert "Requires-Dist: torch==2.0.1" in tree.metadata


def test_second_call_needs_no_network(index, cache):
    first = fetch_release("demo-pkg", "1.0.0", cache=cache, indexes=[index.url])
    index.stop()
    assert fetch_release("demo-pkg", "1.0.0", cache=cache, indexes=[index.url]) == first
    assert fetch_release("demo-pkg", "1.0.0", cache=cache) == first  # no index asked at all


def test_corrupt_entry_is_downloaded_again(index, cache):
    tree = fetch_release("demo-pkg", "1.0.0", cache=cache, indexes=[index.url])
    (tree.root / "demo_pkg" / "core.py").unlink()
    downloads = len([r for r in index.requests if r.startswith("/files/")])
    seen: list[tuple] = []
    again = fetch_release(
        "demo-pkg", "1.0.0", cache=cache, indexes=[index.url], progress=lambda *a: seen.append(a)
    )
    assert (again.root / "demo_pkg" / "core.py").read_text() == "core = 1\n"
    assert len([r for r in index.requests if r.startswith("/files/")]) == downloads + 1
    assert any(d.startswith("rebuilding corrupt cache entry") for d, *_ in seen)


def test_unknown_version_names_nearby_ones(index, cache):
    with pytest.raises(VersionNotFound) as caught:
        fetch_release("demo-pkg", "9.9.9", cache=cache, indexes=[index.url])
    message = str(caught.value)
    assert message.startswith("demo-pkg 9.9.9 is not on the package index (newest: 1.1.0;")
    assert "1.1.0, 2.0.0rc1" in message
    assert not (cache.root / "wheels" / "demo-pkg-9.9.9").exists()


def test_invalid_version_and_unknown_project(index, cache):
    with pytest.raises(VersionNotFound, match="not a valid version"):
        fetch_release("demo-pkg", "latest", cache=cache, indexes=[index.url])
    with pytest.raises(SourceNotFound, match="nothing-here is not on the package index"):
        fetch_release("nothing-here", "1.0", cache=cache, indexes=[index.url])


def test_unreachable_index(cache):
    with pytest.raises(NetworkUnavailable) as caught:
        fetch_release("demo-pkg", "1.0.0", cache=cache, indexes=["http://127.0.0.1:9/simple"])
    assert "\n" not in str(caught.value) and "127.0.0.1:9" in str(caught.value)


def test_timeout_is_network_unavailable(cache, pip_settings):
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(silent.accept()[0]), daemon=True).start()
    pip_settings["timeout"] = "0.3"
    url = f"http://127.0.0.1:{silent.getsockname()[1]}/simple"
    try:
        with pytest.raises(NetworkUnavailable, match="timed out"):
            fetch_release("demo-pkg", "1.0.0", cache=cache, indexes=[url])
    finally:
        for sock in (*accepted, silent):
            sock.close()


def test_sha256_mismatch_is_rejected(fake_index, cache):
    wheel = make_wheel(fake_index.folder, "demo-pkg", "1.0.0", WHEEL_FILES)
    fake_index.add(wheel, sha256="0" * 64)
    with pytest.raises(NetworkUnavailable, match="corrupt: sha256"):
        fetch_release("demo-pkg", "1.0.0", cache=cache, indexes=[fake_index.url])
    assert not (cache.root / "wheels" / "demo-pkg-1.0.0").exists()
    assert not list((cache.root / "wheels").glob(".*staging*"))


def test_unsafe_sdist_members_stay_inside(fake_index, cache, tmp_path):
    fake_index.add(make_sdist(fake_index.folder, "demo-pkg", "3.0", SDIST_FILES, unsafe=True))
    tree = fetch_release("demo-pkg", "3.0", cache=cache, prefer="sdist", indexes=[fake_index.url])
    assert not (tree.root / "demo_pkg" / "link.py").exists()
    everything = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.py")}
    assert not any(Path(p).name in ("evil.py", "abs.py") for p in everything)
    assert not Path("/abs.py").exists()


def _file(filename: str, yanked: bool = False) -> IndexFile:
    from packaging.utils import parse_wheel_filename

    if filename.endswith(".whl"):
        tags = parse_wheel_filename(filename)[3]
        return IndexFile(filename, "u", Version("1.0"), "wheel", yanked=yanked, tags=tags)
    return IndexFile(filename, "u", Version("1.0"), "sdist", yanked=yanked)


def test_choose_file():
    files = [
        _file("d-1.0-cp311-cp311-macosx_11_0_arm64.whl"),
        _file("d-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"),
        _file("d-1.0-cp311-cp311-manylinux_2_28_aarch64.whl"),
        _file("d-1.0.zip"),
        _file("d-1.0.tar.gz"),
    ]
    assert choose_file(files, "wheel").filename == "d-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    assert choose_file(files, "sdist").filename == "d-1.0.tar.gz"
    assert (
        choose_file([*files, _file("d-1.0-py3-none-any.whl")], "wheel").filename
        == "d-1.0-py3-none-any.whl"
    )
    assert (
        choose_file([_file("d-1.0-py3-none-any.whl", yanked=True), files[0]], "wheel").filename
        == files[0].filename
    )
