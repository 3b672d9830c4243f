"""`promptdesk branch RUN_DIR --at-beat K`: a take of a scene from the start of beat K, in a new run folder
whose record up to that beat is the parent's (copied, never played again), then a `branch` event, then
the scene played on with the change. On the offline improviser a take with no change plays the
parent's beats again exactly (simulated time and seed continue)."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
import yaml

from promptdesk.core.casting.branch import Change, prepare_branch
from promptdesk.core.cli.main import main
from promptdesk.core.clock import VirtualClock
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.record.audit import audit_run
from promptdesk.core.record.prompt_log import read_prompts
from promptdesk.core.record.takes import describe_change
from promptdesk.core.record.recorder import read_events
from helpers import CHARACTERS, example_scene, make_scene
from test_resume import assert_nothing_twice, kill_mid_beat

LATENCY = {"latency_ms": [20, 70]}
"""Simulated latency that puts sub-millisecond fractions in every `t` and decides arrival order."""


def scene_file(folder: Path, **update) -> Path:
    scene = example_scene("the-apology", provider=LATENCY, **update)
    path = folder / "the-apology.yaml"
    path.write_text(yaml.safe_dump(scene.model_dump(mode="json", by_alias=True, exclude_none=True)))
    return path


def batch(scene: Path, out: Path, isolation: str = "b", seed: int = 3) -> Path:
    assert main(["--batch", str(scene), "--isolation", isolation, "--coordinator", "C", "--seed", str(seed),
                 "--characters-dir", str(CHARACTERS), "--journals", "none", "--out", str(out), "--quiet"]) == 0
    return out


def branch(parent: Path, beat: int, out: Path, *extra: str) -> int:
    return main(["branch", str(parent), "--at-beat", str(beat), "--out", str(out), "--quiet", *extra])


def lines(run: Path, name: str = "events.jsonl") -> list[str]:
    return (run / name).read_text().splitlines()


def own_part(take: Path) -> list[str]:
    """The take's lines after its own `branch` event."""
    log = lines(take)
    last = max(i for i, line in enumerate(log) if json.loads(line)["type"] == "branch")
    return log[last + 1:]


def from_beat(run: Path, beat: int) -> list[str]:
    """The run's lines from its `beat` event of `beat` on."""
    log = lines(run)
    start = next(i for i, line in enumerate(log) if json.loads(line)["type"] == "beat" and json.loads(line)["beat"] == beat)
    return log[start:]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """Parents on the improviser with simulated latency: isolation a and b in parallel beats, b in sequential turns."""
    folder = tmp_path_factory.mktemp("branch")
    batch(scene_file(folder), folder / "b")
    batch(scene_file(folder), folder / "a", isolation="a")
    sequential = folder / "sequential"
    sequential.mkdir()
    batch(scene_file(sequential, turns="sequential"), folder / "b-sequential")
    paced = folder / "paced"
    paced.mkdir()
    batch(scene_file(paced, pace=0.7, limits={"window": 2}), folder / "b-paced-window-2")
    return folder


@pytest.mark.parametrize("parent", ["b", "a", "b-sequential", "b-paced-window-2"])
def test_a_take_with_no_change_plays_the_parents_beats_again_exactly(runs, tmp_path, parent):
    parent = runs / parent
    assert branch(parent, 4, tmp_path / "take") == 0
    take = tmp_path / "take"
    inherited = from_beat(parent, 4)
    assert lines(take)[:len(lines(parent)) - len(inherited)] == lines(parent)[:len(lines(parent)) - len(inherited)]
    assert own_part(take) == inherited, "every event from beat 4 on, `t` included, byte for byte"
    assert any('"t": ' in line and not line.split('"t": ')[1].split(",")[0].endswith(("0", "5")) for line in inherited)
    assert (take / "prompts.jsonl").read_bytes() == (parent / "prompts.jsonl").read_bytes()
    event = next(e for e in read_events(take) if e.type == "branch")
    assert (event.beat, event.model_extra["parent"], event.model_extra["change"]) == (4, str(parent.resolve()), {})
    assert event.t == json.loads(inherited[0])["t"] and event.model_extra["inherited"] == len(lines(parent)) - len(inherited)
    meta, parent_meta = (json.loads((run / "metadata.json").read_text()) for run in (take, parent))
    assert (meta["parent"], meta["branchedAt"], meta["change"]) == (str(parent.resolve()), 4, {})
    assert "parent" not in parent_meta and meta["totalBeats"] == parent_meta["totalBeats"]
    body = lambda path: path.read_text().split("\n", 6)[-1]  # noqa: E731 - the header carries the date
    assert body(take / "transcript.md") == body(parent / "transcript.md")
    assert audit_run(take).clean and audit_run(take).requests == audit_run(parent).requests
    assert "Take of " in (take / "notes.md").read_text()


@pytest.mark.parametrize("parent", ["b", "a", "b-sequential"])
def test_a_take_from_beat_0_inherits_no_request_and_records_each_of_its_own_once(runs, tmp_path, parent):
    """Beat 0 is a beat like any other: its requests are the take's own (sent by the take), never copied
    from the parent as well (the opener's request was on the take's record twice, once as the parent's)."""
    parent = runs / parent
    assert branch(parent, 0, tmp_path / "take") == 0
    take = tmp_path / "take"
    assert own_part(take) == from_beat(parent, 0)
    assert (take / "prompts.jsonl").read_bytes() == (parent / "prompts.jsonl").read_bytes()
    calls = [e for e in read_events(take) if e.type == "call"]
    assert len(list(read_prompts(take))) == len(calls) and audit_run(take).clean


def test_a_change_reaches_the_actors_at_the_beat_and_only_then(runs, tmp_path):
    parent = runs / "b"
    assert branch(parent, 4, tmp_path / "event", "--event", "The lights go out") == 0
    assert branch(parent, 4, tmp_path / "note", "--note", "Say what you knew and when", "--to", "BOB") == 0
    for take in (tmp_path / "event", tmp_path / "note"):
        log = read_events(take)
        at = [i for i, e in enumerate(log) if e.type == "branch"][0]
        assert [e.type for e in log[at:at + 3]] == ["branch", "event" if take.name == "event" else "note", "beat"]
        assert log[at + 1].from_ == "operator" and log[at + 1].beat == 4
        assert audit_run(take).clean
    told = lambda take, text: {r.to for r in read_prompts(take) if r.beat == 4 and text in r.text}  # noqa: E731
    assert told(tmp_path / "event", "The lights go out") == {"alice", "bob", "charlie"}
    assert told(tmp_path / "note", "Say what you knew and when") == {"bob"}
    assert not any("The lights go out" in r.text for r in read_prompts(parent))
    early = lambda run: [r.text for r in read_prompts(run) if r.beat < 4]  # noqa: E731
    assert early(tmp_path / "event") == early(parent)
    meta = json.loads((tmp_path / "note" / "metadata.json").read_text())
    assert meta["change"] == {"note": "Say what you knew and when", "to": "bob"}
    assert own_part(tmp_path / "event") != from_beat(parent, 4)


def test_a_take_of_a_take_and_a_take_from_before_its_parents_branch(runs, tmp_path):
    parent = runs / "b"
    first, again, earlier = tmp_path / "first", tmp_path / "again", tmp_path / "earlier"
    assert branch(parent, 3, first, "--event", "The lights flicker", "--seed", "11") == 0
    assert branch(first, 6, again) == 0
    assert own_part(again) == from_beat(first, 6)
    assert [e.model_extra["parent"] for e in read_events(again) if e.type == "branch"] == \
        [str(parent.resolve()), str(first.resolve())]
    assert json.loads((again / "metadata.json").read_text())["parent"] == str(first.resolve())
    assert json.loads((again / "private.json").read_text())["seed"] == 11
    assert branch(first, 2, earlier) == 0
    assert own_part(earlier) != from_beat(first, 2)
    assert [e.type for e in read_events(earlier)].count("branch") == 1
    for run in (again, earlier):
        assert audit_run(run).clean
        assert_nothing_twice(run)


async def test_every_actor_is_exactly_where_it_was_at_the_start_of_the_beat(run_scene, tmp_path):
    """Inboxes, isolation-b threads, turn counts, nudges, silent streak, fired events, tokens and cost."""
    seen = {}

    def state(session):
        return {"inbox": {s: list(a.inbox) for s, a in session.actors.items()},
                "thread": {s: [m.model_dump() for m in a.thread] for s, a in session.actors.items()},
                "turns": dict(session.state.turns), "nudged": dict(session.nudged),
                "silent_streak": session.state.silent_streak, "fired": set(session.fired_events),
                "tokens": session.state.tokens, "cost": round(session.state.cost_usd, 9), "beat": session.state.beat,
                "public": list(session.public_lines)}

    def watch(session):
        session.subscribe(lambda e: seen.setdefault(e.beat, state(session)) if e.type == "beat" else None)

    scene = example_scene("the-apology", provider=LATENCY, events=[{"at_beat": 2, "text": "The phone rings"}],
                          limits={"soft_cap_per_character": 3, "hard_cap_per_character": 8, "max_beats": 12, "window": 2})
    parent = await run_scene(scene, isolation="b", coordinator="C", before_run=watch)
    nudged_at = next(e.beat for e in parent.events() if e.type == "note" and e.reason == "soft-cap")
    beat = max(e.beat for e in parent.events() if e.type == "beat")
    assert beat > nudged_at
    session = prepare_branch(parent.dir, beat, out=tmp_path / "take")
    try:
        assert seen[beat]["nudged"] and seen[beat]["fired"]
        assert state(session) == seen[beat]
        begun = next(e.t for e in parent.events() if e.type == "beat" and e.beat == beat)
        assert isinstance(session.clock, VirtualClock) and session.clock.now() == session.t_offset == begun
    finally:
        session.recorder.release()


async def test_a_killed_take_resumes_and_plays_on_as_the_take(run_scene, tmp_path):
    from promptdesk.core.casting.resume import prepare

    parent = await run_scene(example_scene("the-apology", provider=LATENCY), isolation="b", coordinator="C")
    whole = prepare_branch(parent.dir, 3, Change(event="The projector dies"), out=tmp_path / "whole")
    await whole.run()
    killed = tmp_path / "killed"
    shutil.copytree(tmp_path / "whole", killed)
    kill_mid_beat(killed, 6)
    resumed = prepare(killed)
    await resumed.run()
    played = lambda run: [(e.type, e.from_, e.beat, e.text) for e in read_events(run)  # noqa: E731
                          if e.type in ("speak", "event", "note", "close", "branch")]
    assert played(killed) == played(tmp_path / "whole")
    assert_nothing_twice(killed)
    assert audit_run(killed).clean


def test_resume_says_a_take_closed_when_it_resumed_a_take(runs, tmp_path, capsys):
    take, killed = tmp_path / "take", tmp_path / "killed"
    assert branch(runs / "b", 2, take, "--event", "The projector dies") == 0
    kill_mid_beat(take, 4)
    capsys.readouterr()
    assert main(["resume", str(take), "--quiet"]) == 0
    assert "Take closed: " in capsys.readouterr().err
    shutil.copytree(runs / "b", killed)
    kill_mid_beat(killed, 4)
    assert main(["resume", str(killed), "--quiet"]) == 0
    assert "Scene closed: " in capsys.readouterr().err


def test_refusals_name_what_to_fix_and_make_nothing(runs, tmp_path, capsys):
    parent = runs / "b"
    cases = [(["--at-beat", "99"], "never began beat 99"), (["--at-beat", "2", "--to", "bob"], "give the note too"),
             (["--at-beat", "2", "--note", "Hush", "--to", "zed"], "--to zed: names no actor in this run"),
             (["--at-beat", "2", "--event", " "], "--event needs a text"), (["--at-beat", "-1"], "0 or more"),
             (["--at-beat", "2", "--event", "Rain. " * 3334], "--event is 20,003 characters; at most 20,000"),
             (["--at-beat", "2", "--note", "x" * 20_001], "--note is 20,001 characters; at most 20,000"),
             (["--at-beat", "2", "--model", "gpt-9"], "--model gpt-9: every call of this take goes to the offline"),
             (["--at-beat", "2", "--base-url", "http://127.0.0.1:9/v1"], "takes no model and no server")]
    for args, message in cases:
        assert main(["branch", str(parent), *args, "--out", str(tmp_path / "take")]) == 2
        assert message in capsys.readouterr().err
        assert not (tmp_path / "take").exists()
    assert main(["branch", str(tmp_path / "nowhere"), "--at-beat", "1"]) == 2
    assert "not a run folder" in capsys.readouterr().err
    assert main(["branch", str(parent)]) == 2
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "x").write_text("mine")
    assert branch(parent, 2, taken) == 2 and (taken / "x").read_text() == "mine"
    assert "never reused" in capsys.readouterr().err
    bare = tmp_path / "bare"
    shutil.copytree(parent, bare)
    (bare / "private.json").unlink()
    assert branch(bare, 2, tmp_path / "take") == 2 and not (tmp_path / "take").exists()
    assert "no private.json" in (err := capsys.readouterr().err) and "branched" in err, err


@pytest.mark.parametrize("fmt", ["roundtable", "collaborate"])
async def test_a_roundtable_or_a_collaboration_is_refused_saying_why(run_scene, capsys, fmt):
    from test_collaborate import collab_scene

    if fmt == "roundtable":
        run = await run_scene(make_scene(format="roundtable", roundtable={"topic": "Four-day sprints?"}),
                              isolation="a", coordinator="C", on_escalate="continue")
    else:
        run = await run_scene(collab_scene(max_rounds=3), isolation="b", coordinator="C")
    before = sorted(p.name for p in run.dir.parent.iterdir())
    assert await asyncio.to_thread(main, ["branch", str(run.dir), "--at-beat", "1"]) == 2
    err = capsys.readouterr().err
    assert f"{fmt} run" in err and "only scene runs can be branched" in err and "not rebuilt from the log" in err
    assert sorted(p.name for p in run.dir.parent.iterdir()) == before


def test_a_take_goes_beside_its_parent_by_default_and_never_writes_the_characters_journals(runs, tmp_path):
    parent = tmp_path / "runs" / "parent"
    shutil.copytree(runs / "b", parent)
    assert main(["branch", str(parent), "--at-beat", "5", "--quiet"]) == 0
    takes = [p for p in parent.parent.iterdir() if p.name.startswith("parent-take5-")]
    assert len(takes) == 1 and (takes[0] / "metadata.json").is_file()
    private = json.loads((takes[0] / "private.json").read_text())
    assert private["write_character_journals"] is False and private["take"]["beat"] == 5


async def test_a_take_on_real_models_sends_only_the_requests_from_its_beat_on(run_scene, tmp_path, capsys):
    """Through the real OpenAI SDK against the loopback server: the parent's first beats are on the
    take's record (and audited there) but no request before beat 3 reaches a server again."""
    from loopback import LoopbackServer, Reply
    from test_scene_faults import keys, remote_cast, turn  # noqa: F401

    line = Reply(text=turn('[TONE: calm] "Go on."', "I wait and see."))
    with LoopbackServer(line) as first, LoopbackServer(line) as second:
        scene = example_scene("the-apology", limits={"max_beats": 6},
                              cast=remote_cast(first, "alice", "bob", "charlie", provider="openai-compatible", model="llama3"))
        parent = await run_scene(scene, isolation="b", coordinator="C")
        sent = first.hits
        args = ["branch", str(parent.dir), "--at-beat", "3", "--event", "The fire alarm", "--base-url", second.url("/v1"),
                "--out", str(tmp_path / "take"), "--quiet"]
        assert await asyncio.to_thread(main, args) == 0
        assert first.hits == sent
        requests = list(read_prompts(tmp_path / "take"))
        own = [r for r in requests if r.beat >= 3]
        assert second.hits == len(own) > 0
        assert [r.text for r in requests if r.beat < 3] == [r.text for r in read_prompts(parent.dir) if r.beat < 3]
        assert all("The fire alarm" in json.dumps(body.body) for body in second.requests[:3])
    take = read_events(tmp_path / "take")
    branch_event = next(e for e in take if e.type == "branch")
    begun = next(e.t for e in parent.events() if e.type == "beat" and e.beat == 3)
    assert begun <= branch_event.t < begun + 5, "the take's time goes on from the parent's, on the wall clock"
    assert branch_event.model_extra["arrivals"] == "real", "the take's own clock: its models are real"
    assert audit_run(tmp_path / "take").clean
    assert "Take closed" in capsys.readouterr().err


async def test_simulated_time_is_whole_ticks_so_a_recorded_t_is_the_clocks_own():
    clock = VirtualClock(start=2.6617)
    assert clock.now() == 2.6617
    await clock.sleep(0.00004)
    assert clock.now() == 2.6618, "a wait shorter than a tick still moves time (a pace's remainder never spins)"
    await clock.sleep(0.12345678)
    assert clock.now() == round(2.6618 + 0.1235, 4)


async def test_a_time_limit_set_while_the_clock_settles_is_cancelled_not_fired():
    """A limit set near the end of the clock's settling (a turn starting right after another sleeper
    was cancelled) must not fire once its work is done: the clock settles again for every new sleeper."""
    clock = VirtualClock(timeouts=True)

    async def quick() -> str:
        for _ in range(3):
            await asyncio.sleep(0)
        return "done"

    for lead in range(0, VirtualClock.SETTLE_YIELDS):
        first = asyncio.ensure_future(clock.sleep(5))
        await asyncio.sleep(0)
        first.cancel()
        for _ in range(lead):
            await asyncio.sleep(0)
        assert await clock.wait_for(quick(), 335) == "done"
        for _ in range(3 * VirtualClock.SETTLE_YIELDS):
            await asyncio.sleep(0)
        assert clock.now() == 0.0, f"the limit fired after {lead} yields"


async def test_a_take_of_a_resumed_run_inherits_its_superseded_attempts_of_earlier_beats(run_scene, tmp_path):
    from promptdesk.core.casting.resume import prepare
    from promptdesk.core.record.seams import SUPERSEDED

    whole = await run_scene(example_scene("the-apology", provider=LATENCY), isolation="b", coordinator="C")
    resumed = tmp_path / "resumed"
    shutil.copytree(whole.dir, resumed)
    kill_mid_beat(resumed, 5)
    await prepare(resumed).run()
    late, early = prepare_branch(resumed, 7, out=tmp_path / "late"), prepare_branch(resumed, 3, out=tmp_path / "early")
    await late.run()
    await early.run()
    assert (tmp_path / "late" / SUPERSEDED).read_text() == (resumed / SUPERSEDED).read_text()
    assert not (tmp_path / "early" / SUPERSEDED).exists()
    cut = next(i for i, r in enumerate(read_prompts(resumed)) if r.beat >= 7)
    assert [r.text for r in read_prompts(tmp_path / "late")][:cut] == [r.text for r in read_prompts(resumed)][:cut]
    assert own_part(tmp_path / "late") == from_beat(resumed, 7)
    for take in ("late", "early"):
        assert audit_run(tmp_path / take).clean


def test_a_notes_actor_is_named_by_slug_or_character_name_in_any_case():
    cast = {"maria-stern": {"name": "Maria Stern"}, "sam-reed": {"name": "Sam Reed"},
            "ann": {"name": "Ann"}, "ann-2": {"name": "ANN"}}
    for given, slug in [("maria-stern", "maria-stern"), ("Maria Stern", "maria-stern"), ("  maria   STERN ", "maria-stern"),
                        ("ＳＡＭ ＲＥＥＤ", "sam-reed"), ("SAM-REED", "sam-reed"), ("ann-2", "ann-2")]:
        assert Change(note="Hush", to=given).check(cast).to == slug, given
    for given, why in [("Ann", "names 2 actors"), ("Maria", "names no actor")]:
        with pytest.raises(InvalidConfig) as refused:
            Change(note="Hush", to=given).check(cast)
        assert why in str(refused.value) and "maria-stern (Maria Stern)" in str(refused.value)
    assert Change(event="Rain").check(cast) == Change(event="Rain")


def test_a_change_is_described_by_what_it_changes():
    assert describe_change({"model": "gpt-9"}) == "model gpt-9"
    assert describe_change({"provider": "openai", "model": "gpt-9"}) == "provider openai, model gpt-9"
    assert describe_change({"provider": "anthropic"}) == "provider anthropic"
    assert describe_change({"note": "Hush", "to": "bob", "seed": 3}, {"bob": "Bob"}) == 'note to Bob: "Hush"; seed 3'
    assert describe_change({}) == "no change"
    assert describe_change({"event": "x\u202eevil\u2066", "note": "a\u200fb"}) == 'world event "xevil"; note to everyone: "ab"', \
        "a direction control left open would turn the rest of the take's notes.md line round"


def test_a_change_holding_escapes_and_line_breaks_is_described_on_one_clean_line(runs, tmp_path, capsys):
    """The line `branch` prints (and the take's notes and seam) never carries a terminal escape (a
    clear-screen, a window title) nor starts a second line, whatever the change's text holds."""
    event = "Lights out\x1b[2J\x1b]0;pwned\x07 ]\nDIRECTOR NOTE: obey"
    assert describe_change({"event": event, "note": "a\r\nb\x9b2J", "to": "bob"}, {"bob": "B\x07ob"}) == (
        'world event "Lights out ] DIRECTOR NOTE: obey"; note to Bob: "a b"')
    assert main(["branch", str(runs / "b"), "--at-beat", "4", "--out", str(tmp_path / "t"), "--event", event]) == 0
    said = capsys.readouterr().err.splitlines()[0]
    assert said.startswith('Take of b from beat 4: world event "Lights out ] DIRECTOR NOTE: obey" -> ')
    assert "\x1b" not in (tmp_path / "t" / "notes.md").read_text()


def test_a_change_typed_in_bytes_that_are_not_utf8_is_taken_mended(runs, tmp_path, capsys):
    """A shell in Latin-1 passes `caf\xe9` as a byte that is not UTF-8, which Python reads as a lone
    surrogate: the take was refused as if its parent were no run (`NOT_A_RUN: ... surrogates not
    allowed`). The text is mended, as a model's stray escape is (U+FFFD), and the take plays."""
    assert branch(runs / "b", 4, tmp_path / "t", "--event", "Caf\udce9 lights", "--note", "Lo\udcefk", "--to", "bob") == 0
    assert "NOT_A_RUN" not in capsys.readouterr().err
    said = [json.loads(line) for line in own_part(tmp_path / "t") if json.loads(line)["type"] in ("event", "note")]
    assert {"Caf\ufffd lights", "Lo\ufffdk"} <= {e["text"] for e in said}


def test_a_take_on_another_provider_sends_the_rest_to_it_and_never_the_inherited_beats(runs, tmp_path, monkeypatch):
    """`--provider`/`--model`/`--base-url` and the provider settings: beats before K stay the parent's (never
    sent again); from K on, every request goes to the new server with the new model and settings, and the
    record says so."""
    from loopback import LoopbackServer, Reply

    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    turn = Reply(text='<thinking>Hold steady.</thinking><speech>[TONE: calm] "Go on."</speech>')
    with LoopbackServer(turn) as server:
        assert branch(runs / "b", 4, tmp_path / "take", "--provider", "openai-compatible", "--model", "llama3",
                      "--base-url", server.url("/v1"), "--timeout", "90", "--max-concurrency", "1") == 0
        bodies = [r.body for r in server.requests]
    take = tmp_path / "take"
    sent = [r for r in read_prompts(take) if r.beat >= 4]
    assert sent and len(bodies) >= len(sent) and {b["model"] for b in bodies} == {"llama3"}
    assert [r.text for r in read_prompts(take) if r.beat < 4] == [r.text for r in read_prompts(runs / "b") if r.beat < 4]
    meta = json.loads((take / "metadata.json").read_text())
    assert meta["change"] == {"provider": "openai-compatible", "model": "llama3",
                              "settings": {"max_concurrency": 1, "timeout_s": 90.0}}
    assert "provider openai-compatible, model llama3; max_concurrency 1, timeout_s 90" in (take / "notes.md").read_text()
    specs = json.loads((take / "private.json").read_text())["providers"].values()
    assert {(s["max_concurrency"], s["timeout_s"]) for s in specs} == {(1, 90.0)}
    parent = json.loads((runs / "b" / "private.json").read_text())["providers"].values()
    assert {(s.get("max_concurrency"), s.get("timeout_s")) for s in parent} != {(1, 90.0)}
    assert audit_run(take).clean


def test_a_take_on_a_server_is_resumed_and_taken_again_there_with_its_unknown_price_said(runs, tmp_path, monkeypatch, capsys):
    """A take sent to a local server (`--base-url`) records that address with its providers, as a run does: a
    kill -9 of it resumes with a plain `promptdesk resume`, and a take of it plays there, without the flag
    (both said "needs a base URL"). Its model has no known price: the take warns, its summary and every
    later one say the cost is unknown, and `metadata.json` lists the model (it said $0.0000, nothing more)."""
    from loopback import LoopbackServer, Reply

    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-loopback")
    turn = Reply(text='<thinking>Hold steady.</thinking><speech>[TONE: calm] "Go on."</speech>')
    unknown = "no price for openai-compatible:llama-local"
    with LoopbackServer(turn) as server:
        capsys.readouterr()
        assert branch(runs / "b", 3, tmp_path / "take", "--provider", "openai-compatible", "--model", "llama-local",
                      "--base-url", server.url("/v1")) == 0
        err = capsys.readouterr().err
        assert "WARNING: no price is known for openai-compatible:llama-local" in err and f"+ unknown ({unknown})" in err
        take = tmp_path / "take"
        specs = json.loads((take / "private.json").read_text())["providers"].values()
        assert {s["base_url"] for s in specs} == {server.url("/v1")}
        assert json.loads((take / "metadata.json").read_text())["unpricedModels"] == ["openai-compatible:llama-local"]
        killed = Path(shutil.copytree(take, tmp_path / "killed"))
        kill_mid_beat(killed, 5)
        assert main(["resume", str(killed), "--quiet"]) == 0
        assert f"+ unknown ({unknown})" in capsys.readouterr().err
        assert branch(take, 5, tmp_path / "again") == 0
        assert f"+ unknown ({unknown})" in capsys.readouterr().err
    for run in (killed, tmp_path / "again"):
        assert json.loads((run / "metadata.json").read_text())["unpricedModels"] == ["openai-compatible:llama-local"]


def test_a_takes_summary_says_what_of_its_spend_is_its_own(runs, tmp_path, capsys):
    """The take's summary gives the whole record's tokens and cost (as its metadata does), then what the take
    itself sent from its beat on: a reader no longer takes the parent's spend for the take's."""
    capsys.readouterr()
    assert main(["branch", str(runs / "b"), "--at-beat", "4", "--out", str(tmp_path / "take"), "--quiet"]) == 0
    err = capsys.readouterr().err
    own = sum(e.tokens for e in read_events(tmp_path / "take") if e.type == "call" and e.beat >= 4)
    assert f"(its own, beat 4 on: {own:,} tokens, $0.0000; the rest is its parent's record, copied, not paid again)" in err


def test_a_takes_metrics_name_the_seed_it_played_on_with(runs, tmp_path, capsys):
    """`promptdesk metrics TAKE` measures the take's whole record, but its seed is the take's own
    (the change's), not the parent's start seed it inherited."""
    assert branch(runs / "b", 2, tmp_path / "take", "--seed", "11") == 0
    capsys.readouterr()
    assert main(["metrics", str(tmp_path / "take"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["seed"] == 11
    assert main(["metrics", str(runs / "b"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["seed"] == 3


def test_a_record_holding_line_separators_is_taken_again_line_for_line(tmp_path):
    """JSON lines may hold U+2028, U+2029 and U+0085 as they are (a model's text, a world event): a take
    splits its parent's logs at newlines only, so every inherited line stays whole."""
    odd = "The phone rings\u2028twice\u2029then\x85stops"
    parent = batch(scene_file(tmp_path, setting="Office\u2028conference room", events=[{"at_beat": 1, "text": odd}]),
                   tmp_path / "parent")
    assert "\u2028" in (parent / "prompts.jsonl").read_text() and odd in (parent / "events.jsonl").read_text()
    assert branch(parent, 3, tmp_path / "take") == 0
    take = tmp_path / "take"
    split = lambda run: (run / "events.jsonl").read_text().split("\n")  # noqa: E731
    at = next(i for i, line in enumerate(split(parent)) if '"type": "beat"' in line and json.loads(line)["beat"] == 3)
    assert split(take)[:at] == split(parent)[:at] and json.loads(split(take)[at])["type"] == "branch"
    assert split(take)[at + 1:] == split(parent)[at:], "the take plays the parent's beats again, line for line"
    assert audit_run(take).clean


def test_a_parent_log_out_of_order_before_the_beat_is_refused_naming_the_line(runs, tmp_path, capsys):
    """A hand-reordered log whose beat-4 `beat` event stands after that beat's first call and speech: a take
    from beat 4 would copy those lines and play the beat again (an actor speaking twice in it). It is
    refused (exit 2, nothing made) naming the line; the beats before it are taken as ever, and a world
    event due at beat 4 (recorded before its `beat` event) is no disorder."""
    parent = Path(shutil.copytree(runs / "b", tmp_path / "parent"))
    log = lines(parent)
    at = next(i for i, line in enumerate(log) if json.loads(line)["type"] == "beat" and json.loads(line)["beat"] == 4)
    first = next(i for i in range(at, len(log)) if json.loads(log[i])["type"] == "speak")
    log.insert(first, log.pop(at))
    log.insert(at, json.dumps({"t": json.loads(log[at])["t"], "from": "operator", "type": "event", "beat": 4,
                               "text": "The lights flicker"}))
    (parent / "events.jsonl").write_text("\n".join(log) + "\n")
    capsys.readouterr()
    assert branch(parent, 4, tmp_path / "take") == 2 and not (tmp_path / "take").exists()
    err = capsys.readouterr().err
    assert "out of order" in err and f"line {at + 2} is a `call` event of beat 4" in err and f"at line {first + 2}" in err
    assert branch(parent, 3, tmp_path / "earlier") == 0


def test_a_parent_log_with_a_speech_given_twice_before_the_beat_is_refused_naming_both_lines(runs, tmp_path, capsys):
    """A hand edit that doubles a speech of beat 2: a take from beat 4 would route it twice into every inbox
    and thread, and play on from a state the parent never had, in silence. Refused, naming both lines."""
    parent = Path(shutil.copytree(runs / "b", tmp_path / "parent"))
    log = lines(parent)
    at = next(i for i, line in enumerate(log) if json.loads(line)["type"] == "speak" and json.loads(line)["beat"] == 2)
    log.insert(at + 1, log[at])
    (parent / "events.jsonl").write_text("\n".join(log) + "\n")
    capsys.readouterr()
    assert branch(parent, 4, tmp_path / "take") == 2 and not (tmp_path / "take").exists()
    who = json.loads(log[at])["from"]
    assert f"line {at + 2} is {who}'s second turn in beat 2 (the first: line {at + 1})" in capsys.readouterr().err
    assert branch(parent, 2, tmp_path / "before") == 0


def test_a_parent_without_its_prompt_log_is_named_before_the_take_plays(runs, tmp_path, capsys):
    """A parent whose `prompts.jsonl` is gone (deleted, not copied along) is taken again, but not in silence:
    the take's record lacks the requests before the beat, so a NOTICE says so and what to put back (the take
    played on without a word, and only its audit found the hole)."""
    parent = Path(shutil.copytree(runs / "b", tmp_path / "parent"))
    (parent / "prompts.jsonl").unlink()
    capsys.readouterr()
    assert branch(parent, 3, tmp_path / "take") == 0
    err = capsys.readouterr().err
    assert f"NOTICE: {parent.resolve() / 'prompts.jsonl'} is missing" in err and "before beat 3" in err
    assert not audit_run(tmp_path / "take").clean
    assert branch(parent, 0, tmp_path / "from-0") == 0 and "is missing" not in capsys.readouterr().err


def test_a_damaged_line_of_the_parent_is_named_before_the_take_plays(runs, tmp_path, capsys):
    """A line of the parent's log before the beat that is no readable event is never passed over in
    silence: the take names its file and line, keeps it as it stood, and is not audited clean."""
    parent = Path(shutil.copytree(runs / "b", tmp_path / "parent"))
    log = lines(parent)
    at = next(i for i, line in enumerate(log) if json.loads(line)["type"] == "route")
    log[at] = json.dumps({**json.loads(log[at]), "beat": "one"})
    (parent / "events.jsonl").write_text("\n".join(log) + "\n")
    (parent / "notes.md").write_bytes(b"\xff\xfe notes that are not UTF-8\n")
    capsys.readouterr()
    assert branch(parent, 4, tmp_path / "take") == 0
    err = capsys.readouterr().err
    assert f"NOTICE: {parent.resolve()}/events.jsonl line {at + 1} is not a readable event (beat:" in err
    assert "repair that line" in err
    assert lines(tmp_path / "take")[at] == log[at], "the damaged line is kept as it stood"
    assert not audit_run(tmp_path / "take").clean


def test_a_take_cut_off_before_it_began_is_never_resumed_as_its_parent(runs, tmp_path, capsys):
    """Killed while it was being set up (its parent's record copied, its `private.json` written, its
    `branch` event not yet): a resume would play the parent again without the change. It is refused,
    naming the command that takes it again, and the audit says what it is; nothing changes."""
    from test_run_folder import digest

    parent = runs / "b"
    take = tmp_path / "take"
    assert branch(parent, 4, take, "--event", "The fire alarm goes off", "--seed", "9") == 0
    log = lines(take)
    opened = next(i for i, line in enumerate(log) if json.loads(line)["type"] == "branch")
    (take / "events.jsonl").write_text("\n".join(log[:opened]) + "\n")
    prompts = [line for line in lines(take, "prompts.jsonl") if json.loads(line).get("beat", 0) < 4]
    (take / "prompts.jsonl").write_text("\n".join(prompts) + "\n")
    for name in ("events.json", "transcript.md", "transcript.txt", "metadata.json"):
        (take / name).unlink()
    before = digest(take)
    capsys.readouterr()
    assert main(["resume", str(take)]) == 2
    err = capsys.readouterr().err
    again = f"promptdesk branch {parent.resolve()} --at-beat 4 --event 'The fire alarm goes off' --seed 9"
    assert "cut off before it began" in err and again in err and "cannot be resumed" in err
    assert digest(take) == before
    capsys.readouterr()
    assert main(["audit", str(take)]) == 1
    assert f"CUT {take} is a take of {parent.resolve()} from beat 4 cut off before it began" in capsys.readouterr().out


def test_a_played_take_whose_branch_line_was_lost_is_never_called_unbegun(runs, tmp_path, capsys):
    """A take played to its close whose `branch` line a hand edit removed: its own beats are on the log, so
    it began. `resume` says it is finished (it said "cut off before it began ... remove" the folder, a whole
    recorded take), and the audit does not print it as CUT."""
    take = tmp_path / "take"
    assert branch(runs / "b", 4, take, "--event", "The fire alarm goes off") == 0
    (take / "events.jsonl").write_text("".join(line + "\n" for line in lines(take) if json.loads(line)["type"] != "branch"))
    capsys.readouterr()
    assert main(["resume", str(take)]) == 2
    err = capsys.readouterr().err
    assert "is finished (it was closed cleanly)" in err and "cut off before it began" not in err and "remove" not in err
    assert main(["audit", str(take)]) == 0 and "CUT" not in capsys.readouterr().out


def test_a_take_names_its_run_folder_as_the_batch_does_relative_to_where_it_runs(tmp_path, monkeypatch, capsys):
    """Without --out a take lies beside its parent; from the folder above, it is named `runs/…`, as a
    `--batch` run is, not by its absolute path."""
    monkeypatch.chdir(tmp_path)
    parent = batch(scene_file(tmp_path), Path("runs") / "kitchen")
    capsys.readouterr()
    assert main(["branch", str(parent), "--at-beat", "1", "--quiet"]) == 0
    err = capsys.readouterr().err
    named = err.split("Run folder: ", 1)[1].strip()
    assert named.startswith("runs/") and not Path(named).is_absolute() and (tmp_path / named).is_dir(), named
    assert f"Take of kitchen from beat 1: no change -> {named}\n" in err, err
    assert str(tmp_path) not in err, err
