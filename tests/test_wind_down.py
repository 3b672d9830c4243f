"""Winding down, reconciled between spec 000 (the coordinator nudges timing, never topic) and spec
004 (a nearing note, then "Please close the scene by …"): one scene-file setting, `wind_down:`,
played both ways (and off) under coordinator roles A, B and C; a final position is *spoken*."""

from __future__ import annotations

import json

import pytest
import yaml

from promptdesk.core.cli.main import main
from promptdesk.core.engine.winding import states_a_position
from promptdesk.core.record.events import SpeakEvent
from helpers import CHARACTERS, SCENES, example_scene
from loopback import loopback  # noqa: F401  (fixture)
from test_scene_faults import judging, keys, remote_cast, scripted, turn  # noqa: F401  (fixture)

TIMING = ["The scene is nearing its natural end.", "The scene is ending now. Bring it to a close in your own way."]
ACTION = ["Scene is nearing natural conclusion. Begin wrapping up.",
          "Please close the scene by agreeing on weekly check-ins."]
LINES = {"bob": '[TO: Alice, TONE: remorseful] "I\'m truly sorry."',
         "alice": '[TO: Bob, TONE: softening] "I accept your apology."'}


def two_hander(loopback, **update):
    """Bob and Alice on the loopback, the goal markers spoken from the first beats."""
    return example_scene("the-apology", characters=["alice", "bob"], initial_speaker="bob", perspectives={},
                         events=[], cast=remote_cast(loopback, "alice", "bob"), goal_markers=["sorry", "accept"],
                         limits={"max_beats": 10}, **update)


def judge_on(loopback) -> dict:
    return {"name": "openai", "model": "gpt-4o-mini", "base_url": loopback.url("/v1"), "max_retries": 0}


def sent_to_actors(run) -> str:
    return "\n".join(json.dumps(p["request"], ensure_ascii=False) for p in run.prompts() if p["to"] in ("alice", "bob"))


@pytest.mark.parametrize("role", ["A", "B", "C"])
@pytest.mark.parametrize("mode", ["timing", "action", "off"])
async def test_wind_down_timing_action_or_off_under_every_coordinator_role(run_scene, loopback, role, mode):
    loopback.default = _with_lines(judging(lambda body: '{"decision": "continue"}'))
    extra = {"closing_action": "agreeing on weekly check-ins"} if mode == "action" else {}
    scene = two_hander(loopback, wind_down=mode, judge=judge_on(loopback), **extra)
    run = await run_scene(scene, isolation="b", coordinator=role)
    notes = [r for r in run.records() if r["type"] == "note" and r["from"] == "coordinator"]
    sent = sent_to_actors(run)
    if mode == "off":
        assert notes == [], "wind_down: off sends no note"
        assert run.result.close_reason == "max_beats_exceeded", "and never closes with goal"
        assert not any(text in sent for text in TIMING + ACTION)
        return
    expected = TIMING if mode == "timing" else ACTION
    assert [(n["text"], n["reason"]) for n in notes] == list(zip(expected, ["wind-down", "close-note"]))
    assert run.result.close_reason == "goal"
    for text in expected:
        assert f"DIRECTOR NOTE: {text}" in sent
    if mode == "timing":
        assert "Please close the scene by" not in sent and "Begin wrapping up" not in sent, "timing only, not topic"


def _with_lines(base):
    """The judge's answers from `base`; each actor's turn its line of `LINES`."""
    def answer(recorded):
        body = json.dumps(recorded.body)
        if "coordinator of a scene" in body or "the scene has ended" in body:
            return base(recorded)
        return scripted(lambda who, r: turn(LINES[who]))(recorded)
    return answer


async def test_unset_wind_down_is_timing_and_closing_action_makes_it_action(run_scene, loopback):
    loopback.default = scripted(lambda who, r: turn(LINES[who]))
    plain = await run_scene(two_hander(loopback), isolation="a", coordinator="C")
    named = await run_scene(two_hander(loopback, closing_action="agreeing on weekly check-ins."), isolation="a",
                            coordinator="C")
    for run, expected in ((plain, TIMING), (named, ACTION)):
        assert [r["text"] for r in run.records() if r["type"] == "note"] == expected
        assert run.result.close_reason == "goal"


@pytest.mark.parametrize("mode", ["off", "timing"])
def test_a_closing_action_with_wind_down_off_or_timing_is_refused_with_the_reason(tmp_path, capsys, mode):
    data = yaml.safe_load((SCENES / "the-apology.yaml").read_text())
    data.update(wind_down=mode, closing_action="agreeing on weekly check-ins")
    path = tmp_path / "scene.yaml"
    path.write_text(yaml.safe_dump(data))
    out = tmp_path / "run"
    code = main(["--batch", str(path), "--isolation", "a", "--coordinator", "C", "--out", str(out),
                 "--characters-dir", str(CHARACTERS)])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert "INVALID_CONFIG" in err and f"wind_down: {mode}" in err
    assert "remove closing_action:, or set wind_down: action" in err


def test_a_wind_down_the_setting_does_not_know_is_refused(tmp_path, capsys):
    data = yaml.safe_load((SCENES / "the-apology.yaml").read_text())
    data["wind_down"] = "never"
    path = tmp_path / "scene.yaml"
    path.write_text(yaml.safe_dump(data))
    code = main(["--batch", str(path), "--isolation", "a", "--coordinator", "C", "--out", str(tmp_path / "run"),
                 "--characters-dir", str(CHARACTERS)])
    err = capsys.readouterr().err
    assert code == 2 and "wind_down" in err and "'timing', 'action' or 'off'" in err


# -- a final position is spoken --------------------------------------------------------------------------

def speech(action: str, text: str = "", nonverbal: str | None = None) -> SpeakEvent:
    return SpeakEvent(t=0.0, **{"from": "alice"}, text=text, action=action, nonverbal=nonverbal, beat=5)


def test_only_words_spoken_or_interrupted_state_a_final_position():
    assert states_a_position(speech("speak", "I stand by what I said."))
    assert states_a_position(speech("interrupt", "No, we agreed."))
    assert not states_a_position(speech("react", nonverbal="yawns"))
    assert not states_a_position(speech("silent", nonverbal="checks her watch"))
    assert not states_a_position(speech("speak", "  ", nonverbal="nods"))
    for wordless in ('...', '—', '?!', '*shrugs* "..."', "…"):       # punctuation, a gesture: no words said
        assert not states_a_position(speech("speak", wordless)), wordless
    assert states_a_position(speech("speak", "*shrugs* Fine."))
    assert states_a_position(speech("interrupt", "Nein—"))
    assert states_a_position(speech("speak", "Не знаю."))


async def test_wordless_reactions_after_the_close_note_are_not_final_positions(run_scene, loopback):
    def answer(who, recorded):
        if "Bring it to a close" in json.dumps(recorded.body):
            return turn("[REACT, TONE: bored, *yawns*]" if who == "bob" else "[REACT, TONE: impatient, *checks her watch*]")
        return turn(LINES[who])

    loopback.default = scripted(answer)
    run = await run_scene(two_hander(loopback), isolation="b", coordinator="C")
    close_note = next(r for r in run.records() if r.get("reason") == "close-note")
    after = [r for r in run.records() if r["type"] == "speak" and r["beat"] > close_note["beat"]]
    assert after and {r["action"] for r in after} == {"react"}
    assert run.result.close_reason == "max_beats_exceeded", "no one spoke a final position: no goal close"
