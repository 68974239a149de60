"""Phase 0 pins: every statement of the host pin found and moved, torch/protobuf aligned, layout kept."""

from __future__ import annotations

import textwrap
from dataclasses import replace

from pinport.config import PinSource, Settings
from pinport.rebase.pins import host_requirements, plan_pins

SETTINGS = Settings(pin_sources=(PinSource("regex", file="plug/version.py", pattern=r"PIN = '([^']+)'"),
                                 PinSource("requirement", extra="vllm")),
                    aligned_requirements=("torch", "protobuf"))
METADATA = ("Name: vllm\nRequires-Dist: torch==2.14.0\nRequires-Dist: protobuf!=6.30.*,>=5.29.6\n"
            "Requires-Dist: pytest; extra == 'test'\n")

FILES = {
    "pyproject.toml": textwrap.dedent("""
        [build-system]
        requires = ["setuptools", "torch~=2.11.0",  # build against the host's torch
                    "protobuf==5.29.6"]
        [project]
        name = "plug"
        dependencies = ["numpy"]
        [project.optional-dependencies]
        vllm = ['vllm==0.26.0']   # the pin
        legacy = ["vllm==0.18.0", "torch==2.10.0"]
        """).lstrip(),
    "plug/version.py": "PIN = '0.26.0'\n",
    "setup.py": "from setuptools import setup\nsetup(install_requires=['vllm==0.26.0', 'rich'])\n",
    "requirements.txt": "rich\nvllm == 0.26.0  # keep in step\n",
    "requirements-old.txt": "vllm==0.9.2\n",
    "README.md": "# plug\n\n```\npip install vllm==0.26.0 plug\n```\nWorks with vllm 0.26.0.\n",
}


def _plan():
    return plan_pins(SETTINGS, sorted(FILES), FILES.get, old="0.26.0", new="0.33.0", host_label="vllm 0.33.0",
                     metadata=METADATA)


def test_every_statement_of_the_pin_and_only_the_version_characters() -> None:
    plan = _plan()
    edits = [(e.path, e.line, e.finding.code, e.before, e.after) for e in plan.edits]
    assert edits == [
        ("README.md", 4, "PP0020", "pip install vllm==0.26.0 plug", "pip install vllm==0.33.0 plug"),
        ("plug/version.py", 1, "PP0020", "PIN = '0.26.0'", "PIN = '0.33.0'"),
        ("pyproject.toml", 2, "PP0021", 'requires = ["setuptools", "torch~=2.11.0",  # build against the host\'s torch',
         'requires = ["setuptools", "torch==2.14.0",  # build against the host\'s torch'),
        ("pyproject.toml", 8, "PP0020", "vllm = ['vllm==0.26.0']   # the pin", "vllm = ['vllm==0.33.0']   # the pin"),
        ("pyproject.toml", 9, "PP0023", 'legacy = ["vllm==0.18.0", "torch==2.10.0"]', ""),
        ("requirements.txt", 2, "PP0020", "vllm == 0.26.0  # keep in step", "vllm == 0.33.0  # keep in step"),
        ("setup.py", 2, "PP0020", "setup(install_requires=['vllm==0.26.0', 'rich'])",
         "setup(install_requires=['vllm==0.33.0', 'rich'])"),
    ]
    # the prose line "Works with vllm 0.26.0." is not an install line; the old requirements file pins 0.9.2
    assert plan.texts["README.md"][1].endswith("Works with vllm 0.26.0.\n")
    assert "requirements-old.txt" not in plan.texts
    torch = next(e.finding for e in plan.edits if e.package == "torch")
    assert (torch.args["current"], torch.args["required"]) == ("torch~=2.11.0", "==2.14.0")
    # protobuf==5.29.6 is inside vLLM 0.33.0's range: no finding; the legacy extra is left alone whole
    assert not [e for e in plan.edits if e.package == "protobuf"]
    assert 'legacy = ["vllm==0.18.0", "torch==2.10.0"]' in plan.texts["pyproject.toml"][1]
    identities = [e.finding.fingerprint for e in plan.edits]
    assert len(set(identities)) == len(identities)


def test_only_the_requirements_the_settings_name_are_aligned() -> None:
    """Which requirements follow the host is a setting (the vLLM profile's torch and protobuf), not a constant."""
    def packages(aligned: tuple[str, ...]) -> list[tuple[str, str]]:
        settings = replace(SETTINGS, aligned_requirements=aligned)
        plan = plan_pins(settings, sorted(FILES), FILES.get, old="0.26.0", new="0.33.0",
                         host_label="vllm 0.33.0", metadata=METADATA)
        return sorted({(e.package, e.finding.code) for e in plan.edits})

    unaligned = [("vllm", "PP0020"), ("vllm", "PP0023")]
    assert packages(()) == unaligned
    assert packages(("Torch",)) == sorted([*unaligned, ("torch", "PP0021")])  # names compare canonically


def test_already_at_new_is_no_edit_and_metadata_extras_are_not_requirements() -> None:
    moved = {path: after for path, (_, after) in _plan().texts.items()}
    again = plan_pins(SETTINGS, sorted(FILES), lambda p: moved.get(p, FILES.get(p)), old="0.26.0", new="0.33.0",
                      host_label="vllm 0.33.0", metadata=METADATA)
    assert again.texts == {} and [e.finding.code for e in again.edits] == ["PP0023"]
    assert sorted(host_requirements(METADATA)) == ["protobuf", "torch"]


RANGES = {
    "pyproject.toml": textwrap.dedent("""
        [project]
        name = "plug"
        dependencies = [
            "vllm>=0.24.0, <0.32.0",  # tested on 0.31
        ]
        """).lstrip(),
    "requirements.txt": "vllm>=0.26.0,<0.31.1\n",
    "requirements-open.txt": "vllm>=0.26.0\n",
}


def test_a_narrow_range_moves_its_upper_bound_in_the_style_it_was_written():
    """OLD 0.31.0 is the newest release `<0.32.0` admits (the next minor): for NEW 0.34.0 the bound becomes
    `<0.35.0`; `<0.31.1` (the next patch) becomes `<0.34.1`; a lower bound and an open range are left."""
    settings = Settings(pin_sources=(PinSource("requirement"),))
    plan = plan_pins(settings, sorted(RANGES), RANGES.get, old="0.31.0", new="0.34.0", host_label="vllm 0.34.0",
                     metadata=METADATA)
    edits = [(e.path, e.line, e.finding.code, e.before, e.after) for e in plan.edits]
    assert edits == [
        ("pyproject.toml", 4, "PP0024", '    "vllm>=0.24.0, <0.32.0",  # tested on 0.31',
         '    "vllm>=0.24.0, <0.35.0",  # tested on 0.31'),
        ("requirements.txt", 1, "PP0024", "vllm>=0.26.0,<0.31.1", "vllm>=0.26.0,<0.34.1"),
    ]
    finding = plan.edits[0].finding
    assert finding.args == {"what": "[project].dependencies", "dist": "vllm", "old": "vllm>=0.24.0, <0.32.0",
                            "new": "0.34.0", "widened": "vllm>=0.24.0, <0.35.0"}
    assert finding.message == ("[project].dependencies has `vllm>=0.24.0, <0.32.0`, which excludes vllm 0.34.0; "
                               "the rebase moves its upper bound: `vllm>=0.24.0, <0.35.0`")
    assert "requirements-open.txt" not in plan.texts
    # a range that admits NEW already is no edit
    again = plan_pins(settings, sorted(RANGES), RANGES.get, old="0.31.0", new="0.31.0", host_label="vllm 0.31.0",
                      metadata=METADATA)
    assert again.edits == () and again.texts == {}
