"""Rule documentation: one filled entry per finding code, docs/ in step, `pinport rule`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pinport.cli.main import main
from pinport.report.rules import all_kinds, generated_docs, rule, rules

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"


def test_every_code_has_a_filled_entry():
    kinds = all_kinds()
    assert len(kinds) > 50
    missing = [k.code for k in kinds if k.code not in rules()]
    assert missing == []
    for r in rules().values():
        for text in (r.summary, r.why, r.example, r.fix):
            assert text and "{" not in text.replace("{}", ""), (r.kind.code, text)
        assert r.summary.endswith(".") and r.summary != r.kind.template
        assert len(r.example.splitlines()) >= 2, r.kind.code  # an example, not a phrase


def test_docs_are_generated_from_the_rule_texts():
    """docs/rules/ is what `pinport rule --write-docs docs` writes: regenerate it after editing rules.toml."""
    pages = generated_docs()
    stale = [rel for rel, text in pages.items() if not (DOCS / rel).is_file()
             or (DOCS / rel).read_text(encoding="utf-8") != text]
    assert stale == []
    on_disk = {f"rules/{p.name}" for p in (DOCS / "rules").glob("*.md")}
    assert on_disk == set(pages)


def test_drift_catalogue_covers_every_number_and_links_resolve():
    catalogue = (DOCS / "drift.md").read_text(encoding="utf-8")
    for number in range(1, 13):
        assert f"## #{number} " in catalogue
    numbered = {k.drift for k in all_kinds() if k.drift is not None}
    assert numbered <= set(range(1, 13))
    for target in re.findall(r"\]\(([^)#]+)", catalogue):
        assert (DOCS / target).is_file(), target
    linked = set(re.findall(r"rules/(PP\d{4})\.md", catalogue))
    for k in all_kinds():  # every code is reachable from the catalogue, directly or as a range end
        assert k.code in linked or any(a < k.code < b for a in linked for b in linked
                                       if a[:4] == b[:4] == k.code[:4]), k.code


def test_readme_and_docs_link_only_inside_the_repository():
    for path in (REPO / "README.md", *DOCS.rglob("*.md")):
        prose = re.sub(r"```.*?```|`[^`\n]*`", "", path.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if target.startswith(("http://", "https://", "#")):
                continue
            resolved = (path.parent / target.split("#")[0]).resolve()
            assert resolved.is_relative_to(REPO) and resolved.exists(), (path.name, target)


def test_rule_command_prints_the_entry(capsys):
    assert main(["rule", "pp0101"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PP0101 ParameterMissing\ndrift: #1   check: signatures   default severity: error\n")
    assert rule("PP0101").why in out and "def initialize_kv_cache(self, cfg): ..." in out
    assert "# pinport: ignore[PP0101]" in out


def test_rule_listing_and_unknown_code(capsys):
    assert main(["rule"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(all_kinds()) and lines[0].startswith("PP0001  AliasTargetMissing")
    assert main(["rule", "PP9999"]) == 2
    err = capsys.readouterr().err
    assert err == "pinport: error: unknown finding code 'PP9999' (see `pinport checks` for every code)\n"


@pytest.mark.parametrize("code", ["PP0005", "PP0099"])
def test_scan_level_codes_are_documented(code):
    assert rule(code).kind.check == "scan"
