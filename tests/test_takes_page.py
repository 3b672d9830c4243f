"""The takes page shows the whole beat: speech, reactions, silences with their stage business, each
actor's thinking (folded, marked private), the director's change and the coordinator's notes told
apart by who they came from, in columns that fit a 1,400-pixel window (read back by Chromium)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from promptdesk.core.cli.main import main
from helpers import ROOT
from test_report import browser

TAKES = ("note", "event", "again", "again2")


@pytest.fixture(scope="module")
def family(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of The Apology and four takes of it from beat 3: a director's note to Bob, a world event,
    and two with nothing but another seed. Into the note's take, a coordinator's note written in the
    director's words; into the event's take, a director's note written in the coordinator's."""
    root = tmp_path_factory.mktemp("takes")
    shutil.copytree(ROOT / "characters", root / "characters", ignore=shutil.ignore_patterns(".promptdesk"))
    (root / "scenes").mkdir()
    shutil.copy(ROOT / "scenes" / "the-apology.yaml", root / "scenes")
    runs = root / "runs"
    assert main(["--batch", str(root / "scenes" / "the-apology.yaml"), "--isolation", "b", "--coordinator", "B",
                 "--provider", "offline", "--seed", "7", "--out", str(runs / "base"), "--characters-dir",
                 str(root / "characters"), "--journals", "none"]) == 0
    changes = {"note": ["--note", "Bob, say nothing for a while.", "--to", "bob"],
               "event": ["--event", "The lights flicker"], "again": ["--seed", "3"], "again2": ["--seed", "4"]}
    for name, change in changes.items():
        assert main(["branch", str(runs / "base"), "--at-beat", "3", *change, "--out", str(runs / name), "--quiet"]) == 0
    plant(runs / "note", {"from": "coordinator", "type": "note", "target": "alice", "reason": "winding-down",
                          "text": "Director's note: start closing the scene."})
    plant(runs / "event", {"from": "operator", "type": "note", "target": None,
                           "text": "The coordinator wants everyone to slow down."})
    return runs


def plant(run: Path, record: dict) -> None:
    """Add a note to a take's log at beat 5 (before the beat's first speech)."""
    log = run / "events.jsonl"
    lines = log.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if json.loads(line).get("beat") == 5 and json.loads(line)["type"] == "speak")
    lines.insert(at, json.dumps({"t": json.loads(lines[at])["t"], "beat": 5, **record}))
    log.write_text("\n".join(lines) + "\n")


def page_of(family: Path, tmp_path: Path) -> tuple[Path, str]:
    page = tmp_path / "takes.html"
    assert main(["report", str(family / "base"), *(str(family / t) for t in TAKES), "--html", str(page)]) == 0
    return page, page.read_text()


def test_every_beat_is_shown_whole(family, tmp_path):
    _, html = page_of(family, tmp_path)
    silences = re.findall(r'<p class="silence" dir="auto">([^<]*)</p>', html)
    assert silences and any(re.fullmatch(r"\w+ is silent: \*[^*]+\*", s) for s in silences)   # with stage business
    assert re.search(r'<p class="reaction" dir="auto">\w+ \[REACT', html)
    thoughts = re.findall(r'<details class="thinking"><summary>(\w+) thinks \(private\)</summary><p class="private" dir="auto">', html)
    assert len(thoughts) > 20 and {"Alice", "Bob", "Charlie"} <= set(thoughts)
    assert "<details open" not in html                                  # thinking is folded until asked for
    base = json.loads((family / "base" / "events.json").read_text())
    said = next(e["text"] for e in base if e["type"] == "think" and e.get("beat", 0) >= 3)
    assert said.replace("'", "&#x27;").replace('"', "&quot;")[:40] in html


def test_the_directors_change_and_the_coordinators_notes_are_told_apart_by_their_source(family, tmp_path):
    _, html = page_of(family, tmp_path)
    assert re.findall(r'<p class="change" dir="auto">» ([^<]*)</p>', html) == [
        "The director&#x27;s change: note to Bob: Bob, say nothing for a while.",
        "The director&#x27;s change: [EVENT: The lights flicker]"]
    # Each note by its `from`, whatever its words say.
    assert '<p class="coordinator" dir="auto">Coordinator&#x27;s note to Alice (winding-down): Director&#x27;s note: start ' \
           'closing the scene.</p>' in html
    assert '<p class="director" dir="auto">Director&#x27;s note to everyone: The coordinator wants everyone to slow down.</p>' in html


def test_five_takes_side_by_side_fit_a_1400_pixel_window(family, tmp_path):
    page, _ = page_of(family, tmp_path)
    wrapper = tmp_path / "measure.html"      # a page of the test's own (no CSP) that measures the report in a frame
    wrapper.write_text(f'<!doctype html><iframe id="f" src="{page.name}" style="width:1400px;height:900px;border:0">'
                       "</iframe><pre id=out>pending</pre><script>document.getElementById('f').onload=function(){"
                       "var d=this.contentDocument.documentElement;document.getElementById('out').textContent="
                       "d.scrollWidth+' '+d.clientWidth;};</script>")
    result = subprocess.run([browser(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                             "--allow-file-access-from-files", "--virtual-time-budget=5000", "--window-size=1500,1000",
                             "--dump-dom", wrapper.as_uri()], capture_output=True, text=True, timeout=60)
    measured = re.search(r"<pre id=\"out\">(\d+) (\d+)</pre>", result.stdout)
    assert measured, result.stdout[-500:]
    scroll, client = map(int, measured.groups())
    assert scroll <= client <= 1400, (scroll, client)


def test_a_takes_own_report_says_it_was_made_by_branch_and_with_its_own_seed(family, tmp_path):
    """A take was not run with `--batch`: its report's "Run with" is the `branch` command that made it
    (the parent by its folder's name, the beat, the change) and its seed the one it played on with."""
    import html as markup
    runs = family
    for name, command, seed in (("note", "promptdesk branch base --at-beat 3 --note 'Bob, say nothing for a while.' "
                                         "--to bob", "7"),
                                ("again", "promptdesk branch base --at-beat 3 --seed 3", "3")):
        page = tmp_path / f"{name}.html"
        assert main(["report", str(runs / name), "--html", str(page)]) == 0
        text = markup.unescape(page.read_text())
        assert f"<dt>Run with</dt><dd><code>{command}</code>" in text and f"<dt>Seeds</dt><dd>{seed}</dd>" in text


def test_the_takes_page_gives_the_command_of_every_take_it_shows(family, tmp_path):
    """A page of a parent and its takes gave as "Run with" the parent's `--batch` alone: nothing on it said
    how the takes were made, so they could not be played again from the page. It gives each run's command."""
    import html as markup
    runs = family
    page = tmp_path / "family.html"
    assert main(["report", str(runs / "base"), str(runs / "event"), str(runs / "again"), "--html", str(page)]) == 0
    text = markup.unescape(page.read_text())
    ran = re.search(r"<dt>Run with</dt><dd>(.*?)</dd>", text).group(1)
    commands = re.findall(r"<code>(.*?)</code>", ran)
    assert commands[0].startswith("promptdesk --batch ") and "--seed 7" in commands[0]
    assert commands[0].endswith(" --out base"), "the takes' commands name their parent by its folder"
    assert commands[1:] == ["promptdesk branch base --at-beat 3 --event 'The lights flicker' --out event",
                            "promptdesk branch base --at-beat 3 --seed 3 --out again"]
