"""Precision on real moves, from the hand-verified answer files (tests/real/answers/moves/).

Each file labels every error and warning of one move (a plugin release from its pin OLD to NEW,
e.g. arctic-inference 0.3.0 from vLLM 0.26.0 to 0.33.0 and to 0.34.0) true or false, with the
vLLM file:line that decides it; these tests hold pinport to every file.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from pinport.config import load_settings
from pinport.findings import Finding, Severity
from pinport.model.index import IndexCache
from pinport.scan import load_models, scan_models
from pinport.sources import Cache, fetch_release
from pinport.sources.registry import cached_releases

ANSWER_FILES = sorted((Path(__file__).parent / "answers" / "moves").glob("*.toml"))
SERIOUS = (Severity.ERROR, Severity.WARNING)


@pytest.fixture(scope="module", params=ANSWER_FILES, ids=lambda path: path.stem)
def answers(request) -> dict:
    """One answer file: the move it labels (plugin, version, old, new) and its [[finding]] tables."""
    return tomllib.loads(request.param.read_text(encoding="utf-8")) | {"file": request.param.name}


@pytest.fixture(scope="module")
def job(answers, vllm_tree):
    """The scan as `pinport scan` runs it: with the cached releases before OLD (copy origins)."""
    cache = Cache()
    plugin = fetch_release(answers["plugin"], answers["version"], cache=cache, prefer="sdist")
    settings = load_settings(plugin.project_root or plugin.root)
    history = tuple(cached_releases(settings.host_dist, cache=cache, below=answers["old"],
                                    packages=(settings.host,)))
    models = load_models(plugin, vllm_tree(answers["old"]), vllm_tree(answers["new"]), settings,
                         cache=IndexCache.in_cache(cache), history=history)
    return scan_models(models, settings, strict=True)


def test_there_is_an_answer_file_per_default_move():
    moves = {path.stem for path in ANSWER_FILES}
    assert {"arctic-inference-0.3.0_vllm-0.33.0", "arctic-inference-0.3.0_vllm-0.34.0"} <= moves


def _labels(answers: dict) -> dict[str, dict]:
    return {entry["fingerprint"]: entry for entry in answers["finding"]}


def _where(finding: Finding) -> str:
    p = finding.plugin
    return f"{p.path}:{p.line} [{p.unit}]" if p else "(no plugin location)"


def _serious(job) -> list[Finding]:
    return [f for f in job.findings if f.level in SERIOUS]


def test_the_answer_file_is_well_formed(answers):
    assert answers["file"] == f"{answers['plugin']}-{answers['version']}_vllm-{answers['new']}.toml"
    labels = answers["finding"]
    assert len({entry["fingerprint"] for entry in labels}) == len(labels)
    for entry in labels:
        assert isinstance(entry["verdict"], bool) and entry["why"].strip(), entry["fingerprint"]
        assert entry["now"] in ("error", "warning", "info", "folded", "none"), entry["fingerprint"]
        evidence = entry["host_evidence"]
        assert evidence == "" or (evidence.startswith("vllm/") and "@" in evidence), entry["fingerprint"]


def test_every_error_and_warning_is_labelled(answers, job):
    labels = _labels(answers)
    missing = [f"{f.fingerprint} {f.code} {f.level.value} {_where(f)}: {f.message}"
               for f in _serious(job) if f.fingerprint not in labels]
    assert not missing, (
        f"{len(missing)} error/warning finding(s) of the real job carry no label. Read each in the vLLM "
        f"sources and add a [[finding]] table to {answers['file']} with fingerprint, code, unit, plugin "
        "file:line, reported, now, verdict (true/false), host_evidence (vllm/FILE:LINE@RELEASE) and why:\n"
        + "\n".join(missing))


def test_each_label_says_what_pinport_reports_now(answers, job):
    by_fingerprint = {f.fingerprint: f for f in job.findings}
    wrong = []
    for entry in answers["finding"]:
        finding = by_fingerprint.get(entry["fingerprint"])
        now = finding.level.value if finding else "none"
        expected = "none" if entry["now"] == "folded" else entry["now"]
        if now != expected and not (expected == "none" and now == "info"):
            wrong.append(f"{entry['fingerprint']} {entry['code']} {entry['plugin']}: "
                         f"labelled now={entry['now']}, reported {now}")
    assert not wrong, "update `now` in the answer file (or fix the regression):\n" + "\n".join(wrong)


def test_every_error_is_true(answers, job):
    labels = _labels(answers)
    false_errors = [f"{f.code} {_where(f)}: {labels[f.fingerprint]['why']}" for f in job.findings
                    if f.level is Severity.ERROR and f.fingerprint in labels
                    and not labels[f.fingerprint]["verdict"]]
    assert not false_errors


def test_at_least_four_in_five_warnings_are_true(answers, job):
    labels = _labels(answers)
    warnings = [f for f in job.findings if f.level is Severity.WARNING and f.fingerprint in labels]
    true = [f for f in warnings if labels[f.fingerprint]["verdict"]]
    assert warnings and len(true) >= 0.8 * len(warnings), (
        f"{len(true)} of {len(warnings)} warnings true; false: "
        + "; ".join(f"{f.code} {_where(f)}" for f in warnings if f not in true))
