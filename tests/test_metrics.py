"""Run metrics against an event log counted by hand, against a real offline run, and the CLI."""

from __future__ import annotations

import json
import re
import sys
import types
from pathlib import Path

import pytest

from promptdesk.core.cli.main import main
from promptdesk.core.errors import PromptdeskError
from promptdesk.core.experiments.metrics import audit_verdict, metrics_of, trigrams

CAST = {"alice": "Alice", "bob": "Bob", "charlie": "Charlie"}


def speak(t, who, text, beat, action="speak", target=None, **extra):
    row = {"t": t, "from": who, "type": "speak", "text": text, "beat": beat, "action": action, **extra}
    return row | ({"target": target} if target else {})


def call(t, who, beat, **usage):
    return {"t": t, "from": "coordinator", "target": who, "type": "call", "provider": "anthropic", "beat": beat,
            "text": f"turn call for {who}", **usage}


HAND_COUNTED = [
    {"t": 0.0, "from": "coordinator", "type": "start", "text": "Scene tea started", "beat": 0,
     "scene": {"name": "tea"}, "cast": CAST, "isolation": "b", "coordinator": "C", "seed": 3},
    call(0.5, "alice", 0, input_tokens=100, output_tokens=20, cache_read_tokens=300, cost_usd=0.01),
    speak(1.0, "alice", "The kettle is on the stove.", 0, target="Bob"),
    speak(2.0, "bob", "The kettle is whistling now!", 1, action="interrupt", target="Alice, Charlie"),
    speak(3.0, "charlie", "", 1, action="silent", nonverbal="shrugs"),
    call(3.5, "bob", 2, input_tokens=50, output_tokens=10, cache_write_tokens=40, cost_usd=0.002),
    {"t": 4.0, "from": "coordinator", "type": "correct", "target": "charlie", "text": "Asked Charlie to reformat", "beat": 2},
    {"t": 5.0, "from": "coordinator", "type": "system", "target": "charlie", "text": "Charlie unable to respond",
     "reason": "timeout", "beat": 2},
    {"t": 5.5, "from": "coordinator", "type": "system", "text": "a line about nobody in particular", "beat": 2},
    speak(6.0, "charlie", "Ha.", 3, action="react"),
    speak(7.0, "alice", "Is whistling now, you say?", 4, target="everyone"),
    {"t": 12.5, "from": "coordinator", "type": "close", "reason": "natural", "text": "closed", "beat": 4,
     "goal_achieved": True},
]


def write_run(folder: Path, records: list[dict]) -> Path:
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def test_trigrams_are_lower_cased_words_without_punctuation():
    assert trigrams("The kettle, is ON!") == {("the", "kettle", "is"), ("kettle", "is", "on")}
    assert trigrams("two words") == set()


def test_metrics_match_the_hand_counted_log(tmp_path):
    m = metrics_of(write_run(tmp_path / "run", HAND_COUNTED), audit=False)
    assert (m.scene, m.isolation, m.coordinator, m.seed, m.condition()) == ("tea", "b", "C", 3, "b-C")
    # No metadata.json beside this log: success was never recorded, so it is unknown (None), not False.
    assert (m.beats, m.close_reason, m.goal_achieved, m.success, m.duration_s) == (5, "natural", True, None, 12.5)
    assert (m.turns, m.silences, m.interruptions, m.reactions) == (4, 1, 1, 1)
    assert m.mean_speech_words == 4.25                      # 17 words over 4 speeches
    assert (m.tokens, m.cost_usd) == (520, 0.012)
    assert m.cache_read_share == round(300 / 490, 4)
    assert (m.failures, m.corrections) == (1, 1)            # the untargeted system line is no actor's failure
    alice, bob, charlie = m.actors["alice"], m.actors["bob"], m.actors["charlie"]
    assert (alice.turns, alice.words, alice.talk_share) == (2, 11, round(11 / 17, 4))
    assert (bob.turns, bob.interruptions, bob.words, bob.talk_share) == (1, 1, 5, round(5 / 17, 4))
    assert (charlie.turns, charlie.silences, charlie.reactions, charlie.words) == (1, 1, 1, 1)
    assert (charlie.failures, charlie.corrections, alice.failures) == (1, 1, 0)
    assert (alice.tokens, bob.tokens, charlie.tokens) == (420, 100, 0)
    assert (alice.cache_read_share, bob.cache_read_share) == (0.75, 0.0)
    # Bob reuses one of his three 3-grams from Alice; Alice's last line follows Charlie's "Ha." (no 3-gram in common).
    assert (bob.echo, alice.echo, charlie.echo) == (0.3333, 0.0, None)
    assert m.echo == round((1 / 3 + 0) / 2, 4)
    assert m.addressed == {"alice": {"bob": 1, "*": 1}, "bob": {"alice": 1, "charlie": 1}, "charlie": {"*": 1}}


def test_an_unfinished_log_reads_as_incomplete_with_goal_unknown(tmp_path):
    m = metrics_of(write_run(tmp_path / "run", HAND_COUNTED[:4]), audit=False)
    assert (m.close_reason, m.goal_achieved, m.success, m.turns) == ("incomplete", None, None, 2)


def test_goal_null_on_the_close_event_is_read_as_unknown(tmp_path):
    close = {**HAND_COUNTED[-1], "goal_achieved": None}
    m = metrics_of(write_run(tmp_path / "run", [*HAND_COUNTED[:-1], close]), audit=False)
    assert m.goal_achieved is None


def test_metrics_agree_with_the_runs_own_metadata(tmp_path):
    from helpers import CHARACTERS, example_scene
    from promptdesk.core.casting.build import RunOptions, build_session
    import asyncio
    session = build_session(example_scene("the-apology"), RunOptions(
        isolation="b", coordinator="C", provider="offline", seed=4, out=tmp_path / "run",
        characters_dirs=[CHARACTERS], write_character_journals=False))
    result = asyncio.run(session.run())
    meta = json.loads((result.run_dir / "metadata.json").read_text())
    m = metrics_of(result.run_dir, audit=False)
    assert (m.beats, m.close_reason, m.tokens) == (meta["totalBeats"], meta["reason"], meta["costs"]["totalTokens"])
    assert m.success is meta["success"] is True
    for slug, row in meta["actors"].items():
        assert (m.actors[slug].turns, m.actors[slug].silences) == (row.get("turns", 0), row.get("silent", 0))
    assert sum(a.talk_share for a in m.actors.values()) == pytest.approx(1.0, abs=1e-3)


def test_success_is_the_runs_recorded_value_and_unknown_when_it_was_not_recorded(tmp_path, capsys):
    run = write_run(tmp_path / "run", HAND_COUNTED)
    meta = run / "metadata.json"
    for written, read in (({"success": False, "reason": "natural"}, False), ({"success": True}, True),
                          ({"reason": "natural"}, None), ({"success": "yes"}, None), ([True], None)):
        meta.write_text(json.dumps(written))
        assert metrics_of(run, audit=False).success is read, written
    meta.write_text('{"success": fa')
    assert metrics_of(run, audit=False).success is None
    meta.unlink()
    assert main(["metrics", str(run)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^success +unknown$", out, re.M) and re.search(r"^goal_achieved +yes$", out, re.M)


def test_metrics_command_prints_a_table_and_json(tmp_path, capsys):
    run = write_run(tmp_path / "run", HAND_COUNTED)
    assert main(["metrics", str(run)]) == 0
    out = capsys.readouterr().out
    assert "close_reason" in out and "natural" in out and "from \\ to" in out
    assert "condition_label" not in out, "a plain run has its two choices, no label of its own"
    assert main(["metrics", str(run), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["actors"]["bob"]["interruptions"] == 1 and data["addressed"]["bob"] == {"alice": 1, "charlie": 1}


@pytest.mark.parametrize("plan", ["sweep.yaml", "takes.yaml"])
def test_metrics_of_a_sweeps_folder_says_what_measures_it(tmp_path, capsys, plan):
    """`promptdesk metrics sweeps/kitchen` (a sweep, or a sweep of takes): the refusal names `compare` for
    the folder and `metrics` for one of its runs, which is there; a plain empty folder gets no such word."""
    sweep = tmp_path / "sweeps" / "kitchen"
    write_run(sweep / "a-C-seed2", HAND_COUNTED)
    write_run(sweep / "a-C-seed1", HAND_COUNTED)
    (sweep / plan).write_text("scenes: []\n")
    assert main(["metrics", str(sweep)]) == 2
    err = capsys.readouterr().err
    assert f"promptdesk compare {sweep}" in err and f"promptdesk metrics {sweep / 'a-C-seed1'}" in err, err
    (tmp_path / "empty").mkdir()
    assert main(["metrics", str(tmp_path / "empty")]) == 2
    assert "compare" not in capsys.readouterr().err


def test_metrics_of_several_runs_a_glob_gave_says_to_name_one_or_compare_them(tmp_path, capsys):
    """`promptdesk metrics runs/the-apology-*` once a second run is there: the refusal names the fix."""
    first, second = write_run(tmp_path / "a", HAND_COUNTED), write_run(tmp_path / "b", HAND_COUNTED)
    assert main(["metrics", str(first), str(second)]) == 2
    err = capsys.readouterr().err
    assert "metrics measures one run" in err and "2 were given" in err
    assert f"promptdesk compare {first} {second}" in err
    assert main(["metrics", str(first), "--colour"]) == 2
    assert "unrecognized arguments: --colour" in capsys.readouterr().err


def test_metrics_of_a_folder_that_is_not_a_run_exits_2_naming_it(tmp_path, capsys):
    assert main(["metrics", str(tmp_path)]) == 2
    assert "not a run folder" in capsys.readouterr().err


def _stand_in_audit(monkeypatch, audit_run):
    module = types.ModuleType("promptdesk.core.record.audit")
    module.audit_run = audit_run
    monkeypatch.setitem(sys.modules, "promptdesk.core.record.audit", module)


def test_audit_verdict_reports_clean_and_leaks_from_the_audit(monkeypatch, tmp_path):
    _stand_in_audit(monkeypatch, lambda run_dir: types.SimpleNamespace(clean=True, leaks=[]))
    assert audit_verdict(tmp_path) == "clean"
    _stand_in_audit(monkeypatch, lambda run_dir: types.SimpleNamespace(clean=False, leaks=["a", "b"]))
    assert audit_verdict(tmp_path) == "leaks: 2"


def test_audit_verdict_is_unavailable_when_the_audit_refuses_the_folder(monkeypatch, tmp_path):
    def refuse(run_dir):
        raise PromptdeskError("no prompts.jsonl")
    _stand_in_audit(monkeypatch, refuse)
    assert audit_verdict(tmp_path) == "unavailable (no prompts.jsonl)"


def test_timeline_marks_each_actor_per_beat_and_a_failure_outranks_the_rest(tmp_path):
    from promptdesk.core.experiments.metrics import cost_per_beat, timeline
    from promptdesk.core.record.recorder import read_events
    events = read_events(write_run(tmp_path / "run", HAND_COUNTED))
    assert timeline(events) == {"alice": ["spoke", "", "", "", "spoke"],
                                "bob": ["", "interrupted", "", "", ""],
                                "charlie": ["", "silent", "failed", "reacted", ""]}
    assert cost_per_beat(events) == [0.01, 0.0, 0.002, 0.0, 0.0]


def test_a_collaborations_agent_responses_count_as_turns_and_words(tmp_path):
    records = [HAND_COUNTED[0],
               {"t": 1.0, "from": "alice", "type": "agent_response", "text": "Here is the plan for today", "target": "bob",
                "round": 1},
               {"t": 2.0, "from": "bob", "type": "agent_response", "text": "the plan for today is fine", "target": "all",
                "round": 2}]
    m = metrics_of(write_run(tmp_path / "run", records), audit=False)
    assert (m.turns, m.actors["alice"].turns, m.actors["alice"].words, m.actors["bob"].words) == (2, 1, 6, 6)
    assert m.actors["bob"].echo == round(2 / 4, 4)          # "the plan for", "plan for today" of 4 3-grams
    assert m.addressed["alice"] == {"bob": 1} and m.addressed["bob"] == {"*": 1}


def test_salvaged_replies_are_counted_apart_from_failures_per_actor_and_in_all(tmp_path, capsys):
    """A turn salvaged to silence (the actor answered, out of protocol), a roundtable-style fallback line
    for an unusable answer (`about`), and a collaboration message that was no valid envelope are salvaged,
    each for whose reply it was; a failed fallback (the call itself failed) is a failure, not a salvage."""
    records = [*HAND_COUNTED[:-1],
               {"t": 8.0, "from": "coordinator", "type": "system", "target": "alice", "reason": "silenced",
                "text": "Alice's reply was salvaged to silence", "beat": 4},
               {"t": 8.5, "from": "coordinator", "type": "system", "reason": "fallback", "about": "bob",
                "text": "Bob's answer taken as a fallback", "beat": 4},
               {"t": 9.0, "from": "coordinator", "type": "system", "reason": "fallback", "about": "bob", "failed": True,
                "text": "Bob's call failed: a fallback line", "beat": 4},
               speak(9.5, "charlie", "Plain words, no envelope.", 4, envelope_valid=False),
               HAND_COUNTED[-1]]
    m = metrics_of(write_run(tmp_path / "run", records), audit=False)
    assert {slug: a.salvaged for slug, a in m.actors.items()} == {"alice": 1, "bob": 1, "charlie": 1}
    assert (m.salvaged, m.failures) == (3, 2)
    assert main(["metrics", str(tmp_path / "run")]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("actor "))
    assert header.split()[-1] == "salvaged"
    from promptdesk.core.record import outputs
    from promptdesk.core.record.events import parse_event

    actors = outputs.metadata([parse_event(r) for r in records])["actors"]
    assert (actors["alice"]["salvaged"], actors["bob"]["salvaged"], actors["bob"]["failures"]) == (1, 1, 1)
    assert (actors["charlie"]["salvaged"], actors["charlie"]["failures"]) == (1, 1)


def test_a_folder_whose_log_holds_no_readable_event_is_refused_as_not_a_run(tmp_path, capsys, monkeypatch, caplog):
    """Another tool's `events.jsonl` (chat messages, no `type`): every line is skipped, and the folder
    is refused by name with exit 2, never measured as an empty run; each skipped line says why briefly."""
    (tmp_path / "events.jsonl").write_text('{"role": "user", "content": "hi"}\n{"type": "bogus"}\n')
    monkeypatch.chdir(tmp_path)
    for command in (["metrics", "."], ["compare", "."], ["report", ".", "--html", str(tmp_path / "r.html")]):
        assert main(command) == 2, command
        err = capsys.readouterr().err
        assert "no event Promptdesk can read" in err and str(tmp_path.name) in err, err
    said = caplog.text + capsys.readouterr().err
    assert "tagged-union" not in said and "no `type`" in said and "unknown type 'bogus'" in said, said
    assert not (tmp_path / "r.html").exists()


def test_a_run_killed_before_its_first_event_still_measures_as_incomplete(tmp_path):
    (tmp_path / "events.jsonl").write_text("")
    assert metrics_of(tmp_path).close_reason == "incomplete"


def test_the_metrics_of_a_run_cut_off_say_so_beside_the_table(tmp_path, capsys):
    """The table of a run with no close is still printed (it measures what was played), and a notice
    on stderr says the record is cut short, where, and what plays it on; a closed run has none."""
    from promptdesk.core.cli.main import main

    cut = write_run(tmp_path / "cut", HAND_COUNTED[:-1])
    assert main(["metrics", str(cut), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["close_reason"] == "incomplete"
    assert "NOTICE: the record is cut short" in err and "ends in beat 4 without a close" in err
    assert f"promptdesk resume {cut}" in err
    assert main(["metrics", str(write_run(tmp_path / "whole", HAND_COUNTED))]) == 0
    assert "NOTICE" not in capsys.readouterr().err


def test_timeline_reads_the_log_for_its_length_once_not_once_per_speech(monkeypatch):
    """A long run's timeline is linear in its log: `report` and `metrics` of an 800-beat scene spent
    5 s here, the length of the table being recounted over the whole log at every speech."""
    from promptdesk.core.experiments import metrics as metrics_module
    from promptdesk.core.record.events import parse_event
    records = [speak(beat * 1.0, who, "words", beat) for beat in range(300) for who in ("alice", "bob")]
    events = [parse_event(r) for r in records]
    counted = []
    real = metrics_module.outputs.beats
    monkeypatch.setattr(metrics_module.outputs, "beats", lambda evs: counted.append(len(evs)) or real(evs))
    rows = metrics_module.timeline(events)
    assert rows["alice"] == ["spoke"] * 300 and rows["bob"] == ["spoke"] * 300
    assert sum(counted) <= 2 * len(events)


@pytest.mark.parametrize(("first", "second", "count_first", "echo"), [
    ("我今天很累。", "你今天很累吗？", 5, 0.5),                 # Chinese: a character is a word
    ("今日は疲れた。", "今日は疲れたね。", 6, 0.8),              # Japanese: kana and kanji alike
    ("मैं आज बहुत थका हुआ हूँ।", "तुम आज बहुत थका हुआ लगते हो।", 6, 0.4),  # Hindi: vowel signs stay in their word
    ("Я сегодня очень устал.", "Ты сегодня очень устал?", 4, 0.5),   # Russian, as before
    ("ไม่ได้", "ไม่ได้นะ", 4, 0.5),   # Thai: a letter keeps its vowel and tone marks (ไ ม่ ไ ด้ were 6 "words")
], ids=["chinese", "japanese", "hindi", "russian", "thai"])
def test_words_and_echo_are_counted_in_every_script(tmp_path, first, second, count_first, echo):
    """A speech in a script written without spaces was one or two words (its clauses), so its talk share,
    mean length and echo were nonsense beside an English speaker; a Hindi word was cut at its vowel signs."""
    records = [HAND_COUNTED[0], speak(1.0, "alice", first, 0), speak(2.0, "bob", second, 1),
               {"t": 3.0, "from": "coordinator", "type": "close", "reason": "natural", "text": "closed", "beat": 1}]
    m = metrics_of(write_run(tmp_path / "run", records), audit=False)
    assert m.actors["alice"].words == count_first
    assert m.actors["bob"].echo == echo


def test_the_tables_align_wide_characters_by_the_cells_they_take(tmp_path, capsys):
    """A tone a Chinese or Japanese reply gives (`平静`) and a run folder named in Japanese take two cells a
    character: columns measured in characters slid right by one cell per such character."""
    from promptdesk.core.cli.metrics import cells
    records = [HAND_COUNTED[0], speak(1.0, "alice", "你好。", 0, tone="平静"), speak(2.0, "bob", "Hi.", 1, tone="wry"),
               speak(3.0, "alice", "再见。", 2, tone="落ち着いた"),
               {"t": 4.0, "from": "coordinator", "type": "close", "reason": "natural", "text": "closed", "beat": 2}]
    write_run(tmp_path / "実行1", records)
    write_run(tmp_path / "ラン２", records)
    assert main(["metrics", str(tmp_path / "実行1")]) == 0
    arcs = capsys.readouterr().out.split("Tone by beat\n")[1].split("\n\n")[0].splitlines()
    assert len({cells(line.rstrip()) for line in arcs}) == 1, arcs  # right-aligned: every row ends in one column
    assert main(["compare", str(tmp_path / "実行1"), str(tmp_path / "ラン２")]) == 0
    table = capsys.readouterr().out.split("\n\n")[0].splitlines()
    assert len({cells(line) for line in table}) == 1, table
    assert cells("平静") == 4 and cells("ＡＢ") == 4 and cells("cafe\u0301") == 4 and cells("ليلى") == 4
