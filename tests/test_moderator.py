"""Spec 004's moderator: notes hidden from the transcripts, winding down to a `goal` close, the
timeout line, the required prompt, suggested world events and a judge's visible fallback."""

from __future__ import annotations

import json

import pytest
import yaml

from promptdesk.core.cli.main import main
from promptdesk.core.engine.coordinator import Decision, SceneView
from helpers import CHARACTERS, SCENES, example_scene
from loopback import Reply, loopback  # noqa: F401  (fixture)
from test_scene_faults import judging, keys, remote_cast, scripted, turn  # noqa: F401  (fixture)

NEARING = "Scene is nearing natural conclusion. Begin wrapping up."
TIMING_NEARING = "The scene is nearing its natural end."


def transcripts(run) -> tuple[str, str]:
    return (run.dir / "transcript.md").read_text(), (run.dir / "transcript.txt").read_text()


def two_hander(**update):
    """The apology as the spec's evaluator has it: Bob and Alice only."""
    return example_scene("the-apology", characters=["alice", "bob"], initial_speaker="bob",
                         perspectives={}, events=[], **update)


def sent_to(run, slug: str) -> str:
    """Every request sent to one actor, as one text."""
    return "\n".join(json.dumps(p["request"], ensure_ascii=False) for p in run.prompts() if p["to"] == slug)


# -- moderator notes: hidden from both transcripts, counted -----------------------------------------

async def test_the_stall_note_and_directors_notes_reach_the_actors_but_not_the_transcripts(run_scene, loopback):
    loopback.default = scripted(lambda who, r: turn("[SILENT, *looks at the floor*]"))
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"), events=[],
                          limits={"stall_beats": 2, "max_beats": 20})
    run = await run_scene(scene, isolation="b", coordinator="C",
                          before_run=lambda s: s.add_note("OPERATOR-NOTE keep your voices down", to="bob"))
    notes = [r for r in run.records() if r["type"] == "note"]
    assert {n["from"] for n in notes} == {"coordinator", "operator"}
    assert any(n.get("reason") == "stall" for n in notes)
    assert "Someone should respond" in sent_to(run, "alice") and "OPERATOR-NOTE" in sent_to(run, "bob")
    for transcript in transcripts(run):
        assert "NOTE" not in transcript and "Someone should respond" not in transcript
    coordinator = sum(n["from"] == "coordinator" for n in notes)
    md = transcripts(run)[0]
    assert f"coordinator notes sent: {coordinator}, director's notes: 1" in md.split("## Post-scene notes")[1]
    meta = json.loads((run.dir / "metadata.json").read_text())
    assert meta["moderatorNotes"] == {"coordinator": coordinator, "director": 1}


async def test_the_soft_cap_nudge_is_hidden_from_both_transcripts(run_scene):
    scene = example_scene("the-apology", limits={"soft_cap_per_character": 2, "hard_cap_per_character": 30,
                                                   "max_beats": 12})
    run = await run_scene(scene, isolation="b", coordinator="C", seed=4)
    nudges = [r for r in run.records() if r["type"] == "note" and r.get("reason") == "soft-cap"]
    assert nudges, "the scene reached the soft cap"
    for transcript in transcripts(run):
        assert "You sense the natural end" not in transcript and "NOTE to" not in transcript


# -- the timeout line, the required prompt ------------------------------------------------------------

async def test_a_timed_out_transcript_ends_with_maximum_length_reached(run_scene, loopback):
    loopback.default = scripted(lambda who, r: turn('[TONE: calm] "Go on, I am listening."'))
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"),
                          limits={"max_beats": 3})
    run = await run_scene(scene, isolation="a", coordinator="C")
    assert run.result.close_reason == "max_beats_exceeded"
    txt = transcripts(run)[1]
    assert "[SCENE END - Maximum length reached]" in txt and "[SCENE END - Goal" not in txt


def test_a_scene_without_a_prompt_is_refused(tmp_path, capsys):
    data = yaml.safe_load((SCENES / "the-apology.yaml").read_text())
    del data["prompt"]
    path = tmp_path / "no-prompt.yaml"
    path.write_text(yaml.safe_dump(data))
    code = main(["--batch", str(path), "--isolation", "a", "--coordinator", "C", "--out", str(tmp_path / "run"),
                 "--characters-dir", str(CHARACTERS)])
    err = capsys.readouterr().err
    assert code == 2
    assert "INVALID_CONFIG" in err and "prompt: Scene prompt is required" in err
    assert not (tmp_path / "run").exists()


# -- winding down: the evaluator cases of spec 004 -------------------------------------------------

def test_the_evaluator_goal_is_met_when_bob_apologises_and_alice_accepts():
    from promptdesk.core.engine.winding import goal_met

    view = SceneView(beat=3, max_beats=50, goal="Bob apologizes, Alice accepts", goal_markers=["sorry", "accept"],
                     speeches=["I'm truly sorry.", "I accept your apology."])
    assert goal_met(view, Decision(decision="continue"))
    view.speeches = ["I didn't mean to."]
    assert not goal_met(view, Decision(decision="continue"))


def test_role_c_counts_a_final_position_once_every_actor_spoke_after_the_close_note():
    from promptdesk.core.engine.winding import Winding, positions_stated

    continuing = Decision(decision="continue")
    assert not positions_stated(Winding(), ["alice", "bob"], continuing), "no close note yet"
    assert not positions_stated(Winding(close_beat=4, spoken={"bob"}), ["alice", "bob"], continuing)
    assert positions_stated(Winding(close_beat=4, spoken={"alice", "bob"}), ["alice", "bob"], continuing)
    assert not positions_stated(Winding(close_beat=4, spoken={"alice", "bob"}), ["alice", "bob"],
                                Decision(decision="continue", positions_stated=False)), "a judge's answer wins"


async def test_role_c_winds_down_and_closes_with_goal_when_bob_apologises_and_alice_accepts(run_scene, loopback):
    lines = {"bob": '[TO: Alice, TONE: remorseful] "I\'m truly sorry."',
             "alice": '[TO: Bob, TONE: softening] "I accept your apology."'}
    loopback.default = scripted(lambda who, r: turn(lines[who]))
    scene = two_hander(cast=remote_cast(loopback, "alice", "bob"), goal_markers=["sorry", "accept"],
                       closing_action="agreeing on weekly check-ins.", limits={"max_beats": 30})
    run = await run_scene(scene, isolation="b", coordinator="C")
    assert run.result.close_reason == "goal" and run.result.goal_achieved is True
    notes = [r for r in run.records() if r["type"] == "note"]
    assert [n["text"] for n in notes] == [NEARING, "Please close the scene by agreeing on weekly check-ins."]
    assert [n["reason"] for n in notes] == ["wind-down", "close-note"]
    assert notes[0]["beat"] < notes[1]["beat"] < run.result.beats - 1
    spoke_after = {r["from"] for r in run.records() if r["type"] == "speak" and r["beat"] > notes[1]["beat"]}
    assert spoke_after == {"alice", "bob"}, "every actor stated a final position after the close note"
    assert f"DIRECTOR NOTE: {NEARING}" in sent_to(run, "alice")
    for transcript in transcripts(run):
        assert "nearing natural conclusion" not in transcript and "weekly check-ins" not in transcript
    assert "(closed: goal)" in transcripts(run)[1]


async def test_role_c_winds_down_by_length_and_does_not_close_on_a_goal_it_never_heard(run_scene, loopback):
    lines = {"bob": '[TO: Alice, TONE: sulky] "I didn\'t mean to."', "alice": '[TO: Bob, TONE: cold] "Go on."'}
    loopback.default = scripted(lambda who, r: turn(lines[who]))
    scene = two_hander(cast=remote_cast(loopback, "alice", "bob"), goal_markers=["sorry", "accept"],
                       limits={"max_beats": 10, "wind_down_at": 0.5})
    run = await run_scene(scene, isolation="a", coordinator="C")
    assert run.result.close_reason == "max_beats_exceeded"
    notes = [r for r in run.records() if r["type"] == "note"]
    assert [(n["text"], n["beat"]) for n in notes] == \
        [(TIMING_NEARING, 4), ("The scene is ending now. Bring it to a close in your own way.", 5)], \
        "without a closing_action the notes say only when (wind_down: timing)"


async def test_a_judge_is_asked_for_the_goal_and_the_final_positions(run_scene, loopback):
    def decide(body):
        since = body.split("SPEECH SINCE THE CLOSE NOTE:", 1)
        stated = len(since) == 2 and "Alice" in since[1] and "Bob" in since[1]
        met = "Beat 1 " not in body and "Beat 0 " not in body
        return json.dumps({"decision": "continue", "goal_met": met, "positions_stated": stated})

    loopback.default = judging(decide, verdict='{"goal_achieved": true, "reason": "Bob apologised, Alice accepted"}',
                               speech='[TONE: earnest] "Let us settle this."')
    judge = {"name": "openai", "model": "gpt-4o-mini", "base_url": loopback.url("/v1"), "max_retries": 0}
    scene = two_hander(cast=remote_cast(loopback, "alice", "bob"), judge=judge, limits={"max_beats": 30})
    run = await run_scene(scene, isolation="b", coordinator="B")
    assert run.result.close_reason == "goal"
    judged = [json.dumps(p["request"]) for p in run.prompts() if p["to"] == "judge"]
    assert "positions_stated" in judged[0] and "Cast: Alice, Bob." in judged[0]
    assert any("SPEECH SINCE THE CLOSE NOTE" in body for body in judged)
    notes = [r["reason"] for r in run.records() if r["type"] == "note"]
    assert notes == ["wind-down", "close-note"]


# -- suggested world events ------------------------------------------------------------------------------

def suggesting_judge(loopback):
    """A loopback judge that suggests a fire alarm at beat 2 and otherwise lets the scene go on."""
    return judging(lambda body: '{"decision": "suggest_event", "text": "A fire alarm goes off"}' if "Beat 2 " in body
                   else '{"decision": "continue"}')


@pytest.mark.parametrize("mode", ["inject", "ask", "off"])
async def test_suggested_events_are_injected_asked_or_only_recorded(run_scene, loopback, mode):
    loopback.default = suggesting_judge(loopback)
    judge = {"name": "openai", "model": "gpt-4o-mini", "base_url": loopback.url("/v1"), "max_retries": 0}
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"), judge=judge,
                          events=[], limits={"max_beats": 6}, suggested_events=mode)
    accepted: list[str] = []

    def operator(session):
        def on(event):
            if event.type == "decision" and session.state.suggestion:
                accepted.append(session.accept_suggestion())
        session.subscribe(on)

    run = await run_scene(scene, isolation="b", coordinator="B", before_run=operator)
    assert any(r["type"] == "decision" and r["text"] == "A fire alarm goes off" for r in run.records())
    events = [r for r in run.records() if r["type"] == "event"]
    if mode == "off":
        assert events == [] and "fire alarm" not in sent_to(run, "alice")
        return
    assert [(e["text"], e["suggested_by"], e["from"]) for e in events] == \
        [("A fire alarm goes off", "coordinator", "coordinator" if mode == "inject" else "operator")]
    assert accepted == ([] if mode == "inject" else ["A fire alarm goes off"])
    assert "[EVENT: A fire alarm goes off]" in sent_to(run, "alice")
    assert "[EVENT: A fire alarm goes off]" in transcripts(run)[1]


def batch_scene(tmp_path, loopback, **update) -> str:
    data = yaml.safe_load((SCENES / "the-apology.yaml").read_text())
    data.update(judge={"name": "openai", "model": "gpt-4o-mini", "base_url": loopback.url("/v1"), "max_retries": 0},
                events=[], limits={"max_beats": 5}, provider={"name": "offline"}, **update)
    path = tmp_path / "scene.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def batch(path: str, out, *flags: str) -> int:
    return main(["--batch", path, "--isolation", "b", "--coordinator", "B", "--out", str(out),
                 "--characters-dir", str(CHARACTERS), "--journals", "none", *flags])


def test_headless_suggestions_are_off_unless_inject_is_asked(tmp_path, loopback, capsys):
    loopback.default = suggesting_judge(loopback)
    path = batch_scene(tmp_path, loopback)
    assert batch(path, tmp_path / "off") == 0
    assert batch(path, tmp_path / "inject", "--suggested-events", "inject") == 0
    capsys.readouterr()

    def events(out):
        return [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()
                if json.loads(line)["type"] == "event"]

    assert events(tmp_path / "off") == []
    assert [(e["text"], e["suggested_by"]) for e in events(tmp_path / "inject")] == [("A fire alarm goes off", "coordinator")]


# -- a judge that fell back to role C's rules says so ----------------------------------------------------

def test_a_judge_that_fell_back_to_role_c_says_so_on_stderr_in_notes_and_in_the_record(tmp_path, loopback, capsys):
    loopback.default = lambda recorded: Reply(text="I think it should go on, maybe.")
    out = tmp_path / "run"
    assert batch(batch_scene(tmp_path, loopback), out) == 0
    err = capsys.readouterr().err
    fallbacks = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()
                 if json.loads(line).get("reason") == "judge-fallback"]
    n = len(fallbacks)
    assert n >= 5, "every beat's decision and the verdict fell back"
    notice = f"the coordinator's judge gave no usable answer {n} times: role C's rules decided instead"
    assert f"NOTICE: {notice}" in err
    assert notice in (out / "notes.md").read_text()
    assert notice in (out / "transcript.md").read_text().split("## Post-scene notes")[1]
    assert json.loads((out / "metadata.json").read_text())["judgeFallbacks"] == n
    assert (out / "notes.md").read_text().splitlines()[0].startswith("Isolation:"), "the choices stay first"


def test_the_session_panel_counts_a_judges_fallbacks_live_and_in_replay():
    from promptdesk.core.record.events import GenericEvent
    from promptdesk.tui.stage_state import StateFold
    from promptdesk.tui.widgets.state_panel import render_state

    fold = StateFold()
    fold.feed([GenericEvent(t=1.0, **{"from": "coordinator"}, type="system", text="fell back", reason="judge-fallback")
               for _ in range(3)])
    assert fold.state.judge_fallbacks == 3
    assert "judge → C rules ×3" in render_state(fold.snapshot()).plain
    assert "Fallback" not in render_state(StateFold().snapshot()).plain


async def test_a_run_resumed_after_the_close_note_closes_as_it_would_have(run_scene, loopback, tmp_path):
    import shutil

    from promptdesk.core.clock import VirtualClock
    from test_resume import kill_mid_beat, played, prepare

    lines = {"bob": '[TO: Alice, TONE: remorseful] "I\'m truly sorry."',
             "alice": '[TO: Bob, TONE: softening] "I accept your apology."'}
    loopback.default = scripted(lambda who, r: turn(lines[who]))
    scene = two_hander(cast=remote_cast(loopback, "alice", "bob"), goal_markers=["sorry", "accept"])
    whole = await run_scene(scene, isolation="b", coordinator="C")
    killed = tmp_path / "killed"
    shutil.copytree(whole.dir, killed)
    close_note = next(r["beat"] for r in whole.records() if r.get("reason") == "close-note")
    prompts = killed / "prompts.jsonl"
    prompts.write_text(prompts.read_text() + "\n")  # the last beat's last request is kept whole by the cut below
    kill_mid_beat(killed, close_note + 1)
    session = prepare(killed)
    session.clock = VirtualClock()
    result = await session.run()
    assert (result.close_reason, result.beats) == (whole.result.close_reason, whole.result.beats) == ("goal", close_note + 2)
    assert sorted(played(killed)) == sorted(played(whole.dir)), "arrival order within a beat is the loopback's"
    notes = [e.get("reason") for e in map(json.loads, (killed / "events.jsonl").read_text().splitlines()) if e["type"] == "note"]
    assert notes == ["wind-down", "close-note"], "the resumed run did not wind down a second time"


@pytest.mark.parametrize("named", ["Bob", "BOB", " bob "])
async def test_a_judges_nudge_may_name_the_actor_as_the_judge_is_shown_the_cast(run_scene, loopback, named):
    """The judge is shown the cast by name (`Cast: Alice, Bob.`) and asked for "their name": a nudge
    naming Bob so reaches Bob, as one naming his slug does."""
    answer = json.dumps({"decision": "nudge", "actor": named, "reason": "time to wrap up"})
    loopback.default = judging(lambda body: answer)
    judge = {"name": "openai", "model": "gpt-4o-mini", "base_url": loopback.url("/v1"), "max_retries": 0}
    scene = two_hander(cast=remote_cast(loopback, "alice", "bob"), judge=judge, limits={"max_beats": 4})
    run = await run_scene(scene, isolation="b", coordinator="B")
    nudges = [r for r in run.records() if r["type"] == "note" and r.get("reason") == "judge-nudge"]
    assert [n["target"] for n in nudges] == ["bob"]


async def test_a_judges_nudge_naming_no_one_in_the_cast_is_said_not_dropped(run_scene, loopback):
    """A nudge for someone the cast does not hold reaches no one, and the record says why."""
    loopback.default = judging(lambda body: '{"decision": "nudge", "actor": "Zed", "reason": "wrap up"}')
    judge = {"name": "openai", "model": "gpt-4o-mini", "base_url": loopback.url("/v1"), "max_retries": 0}
    scene = two_hander(cast=remote_cast(loopback, "alice", "bob"), judge=judge, limits={"max_beats": 3})
    run = await run_scene(scene, isolation="b", coordinator="B")
    assert not [r for r in run.records() if r["type"] == "note" and r.get("reason") == "judge-nudge"]
    assert "nudge for 'Zed', who is not in the cast" in (run.dir / "debug.log").read_text()


async def test_a_judges_nudge_is_not_the_soft_cap_and_never_closes_the_scene_as_one(run_scene, loopback):
    """A judge that nudges Bob at its first beat: Bob gets the timing note once (a `judge-nudge`), and
    the scene is not then closed as `soft-cap` ("nudged at the soft cap") with no cap reached."""
    loopback.default = judging(lambda body: '{"decision": "nudge", "actor": "bob", "reason": "time to wrap up"}')
    judge = {"name": "openai", "model": "gpt-4o-mini", "base_url": loopback.url("/v1"), "max_retries": 0}
    scene = two_hander(cast=remote_cast(loopback, "alice", "bob"), judge=judge, limits={"max_beats": 8})
    run = await run_scene(scene, isolation="b", coordinator="B")
    assert run.result.close_reason == "max_beats_exceeded"
    nudges = [r for r in run.records() if r["type"] == "note" and r.get("target") == "bob"]
    assert [(n["reason"], n["from"]) for n in nudges] == [("judge-nudge", "coordinator")]
