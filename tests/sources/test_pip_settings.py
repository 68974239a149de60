"""Every pip setting that decides where packages come from, and a bad one as one clear line."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pinport.cli.main import main
from pinport.errors import ConfigError, SourceNotFound
from pinport.sources import package_index
from pinport.sources.package_index import IndexConfig, index_config, list_project

from .conftest import make_wheel


@pytest.fixture()
def recording_server():
    """An HTTP server listing one project page; records each request's path and Authorization."""
    seen: list[tuple[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            seen.append((self.path, self.headers.get("Authorization", "")))
            body = b'<a href="/files/demo-1.0-py3-none-any.whl">demo-1.0-py3-none-any.whl</a>'
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_port}", seen
    server.shutdown()
    server.server_close()


def test_find_links_directory_and_no_index(pip_settings, tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    make_wheel(wheels, "demo", "1.0", {"demo/__init__.py": ""})
    make_wheel(wheels, "other", "2.0", {"other/__init__.py": ""})
    pip_settings.update({"no-index": "yes", "find-links": f"{tmp_path / 'missing'} {wheels}"})
    config = index_config()
    assert config.urls == () and config.find_links == (str(tmp_path / "missing"), str(wheels))
    listing = list_project("demo", config)
    assert [(f.filename, f.kind, str(f.version)) for f in listing.files] == [("demo-1.0-py3-none-any.whl", "wheel", "1.0")]
    assert listing.files[0].url == (wheels / "demo-1.0-py3-none-any.whl").resolve().as_uri()
    with pytest.raises(SourceNotFound, match="nope is not on the package index"):
        list_project("nope", config)


def test_find_links_page_over_http(pip_settings, recording_server):
    host, seen = recording_server
    pip_settings.update({"no-index": "1", "find-links": f"http://{host}/links.html"})
    listing = list_project("demo", index_config())
    assert [f.url for f in listing.files] == [f"http://{host}/files/demo-1.0-py3-none-any.whl"]
    assert seen == [("/links.html", "")]


def test_credentials_in_the_index_url_are_sent_not_shown(pip_settings, recording_server):
    host, seen = recording_server
    pip_settings["index-url"] = f"http://me:s%40cret@{host}/simple"
    listing = list_project("demo", index_config())
    assert listing.files and seen[0] == ("/simple/demo/", "Basic bWU6c0BjcmV0")  # me:s@cret


def test_netrc_credentials(pip_settings, recording_server, tmp_path, monkeypatch):
    host, seen = recording_server
    rc = tmp_path / "netrc"
    rc.write_text("machine 127.0.0.1 login robot password hunter2\n", encoding="utf-8")
    rc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(rc))
    package_index._netrc.cache_clear()
    pip_settings["index-url"] = f"http://{host}/simple"
    try:
        list_project("demo", index_config())
    finally:
        package_index._netrc.cache_clear()
    assert seen[0] == ("/simple/demo/", "Basic cm9ib3Q6aHVudGVyMg==")  # robot:hunter2


def test_bad_netrc_is_one_config_error(pip_settings, recording_server, tmp_path, monkeypatch):
    host, _ = recording_server
    rc = tmp_path / "netrc"
    rc.write_text("machine\n", encoding="utf-8")
    monkeypatch.setenv("NETRC", str(rc))
    package_index._netrc.cache_clear()
    pip_settings["index-url"] = f"http://{host}/simple"
    try:
        with pytest.raises(ConfigError, match="not a usable netrc file"):
            list_project("demo", index_config())
    finally:
        package_index._netrc.cache_clear()


def test_trusted_host_and_client_cert(pip_settings, tmp_path):
    pip_settings.update({"index-url": "https://mirror.example.invalid:8443/simple",
                         "trusted-host": "mirror.example.invalid:8443 other.example.invalid"})
    config = index_config()
    assert config.is_trusted("https://mirror.example.invalid:8443/simple/x/")
    assert config.is_trusted("https://other.example.invalid/simple/")
    assert not config.is_trusted("https://mirror.example.invalid/simple/")  # another port
    assert not config.is_trusted("https://elsewhere.example.invalid/")
    bad = IndexConfig(urls=(), client_cert=str(tmp_path / "missing.pem"))
    with pytest.raises(ConfigError, match="client-cert setting .* is not usable"):
        bad.open("https://127.0.0.1:1/")


@pytest.mark.parametrize(("settings", "fragment"), [
    ({"no-index": "maybe"}, "pip's no-index setting 'maybe' is not a yes/no value"),
    ({"no-index": "true"}, "pip is set to no-index and has no find-links"),
    ({"timeout": "soon"}, "pip's timeout setting 'soon' is not a number"),
])
def test_bad_setting_is_one_line_and_exit_2(pip_settings, tmp_path, capsys, settings, fragment):
    pip_settings.update(settings)
    code = main(["scan", "--plugin", "demo-plugin==1.0", "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("pinport: error:") and fragment in err and err.count("\n") == 1
