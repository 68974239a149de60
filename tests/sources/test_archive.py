import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from pinport.sources.archive import extract_tar, extract_zip, safe_relpath

from .conftest import add_tar_member


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a/b.py", "a/b.py"),
        ("./a.py", "a.py"),
        ("a/../b.py", "b.py"),
        ("a//b.py", "a/b.py"),
        ("../evil.py", None),
        ("a/../../evil.py", None),
        ("/abs.py", None),
        ("C:evil.py", None),
        ("a\\..\\evil.py", None),
        ("", None),
        (".", None),
        ("..", None),
    ],
)
def test_safe_relpath(name, expected):
    assert safe_relpath(name) == expected


def _hostile_tar(path: Path) -> None:
    with tarfile.open(path, "w") as tar:
        add_tar_member(tar, "pkg/ok.py", b"ok = 1\n")
        add_tar_member(tar, "../evil.py", b"evil = 1\n")
        add_tar_member(tar, "pkg/../../evil2.py", b"evil = 2\n")
        add_tar_member(tar, "/abs.py", b"evil = 3\n")
        add_tar_member(tar, "pkg/link.py", type=tarfile.SYMTYPE, linkname="../../outside.py")
        add_tar_member(tar, "linkdir", type=tarfile.SYMTYPE, linkname="..")
        add_tar_member(tar, "linkdir/through.py", b"through = 1\n")
        add_tar_member(tar, "pkg/hard.py", type=tarfile.LNKTYPE, linkname="pkg/ok.py")
        add_tar_member(tar, "pkg/dev", type=tarfile.CHRTYPE)
        add_tar_member(tar, "pkg/fifo", type=tarfile.FIFOTYPE)


def _all_files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if not p.is_dir()}


@pytest.mark.parametrize("mode", ["r", "r|"])
def test_tar_writes_only_safe_regular_files(tmp_path, mode):
    _hostile_tar(tmp_path / "x.tar")
    dest = tmp_path / "box" / "dest"
    dest.mkdir(parents=True)
    seen = []
    with open(tmp_path / "x.tar", "rb") as raw, tarfile.open(fileobj=raw, mode=mode) as tar:
        written = extract_tar(
            tar, dest, lambda rel: rel, description="x", progress=lambda *a: seen.append(a)
        )
    assert sorted(written) == ["linkdir/through.py", "pkg/ok.py"]
    assert _all_files(dest) == {"linkdir/through.py", "pkg/ok.py"}
    assert not any(p.is_symlink() for p in dest.rglob("*"))
    assert _all_files(tmp_path / "box") == {"dest/linkdir/through.py", "dest/pkg/ok.py"}
    assert not (tmp_path / "evil.py").exists() and not (tmp_path / "outside.py").exists()
    assert seen[-1] == ("x", 10, 10)


def test_select_can_skip_and_rename(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        add_tar_member(tar, "top/a.py", b"a\n")
        add_tar_member(tar, "top/b.txt", b"b\n")
    buf.seek(0)
    with tarfile.open(fileobj=buf, mode="r") as tar:
        written = extract_tar(
            tar, tmp_path, lambda rel: rel[4:] if rel.endswith(".py") else None, description="x"
        )
    assert written == ["a.py"]
    assert _all_files(tmp_path) == {"a.py"}


def test_select_cannot_escape(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        add_tar_member(tar, "a.py", b"a\n")
    buf.seek(0)
    dest = tmp_path / "dest"
    dest.mkdir()
    with tarfile.open(fileobj=buf) as tar:
        assert extract_tar(tar, dest, lambda rel: "../" + rel, description="x") == []
    assert _all_files(tmp_path) == set()


def test_zip_writes_only_safe_regular_files(tmp_path):
    path = tmp_path / "x.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("pkg/ok.py", "ok = 1\n")
        archive.writestr("../evil.py", "evil = 1\n")
        archive.writestr("/abs.py", "evil = 2\n")
        link = zipfile.ZipInfo("pkg/link.py")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/passwd")
        archive.writestr("pkg/sub/", "")
    dest = tmp_path / "box" / "dest"
    dest.mkdir(parents=True)
    with zipfile.ZipFile(path) as archive:
        written = extract_zip(archive, dest, lambda rel: rel, description="x")
    assert written == ["pkg/ok.py"]
    assert _all_files(tmp_path / "box") == {"dest/pkg/ok.py"}
