"""`promptdesk compare PARENT TAKE...` and `report PARENT TAKE... --html`: takes of one scene share their
record up to the beat they branched at; the comparison says where they diverge (`diverges_at`) and
measures only what follows; the report puts them side by side from that beat, aligned by beat, the
change marked, with the tree of takes."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from promptdesk.core.cli.main import main
from promptdesk.core.record.events import CallEvent
from promptdesk.core.record.recorder import read_events
from test_branch import batch, branch, scene_file


def make_takes(folder: Path) -> Path:
    """A parent on the improviser, a take with no change and one with a world event from beat 4, and a
    take of that take from beat 6 with a note: `parent`, `same`, `phone`, `phone-note`."""
    folder.mkdir(parents=True, exist_ok=True)
    batch(scene_file(folder), folder / "parent")
    assert branch(folder / "parent", 4, folder / "same") == 0
    assert branch(folder / "parent", 4, folder / "phone", "--event", "The phone rings and rings") == 0
    assert branch(folder / "phone", 6, folder / "phone-note", "--note", "Keep it short", "--to", "bob") == 0
    return folder


@pytest.fixture(scope="module")
def takes(tmp_path_factory) -> Path:
    return make_takes(tmp_path_factory.mktemp("takes"))


def compared(capsys, *folders: Path) -> dict:
    assert main(["compare", *map(str, folders), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_compare_knows_takes_share_a_prefix_and_says_where_they_diverge(takes, capsys):
    parent, same, phone, note = (takes / n for n in ("parent", "same", "phone", "phone-note"))
    plain = compared(capsys, parent, same)
    assert (plain["branched_at"], plain["diverges_at"]) == (4, None), "a take with no change never diverges"
    changed = compared(capsys, parent, same, phone)
    assert (changed["branched_at"], changed["diverges_at"]) == (4, 4)
    assert compared(capsys, phone, note)["branched_at"] == 6
    three = compared(capsys, parent, phone, note)
    assert three["branched_at"] == 4 and [(t["run"], t["depth"]) for t in three["takes"]["tree"]] == \
        [("parent", 0), ("phone", 1), ("phone-note", 2)]
    assert three["takes"]["takes"][2]["change"] == {"note": "Keep it short", "to": "bob"}
    siblings = compared(capsys, same, phone)
    assert (siblings["branched_at"], siblings["diverges_at"]) == (4, 4), "takes of one parent, without it"


def test_only_what_follows_the_branch_beat_is_measured(takes, capsys):
    parent, same, phone = (takes / n for n in ("parent", "same", "phone"))
    runs = {r["run"]: r for r in compared(capsys, parent, same, phone)["runs"]}
    events = read_events(parent)
    late = [e for e in events if isinstance(e, CallEvent) and e.beat is not None and e.beat >= 4]
    assert runs["parent"]["tokens"] == sum(e.input_tokens + e.output_tokens for e in late) > 0
    whole = json.loads((parent / "metadata.json").read_text())
    assert runs["parent"]["beats"] == whole["totalBeats"] - 4
    assert runs["parent"]["turns"] == sum(1 for e in events if e.type == "speak" and e.action != "silent" and e.beat >= 4)
    begun = next(e.t for e in events if e.type == "beat" and e.beat == 4)
    assert runs["parent"]["duration_s"] == round(events[-1].t - begun, 3)
    assert {k: v for k, v in runs["same"].items() if k not in ("run", "audit")} == \
        {k: v for k, v in runs["parent"].items() if k not in ("run", "audit")}
    assert runs["phone"]["audit"] == "clean"


def test_unrelated_runs_are_compared_whole_and_the_text_shows_the_tree(takes, tmp_path, capsys):
    other = batch(scene_file(tmp_path), tmp_path / "other", seed=5)
    result = compared(capsys, takes / "parent", other)
    assert "diverges_at" not in result and result["runs"][0]["beats"] == \
        json.loads((takes / "parent" / "metadata.json").read_text())["totalBeats"]
    assert main(["compare", str(takes / "parent"), str(takes / "phone"), str(takes / "phone-note")]) == 0
    text = capsys.readouterr().out
    assert "Takes:\nparent\n└─ phone (take of parent from beat 4: world event \"The phone rings and rings\")\n" \
           "   └─ phone-note (take of phone from beat 6: note to Bob: \"Keep it short\")" in text
    assert "they share beats 0 to 3" in " ".join(text.split()) and "They diverge at beat 4." in text


def test_a_moved_family_is_still_found_by_folder_name(takes, tmp_path, capsys):
    moved = tmp_path / "moved"
    shutil.copytree(takes, moved)
    result = compared(capsys, moved / "parent", moved / "phone-note")
    assert result["branched_at"] == 4 and result["takes"]["takes"][1]["parent"] == str((moved / "phone").resolve())


def test_a_run_given_as_dot_is_named_by_its_folder(takes, capsys, monkeypatch):
    """`cd parent && promptdesk compare . ../phone`: the run given as `.` was shown with no name (an empty tree
    row, an empty column heading) and the report's "Run with" wrote `--out ''`."""
    monkeypatch.chdir(takes / "parent")
    assert main(["compare", ".", "../phone", "--metrics", "beats"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Takes:\nparent\n└─ phone (take of parent from beat 4") and "\n\n" in text
    assert text.split("\n\n")[1].split("\n")[0].split() == ["metric", "parent", "phone"]
    monkeypatch.chdir(takes / "phone")
    assert [t["run"] for t in compared(capsys, "../parent", ".")["takes"]["tree"]] == ["parent", "phone"]


def test_the_report_puts_two_takes_side_by_side_from_the_branch_beat(takes, tmp_path, snapshot):
    page = tmp_path / "takes.html"
    assert main(["report", str(takes / "parent"), str(takes / "phone"), "--html", str(page)]) == 0
    html = page.read_text()
    rows = re.findall(r"<tr[^>]*><td>beat (\d+)", html)
    last = max(json.loads((takes / run / "metadata.json").read_text())["totalBeats"] - 1 for run in ("phone", "parent"))
    assert rows[0] == "4" and rows[-1] == str(last) and rows == [str(b) for b in range(4, int(rows[-1]) + 1)]
    assert html.count('<p class="change" dir="auto">') == 1
    assert '<p class="change" dir="auto">» The director&#x27;s change: [EVENT: The phone rings and rings]</p>' in html
    assert '<tr class="diverges"><td>beat 4 (diverges)' in html and "Tree of takes" in html
    assert "<script" not in html
    assert steady(html) == snapshot


def steady(html: str) -> str:
    """The page without what changes from day to day and folder to folder: the date the runs were
    recorded, the version, and the command that made the report (it names this test's folder)."""
    html = re.sub(r"<dt>Recorded</dt><dd>[^<]*</dd>", "<dt>Recorded</dt><dd>DATE</dd>", html)
    html = re.sub(r"<dt>Promptdesk</dt><dd>[^<]*</dd>", "<dt>Promptdesk</dt><dd>VERSION</dd>", html)
    return re.sub(r"<dt>This report</dt><dd><code>[^<]*</code></dd>", "<dt>This report</dt><dd>COMMAND</dd>", html)


def test_a_report_of_runs_that_are_not_takes_is_refused(takes, tmp_path, capsys):
    other = batch(scene_file(tmp_path), tmp_path / "other", seed=5)
    assert main(["report", str(takes / "parent"), str(other), "--html", str(tmp_path / "x.html")]) == 2
    assert "takes of one another" in capsys.readouterr().err and not (tmp_path / "x.html").exists()


def test_takes_from_beat_1_share_beat_0_not_beats_0_to_0(takes, tmp_path, capsys):
    """A take from beat 1: `compare` said "they share beats 0 to 0" and `metrics` "beats 0 to 0 its parent's"."""
    assert branch(takes / "parent", 1, tmp_path / "early") == 0
    capsys.readouterr()
    assert main(["compare", str(takes / "parent"), str(tmp_path / "early"), "--metrics", "beats"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "they share beat 0 (recorded once" in text and "0 to 0" not in text, text
    assert main(["metrics", str(tmp_path / "early")]) == 0
    err = capsys.readouterr().err
    assert "whole record, beat 0 its parent's" in err and "0 to 0" not in err, err
