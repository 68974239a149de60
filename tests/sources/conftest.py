"""A local fake package index (PEP 691 JSON and PEP 503 HTML) and archive builders for the tests."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename

from pinport.sources import package_index
from pinport.sources.cache import Cache

JSON_SIMPLE = "application/vnd.pypi.simple.v1+json"


def make_wheel(
    folder: Path, dist: str, version: str, files: dict[str, str], tag: str = "py3-none-any"
) -> Path:
    """A wheel holding files plus a dist-info with METADATA."""
    stem = dist.replace("-", "_")
    path = folder / f"{stem}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)
        wheel.writestr(
            f"{stem}-{version}.dist-info/METADATA",
            f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
            "Requires-Dist: torch==2.0.1\n",
        )
        wheel.writestr(f"{stem}-{version}.dist-info/RECORD", "")
    return path


def add_tar_member(tar: tarfile.TarFile, name: str, data: bytes = b"", **attrs: object) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for key, value in attrs.items():
        setattr(info, key, value)
    tar.addfile(info, io.BytesIO(data) if data else None)


def make_sdist(
    folder: Path,
    dist: str,
    version: str,
    files: dict[str, str],
    fmt: str = "tar.gz",
    unsafe: bool = False,
) -> Path:
    """An sdist with a `name-version/` top folder; `unsafe` adds hostile members."""
    stem = dist.replace("-", "_")
    top = f"{stem}-{version}"
    contents = {"PKG-INFO": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n", **files}
    path = folder / f"{top}.{fmt}"
    if fmt == "zip":
        with zipfile.ZipFile(path, "w") as archive:
            for name, text in contents.items():
                archive.writestr(f"{top}/{name}", text)
        return path
    with tarfile.open(path, "w:gz") as tar:
        add_tar_member(tar, top, type=tarfile.DIRTYPE)
        for name, text in contents.items():
            add_tar_member(tar, f"{top}/{name}", text.encode())
        if unsafe:
            add_tar_member(tar, f"{top}/../evil.py", b"evil = 1\n")
            add_tar_member(tar, "/abs.py", b"evil = 2\n")
            add_tar_member(
                tar, f"{top}/{stem}/link.py", type=tarfile.SYMTYPE, linkname="/etc/passwd"
            )
    return path


class FakeIndex:
    """Serves /simple/<project>/ and /files/<name> from 127.0.0.1 on a thread."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.mode = "json"  # or "html": what the index speaks
        self.requests: list[str] = []
        self.projects: dict[str, list[dict]] = {}
        self.fail_with = 0  # an HTTP status to answer everything with
        index = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                index.requests.append(self.path)
                index.respond(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/simple"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def add(self, path: Path, sha256: str | None = None, project: str = "") -> None:
        """List path under its project (from the file name unless given)."""
        name = project or (
            parse_wheel_filename(path.name)[0]
            if path.name.endswith(".whl")
            else parse_sdist_filename(path.name)[0]
        )
        digest = sha256 or hashlib.sha256(path.read_bytes()).hexdigest()
        self.projects.setdefault(canonicalize_name(name), []).append(
            {
                "filename": path.name,
                "url": f"../../files/{path.name}",
                "hashes": {"sha256": digest},
                "yanked": False,
            }
        )

    def respond(self, handler: BaseHTTPRequestHandler) -> None:
        parts = handler.path.strip("/").split("/")
        if self.fail_with:
            handler.send_error(self.fail_with)
        elif parts[0] == "files" and (self.folder / parts[-1]).is_file():
            self._send(handler, (self.folder / parts[-1]).read_bytes(), "application/octet-stream")
        elif parts[0] == "simple" and len(parts) == 2 and parts[1] in self.projects:
            files = self.projects[parts[1]]
            if self.mode == "json" and JSON_SIMPLE in handler.headers.get("Accept", ""):
                body = json.dumps(
                    {"meta": {"api-version": "1.0"}, "name": parts[1], "files": files}
                )
                self._send(handler, body.encode(), JSON_SIMPLE)
            else:
                links = "".join(
                    f'<a href="{f["url"]}#sha256={f["hashes"]["sha256"]}"'
                    f"{' data-yanked' if f['yanked'] else ''}>{f['filename']}</a>\n"
                    for f in files
                )
                self._send(handler, f"<html><body>{links}</body></html>".encode(), "text/html")
        else:
            handler.send_error(404)

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, body: bytes, content_type: str) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(autouse=True)
def pip_settings(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Hermetic pip settings: empty unless a test fills them (the machine's config is ignored)."""
    settings: dict[str, str] = {}
    monkeypatch.setattr(package_index, "pip_settings", lambda: settings)
    return settings


@pytest.fixture
def fake_index(tmp_path: Path):
    folder = tmp_path / "index-files"
    folder.mkdir()
    index = FakeIndex(folder)
    yield index
    index.stop()


@pytest.fixture
def cache(tmp_path: Path) -> Cache:
    return Cache(tmp_path / "cache")
