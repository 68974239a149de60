"""The package index as pip is configured to see it, and the files it lists for a project.

No index is named here: URLs, certificate, timeout and proxy come from pip's environment
variables, then `pip config list`, then pip's own built-in default.
"""

from __future__ import annotations

import ast
import http.client
import json
import os
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from html.parser import HTMLParser
from pathlib import Path
from typing import IO
from urllib.parse import unquote, urljoin, urlsplit
from urllib.request import url2pathname

from packaging.tags import Tag
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from .. import __version__
from ..errors import ConfigError, NetworkUnavailable, SourceNotFound

JSON_SIMPLE = "application/vnd.pypi.simple.v1+json"  # PEP 691
_ACCEPT = f"{JSON_SIMPLE}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1"
_PIP_TIMEOUT = 15.0  # pip's own default when nothing is configured

# pip setting -> the environment variables pip reads for it, strongest first
_ENVIRONMENT = {
    "index-url": ("PIP_INDEX_URL",),
    "extra-index-url": ("PIP_EXTRA_INDEX_URL",),
    "cert": ("PIP_CERT",),
    "timeout": ("PIP_TIMEOUT", "PIP_DEFAULT_TIMEOUT"),
    "proxy": ("PIP_PROXY",),
}
_ALIASES = {"timeout": ("timeout", "default-timeout")}
_SECTIONS = ("download", "install", "global")  # pip download reads its own section over global

# what failing to reach an index raises: DNS, refused, reset, TLS, timeout, truncated body
NETWORK_ERRORS = (OSError, http.client.HTTPException)


@dataclass(frozen=True)
class IndexConfig:
    """Where to look and how to connect, as pip would."""

    urls: tuple[str, ...]
    cert: str = ""
    timeout: float = _PIP_TIMEOUT
    proxy: str = ""

    @cached_property
    def _opener(self) -> urllib.request.OpenerDirector:
        try:
            context = ssl.create_default_context(
                cafile=self.cert if self.cert and not Path(self.cert).is_dir() else None,
                capath=self.cert if self.cert and Path(self.cert).is_dir() else None,
            )
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(f"pip's cert setting {self.cert!r} is not usable: {exc}") from None
        handlers: list[urllib.request.BaseHandler] = [urllib.request.HTTPSHandler(context=context)]
        if self.proxy:
            handlers.append(urllib.request.ProxyHandler({"http": self.proxy, "https": self.proxy}))
        return urllib.request.build_opener(*handlers)

    def open(self, url: str, accept: str = "*/*") -> IO[bytes]:
        """Open url with pip's certificate, proxy and timeout; network errors propagate."""
        request = urllib.request.Request(
            url, headers={"Accept": accept, "User-Agent": f"pinport/{__version__}"}
        )
        return self._opener.open(request, timeout=self.timeout)


@dataclass(frozen=True)
class IndexFile:
    """One release file the index lists."""

    filename: str
    url: str
    version: Version
    kind: str  # "wheel" or "sdist"
    sha256: str | None = None
    yanked: bool = False
    tags: frozenset[Tag] = field(default_factory=frozenset)  # wheels only


@dataclass(frozen=True)
class Listing:
    """The files every reachable index lists for a project, and the indexes that failed."""

    files: tuple[IndexFile, ...]
    failures: tuple[str, ...]


def pip_environment() -> dict[str, str]:
    """pip's settings from its environment variables: the only environment read for the index."""
    out: dict[str, str] = {}
    for key, names in _ENVIRONMENT.items():
        for name in names:
            if os.environ.get(name):
                out[key] = os.environ[name]
                break
    return out


def parse_pip_config_list(text: str) -> dict[str, str]:
    """`section.key='value'` lines of `pip config list`; pip's `:env:` echo lines are dropped."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, raw = line.partition("=")
        if not sep or key.startswith(":env:"):
            continue
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw
        out[key.strip()] = str(value)
    return out


def resolve_settings(env: Mapping[str, str], values: Mapping[str, str]) -> dict[str, str]:
    """The effective pip setting per key: environment, then download/install/global sections."""
    out = dict(env)
    for key in _ENVIRONMENT:
        if key in out:
            continue
        for section in _SECTIONS:
            found = next(
                (
                    values[f"{section}.{k}"]
                    for k in _ALIASES.get(key, (key,))
                    if f"{section}.{k}" in values
                ),
                None,
            )
            if found is not None:
                out[key] = found
                break
    return out


def pip_default_index() -> str:
    """pip's built-in index URL, asked of pip itself so that none is written here."""
    try:
        # imported late: pip is optional, and these are its internals
        from pip._internal.models.index import PyPI

        return str(PyPI.simple_url)
    except (ImportError, AttributeError):
        raise ConfigError(
            "no package index configured and pip is not available; set PIP_INDEX_URL"
        ) from None


@cache
def pip_settings() -> dict[str, str]:
    """pip's effective index settings for this interpreter (asked once per process)."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        listed = done.stdout if done.returncode == 0 else ""
    except (OSError, subprocess.TimeoutExpired):
        listed = ""
    return resolve_settings(pip_environment(), parse_pip_config_list(listed))


def _usable(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme == "file":
        return Path(url2pathname(parts.path)).is_dir()  # configured local mirrors may be gone
    return parts.scheme in ("http", "https")


def index_config(indexes: Sequence[str] | None = None) -> IndexConfig:
    """The indexes to ask (given ones, else pip's), with pip's certificate, timeout and proxy."""
    settings = pip_settings()
    if indexes is None:
        main = settings.get("index-url") or pip_default_index()
        indexes = [main, *settings.get("extra-index-url", "").split()]
    try:
        timeout = float(settings.get("timeout", _PIP_TIMEOUT))
    except ValueError:
        raise ConfigError(
            f"pip's timeout setting {settings['timeout']!r} is not a number"
        ) from None
    return IndexConfig(
        urls=tuple(dict.fromkeys(u for u in indexes if _usable(u))),
        cert=settings.get("cert", ""),
        timeout=timeout,
        proxy=settings.get("proxy", ""),
    )


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.links.append(dict(attrs))


def _to_file(
    project: str, filename: str, url: str, sha256: str | None, yanked: bool
) -> IndexFile | None:
    try:
        if filename.endswith(".whl"):
            name, version, _, tags = parse_wheel_filename(filename)
            kind = "wheel"
        elif filename.endswith((".tar.gz", ".zip")):
            name, version = parse_sdist_filename(filename)
            tags, kind = frozenset(), "sdist"
        else:
            return None
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None
    if name != project:
        return None
    return IndexFile(filename, url, version, kind, sha256 or None, yanked, frozenset(tags))


def parse_json_page(project: str, body: bytes, base: str) -> list[IndexFile]:
    """Files of a PEP 691 JSON project page."""
    files = []
    for item in json.loads(body).get("files", []):
        url = urljoin(base, item.get("url", ""))
        sha = (item.get("hashes") or {}).get("sha256")
        found = _to_file(project, item.get("filename", ""), url, sha, bool(item.get("yanked")))
        files.extend([found] if found else [])
    return files


def parse_html_page(project: str, body: bytes, base: str) -> list[IndexFile]:
    """Files of a PEP 503 HTML project page (hash in the URL fragment)."""
    parser = _Anchors()
    parser.feed(body.decode("utf-8", "replace"))
    files = []
    for attrs in parser.links:
        url = urljoin(base, attrs.get("href") or "")
        parts = urlsplit(url)
        sha = (
            parts.fragment.removeprefix("sha256=") if parts.fragment.startswith("sha256=") else None
        )
        filename = unquote(parts.path.rsplit("/", 1)[-1])
        found = _to_file(project, filename, url.split("#", 1)[0], sha, "data-yanked" in attrs)
        files.extend([found] if found else [])
    return files


def _project_page(index: str, project: str, config: IndexConfig) -> list[IndexFile] | None:
    """The files one index lists for project; None when it does not have the project."""
    url = f"{index.rstrip('/')}/{project}/"
    if urlsplit(url).scheme == "file":
        page = Path(url2pathname(urlsplit(url).path)) / "index.html"
        return (
            parse_html_page(project, page.read_bytes(), page.as_uri()) if page.is_file() else None
        )
    try:
        with config.open(url, _ACCEPT) as response:
            body, final = response.read(), response.geturl()
            content_type = response.headers.get_content_type()
    except urllib.error.HTTPError as exc:
        if exc.code in (404, 410):
            return None
        raise
    if content_type == JSON_SIMPLE:
        return parse_json_page(project, body, final)
    return parse_html_page(project, body, final)


def describe_failure(url: str, exc: BaseException) -> str:
    """One line saying which index failed and why."""
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(exc, urllib.error.HTTPError):
        reason = f"HTTP {exc.code}"
    text = " ".join(str(reason).split()) or type(exc).__name__
    return f"cannot reach the package index {urlsplit(url).netloc or url}: {text}"


def list_project(dist: str, config: IndexConfig) -> Listing:
    """Every file the configured indexes list for dist; raises when no index lists it at all."""
    project = canonicalize_name(dist)
    files: list[IndexFile] = []
    failures: list[str] = []
    listed = False
    for index in config.urls:
        try:
            page = _project_page(index, project, config)
        except NETWORK_ERRORS as exc:
            failures.append(describe_failure(index, exc))
            continue
        except ValueError as exc:  # a JSON page that is not JSON
            failures.append(f"the package index {urlsplit(index).netloc} sent a bad page: {exc}")
            continue
        listed = listed or page is not None
        files.extend(page or [])
    if not listed and failures:
        raise NetworkUnavailable(failures[0])
    if not listed:
        raise SourceNotFound(f"{dist} is not on the package index ({', '.join(config.urls)})")
    return Listing(tuple(files), tuple(failures))
