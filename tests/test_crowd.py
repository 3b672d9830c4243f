"""Crowds and the cost of a beat: a 20-actor scene runs headless end to end, and a beat's `route`
events (one per speech and listener, the bulk of a crowd's beat) are flushed together at the next
safe point, never one by one, while every other event is on disk before it is shown."""

from __future__ import annotations

import json

import pytest

from benchmarks.crowd import town_meeting_yaml, write_crowd
from promptdesk.core.cli.main import main
from promptdesk.core.engine import actors
from promptdesk.core.engine.coordinator import CONTINUE, RuleCoordinator
from promptdesk.core.providers.base import ChatMessage
from promptdesk.core.record.prompt_log import read_prompts
from promptdesk.core.record.recorder import Recorder, read_events
from promptdesk.core.record.audit import audit_run
from helpers import make_scene, run_session
from loopback import loopback  # noqa: F401  (fixture)

CROWD = 20


def test_a_twenty_actor_scene_runs_headless(tmp_path, capsys):
    slugs = write_crowd(tmp_path / "characters", CROWD)
    scene = tmp_path / "town-meeting.yaml"
    scene.write_text(town_meeting_yaml(slugs))
    out = tmp_path / "run"
    code = main(["--batch", str(scene), "--isolation", "b", "--coordinator", "C", "--seed", "3", "--max-beats", "3",
                 "--characters-dir", str(tmp_path / "characters"), "--out", str(out), "--quiet"])
    assert code == 0, capsys.readouterr().err
    events = read_events(out)
    spoke = {e.from_ for e in events if e.type == "speak" and e.beat == 1}
    assert spoke == set(slugs), "every one of the twenty actors answered the first full beat"
    routed = [e for e in events if e.type == "route" and e.beat == 1]
    speeches = [e for e in events if e.type == "speak" and e.beat == 1 and e.action != "silent"]
    assert len(routed) == len(speeches) * (CROWD - 1), "each speech reached the nineteen others"
    assert json.loads((out / "metadata.json").read_text())["characterCount"] == CROWD
    report = audit_run(out)
    assert report.clean and report.requests >= 2 * CROWD, report.summary()


class CountingHandle:
    """An `events.jsonl` handle that counts its flushes (and passes everything through)."""

    def __init__(self, real) -> None:
        self.real, self.flushes = real, 0

    def write(self, text: str) -> int:
        return self.real.write(text)

    def flush(self) -> None:
        self.flushes += 1
        self.real.flush()

    def fileno(self) -> int:
        return self.real.fileno()

    def close(self) -> None:
        self.real.close()


async def test_a_beats_routes_are_flushed_at_the_safe_point_and_what_is_shown_is_on_disk(tmp_path, monkeypatch):
    original = Recorder.open
    handles: list[CountingHandle] = []

    def counting_open(self):
        original(self)
        handles.append(CountingHandle(self._files["events.jsonl"]))
        self._files["events.jsonl"] = handles[-1]

    monkeypatch.setattr(Recorder, "open", counting_open)
    per_beat: list[tuple[int, int, int, int]] = []
    on_disk_short: list[str] = []

    def watch(session):
        def at_event(event) -> None:
            path = session.recorder.run_dir / "events.jsonl"
            if event.type not in ("route", "delta"):
                disk = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
                if not disk or disk[-1]["type"] != event.type or disk[-1].get("text") != event.text:
                    on_disk_short.append(f"a {event.type} event was shown before it was on disk")
            if event.type != "beat":
                return
            disk = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            earlier = [e for e in session.recorder.events if e.beat is not None and e.beat < event.beat]
            if len(disk) < len(earlier):
                on_disk_short.append(f"beat {event.beat}: {len(disk)} lines on disk, {len(earlier)} events before it")
            routes = sum(e.type == "route" for e in session.recorder.events)
            per_beat.append((event.beat, handles[-1].flushes, len(session.recorder.events), routes))
        session.subscribe(at_event)

    scene = make_scene(limits={"max_beats": 6, "stall_beats": 6}, provider={"name": "offline"})
    run = await run_session(tmp_path, scene, isolation="b", coordinator="C", before_run=watch)
    assert not on_disk_short, on_disk_short
    assert len(per_beat) >= 4
    pairs = list(zip(per_beat, per_beat[1:]))
    assert sum(after[3] > before[3] for before, after in pairs) >= 3, "most beats route lines"
    for (beat, flushes, events, routes), (_, next_flushes, next_events, next_routes) in pairs:
        assert next_events - events >= 5, "a beat records several events"
        shown = (next_events - events) - (next_routes - routes)
        assert next_flushes - flushes <= shown + 1, \
            f"beat {beat}: {next_flushes - flushes} flushes for {shown} shown events and {next_routes - routes} routes"
    assert len(read_events(run.dir)) == len(run.session.recorder.events), "the close flushed every held line"


class NeverCloses(RuleCoordinator):
    """Role C that never judges a close: the scene plays every beat up to its limit."""

    async def decide(self, view, ask=None, warn=None):
        return CONTINUE


async def test_a_thread_turn_costs_the_same_however_long_the_thread(tmp_path, monkeypatch):
    """Isolation (b): the messages an actor's request is built from are kept from turn to turn, so a
    turn renders its own messages only, whether the thread holds 1 or 19 earlier turns (a drop
    renders the kept turns once)."""
    built = [0]

    class Counted(ChatMessage):
        def __init__(self, **data) -> None:
            built[0] += 1
            super().__init__(**data)

    monkeypatch.setattr(actors, "ChatMessage", Counted)
    per_turn: dict[int, set[int]] = {}
    request = actors.ThreadActor.request

    last_dropped: dict[str, int] = {}

    def counted_request(self, user_text, beat, purpose="turn"):
        before = built[0]
        made = request(self, user_text, beat, purpose)
        if last_dropped.get(self.slug, 0) == self.dropped and purpose == "turn":
            per_turn.setdefault(len(self.exchanges) - self.dropped, set()).add(built[0] - before)
        last_dropped[self.slug] = self.dropped
        return made

    monkeypatch.setattr(actors.ThreadActor, "request", counted_request)
    scene = make_scene(limits={"max_beats": 45, "stall_beats": 45, "soft_cap_per_character": 100,
                               "hard_cap_per_character": 200}, provider={"name": "offline"})

    def endless(session):
        session.coordinator = NeverCloses()

    run = await run_session(tmp_path, scene, isolation="b", coordinator="C", before_run=endless)
    assert run.result.beats >= 40
    assert {1, 10, 19} <= set(per_turn), "short and long threads were both played"
    assert max(max(counts) for counts in per_turn.values()) <= 3, per_turn


def test_a_crowds_report_names_its_cast_in_one_aligned_row(tmp_path, capsys):
    """A 20-actor run's "What was run" gave twenty rows of the same words in a floated list, where a name
    that wrapped (`dotnet-framework-4.8-expert`) slid every later value beside the wrong name: the cast
    is one row per provider line naming its actors, in a grid whose rows stay aligned."""
    slugs = write_crowd(tmp_path / "characters", CROWD)
    scene = tmp_path / "town-meeting.yaml"
    scene.write_text(town_meeting_yaml(slugs))
    out, page = tmp_path / "run", tmp_path / "report.html"
    assert main(["--batch", str(scene), "--isolation", "a", "--coordinator", "C", "--seed", "3", "--max-beats", "2",
                 "--characters-dir", str(tmp_path / "characters"), "--out", str(out), "--quiet"]) == 0
    assert main(["report", str(out), "--html", str(page)]) == 0, capsys.readouterr().err
    html = page.read_text()
    facts = html[html.index("<h2>What was run</h2>"):html.index("</dl>")]
    everyone = ", ".join(f'<span class="who">Person {n}</span>' for n in range(1, CROWD + 1))
    assert f"<dt>Cast ({CROWD})</dt><dd>offline improviser (not a model): {everyone}</dd>" in facts
    assert ".facts .who{white-space:nowrap}" in html, "a name is never broken across two lines"
    assert "<dt>Person 1</dt>" not in facts
    assert ".facts dl{display:grid" in html and "float:left" not in html


def test_a_mixed_crowd_is_named_per_provider_and_a_small_cast_per_actor():
    from promptdesk.core.experiments.report_header import provider_rows

    crowd = {f"Person {n}": {"offline:improviser"} for n in range(1, 12)} | {
        "Ann": {"anthropic:claude-haiku-4-5"}, "judge (coordinator)": {"openai:gpt-4o-mini"}}
    assert provider_rows(crowd) == [
        ("11 of the cast of 12", "offline improviser (not a model): "
         + ", ".join(f'<span class="who">Person {n}</span>' for n in range(1, 12))),
        ("1 of the cast of 12", 'anthropic, model claude-haiku-4-5: <span class="who">Ann</span>'),
        ("judge (coordinator)", "openai, model gpt-4o-mini")]
    assert provider_rows({"Ann": {"offline:improviser"}, "Bo": {"offline:improviser"}}) == [
        ("Ann", "offline improviser (not a model)"), ("Bo", "offline improviser (not a model)")]


def test_a_crowds_notes_say_its_window_is_shorter_than_a_beat(tmp_path, capsys):
    """Isolation (a) carries the last `limits.window` lines (10) beside the lines new since an actor's last
    turn: for twenty actors that is half a beat of memory, where for three it is three beats; notes.md
    said only "the last 10 lines" either way."""
    slugs = write_crowd(tmp_path / "characters", CROWD)
    for cast, window, said in ((slugs, 10, True), (slugs[:3], 10, False), (slugs, 19, False)):
        scene = tmp_path / "town-meeting.yaml"
        scene.write_text(town_meeting_yaml(cast) + f"limits: {{window: {window}}}\n")
        out = tmp_path / f"run-{len(cast)}-{window}"
        assert main(["--batch", str(scene), "--isolation", "a", "--coordinator", "C", "--seed", "3", "--max-beats", "1",
                     "--characters-dir", str(tmp_path / "characters"), "--out", str(out), "--quiet"]) == 0
        line = next(x for x in (out / "notes.md").read_text().splitlines() if x.startswith("- Context window"))
        assert (f"fewer than the other {len(cast) - 1} actors say in one beat" in line) is said, line
        assert ("raise `limits.window` to keep more" in line) is said


def test_a_crowds_metrics_list_who_addressed_whom_instead_of_a_matrix_wider_than_a_page(tmp_path, capsys):
    """`metrics` printed a crowd's address matrix with a column per addressee: 21 columns, over 250
    characters a line. Past twelve it is a list, one speaker a line, wrapped at 100 characters."""
    slugs = write_crowd(tmp_path / "characters", CROWD)
    scene = tmp_path / "town-meeting.yaml"
    scene.write_text(town_meeting_yaml(slugs))
    out = tmp_path / "run"
    assert main(["--batch", str(scene), "--isolation", "a", "--coordinator", "C", "--seed", "3", "--max-beats", "8",
                 "--characters-dir", str(tmp_path / "characters"), "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["metrics", str(out), "--json"]) == 0
    addressed = json.loads(capsys.readouterr().out)["addressed"]
    assert len({t for row in addressed.values() for t in row}) > 12
    assert main(["metrics", str(out)]) == 0
    text = capsys.readouterr().out
    part = text[text.index("Addressed (from: to and speeches; * is everyone)"):text.index("Tone by beat")]
    assert "from \\ to" not in text and max(len(line) for line in part.splitlines()) <= 100
    speaker, row = next(iter(addressed.items()))
    most = max(row, key=lambda t: (row[t], t))
    assert part.splitlines()[1].startswith(speaker + " ") and f" {most} {row[most]}" in " ".join(part.split())


async def test_a_judge_of_a_crowd_is_shown_its_latest_beat_whole(run_scene, loopback, tmp_path, monkeypatch):
    """Forty-five residents who all speak every beat (models on a loopback server), coordinator B (the
    offline judge, sent the request a model would get): each per-beat decision holds every line of the
    beat just played. It held the last 40 public lines, so five speakers of each beat went unseen while
    the judge was asked whether every character had stated a position."""
    from loopback import Reply
    from test_scene_faults import CANARY, remote_cast, turn

    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    slugs = write_crowd(tmp_path / "characters", 45)

    def answer(recorded):
        system = json.dumps(recorded.body.get("system"))
        who = next(slug for slug in slugs if f"You are Person {int(slug[-2:])}." in system)
        return Reply(text=turn(f'[TONE: calm] "{who} has a view on the road, beat after beat."'))

    loopback.default = answer
    scene = make_scene(characters=slugs, cast=remote_cast(loopback, *slugs), limits={"max_beats": 3})
    run = await run_scene(scene, isolation="a", coordinator="B")
    events = read_events(run.dir)
    judged = 0
    for record in read_prompts(run.dir):
        if record.to != "judge" or record.purpose != "judge" or not record.beat:
            continue
        speakers = {e.from_ for e in events if e.type == "speak" and e.beat == record.beat and e.action == "speak"}
        asked = json.dumps(record.request)
        missing = sorted(slug for slug in speakers if f"{slug} has a view on the road" not in asked)
        assert not missing, (record.beat, len(speakers), missing)
        judged += len(speakers) == 45
    assert judged >= 2, "the full beats of forty-five were judged"


@pytest.mark.parametrize("isolation", ["a", "b"])
async def test_a_crowds_lines_keep_arrival_order_in_the_record_the_transcript_and_every_next_request(
        run_scene, loopback, tmp_path, monkeypatch, isolation):
    """Thirty residents whose models answer slower the earlier they stand in the cast (so a beat's lines
    arrive in another order than the cast's): the record, `transcript.txt` and every actor's request of
    the next beat hold the beat's lines (the others', its own is elsewhere) in one order, the record's, and
    it is not the cast's."""
    from loopback import Reply
    from test_scene_faults import CANARY, remote_cast, turn

    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    slugs = write_crowd(tmp_path / "characters", 30)

    def answer(recorded):
        system = json.dumps(recorded.body.get("system"))
        n = next(int(slug[-2:]) for slug in slugs if f"You are Person {int(slug[-2:])}." in system)
        return Reply(text=turn(f'[TONE: calm] "Resident {n} speaks up."'), delay_s=0.03 * (31 - n))

    loopback.default = answer
    scene = make_scene(characters=slugs, cast=remote_cast(loopback, *slugs), limits={"max_beats": 3})
    run = await run_scene(scene, isolation=isolation, coordinator="C")
    events = read_events(run.dir)
    said = [e.text for e in events if e.type == "speak" and e.beat == 1]
    assert len(said) == 30 and said != sorted(said, key=lambda text: int(text.split()[1])), "arrival is not cast order"
    transcript = (run.dir / "transcript.txt").read_text()
    beat_two = transcript.index(said[0])
    assert [transcript.index(text, beat_two) for text in said] == sorted(transcript.index(text, beat_two) for text in said)
    checked = 0
    for record in read_prompts(run.dir):
        if record.purpose == "turn" and record.beat == 2:
            body = json.dumps(record.request)
            own = f"Resident {int(record.to[-2:])} speaks up."
            others = [text for text in said if text != own and text in body]
            at = [body.rindex(text) for text in others]
            assert len(others) == 29 and at == sorted(at), (record.to, others[:5])
            checked += 1
    assert checked == 30
