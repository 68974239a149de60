"""Pin reading: every place a plugin states its host requirement, with the exact span of each."""

from __future__ import annotations

import textwrap

import pytest

from pinport.config import PinSource, Settings
from pinport.errors import ConfigError
from pinport.pins import (
    DEPENDENCIES,
    EXTRA,
    EXTRAS_REQUIRE,
    INSTALL_REQUIRES,
    METADATA,
    README,
    REQUIREMENTS,
    choose_pin,
    find_pins,
    no_pin_error,
    read_pin,
    release_of,
)


def reader(files: dict[str, str]):
    texts = {k: textwrap.dedent(v).lstrip("\n") if v.startswith("\n") else v for k, v in files.items()}
    return texts, (lambda rel: texts.get(rel)), (lambda: list(texts))


def pins(files: dict[str, str]):
    texts, read, listing = reader(files)
    found = find_pins(read, "vllm", listing)
    for s in found:  # the span is exactly the requirement, on the stated line
        assert texts[s.file][s.start:s.end] == s.requirement
        assert texts[s.file].splitlines()[s.line - 1].find(s.requirement) >= 0
    return [(s.file, s.line, s.requirement, s.kind, s.extra) for s in found]


def test_pyproject_dependencies_and_extras_with_spans():
    assert pins({"pyproject.toml": """
        [project]
        name = "plug"
        dependencies = [
            "torch>=2",
            "vllm==0.17.1+cpu",
        ]
        [project.optional-dependencies]
        audio = ['vllm[audio]==0.17.1']
        [tool.other]
        x = "vllm==9.9.9"
    """}) == [("pyproject.toml", 5, "vllm==0.17.1+cpu", DEPENDENCIES, ""),
              ("pyproject.toml", 8, "vllm[audio]==0.17.1", EXTRA, "audio")]


def test_setup_py_is_parsed_not_run():
    assert pins({"setup.py": """
        import os
        from setuptools import setup
        os.system("rm -rf /")  # never executed
        setup(name="plug", install_requires=["vllm >= 0.9, <= 0.9.2", "torch"],
              extras_require={"cuda": ["vllm==0.9.2"]})
    """}) == [("setup.py", 4, "vllm >= 0.9, <= 0.9.2", INSTALL_REQUIRES, ""),
              ("setup.py", 5, "vllm==0.9.2", EXTRAS_REQUIRE, "cuda")]


def test_setup_cfg_requirements_metadata_and_readme():
    found = pins({
        "setup.cfg": """
            [metadata]
            name = plug
            [options]
            install_requires =
                numpy
                vllm==0.11.0
            [options.extras_require]
            tpu = vllm==0.11.0
        """,
        "requirements/base.txt": "numpy  # math\nvllm==0.11.0 ; python_version >= '3.10'  # the pin\n-r other.txt\n",
        "PKG-INFO": "Name: plug\nRequires-Dist: vllm==0.11.0; extra == \"tpu\"\n\nRun `pip install vllm==0.10.0`\n",
        "README.md": "# plug\n\nvllm==0.0.1 in prose is no install line\n```\npip install plug 'vllm==0.11.0'\n```\n",
    })
    assert found == [
        ("setup.cfg", 6, "vllm==0.11.0", INSTALL_REQUIRES, ""),
        ("setup.cfg", 8, "vllm==0.11.0", EXTRAS_REQUIRE, "tpu"),
        ("PKG-INFO", 2, "vllm==0.11.0; extra == \"tpu\"", METADATA, "tpu"),
        ("requirements/base.txt", 2, "vllm==0.11.0 ; python_version >= '3.10'", REQUIREMENTS, ""),
        ("PKG-INFO", 4, "vllm==0.10.0", README, ""),
        ("README.md", 5, "vllm==0.11.0", README, ""),
    ]


def test_bom_and_wheel_metadata_continuations():
    # METADATA headers continue on indented (even blank-looking) lines; the pin comes after them
    metadata = "Metadata-Version: 2.4\nLicense: Apache\n        \n    more\nRequires-Dist: vllm==0.24.0+cpu\n\nbody\n"
    assert pins({"pyproject.toml": "\ufeff[project]\nname = 'p'\ndependencies = ['vllm==0.24.0']\n", "plug-1.dist-info/METADATA": metadata,
                 "requirements.txt": "\ufeffvllm==0.24.0\n"}) == [
        ("pyproject.toml", 3, "vllm==0.24.0", DEPENDENCIES, ""),
        ("requirements.txt", 1, "vllm==0.24.0", REQUIREMENTS, ""),
        ("plug-1.dist-info/METADATA", 5, "vllm==0.24.0+cpu", METADATA, ""),
    ]


def test_exact_wins_then_bounded_ranges_pick_the_newest_admitted_release():
    _, read, listing = reader({"pyproject.toml": """
        [project]
        dependencies = ["vllm>=0.17.0,<0.18.1"]
    """})
    statements = find_pins(read, "vllm", listing)
    versions = ["0.16.0", "0.17.0", "0.17.1", "0.18.0", "0.18.1", "0.19.0rc1"]
    assert choose_pin(statements, versions=lambda: versions)[0] == "0.18.0"
    assert choose_pin(statements) is None  # a range without a version list decides nothing
    open_ended = find_pins(lambda rel: '[project]\ndependencies = ["vllm>=0.16"]\n' if rel == "pyproject.toml"
                           else None, "vllm")
    assert choose_pin(open_ended, versions=lambda: versions) is None
    same = find_pins(lambda rel: "vllm>=0.11.2,<=0.11.2\n" if rel == "requirements.txt" else None, "vllm")
    assert same[0].exact == "0.11.2" and choose_pin(same)[0] == "0.11.2"


def test_local_version_is_fetched_as_its_release():
    assert release_of("0.17.1+cpu") == "0.17.1" and release_of("0.9.0.1") == "0.9.0.1"
    read = {"pyproject.toml": '[project]\ndependencies = ["vllm==0.17.1+cpu"]\n'}.get
    assert read_pin(Settings(), read) == "0.17.1"


def test_settings_choose_the_group_and_regex_sources_come_first():
    read = {"pyproject.toml": '[project]\noptional-dependencies = {a = ["vllm==1.0"], b = ["vllm==2.0"]}\n',
            "plug/v.py": "PIN = '3.0'\n"}.get
    assert read_pin(Settings(pin_sources=(PinSource("requirement", extra="b"),)), read) == "2.0"
    assert read_pin(Settings(pin_sources=(PinSource("requirement", extra=""),)), read) is None
    regex = PinSource("regex", file="plug/v.py", pattern=r"PIN = '([^']+)'")
    assert read_pin(Settings(pin_sources=(regex, PinSource("requirement", extra="*"))), read) == "3.0"
    with pytest.raises(ConfigError):
        read_pin(Settings(pin_sources=(PinSource("regex", file="x", pattern="("),)), read)
    with pytest.raises(ConfigError):
        read_pin(Settings(pin_sources=(PinSource("nope"),)), read)


def test_a_regex_source_may_name_its_file_by_a_glob():
    """A wheel's `<dist>-<version>.dist-info/METADATA` changes name with every release: the vllm_omni
    profile names it `*.dist-info/METADATA`, the first listed file it matches."""
    files = {"vllm_omni-0.30.0.dist-info/METADATA": "Metadata-Version: 2.4\nName: vllm-omni\nVersion: 0.31.0rc1\n",
             "vllm_omni/__init__.py": ""}
    source = PinSource("regex", file="*.dist-info/METADATA", pattern=r"^Version:\s*(\d+\.\d+\.\d+)")
    settings = Settings(pin_sources=(source,))
    assert read_pin(settings, files.get, lambda: list(files)) == "0.31.0"
    # negative twins: no file matches the glob, or no listing to match it against
    assert read_pin(settings, files.get, lambda: ["vllm_omni/__init__.py"]) is None
    assert read_pin(settings, files.get) is None


ASCEND_README = """
| Branch           | Status       | Note                                 |
|------------------|--------------|--------------------------------------|
| main             | Maintained   | CI commitment for vLLM main branch and vLLM v0.30.0 tag |
| releases/v0.18.0 | Maintained   | CI commitment for vLLM 0.18.0 version |
"""


@pytest.mark.parametrize(("files", "expected"), [
    ({"README.md": ASCEND_README}, "0.30.0"),  # a checkout's README: the main branch's tag
    ({"PKG-INFO": "Name: vllm_ascend\n\n" + ASCEND_README}, "0.30.0"),  # an sdist's long description
    ({".github/vllm-release-tag.commit": "v0.31.0\n", "README.md": ASCEND_README}, "0.31.0"),  # the CI tag first
    # negative twins: a maintained release branch is not the pin; nothing stated, nothing read
    ({"README.md": ASCEND_README.replace("| main ", "| other")}, None),
    ({"pyproject.toml": '[project]\ndependencies = ["vllm"]\n'}, None),
])
def test_vllm_ascend_profile_reads_the_pin_its_repository_states(files, expected, tmp_path):
    from pinport.config import load_settings
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "vllm-ascend"\n', encoding="utf-8")
    settings = load_settings(tmp_path)  # the profile is chosen by the project's name
    assert settings.profile == "vllm_ascend"
    assert read_pin(settings, files.get) == expected


KUNLUN_README = """
## Prerequisites

- **Software**:
  - vLLM (same version as vllm-kunlun)

### Version Matrix

| Version | Release Type | Documentation |
|---------|:------------:|:-------------:|
| v0.11.0 | Latest stable version | [Quick Start](https://example.invalid/quick_start.html) |
"""


@pytest.mark.parametrize(("files", "expected"), [
    ({"README.md": KUNLUN_README}, "0.11.0"),  # a checkout's README: the matrix's latest stable line
    ({"PKG-INFO": "Name: vllm-kunlun\nVersion: 0.11.1\n\n" + KUNLUN_README}, "0.11.0"),  # an sdist
    # negative twins: without the same-version statement the matrix says nothing about vLLM; a row that is
    # not the latest stable one is no pin; nothing stated, nothing read
    ({"README.md": KUNLUN_README.replace("same version as vllm-kunlun", "any recent version")}, None),
    ({"README.md": KUNLUN_README.replace("Latest stable version", "Deprecated")}, None),
    ({"pyproject.toml": '[project]\ndependencies = ["torch"]\n'}, None),
])
def test_vllm_kunlun_profile_reads_the_pin_its_readme_states(files, expected, tmp_path):
    from pinport.config import load_settings
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "vllm-kunlun"\n', encoding="utf-8")
    settings = load_settings(tmp_path)  # the profile is chosen by the project's name
    assert settings.profile == "vllm_kunlun"
    assert read_pin(settings, files.get) == expected


VLLM = Settings(host="vllm")


@pytest.mark.parametrize(("pyproject", "versions", "says"), [
    ('[project]\nname = "p"\ndependencies = ["vllm>=0.14.0"]\n', ("0.13.0", "0.14.0", "0.15.0rc1", "0.14.1"),
     "`vllm>=0.14.0` (pyproject.toml:3) is an open range, the newest release it admits is 0.14.1"),
    ('[project]\nname = "p"\ndependencies = ["vllm>=0.14.0"]\n', None,
     "`vllm>=0.14.0` (pyproject.toml:3) is an open range"),
    ('[project]\nname = "p"\ndependencies = ["vllm"]\n', ("0.14.0",), "`vllm` (pyproject.toml:3) names no version"),
    ('[project]\nname = "p"\ndependencies = ["vllm>=9,<9.1"]\n', ("0.14.0",),
     "`vllm>=9,<9.1` (pyproject.toml:3) admits no release of vllm"),
    ('[project]\nname = "p"\ndependencies = ["torch"]\n', ("0.14.0",), "no requirement names vllm"),
])
def test_no_pin_says_what_the_plugin_states_instead(pyproject, versions, says):
    _, read, listing = reader({"pyproject.toml": pyproject})
    assert read_pin(VLLM, read, listing, (lambda: versions) if versions else None) is None
    error = no_pin_error("p 1.0", VLLM, read, listing, (lambda: versions) if versions else None)
    assert isinstance(error, ConfigError)
    assert str(error) == f"p 1.0: no exact vllm pin found: {says}; pass --old"
