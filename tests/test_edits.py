"""Byte-exact edits: line endings, encodings, form feeds and the final newline survive; a stale or
unverifiable edit changes nothing."""

import subprocess

import pytest

from pinport.edits import (
    DirtyTree,
    Edit,
    SourceFile,
    edit_file,
    line_edits,
    require_clean_tree,
    split_lines,
)
from pinport.sources.tree import decode_source, python_lines


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_lines_split_where_python_splits_them():
    data = b"a = 1\r\nb = 2\x0c\n\x0cc = 3\rd = 4\x0be\n"
    assert split_lines(data) == [b"a = 1\r\n", b"b = 2\x0c\n", b"\x0cc = 3\r", b"d = 4\x0be\n"]
    text = decode_source(b"x = 1\x0c\ny = 2\r\nz = 3")
    assert python_lines(text) == ["x = 1\x0c", "y = 2", "z = 3"]
    assert len(python_lines(text)) != len(text.splitlines())  # what str.splitlines gets wrong


def test_crlf_and_mixed_endings_are_kept(tmp_path):
    path = write(tmp_path, "m.py", b"a = 1\r\nb = 2\nc = 3\r\nd = 4\r\n")
    result = edit_file(path, [Edit(2, 3, ("b = 20", "c = 30", "c2 = 31"), ("b = 2", "c = 3"), "mine")])
    assert result.ok and not result.rolled_back
    # the first replacement keeps line 2's LF, the last one line 3's CRLF; the added line in between takes CRLF
    assert path.read_bytes() == b"a = 1\r\nb = 20\nc = 30\r\nc2 = 31\r\nd = 4\r\n"
    [made] = result.edits
    assert (made.start, made.end, made.new_start, made.new_end, made.label) == (2, 3, 2, 4, "mine")
    assert made.describe() == [f"{path}:2 b = 2 [+1 lines] -> b = 20 [+2 lines]"]


def test_latin1_file_stays_latin1_and_unencodable_text_is_refused(tmp_path):
    data = "# -*- coding: latin-1 -*-\nname = 'café'\nvalue = 1\n".encode("latin-1")
    path = write(tmp_path, "l.py", data)
    assert SourceFile.read(path).encoding == "iso-8859-1"
    result = edit_file(path, [Edit(3, 3, ("value = 'crème'",), ("value = 1",))])
    assert result.ok
    assert path.read_bytes() == "# -*- coding: latin-1 -*-\nname = 'café'\nvalue = 'crème'\n".encode("latin-1")
    refused = edit_file(path, [Edit(3, 3, ("value = '€'",))])
    assert not refused.ok and "cannot be written in the file's encoding" in refused.refused
    assert path.read_bytes().endswith("value = 'crème'\n".encode("latin-1"))


def test_bom_form_feeds_and_missing_final_newline_are_kept(tmp_path):
    data = b"\xef\xbb\xbfimport os\n\x0c\ndef f():\n    return 1"
    path = write(tmp_path, "b.py", data)
    result = edit_file(path, [Edit(4, 4, ("    return 2",), ("    return 1",))])
    assert result.ok and result.edits[0].start == 4
    assert path.read_bytes() == b"\xef\xbb\xbfimport os\n\x0c\ndef f():\n    return 2"


def test_a_stale_plan_or_overlapping_edits_change_nothing(tmp_path):
    data = b"a = 1\nb = 2\n"
    path = write(tmp_path, "s.py", data)
    stale = edit_file(path, [Edit(1, 1, ("a = 3",), ("a = 9",))])
    assert stale.refused == "s.py:1: the file no longer holds what was analysed there".replace("s.py", str(path))
    overlap = edit_file(path, [Edit(1, 2, ("x = 1",)), Edit(2, 2, ("y = 1",))])
    assert "overlap" in overlap.refused
    outside = edit_file(path, [Edit(3, 4, ("z = 1",))])
    assert "outside the file" in outside.refused
    assert not edit_file(path, [Edit(1, 1, ("a = 1",))], expect_bytes=lambda b: False).ok
    assert path.read_bytes() == data


def test_a_plan_the_written_file_does_not_match_is_rolled_back(tmp_path, monkeypatch):
    import pinport.edits as edits

    data = b"a = 1\nb = 2\n"
    path = write(tmp_path, "r.py", data)
    real = edits._write_atomic
    calls = []

    def corrupting(p, blob):
        calls.append(blob)
        real(p, blob.replace(b"b = 2", b"b = 3") if len(calls) == 1 else blob)

    monkeypatch.setattr(edits, "_write_atomic", corrupting)
    result = edit_file(path, [Edit(1, 1, ("a = 5",), ("a = 1",))])
    assert result.rolled_back and "differs from what was written" in result.refused
    assert path.read_bytes() == data


def test_line_edits_are_the_smallest_whole_line_changes(tmp_path):
    before = ["[project]", 'name = "p"', 'dependencies = ["vllm==0.26.0"]', ""]
    after = ["[project]", 'name = "p"', 'dependencies = ["vllm==0.33.0"]', ""]
    [edit] = line_edits(before, after, label="pin")
    assert (edit.start, edit.end, edit.lines, edit.expect) == (3, 3, (after[2],), (before[2],))
    path = write(tmp_path, "pyproject.toml", "\r\n".join(before).encode())
    assert edit_file(path, [edit]).ok
    assert path.read_bytes() == "\r\n".join(after).encode()


def test_editing_needs_a_clean_tracked_git_tree(tmp_path):
    def git(*args):
        subprocess.run(["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", "-c", "commit.gpgsign=false",
                        "-C", str(tmp_path), *args], check=True, capture_output=True)

    with pytest.raises(DirtyTree, match="not a git work tree"):
        require_clean_tree(tmp_path, ["a.py"])
    git("init", "-q")
    write(tmp_path, "a.py", b"x = 1\n")
    with pytest.raises(DirtyTree, match="not tracked"):
        require_clean_tree(tmp_path, ["a.py"])
    git("add", "a.py")
    git("commit", "-qm", "a")
    require_clean_tree(tmp_path, ["a.py"])
    write(tmp_path, "a.py", b"x = 2\n")
    with pytest.raises(DirtyTree, match="uncommitted changes"):
        require_clean_tree(tmp_path, ["a.py"])
    require_clean_tree(tmp_path, ["a.py"], allow_dirty=True)
