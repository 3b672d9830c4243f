"""Emotional arcs, relationships and per-beat timing: from a log written by hand (spec 004's worked
scene), from a real offline run (checked against its raw `events.jsonl`), through `metrics`, the HTML
report and the console's Session panel."""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path

import pytest

from promptdesk.core.cli.main import main
from helpers import CHARACTERS, SCENES
from promptdesk.core.experiments.arcs import arcs, beat_timing, current_tones, relationships
from promptdesk.core.protocol.lines import speech_line
from promptdesk.core.record.events import parse_event
from promptdesk.tui.stage_state import StateFold
from promptdesk.tui.widgets.state_panel import render_state

CAST = {"alice": "Alice", "bob": "Bob", "charlie": "Charlie"}


def speak(t, who, beat, tone=None, target=None, action="speak", text="words"):
    row = {"t": t, "from": who, "type": "speak", "text": text, "beat": beat, "action": action}
    return row | ({"tone": tone} if tone else {}) | ({"target": target} if target else {})


def call(t, who, beat, latency, purpose="turn"):
    return {"t": t, "from": "coordinator", "target": who, "type": "call", "provider": "improviser", "beat": beat,
            "latency_s": latency, "purpose": purpose}


def beat(t, n):
    return {"t": t, "from": "coordinator", "type": "beat", "text": f"Beat {n}", "beat": n}


# Spec 004's example transcript ("Alice [TO: Bob, TONE: angry] ..."), beat by beat.
EXAMPLE = [
    {"t": 0.0, "from": "coordinator", "type": "start", "text": "start", "beat": 0, "cast": CAST},
    beat(0.0, 0), call(0.5, "alice", 0, 0.5),
    speak(0.5, "alice", 0, "angry", "Bob"),
    beat(1.0, 1), call(1.2, "bob", 1, 0.2), call(1.9, "alice", 1, 0.9), call(1.4, "charlie", 1, 0.4),
    speak(1.2, "bob", 1, "defensive"), speak(1.9, "alice", 1, "furious", action="interrupt"),
    speak(1.4, "charlie", 1, "nervous"),
    beat(3.0, 2), call(3.3, "bob", 2, 0.3), speak(3.3, "bob", 2, "frustrated"),
    speak(3.4, "charlie", 2, action="silent"),
    beat(4.0, 3), call(4.6, "alice", 3, 0.6), call(4.7, "bob", 3, 0.7),
    speak(4.6, "alice", 3, "Stern but controlled", "Bob"), speak(4.7, "bob", 3, "remorseful", "Alice"),
    beat(6.0, 4), speak(6.1, "alice", 4, "softening"), speak(6.2, "bob", 4, "earnest", "Alice"),
    speak(6.3, "alice", 4, "accepting", "Charlie"), speak(6.4, "charlie", 4, "relieved"),
    {"t": 7.5, "from": "coordinator", "type": "close", "reason": "natural", "text": "closed", "beat": 4},
    call(8.0, "alice", 4, 5.0, purpose="journal"),
]


def events_of(records):
    return [parse_event(r) for r in records]


def test_arcs_give_each_actor_its_last_tone_per_beat():
    got = arcs(events_of(EXAMPLE))
    assert got == {"alice": ["angry", "furious", None, "stern but controlled", "accepting"],
                   "bob": [None, "defensive", "frustrated", "remorseful", "earnest"],
                   "charlie": [None, "nervous", None, None, "relieved"]}
    assert current_tones(events_of(EXAMPLE)) == {"alice": "accepting", "bob": "earnest", "charlie": "relieved"}


def test_relationships_count_who_addresses_whom_in_which_tones():
    got = relationships(events_of(EXAMPLE))
    assert {s: {t: (r.speeches, r.tones) for t, r in row.items()} for s, row in got.items()} == {
        "alice": {"bob": (2, {"angry": 1, "stern but controlled": 1}), "charlie": (1, {"accepting": 1})},
        "bob": {"alice": (2, {"remorseful": 1, "earnest": 1})}}


def test_beat_timing_is_wall_time_slowest_call_and_spread_without_the_journal_step():
    timing = beat_timing(events_of(EXAMPLE))
    assert [(t.beat, t.wall_s, t.calls, t.slowest_s, t.slowest, t.spread_s) for t in timing] == [
        (0, 1.0, 1, 0.5, "alice", 0.0), (1, 2.0, 3, 0.9, "alice", 0.7), (2, 1.0, 1, 0.3, "bob", 0.0),
        (3, 2.0, 2, 0.7, "bob", 0.1), (4, 1.5, 0, None, None, None)]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("arcs") / "run"
    assert main(["--batch", str(SCENES / "the-apology.yaml"), "--isolation", "b", "--coordinator", "C", "--seed", "7",
                 "--out", str(out), "--quiet", "--journals", "none", "--characters-dir", str(CHARACTERS)]) == 0
    return out


def raw(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]


def test_metrics_json_reports_arcs_relationships_and_timing_as_the_record_says(run_dir, capsys):
    assert main(["metrics", str(run_dir), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    records = raw(run_dir)
    speeches = [r for r in records if r["type"] == "speak" and r.get("action") != "silent"]
    assert any(r.get("tone") for r in speeches), "the offline improviser gives tones"
    for r in speeches:
        if r.get("tone"):
            later = [s for s in speeches if s["from"] == r["from"] and s["beat"] == r["beat"] and s["t"] > r["t"]
                     and s.get("tone")]
            if not later:
                assert data["arcs"][r["from"]][r["beat"]] == r["tone"].strip().lower()
    cast = next(r["cast"] for r in records if r["type"] == "start")
    by_name = {v.lower(): k for k, v in cast.items()}
    addressed = sum(1 for r in speeches if by_name.get((r.get("target") or "").strip().lower()) not in (None, r["from"]))
    assert addressed and sum(rel["speeches"] for row in data["relationships"].values() for rel in row.values()) >= addressed
    for timing in data["beat_timing"]:
        calls = [r for r in records if r["type"] == "call" and r.get("beat") == timing["beat"]
                 and r.get("purpose") != "journal"]
        assert timing["calls"] == len(calls)
        if calls:
            latencies = [c.get("latency_s", 0.0) for c in calls]
            assert timing["slowest_s"] == pytest.approx(max(latencies), abs=1e-3)
            assert timing["spread_s"] == pytest.approx(max(latencies) - min(latencies), abs=1e-3)
        assert timing["wall_s"] >= 0
    assert len(data["beat_timing"]) == data["beats"]


def test_metrics_text_has_the_three_tables(run_dir, capsys):
    assert main(["metrics", str(run_dir)]) == 0
    out = capsys.readouterr().out
    data = json.loads((main(["metrics", str(run_dir), "--json"]), capsys.readouterr().out)[1])
    assert "Tone by beat" in out and "Relationships" in out and "Timing per beat" in out
    some_tone = next(t for row in data["arcs"].values() for t in row if t)
    tone_block = out.split("Tone by beat", 1)[1].split("Relationships", 1)[0]
    assert some_tone in tone_block
    timing_block = out.split("Timing per beat", 1)[1]
    assert len(re.findall(r"^\d+ ", timing_block, re.M)) == data["beats"]


def test_html_report_draws_the_arcs_and_the_addressing_graph(run_dir, tmp_path):
    html_path = tmp_path / "r.html"
    assert main(["report", str(run_dir), "--html", str(html_path)]) == 0
    html = html_path.read_text()
    assert 'aria-label="tone by beat"' in html and 'aria-label="addressing graph"' in html
    tones = {t for row in arcs(events_of(raw(run_dir))).values() for t in row if t}
    for tone in tones:
        assert f"{tone}</title></rect>" in html
    pairs = relationships(events_of(raw(run_dir)))
    assert html.count("marker-end=") == sum(len(row) for row in pairs.values())
    assert "Timing per beat" in html


def test_a_hostile_tone_is_escaped_in_the_report(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    records = [*EXAMPLE[:3], speak(0.6, "bob", 0, "<script>alert(1)</script>", "Alice")]
    (folder / "events.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "r.html"
    assert main(["report", str(folder), "--html", str(out)]) == 0
    html = out.read_text()
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_session_panel_shows_each_actors_current_tone():
    fold = StateFold()
    fold.feed(events_of(EXAMPLE[:11]))
    text = render_state(fold.snapshot()).plain
    assert "furious" in text and "defensive" in text and "angry" not in text
    fold.feed(events_of(EXAMPLE[11:]))
    text = render_state(fold.snapshot()).plain
    assert "accepting" in text and "earnest" in text and "relieved" in text and "furious" not in text


def test_character_insights_put_each_beats_thinking_beside_the_response_it_led_to(run_dir, tmp_path):
    html_path = tmp_path / "r.html"
    assert main(["report", str(run_dir), "--html", str(html_path)]) == 0
    html = html_path.read_text()
    section = html.split("Character insights", 1)[1]
    events = events_of(raw(run_dir))
    names = {"alice": "Alice", "bob": "Bob", "charlie": "Charlie"}
    checked = 0
    for think in (e for e in events if e.type == "think"):
        said = [e for e in events if e.type == "speak" and e.from_ == think.from_ and e.beat == think.beat
                and e.action != "silent"]
        if not said:
            continue
        block = section.split(f"{escape(names[think.from_])}: thinking", 1)[1].split("</details>", 1)[0]
        beat = block.split(f"<b>beat {think.beat}</b>", 1)[1].split("<b>beat", 1)[0]
        assert escape(think.text) in beat and escape(speech_line(names[think.from_], said[-1])) in beat
        checked += 1
    assert checked >= 5


@pytest.mark.parametrize("size", [12, 30, 50])
def test_a_crowds_addressing_graph_keeps_every_node_and_name_apart(size):
    """A town meeting of 30 (issue 25's crowds) drawn on the small cast's fixed circle put 44-pixel
    nodes 31 pixels apart, their names on top of each other: the crowd's circle grows with the cast,
    its nodes stay apart and each name is written once, outside its node, along the radius."""
    from promptdesk.core.experiments.arcs import Relationship
    from promptdesk.core.experiments.report_arcs import graph_svg

    names = {f"resident-{i}": f"Resident Number {i}" for i in range(size)}
    slugs = list(names)
    pairs = {s: {slugs[(i + 1) % size]: Relationship(2, {"warm": 2}),
                 slugs[(i + 7) % size]: Relationship(1, {"curt": 1})} for i, s in enumerate(slugs)}
    svg = graph_svg(pairs, names)
    nodes = [(float(x), float(y), float(r)) for x, y, r in
             re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)" r="([\d.]+)"', svg)]
    assert len(nodes) == size
    gap = min(((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5 - a[2] - b[2]
              for i, a in enumerate(nodes) for b in nodes[i + 1:])
    assert gap >= 6, gap
    width = float(re.search(r'aria-label="addressing graph" width="([\d.]+)"', svg).group(1))
    assert all(r <= x <= width - r and r <= y <= width - r for x, y, r in nodes)
    for name in names.values():
        assert svg.count(f"<title>{name}</title>") == 1
    assert svg.count('transform="rotate(') == size
    assert "2 · warm" not in svg and "Resident Number 3 to Resident Number 4: 2 speeches (warm 2)" in svg
    assert "Resident Number 3 to Resident Number 10: 1 speech (curt 1)" in svg, "one speech, not `1 speeches`"


def test_a_small_casts_addressing_graph_is_drawn_as_before():
    from promptdesk.core.experiments.arcs import Relationship
    from promptdesk.core.experiments.report_arcs import graph_svg

    svg = graph_svg({"alice": {"bob": Relationship(2, {"angry": 2})}}, CAST)
    assert 'width="420"' in svg and svg.count('r="22"') == 3 and "2 · angry" in svg and "rotate(" not in svg


def test_beat_timing_finds_each_beats_end_without_scanning_every_later_beat(monkeypatch):
    """Each beat ends where the next one starts: found by looking ahead to it, not by listing every
    later beat (quadratic in the beats: an 8,000-beat record would take seconds on that alone)."""
    from promptdesk.core.experiments import arcs as arcs_module
    seen = [0]

    def counting_range(*args):
        for n in range(*args):
            seen[0] += 1
            yield n
    log = [parse_event(r) for b in range(400) for r in (beat(b * 1.0, b), call(b + 0.5, "alice", b, 0.4))]
    monkeypatch.setattr(arcs_module, "range", counting_range, raising=False)
    timing = beat_timing(log)
    assert [t.wall_s for t in timing[:3]] == [1.0, 1.0, 1.0] and len(timing) == 400
    assert seen[0] <= 3 * 400
