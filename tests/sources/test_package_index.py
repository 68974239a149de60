import json
from pathlib import Path

import pytest

from pinport.errors import ConfigError, NetworkUnavailable, SourceNotFound
from pinport.sources import package_index
from pinport.sources.package_index import (
    IndexConfig,
    index_config,
    list_project,
    parse_html_page,
    parse_json_page,
    parse_pip_config_list,
    pip_default_index,
    pip_environment,
    resolve_settings,
)

from .conftest import make_wheel

CONFIG_LIST = """\
:env:.cert='/env/cert.pem'
:env:.default-timeout='180'
global.cert='/etc/ssl/certs/ca.crt'
global.extra-index-url='file:///a/simple file:///b/simple'
global.index-url='https://global.example.invalid/simple'
install.index-url='https://install.example.invalid/simple'
download.timeout='30'
global.default-timeout='60'
not a setting line
"""


def test_parse_pip_config_list_drops_env_echo_lines():
    values = parse_pip_config_list(CONFIG_LIST)
    assert values["global.cert"] == "/etc/ssl/certs/ca.crt"
    assert values["global.extra-index-url"] == "file:///a/simple file:///b/simple"
    assert not any(key.startswith(":env:") for key in values)


def test_environment_wins_then_download_install_global():
    values = parse_pip_config_list(CONFIG_LIST)
    settings = resolve_settings({}, values)
    assert settings["index-url"] == "https://install.example.invalid/simple"
    assert settings["timeout"] == "30"
    assert settings["cert"] == "/etc/ssl/certs/ca.crt"
    env = {"index-url": "https://env.example.invalid/simple", "timeout": "5"}
    assert resolve_settings(env, values)["index-url"] == "https://env.example.invalid/simple"
    assert resolve_settings(env, values)["timeout"] == "5"
    assert resolve_settings({}, {"global.default-timeout": "60"})["timeout"] == "60"


def test_pip_environment(monkeypatch):
    for name in (
        "PIP_INDEX_URL",
        "PIP_EXTRA_INDEX_URL",
        "PIP_CERT",
        "PIP_TIMEOUT",
        "PIP_DEFAULT_TIMEOUT",
        "PIP_PROXY",
        "PIP_FIND_LINKS",
        "PIP_NO_INDEX",
        "PIP_TRUSTED_HOST",
        "PIP_CLIENT_CERT",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PIP_INDEX_URL", "https://env.example.invalid/simple")
    monkeypatch.setenv("PIP_DEFAULT_TIMEOUT", "99")
    assert pip_environment() == {"index-url": "https://env.example.invalid/simple", "timeout": "99"}


def test_pip_default_index_comes_from_pip():
    url = pip_default_index()
    assert url.startswith("https://") and url.rstrip("/").endswith("/simple")


def test_index_config_from_pip_settings(pip_settings, tmp_path):
    live = tmp_path / "live" / "simple"
    live.mkdir(parents=True)
    pip_settings.update(
        {
            "index-url": "https://main.example.invalid/simple",
            "extra-index-url": f"file:///gone/simple {live.as_uri()} ftp://odd.example.invalid/",
            "cert": "/some/cert.pem",
            "timeout": "7",
        }
    )
    config = index_config()
    assert config.urls == ("https://main.example.invalid/simple", live.as_uri())
    assert (config.cert, config.timeout) == ("/some/cert.pem", 7.0)
    assert index_config(["http://127.0.0.1:1/simple"]).urls == ("http://127.0.0.1:1/simple",)


def test_index_config_defaults_to_pips_own_index(pip_settings):
    assert index_config().urls == (pip_default_index(),)
    pip_settings["timeout"] = "soon"
    with pytest.raises(ConfigError, match="timeout"):
        index_config()


def test_unusable_cert_is_a_config_error(tmp_path):
    config = IndexConfig(urls=(), cert=str(tmp_path / "missing.pem"))
    with pytest.raises(ConfigError, match="cert"):
        config.open("https://example.invalid/")


def test_parse_json_page_resolves_urls():
    body = json.dumps(
        {
            "files": [
                {
                    "filename": "demo-1.0.tar.gz",
                    "url": "../../files/demo-1.0.tar.gz",
                    "hashes": {"sha256": "ab"},
                    "yanked": "broken",
                },
                {
                    "filename": "demo-1.0-py3-none-any.whl",
                    "url": "https://cdn.example.invalid/w.whl",
                    "hashes": {},
                },
                {"filename": "demo-notaversion.tar.gz", "url": "x"},
                {"filename": "other-1.0.tar.gz", "url": "x"},
                {"filename": "demo-1.0.exe", "url": "x"},
            ]
        }
    ).encode()
    files = parse_json_page("demo", body, "https://idx.example.invalid/simple/demo/")
    assert [(f.filename, f.kind, f.sha256, f.yanked) for f in files] == [
        ("demo-1.0.tar.gz", "sdist", "ab", True),
        ("demo-1.0-py3-none-any.whl", "wheel", None, False),
    ]
    assert files[0].url == "https://idx.example.invalid/files/demo-1.0.tar.gz"


def test_parse_html_page_reads_hash_fragment_and_yanked():
    body = (
        b'<a href="../../f/demo-2.0.tar.gz#sha256=cd" data-yanked="">x</a>'
        b'<a href="/f/demo_x-2.0.tar.gz">y</a><a>no href</a>'
    )
    files = parse_html_page("demo", body, "https://idx.example.invalid/simple/demo/")
    assert [(f.filename, f.url, f.sha256, f.yanked) for f in files] == [
        ("demo-2.0.tar.gz", "https://idx.example.invalid/f/demo-2.0.tar.gz", "cd", True),
    ]


def _file_index(root: Path, wheel: Path) -> str:
    page = root / "simple" / "demo-pkg"
    page.mkdir(parents=True)
    (root / "files").mkdir()
    wheel.rename(root / "files" / wheel.name)
    (page / "index.html").write_text(f'<a href="../../files/{wheel.name}">{wheel.name}</a>')
    return (root / "simple").as_uri()


def test_local_file_index(tmp_path):
    wheel = make_wheel(tmp_path, "demo-pkg", "1.0", {"demo_pkg/__init__.py": ""})
    url = _file_index(tmp_path / "mirror", wheel)
    listing = list_project("demo-pkg", IndexConfig(urls=(url,)))
    assert [f.filename for f in listing.files] == [wheel.name]
    with pytest.raises(SourceNotFound, match="not on the package index"):
        list_project("other", IndexConfig(urls=(url,)))


def test_unreachable_index_is_network_unavailable():
    with pytest.raises(NetworkUnavailable, match="cannot reach the package index 127.0.0.1:9"):
        list_project("demo", IndexConfig(urls=("http://127.0.0.1:9/simple",)))


def test_one_unreachable_index_among_several_is_remembered(fake_index, tmp_path):
    fake_index.add(make_wheel(fake_index.folder, "demo", "1.0", {"demo/__init__.py": ""}))
    listing = list_project("demo", IndexConfig(urls=("http://127.0.0.1:9/simple", fake_index.url)))
    assert len(listing.files) == 1
    assert listing.failures and "127.0.0.1:9" in listing.failures[0]


def test_http_errors_are_network_unavailable(fake_index):
    fake_index.fail_with = 503
    with pytest.raises(NetworkUnavailable, match="HTTP 503"):
        list_project("demo", IndexConfig(urls=(fake_index.url,)))


def test_pip_settings_is_asked_once(monkeypatch):
    monkeypatch.undo()  # the real, uncached pip_settings of the module
    package_index.pip_settings.cache_clear()
    first = package_index.pip_settings()
    assert package_index.pip_settings() is first
