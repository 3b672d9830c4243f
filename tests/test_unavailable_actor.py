"""One character's fatal provider error does not end the scene (spec 003: "Continue scene with
remaining characters. Don't fail entire scene for one character"): an actor whose provider answers
401, 403 or 404 leaves the scene with one `system` line saying why, its failure is recorded, its turns
are skipped, and the others play to the close. Through `promptdesk --batch` and the real SDKs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from promptdesk.core.cli.main import main
from helpers import CHARACTERS, SCENES
from loopback import Reply, loopback  # noqa: F401  (fixture)
from test_scene_faults import keys, remote_cast, scripted, turn  # noqa: F401  (fixture)

LINE = '[TONE: calm] "Go on, I am listening."'


def scene_file(tmp_path: Path, loopback, cast: dict, **update) -> Path:
    data = yaml.safe_load((SCENES / "the-apology.yaml").read_text())
    data.update(cast=cast, events=[], limits={"max_beats": 6}, **update)
    path = tmp_path / "scene.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def batch(tmp_path: Path, scene: Path, *flags: str, journals: str = "none") -> int:
    """`--batch` of `scene` into `tmp_path/run` (isolation b, role C, seed 1), journals where `journals` says."""
    return main(["--batch", str(scene), "--isolation", "b", "--coordinator", "C", "--seed", "1", *flags,
                 "--out", str(tmp_path / "run"), "--characters-dir", str(CHARACTERS), "--journals", journals])


def bob_on_openai(loopback) -> dict:
    """Alice and Charlie on the scene's provider, Bob on OpenAI (a provider that may fail alone)."""
    return {**remote_cast(loopback, "alice", "charlie"), **remote_cast(loopback, "bob", provider="openai",
                                                                        model="gpt-4o-mini")}


def records(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "run" / "events.jsonl").read_text().splitlines()]


def failing_for(*slugs: str, status: int = 401):
    def answer(who, recorded):
        if who in slugs:
            return Reply(status=status, error_message="invalid x-api-key")
        return turn(LINE)
    return scripted(answer)


@pytest.mark.parametrize("turns", ["parallel", "sequential"])
@pytest.mark.parametrize("status", [401, 403, 404])
def test_one_actor_on_a_rejected_provider_leaves_and_the_others_play_to_the_close(tmp_path, loopback, capsys,
                                                                                  turns, status):
    loopback.default = failing_for("bob", status=status)
    cast = bob_on_openai(loopback)
    code = batch(tmp_path, scene_file(tmp_path, loopback, cast, turns=turns, initial_speaker="bob"))
    err = capsys.readouterr().err
    events = records(tmp_path)
    assert code == 0, err
    close = next(e for e in events if e["type"] == "close")
    assert close["reason"] == "max_beats_exceeded" and close["beat"] == 5, "the scene played to its own close"
    bob_calls = [e for e in events if e["type"] == "call" and e["target"] == "bob"]
    assert len(bob_calls) == 1 and not bob_calls[0]["ok"], "one failed call, then Bob is skipped"
    left = [e for e in events if e["type"] == "system" and e.get("reason") == "unavailable"]
    assert len(left) == 1 and left[0]["about"] == "bob" and str(status) in left[0]["text"]
    assert "The scene goes on without Bob" in left[0]["text"]
    spoke = {e["from"] for e in events if e["type"] == "speak"}
    assert spoke == {"alice", "charlie"}
    meta = json.loads((tmp_path / "run" / "metadata.json").read_text())
    assert meta["success"] is True and meta["reason"] == "max_beats_exceeded"
    assert [(e["character"], e["beat"]) for e in meta["errors"]] == [("bob", 0)]
    assert [u["character"] for u in meta["unavailable"]] == ["bob"] and str(status) in meta["unavailable"][0]["error"]
    assert "NOTICE: Bob left the scene, the others played on" in err and "Run failed" not in err


def test_two_actors_on_the_failing_provider_leave_and_the_third_plays_on(tmp_path, loopback, capsys):
    loopback.default = failing_for("alice", "bob")
    cast = {**remote_cast(loopback, "alice", "bob"), **remote_cast(loopback, "charlie", provider="openai",
                                                                   model="gpt-4o-mini")}
    assert batch(tmp_path, scene_file(tmp_path, loopback, cast)) == 0
    events = records(tmp_path)
    assert sorted(e["about"] for e in events if e.get("reason") == "unavailable") == ["alice", "bob"]
    assert {e["from"] for e in events if e["type"] == "speak"} == {"charlie"}
    assert next(e for e in events if e["type"] == "close")["reason"] == "max_beats_exceeded"


def test_every_actor_on_the_failing_provider_still_stops_the_run_at_once(tmp_path, loopback, capsys):
    loopback.default = failing_for("alice", "bob", "charlie")
    cast = remote_cast(loopback, "alice", "bob", "charlie")
    assert batch(tmp_path, scene_file(tmp_path, loopback, cast)) == 1
    err = capsys.readouterr().err
    assert "Run failed:" in err and "401" in err
    assert [e["reason"] for e in records(tmp_path) if e["type"] == "close"] == ["provider-error"]
    assert loopback.hits == 1, "every actor shares the failing provider: no second call"
    meta = json.loads((tmp_path / "run" / "metadata.json").read_text())
    assert meta["success"] is False


def test_the_last_actor_left_failing_stops_the_run(tmp_path, loopback, capsys):
    """Alice leaves on a 401; then Bob's and Charlie's own provider rejects them too: no one can go on."""
    def answer(who, recorded):
        if who == "alice" or recorded.path.startswith("/v1/chat"):
            return Reply(status=401, error_message="invalid x-api-key")
        return turn(LINE)

    loopback.default = scripted(answer)
    cast = {**remote_cast(loopback, "alice"), **remote_cast(loopback, "bob", "charlie", provider="openai",
                                                           model="gpt-4o-mini")}
    assert batch(tmp_path, scene_file(tmp_path, loopback, cast)) == 1
    events = records(tmp_path)
    assert [e["reason"] for e in events if e["type"] == "close"] == ["provider-error"]
    assert [e["about"] for e in events if e.get("reason") == "unavailable"] == ["alice"]


def test_a_roundtable_participant_on_a_rejected_provider_is_asked_no_more(tmp_path, loopback, capsys):
    data = yaml.safe_load((SCENES / "roundtable-free.yaml").read_text())
    data["cast"] = {**remote_cast(loopback, "bob", provider="openai", model="gpt-4o-mini")}
    data["roundtable"]["max_rounds"] = 3
    path = tmp_path / "table.yaml"
    path.write_text(yaml.safe_dump(data))
    loopback.default = Reply(status=401, error_message="invalid api key")
    code = main(["--batch", str(path), "--isolation", "b", "--coordinator", "C", "--seed", "1",
                 "--out", str(tmp_path / "run"), "--characters-dir", str(CHARACTERS), "--journals", "none"])
    events = records(tmp_path)
    assert code == 0, capsys.readouterr().err
    assert loopback.hits == 1, "Bob is asked once"
    assert [e["about"] for e in events if e.get("reason") == "unavailable"] == ["bob"]
    answered = {e["from"] for e in events if e["type"] == "answer"}
    assert answered == {"charlie", "sam-reed"}
    assert max(e.get("round") or 0 for e in events) >= 2, "the discussion went on for rounds after"


@pytest.mark.parametrize("status", [500, 529])
def test_an_actor_whose_server_fails_every_call_leaves_after_its_last_3_calls_failed(tmp_path, loopback, capsys, status):
    """A 500 or a 529 may be mended by a retry, so one failed call does not end Bob's part; a server
    that fails every one of his calls (the same provider answering the others) is not asked every beat
    again: after his last 3 calls failed he leaves the scene as on a rejected key, and the others play
    to the scene's own close."""
    loopback.default = failing_for("bob", status=status)
    cast = remote_cast(loopback, "alice", "bob", "charlie")
    code = batch(tmp_path, scene_file(tmp_path, loopback, cast, initial_speaker="alice"))
    err = capsys.readouterr().err
    events = records(tmp_path)
    assert code == 0, err
    bob_calls = [e for e in events if e["type"] == "call" and e["target"] == "bob"]
    assert len(bob_calls) == 3 and not any(c["ok"] for c in bob_calls)
    left = [e for e in events if e["type"] == "system" and e.get("reason") == "unavailable"]
    assert len(left) == 1 and left[0]["about"] == "bob" and "last 3 calls failed" in left[0]["text"]
    close = next(e for e in events if e["type"] == "close")
    assert close["reason"] == "max_beats_exceeded"
    meta = json.loads((tmp_path / "run" / "metadata.json").read_text())
    assert [u["character"] for u in meta["unavailable"]] == ["bob"] and meta["success"] is True
    assert "NOTICE: Bob left the scene, the others played on" in err


def test_a_server_down_for_everyone_fails_the_run_without_saying_anyone_left_while_others_played(tmp_path, loopback, capsys):
    """When every actor's calls fail, no actor 'leaves while the others play on' (none plays): the
    run stops with `provider-error` and says so, with no unavailable actor and no such notice."""
    loopback.default = Reply(status=500, error_message="internal error")
    code = batch(tmp_path, scene_file(tmp_path, loopback, remote_cast(loopback, "alice", "bob", "charlie"),
                                      initial_speaker="alice"))
    err = capsys.readouterr().err
    events = records(tmp_path)
    assert code == 1 and "Run failed" in err and "left the scene" not in err
    assert not [e for e in events if e.get("reason") == "unavailable"]
    meta = json.loads((tmp_path / "run" / "metadata.json").read_text())
    assert meta["reason"] == "provider-error" and meta["unavailable"] == []


def test_a_journal_call_failing_after_the_scene_does_not_make_an_actor_leave_it(tmp_path, loopback, capsys):
    """Bob's two turns and then his journal entry fail: three failed calls, but the third comes after
    the close, in the journal step: no one left the scene, and the summary does not say so."""
    loopback.default = failing_for("bob", status=500)
    scene = scene_file(tmp_path, loopback, remote_cast(loopback, "alice", "bob", "charlie"), initial_speaker="alice")
    code = batch(tmp_path, scene, "--max-beats", "3", journals=str(tmp_path / "journals"))
    err = capsys.readouterr().err
    events = records(tmp_path)
    bob_calls = [e for e in events if e["type"] == "call" and e["target"] == "bob"]
    assert [c["purpose"] for c in bob_calls] == ["turn", "turn", "journal"] and not any(c["ok"] for c in bob_calls)
    assert code == 0 and "left the scene" not in err
    assert not [e for e in events if e.get("reason") == "unavailable"]


def test_a_journal_call_refused_after_the_scene_does_not_make_an_actor_leave_it(tmp_path, loopback, capsys):
    """Bob played every turn; only his journal entry, after the close, is refused (a 401): he never left
    the scene, so no line and no summary notice says he did."""
    from promptdesk.core.engine.briefing import JOURNAL_PROMPT

    def answer(who, recorded):
        if who == "bob" and JOURNAL_PROMPT[:60] in json.dumps(recorded.body, ensure_ascii=False):
            return Reply(status=401, error_message="invalid x-api-key")
        return turn(LINE)
    loopback.default = scripted(answer)
    cast = bob_on_openai(loopback)
    scene = scene_file(tmp_path, loopback, cast, initial_speaker="alice")
    code = batch(tmp_path, scene, "--max-beats", "3", journals=str(tmp_path / "journals"))
    err = capsys.readouterr().err
    events = records(tmp_path)
    assert [c["ok"] for c in events if c["type"] == "call" and c["target"] == "bob"][-1] is False
    assert code == 0 and "left the scene" not in err
    assert not [e for e in events if e.get("reason") == "unavailable"]


def test_an_actor_who_left_the_scene_is_not_asked_for_a_journal_entry(tmp_path, loopback, capsys):
    """Bob left at beat 0 (a 401): he is never called again, the journal step included; a `system`
    line says he writes no entry, and Alice and Charlie write theirs."""
    loopback.default = failing_for("bob")
    cast = bob_on_openai(loopback)
    scene = scene_file(tmp_path, loopback, cast, initial_speaker="bob")
    code = batch(tmp_path, scene, "--max-beats", "3", journals=str(tmp_path / "journals"))
    err = capsys.readouterr().err
    events = records(tmp_path)
    assert code == 0, err
    assert [c["purpose"] for c in events if c["type"] == "call" and c["target"] == "bob"] == ["turn"]
    assert not [e for e in events if e["type"] == "route" and e["target"] == "bob"], "nothing is forwarded to him"
    assert {e["from"] for e in events if e["type"] == "journal"} == {"alice", "charlie"}
    skipped = [e for e in events if e["type"] == "system" and e.get("about") == "bob"
               and e.get("reason") == "unavailable-journal"]
    assert len(skipped) == 1 and "not asked for a journal entry" in skipped[0]["text"]
    assert "Bob is not asked for a journal entry" in err
    meta = json.loads((tmp_path / "run" / "metadata.json").read_text())
    assert [e["character"] for e in meta["errors"]] == ["bob"], "the skipped entry is not another failure"


def test_an_actor_who_left_before_a_kill_stays_gone_after_the_resume(tmp_path, loopback, capsys):
    """A run cut off after beat 2, in which Bob had left at beat 0, is resumed: Bob is not called again
    (his provider would refuse him again), and the record says once that he left, as an uninterrupted
    run's would."""
    loopback.default = failing_for("bob")
    cast = bob_on_openai(loopback)
    scene = scene_file(tmp_path, loopback, cast, initial_speaker="bob")
    assert batch(tmp_path, scene) == 0
    run = tmp_path / "run"
    lines = (run / "events.jsonl").read_text().splitlines(keepends=True)
    ends = [i for i, line in enumerate(lines) if json.loads(line)["type"] == "beat_end"]
    (run / "events.jsonl").write_text("".join(lines[:ends[2] + 1]))
    for derived in ("events.json", "metadata.json"):
        (run / derived).unlink()
    capsys.readouterr()
    assert main(["resume", str(run)]) == 0, capsys.readouterr().err
    events = records(tmp_path)
    assert [c["beat"] for c in events if c["type"] == "call" and c["target"] == "bob"] == [0]
    assert [e["about"] for e in events if e.get("reason") == "unavailable"] == ["bob"]
    meta = json.loads((run / "metadata.json").read_text())
    assert [u["character"] for u in meta["unavailable"]] == ["bob"]
    assert [e["character"] for e in meta["errors"]] == ["bob"]
    assert next(e for e in events if e["type"] == "close")["reason"] == "max_beats_exceeded"


def test_a_take_keeps_out_who_left_unless_it_plays_on_other_providers(tmp_path, loopback, capsys):
    """A take of a run in which Bob left (a 401) keeps him out as the parent did; a take with
    `--provider` plays on other calls, so Bob is asked again there and plays."""
    loopback.default = failing_for("bob")
    cast = bob_on_openai(loopback)
    assert batch(tmp_path, scene_file(tmp_path, loopback, cast, initial_speaker="bob")) == 0
    same, other = tmp_path / "same", tmp_path / "other"
    assert main(["branch", str(tmp_path / "run"), "--at-beat", "2", "--out", str(same)]) == 0
    assert main(["branch", str(tmp_path / "run"), "--at-beat", "2", "--provider", "offline",
                 "--out", str(other)]) == 0, capsys.readouterr().err

    def played(run):
        events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
        seam = next(i for i, e in enumerate(events) if e["type"] == "branch")
        return events[seam:]
    assert not [e for e in played(same) if e.get("target") == "bob" and e["type"] == "call"]
    assert not [e for e in played(same) if e.get("reason") == "unavailable"], "said once, in the parent's part"
    assert [e for e in played(other) if e["type"] == "speak" and e["from"] == "bob"]
