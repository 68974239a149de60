"""The shared grouping and counting every renderer relies on, plus the format table."""

from __future__ import annotations

import pytest

import pinport.report as report
from pinport.errors import ConfigError
from pinport.report._common import cap_lines, group_by_file, summarize


def test_all_is_the_public_api() -> None:
    assert sorted(report.__all__) == ["RENDERERS", "render", "render_json", "render_markdown",
                                      "render_sarif", "render_text"]


def test_renderers_table_has_the_four_formats() -> None:
    assert list(report.RENDERERS) == ["text", "json", "sarif", "markdown"]


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "markdown"])
def test_render_ends_in_newline(result, fmt) -> None:
    # determinism is tested across processes: tests/integration/test_determinism.py
    assert report.render(result, fmt).endswith("\n")


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "markdown"])
def test_render_ignores_input_order(result, fmt) -> None:
    shuffled = type(result)(result.plugin_label, result.old_label, result.new_label,
                            tuple(reversed(result.findings)), result.checks,
                            result.files_scanned, result.seconds, result.fixed)
    assert report.render(shuffled, fmt) == report.render(result, fmt)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "markdown"])
def test_render_handles_no_findings(empty_result, fmt) -> None:
    assert report.render(empty_result, fmt)


def test_unknown_format_is_a_config_error_naming_the_known_ones(result) -> None:
    with pytest.raises(ConfigError) as info:
        report.render(result, "html")
    message = str(info.value)
    assert "html" in message and "sarif" in message and "\n" not in message


def test_group_by_file_sorts_paths_puts_host_wide_last_and_errors_first(result) -> None:
    groups = group_by_file(result.findings)
    assert [path for path, _ in groups] == ["arctic_inference/utils.py",
                                            "arctic_inference/vllm/model_runner.py", None]
    assert [f.code for f in groups[1][1]] == ["PP0201", "PP0401"]  # error at line 42 before line 7


def test_summarize_counts(result) -> None:
    summary = summarize(result)
    assert summary.total == 4 and summary.fixed == 1
    assert summary.by_severity == {"error": 1, "warning": 2, "info": 1}
    assert summary.by_status == {"drift": 3, "latent": 1}
    assert summary.by_severity_status["info"] == {"drift": 0, "latent": 1}
    # checks that ran keep registry order and zero counts; unlisted checks follow by name
    assert summary.by_check == {"imports": 1, "override_signature": 1, "bypass": 1, "mirrors": 0,
                                "gaps": 1}


def test_cap_lines() -> None:
    assert cap_lines(["a", "b", "c"], 2) == (["a", "b"], 1)
    assert cap_lines(("a",), 2) == (["a"], 0)
