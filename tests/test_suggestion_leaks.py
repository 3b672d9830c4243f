"""No path from the coordinator's private material to an actor through a suggested world event (spec
000: coordinator notes are never revealed to actors, "not even as hints"; isolation that does not
rely on the coordinator "remembering not to"). A judge that copies the coordinator notes, or another
actor's perspective, into its suggestion is withheld under `--suggested-events inject`, and the
audit treats what the coordinator writes as coordinator material: a suggestion forced through is a leak."""

from __future__ import annotations

import base64
import codecs
import json
from pathlib import Path
import quopri
import re

import pytest
import yaml

from promptdesk.core.cli.main import main
from promptdesk.core.engine import suggestions
from promptdesk.core.record.audit import audit_run
from promptdesk.core.record.audit_coordinator import vet
from promptdesk.core.record.events import parse_event
from helpers import CHARACTERS, SCENES
from loopback import Reply, loopback  # noqa: F401  (fixture)
from test_scene_faults import keys  # noqa: F401  (fixture)

SCENE = yaml.safe_load((SCENES / "the-apology.yaml").read_text())
NOTES = " ".join(SCENE["coordinator_notes"].split())
PERSPECTIVE = " ".join(SCENE["perspectives"]["alice"].split()).split(" You want")[0]
"""Alice's perspective, its first two sentences (a suggestion is at most 300 characters)."""


def copying_judge(source: str):
    """A loopback judge that, at beat 2, suggests a memo carrying `source` ('notes': the coordinator
    notes as its own request shows them; else that text), and otherwise lets the scene go on. The
    actors are the offline improviser."""
    def answer(recorded):
        body = json.dumps(recorded.body, ensure_ascii=False)
        if "the scene has ended" in body:
            return Reply(text='{"goal_achieved": null, "reason": "cannot tell"}')
        if "Beat 2 " not in body:
            return Reply(text='{"decision": "continue"}')
        if source == "notes":
            found = re.search(r"Coordinator notes: (.*?)\\n", body)
            assert found, "role A's judge is shown the coordinator notes"
            copied = found.group(1).replace("\\n", " ")
        else:
            copied = source
        return Reply(text=json.dumps({"decision": "suggest_event", "text": f"A memo slides under the door: {copied}"}))
    return answer


def scene_file(tmp_path, loopback, **fields) -> str:
    data = dict(SCENE, **fields, judge={"name": "openai", "model": "gpt-4o-mini", "base_url": loopback.url("/v1"),
                              "max_retries": 0},
                events=[], limits={"max_beats": 6}, provider={"name": "offline"})
    path = tmp_path / "scene.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def batch(path: str, out, role: str, *flags: str) -> int:
    return main(["--batch", path, "--isolation", "b", "--coordinator", role, "--out", str(out), "--seed", "3",
                 "--characters-dir", str(CHARACTERS), "--journals", "none", "--suggested-events", "inject", *flags])


def records(out) -> list[dict]:
    return [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]


def actor_requests(out, cast=("alice", "bob", "charlie")) -> str:
    return "\n".join(line for line in (out / "prompts.jsonl").read_text().splitlines()
                     if json.loads(line)["to"] in cast)


@pytest.mark.parametrize(("role", "source", "whose"), [("A", "notes", "the coordinator notes"),
                                                       ("B", PERSPECTIVE, "Alice's perspective")])
def test_a_suggestion_carrying_private_material_is_withheld_under_inject(tmp_path, loopback, capsys, role,
                                                                          source, whose):
    loopback.default = copying_judge(source)
    out = tmp_path / "run"
    assert batch(scene_file(tmp_path, loopback), out, role) == 0
    err = capsys.readouterr().err
    events = records(out)
    decision = next(e for e in events if e["type"] == "decision" and e.get("decision") == "suggest_event")
    assert decision["text"].startswith("A memo slides under the door"), "the judge's words are on the record"
    assert decision["withheld"] == f"it carries words of {whose}"
    notice = next(e for e in events if e["type"] == "system" and e.get("reason") == "withheld")
    assert whose in notice["text"] and "memo" not in notice["text"], "said without the leaked words"
    assert f"withheld: it carries words of {whose}" in err
    assert not [e for e in events if e["type"] == "event"], "never delivered"
    words, others = (NOTES, ("alice", "bob", "charlie")) if source == "notes" else (source, ("bob", "charlie"))
    assert words[:60] not in actor_requests(out, others) and "memo slides" not in actor_requests(out)
    assert audit_run(out).clean
    assert main(["audit", str(out)]) == 0


JAPANESE_NOTES = "山田さんは実は駐車場に賛成している。会議の最後まで誰にも言わないはずだ。住民たちの反応を観察すること。"


def test_a_suggestion_carrying_a_clause_of_notes_written_without_spaces_is_withheld(tmp_path, loopback, capsys):
    """A Japanese clause is as many words as it has characters: one sentence of three is a leak, as
    an English sentence of the notes is."""
    loopback.default = copying_judge("山田さんは実は駐車場に賛成している")
    out = tmp_path / "run"
    assert batch(scene_file(tmp_path, loopback, coordinator_notes=JAPANESE_NOTES), out, "A") == 0
    events = records(out)
    assert any(e.get("withheld") == "it carries words of the coordinator notes" for e in events if e["type"] == "decision")
    assert not [e for e in events if e["type"] == "event"], "never delivered"
    assert "駐車場に賛成" not in actor_requests(out)
    assert audit_run(out).clean


def test_a_clean_suggestion_is_still_injected(tmp_path, loopback, capsys):
    loopback.default = copying_judge("The radiator clanks twice.")
    out = tmp_path / "run"
    assert batch(scene_file(tmp_path, loopback), out, "A") == 0
    injected = [e for e in records(out) if e["type"] == "event"]
    assert [(e["text"], e["suggested_by"]) for e in injected] == \
        [("A memo slides under the door: The radiator clanks twice.", "coordinator")]
    assert "memo slides under the door" in actor_requests(out)
    assert audit_run(out).clean


def test_the_audit_reports_a_suggested_event_forced_through_with_the_coordinator_notes(tmp_path, loopback,
                                                                                      monkeypatch, capsys):
    loopback.default = copying_judge("notes")
    monkeypatch.setattr(suggestions, "why_withheld", lambda stage, text: None)  # the check taken away
    out = tmp_path / "run"
    assert batch(scene_file(tmp_path, loopback), out, "A") == 0
    forced = next(e for e in records(out) if e["type"] == "event")
    assert forced["suggested_by"] == "coordinator" and "Expected: Alice starts" in forced["text"]
    capsys.readouterr()
    assert main(["audit", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "events.jsonl line" in printed and "suggested world event written by the coordinator" in printed
    assert "sent to every actor carries the coordinator notes" in printed
    report = audit_run(out)
    assert not report.clean
    line = next(n for n, text in enumerate((out / "events.jsonl").read_text().splitlines(), 1)
                if json.loads(text)["type"] == "event")
    assert [(leak.line, leak.owner, leak.kind) for leak in report.leaks if leak.source == "events.jsonl"] == \
        [(line, "coordinator", "coordinator_notes")]


def planted(tmp_path, loopback, **fields) -> tuple[Path, int]:
    """A clean run whose first suggested world event is then rewritten in `events.jsonl` with `fields`
    (a record forged after the run): the run folder and the event's index."""
    loopback.default = copying_judge("The radiator clanks twice.")
    out = tmp_path / "run"
    assert batch(scene_file(tmp_path, loopback), out, "B") == 0
    log = out / "events.jsonl"
    lines = log.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "event")
    lines[at] = json.dumps({**json.loads(lines[at]), **fields})
    log.write_text("\n".join(lines) + "\n")
    return out, at


def test_the_audit_reports_a_planted_suggestion_in_a_clean_record(tmp_path, loopback, capsys):
    out, at = planted(tmp_path, loopback, text=f"A note is pinned to the wall: {PERSPECTIVE}")
    report = audit_run(out)
    leak = next(leak for leak in report.leaks if leak.source == "events.jsonl")
    assert (leak.line, leak.owner, leak.kind, leak.purpose) == (at + 1, "alice", "perspective", "suggested world event")


@pytest.mark.parametrize("mark", [["coordinator"], "Coordinator", {"by": "coordinator"}, ""])
def test_a_planted_suggestion_whose_mark_is_garbled_is_still_checked(tmp_path, loopback, mark):
    """Fail closed: a world event that says it was suggested, in any shape (a forged or garbled record),
    is checked as the coordinator's text, never read as a public one that excuses the words it holds."""
    out, _ = planted(tmp_path, loopback, text=f"A note is pinned to the wall: {PERSPECTIVE}", suggested_by=mark)
    report = audit_run(out)
    assert any(leak.source == "events.jsonl" and leak.owner == "alice" for leak in report.leaks), report.leaks


async def test_a_resumed_run_checks_suggestions_against_its_start_record(run_scene, tmp_path):
    import shutil

    from promptdesk.core.clock import VirtualClock
    from promptdesk.core.casting.resume import prepare
    from helpers import example_scene
    from test_resume import kill_mid_beat

    whole = await run_scene(example_scene("the-apology", limits={"max_beats": 8}), isolation="b", coordinator="A")
    killed = tmp_path / "killed"
    shutil.copytree(whole.dir, killed)
    before = (killed / "private.json").read_bytes()
    kill_mid_beat(killed, 4)
    session = prepare(killed)
    session.clock = VirtualClock()
    session.suggested_events = "ask"
    session.suggest("The radiator clanks twice.")
    assert session.state.suggestion == "The radiator clanks twice.", "a clean suggestion is held, not refused unchecked"
    session.suggest(f"A memo slides under the door: {NOTES}")
    assert session.state.suggestion is None and session.state.withheld == "it carries words of the coordinator notes"
    await session.run()
    assert (killed / "private.json").read_bytes() == before, "the start record is read back, never rewritten"


@pytest.mark.parametrize("answer", [{"decision": "suggest_event", "text": "A memo slides under the door. " * 12},
                                    {"decision": "suggest_event"}, {"decision": "suggest_event", "text": "  "},
                                    {"decision": "announce", "text": "A bell rings"}])
def test_a_judge_answer_that_is_no_valid_suggestion_falls_back_to_role_c_and_is_recorded(tmp_path, loopback,
                                                                                         capsys, answer):
    def judge(recorded):
        body = json.dumps(recorded.body, ensure_ascii=False)
        if "the scene has ended" in body:
            return Reply(text='{"goal_achieved": null, "reason": "cannot tell"}')
        return Reply(text=json.dumps(answer) if "Beat 2 " in body else '{"decision": "continue"}')

    loopback.default = judge
    out = tmp_path / "run"
    assert batch(scene_file(tmp_path, loopback), out, "B") == 0
    events = records(out)
    fallback = [e for e in events if e.get("reason") == "judge-fallback"]
    assert [e["beat"] for e in fallback] == [2], "that beat's decision fell back to role C's rules, on the record"
    assert not [e for e in events if e["type"] in ("event", "decision")], "nothing suggested, nothing injected"
    assert "NOTICE: the coordinator's judge gave no usable answer 1 time:" in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["inject", "ask"])
def test_a_judge_that_suggests_the_same_event_every_beat_has_it_delivered_once(tmp_path, loopback, capsys, mode):
    """The engine tells the judge what it already suggested; a judge that suggests it again anyway (in
    other capitals and spacing) gets it withheld, not injected a second time or held for `y` again."""
    def judge(recorded):
        body = json.dumps(recorded.body, ensure_ascii=False)
        if "the scene has ended" in body:
            return Reply(text='{"goal_achieved": null, "reason": "cannot tell"}')
        text = "The radiator clanks twice." if "Beat 0 " in body else "the radiator  clanks TWICE"
        return Reply(text=json.dumps({"decision": "suggest_event", "text": text}))

    loopback.default = judge
    out = tmp_path / "run"
    code = main(["--batch", scene_file(tmp_path, loopback), "--isolation", "b", "--coordinator", "B", "--out", str(out),
                 "--seed", "3", "--characters-dir", str(CHARACTERS), "--journals", "none", "--suggested-events", mode])
    assert code == 0
    events = records(out)
    decisions = [e for e in events if e["type"] == "decision" and e.get("decision") == "suggest_event"]
    assert len(decisions) >= 3
    assert [e.get("withheld") for e in decisions[1:]] == [suggestions.REPEATED] * (len(decisions) - 1)
    if mode == "inject":
        assert [e["text"] for e in events if e["type"] == "event"] == ["The radiator clanks twice."]
    assert audit_run(out).clean


def test_a_forced_suggestion_an_actor_then_repeats_aloud_is_still_reported(tmp_path, loopback, monkeypatch, capsys):
    """What the actors say after a leaked world event reached them cannot make it public before it was:
    an actor who reads the memo aloud a beat later does not excuse the memo, nor the requests it was in."""
    loopback.default = copying_judge("notes")
    monkeypatch.setattr(suggestions, "why_withheld", lambda stage, text: None)  # the check taken away
    out = tmp_path / "run"
    assert batch(scene_file(tmp_path, loopback), out, "A") == 0
    log = out / "events.jsonl"
    events = records(out)
    forced = next(e for e in events if e["type"] == "event")
    last = max(i for i, e in enumerate(events) if e["type"] == "speak" and e.get("words", e["text"]))
    assert events[last]["beat"] > forced["beat"]
    events[last]["text"] = events[last]["raw"] = f'I read it: {forced["text"]}'
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    report = audit_run(out)
    assert [(leak.source, leak.owner) for leak in report.leaks if leak.source == "events.jsonl"] == \
        [("events.jsonl", "coordinator")]
    assert {leak.recipient for leak in report.leaks if leak.source != "events.jsonl"} >= {"alice", "bob", "charlie"}


CLAUSE = "Alice starts confrontational but professional; Bob is defensive, then genuinely apologetic"
"""A clause of the-apology's coordinator notes, as a judge shown them might copy it."""
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_CYRILLIC = str.maketrans("aceopxyABEKMHOPCTX", "асеорхуАВЕКМНОРСТХ")
DISGUISES = {
    "zero-width inside words": lambda s: " ".join("\u200b".join(word) for word in s.split()),
    "soft hyphens and word joiners": lambda s: " ".join(f"{w[:3]}\u00ad{w[3:]}\u2060" for w in s.split()),
    "zero-width for spaces": lambda s: "\u200b".join(s.split()),
    "inline markup inside words": lambda s: " ".join(f"<b>{w[:2]}<i>{w[2:]}</i></b>" for w in s.split()),
    "html character references": lambda s: s.replace("e", "&#101;").replace("a", "&#x61;"),
    "underscores for spaces": lambda s: "_".join(s.split()),
    "camel case": lambda s: "".join(w[:1].upper() + w[1:] for w in s.split()),
    "words broken at lines' ends": lambda s: " ".join(f"{w[:3]}-\n{w[3:]}" if len(w) > 5 else w for w in s.split()),
    "cyrillic look-alike letters": lambda s: s.translate(_CYRILLIC),
    "circled letters": lambda s: "".join(chr(0x24D0 + ord(c) - 97) if "a" <= c <= "z" else c for c in s),
    "percent-encoded": lambda s: s.replace(" ", "%20").replace(";", "%3B"),
    "base64": lambda s: base64.b64encode(s.encode()).decode(),
    "rot13": lambda s: codecs.encode(s, "rot13"),
    "digits for letters": lambda s: s.replace("o", "0").replace("e", "3").replace("i", "1").replace("a", "4"),
    "words in reverse order": lambda s: " ".join(reversed(s.split())),
    "quoted-printable": lambda s: quopri.encodestring(s.encode(), quotetabs=True).decode(),
    "quoted-printable with soft line breaks": lambda s: "=\n".join(s[i:i + 9] for i in range(0, len(s), 9)),
    "each word spelt backwards": lambda s: " ".join(w[::-1] for w in s.split()),
    "the whole text backwards": lambda s: s[::-1],
    "letters joined by hyphens": lambda s: " ".join("-".join(w) for w in s.split()),
    "small capitals": lambda s: s.lower().translate(str.maketrans("abcdefghilnoprtu", "ᴀʙᴄᴅᴇꜰɢʜɪʟɴᴏᴘʀᴛᴜ")),
    "each word in base64": lambda s: " ".join(base64.b64encode(w.encode()).decode() for w in s.split()),
    "armenian and phonetic look-alike letters": lambda s: s.translate(str.maketrans({"o": "օ", "u": "ս", "i": "ı", "a": "ɑ"})),
    "cherokee and lisu capitals": lambda s: s.upper().translate(str.maketrans(dict(zip("ABCDEGHIKLMNOPRSTVW",
                                                                                          "ᎪᏴᏟᎠᎬᏀᎻᏆᏦᏞᎷꓠꓳᏢᎡᏚᎢᏙᎳ")))),
    "caesar shift of 3": lambda s: s.translate(str.maketrans(_LOWER + _LOWER.upper(), _LOWER[3:] + _LOWER[:3]
                                                             + (_LOWER[3:] + _LOWER[:3]).upper())),
}
SHORT_CLAUSE = "Alice starts confrontational but professional"
"""A clause of 5 words of the same notes (matched whole): room for the longer encodings in 300 characters."""
ENCODINGS = {
    "every byte quoted-printable": lambda s: "".join(f"={b:02X}" for b in s.encode()),
    "quoted-printable twice": lambda s: "".join(f"=3D{b:02X}" for b in s.encode()),
    "byte escapes": lambda s: "".join(f"\\x{b:02x}" for b in s.encode()),
    "code points": lambda s: " ".join("".join(f"U+{ord(c):04X}" for c in w) for w in s.split()),
    "hex digits": lambda s: s.encode().hex(),
    "morse code": lambda s: " / ".join(" ".join(_MORSE[c] for c in w) for w in s.lower().split()),
}
_MORSE = dict(zip("abcdefghijklmnopqrstuvwxyz", ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - "
                                                "..- ...- .-- -..- -.-- --..".split()))


@pytest.mark.parametrize("disguise", [*DISGUISES, *ENCODINGS], ids=[*DISGUISES, *ENCODINGS])
def test_a_suggestion_carrying_the_notes_in_disguise_is_withheld(tmp_path, loopback, capsys, disguise):
    """A judge that dresses the notes up (invisible characters, markup, escapes, joined words, letters
    of another script, encodings) is withheld as if it had copied them plainly; the notice shows none of it."""
    disguised = DISGUISES[disguise](CLAUSE) if disguise in DISGUISES else ENCODINGS[disguise](SHORT_CLAUSE)
    assert SHORT_CLAUSE.lower() not in disguised.lower() and len(f"A memo slides under the door: {disguised}") <= 300
    loopback.default = copying_judge(disguised)
    out = tmp_path / "run"
    assert batch(scene_file(tmp_path, loopback), out, "A") == 0
    events = records(out)
    assert [e.get("withheld") for e in events if e["type"] == "decision"] == ["it carries words of the coordinator notes"]
    notice = next(e for e in events if e["type"] == "system" and e.get("reason") == "withheld")
    assert "memo" not in notice["text"] and disguised not in notice["text"]
    assert not [e for e in events if e["type"] == "event"] and "memo slides" not in actor_requests(out)
    assert audit_run(out).clean


@pytest.mark.parametrize("disguise", ["zero-width inside words", "inline markup inside words", "cyrillic look-alike letters",
                                      "base64", "percent-encoded", "rot13", "quoted-printable",
                                      "each word spelt backwards"])
def test_the_audit_reports_a_disguised_suggestion_forced_through(tmp_path, loopback, monkeypatch, disguise):
    loopback.default = copying_judge(DISGUISES[disguise](CLAUSE))
    monkeypatch.setattr(suggestions, "why_withheld", lambda stage, text: None)  # the check taken away
    out = tmp_path / "run"
    assert batch(scene_file(tmp_path, loopback), out, "A") == 0
    report = audit_run(out)
    assert [(leak.source, leak.owner, leak.purpose) for leak in report.leaks if leak.source == "events.jsonl"] == \
        [("events.jsonl", "coordinator", "suggested world event")]


@pytest.mark.parametrize(("role", "copied", "whose"), [
    ("A", "Bob is defensive, then genuinely apologetic.", "the coordinator notes"),
    ("B", "you want resolution but also accountability", "Alice's perspective"),
])
def test_a_suggestion_carrying_one_short_clause_of_private_material_is_withheld(tmp_path, loopback, capsys, role,
                                                                                 copied, whose):
    """A clause of 5 to 7 words of the notes or a perspective, copied whole, is under a shingle but is
    private all the same: a judge that copies one is withheld."""
    loopback.default = copying_judge(copied)
    out = tmp_path / "run"
    assert batch(scene_file(tmp_path, loopback), out, role) == 0
    events = records(out)
    assert [e.get("withheld") for e in events if e["type"] == "decision"] == [f"it carries words of {whose}"]
    assert not [e for e in events if e["type"] == "event"]
    assert audit_run(out).clean


def test_a_stock_phrase_an_actor_once_thought_does_not_withhold_a_suggestion(tmp_path, loopback):
    """No judge reads the actors' thinking: a world event that says "silence" is not withheld because
    an actor once thought "Silence.", while a thought of a clause's length copied into it still is."""
    from promptdesk.core.record.audit_coordinator import vet
    from promptdesk.core.record.private import read_private
    from promptdesk.core.record.recorder import read_events

    loopback.default = copying_judge("The radiator clanks twice.")
    out = tmp_path / "run"
    assert batch(scene_file(tmp_path, loopback), out, "B") == 0
    events = read_events(out)
    thoughts = [i for i, e in enumerate(events) if e.type == "think"]
    long = "the ledger under the stairs shows forty missing crates"
    events[thoughts[0]] = events[thoughts[0]].model_copy(update={"text": "Silence."})
    events[thoughts[1]] = events[thoughts[1]].model_copy(update={"text": f"Not again. {long}, and I signed it."})
    record = read_private(out)
    assert vet(record, events, "A heavy silence falls over the room; not again, someone mutters.") == []
    found = vet(record, events, f"A clerk reads aloud: {long.upper()}!")
    assert [(f.owner, f.kind) for f in found] == [(events[thoughts[1]].from_, "thinking")]


def splitting_judge(first: str, second: str):
    """A loopback judge that cuts private words in two: `first` suggested at beat 2, `second` at beat 4
    (each part under a shingle, neither a whole clause)."""
    def answer(recorded):
        body = json.dumps(recorded.body, ensure_ascii=False)
        if "the scene has ended" in body:
            return Reply(text='{"goal_achieved": null, "reason": "cannot tell"}')
        for beat, text in (("Beat 2 ", first), ("Beat 4 ", second)):
            if beat in body:
                return Reply(text=json.dumps({"decision": "suggest_event", "text": text}))
        return Reply(text='{"decision": "continue"}')
    return answer


SPLIT_PARTS = [("A memo slides under the door: Success: Bob explicitly apologises,",
                "A second memo: Alice explicitly accepts, concrete next steps", "the coordinator notes", "A"),
               ("A note on the wall reads: you knew a month before", "Under it: the deadline and said nothing",
                "Bob's perspective", "B"),
               ("A postcard arrives: the deadline and said nothing.", "Its stamp reads: you knew a month before",
                "Bob's perspective", "B")]
"""Two parts each under a shingle and no whole clause, each framed: in order, and the end told first."""


@pytest.mark.parametrize(("first", "second", "whose", "role"), SPLIT_PARTS)
def test_private_words_cut_across_two_suggestions_are_withheld_when_they_meet(tmp_path, loopback, capsys, first,
                                                                              second, whose, role):
    """Each part alone is under a shingle and no whole clause; read on from the part already delivered,
    the second makes the private text whole again, and is withheld."""
    loopback.default = splitting_judge(first, second)
    out = tmp_path / "run"
    assert batch(scene_file(tmp_path, loopback), out, role) == 0
    events = records(out)
    assert [e["text"] for e in events if e["type"] == "event"] == [first], "the first part alone is clean"
    decisions = [e for e in events if e["type"] == "decision" and e.get("decision") == "suggest_event"]
    assert [e.get("withheld") for e in decisions] == [None, f"it carries words of {whose}"]
    assert second not in actor_requests(out), "never delivered"
    assert audit_run(out).clean


@pytest.mark.parametrize(("first", "second", "whose", "role"), SPLIT_PARTS)
def test_the_audit_reports_private_words_cut_across_two_suggestions_forced_through(tmp_path, loopback, monkeypatch,
                                                                                  first, second, whose, role):
    loopback.default = splitting_judge(first, second)
    monkeypatch.setattr(suggestions, "why_withheld", lambda stage, text: None)  # the check taken away
    out = tmp_path / "run"
    assert batch(scene_file(tmp_path, loopback), out, role) == 0
    events = records(out)
    delivered = [n for n, e in enumerate(events, 1) if e["type"] == "event"]
    assert [events[n - 1]["text"] for n in delivered] == [first, second]
    report = audit_run(out)
    owner = "coordinator" if role == "A" else "bob"
    assert [(leak.line, leak.owner) for leak in report.leaks if leak.source == "events.jsonl"] == \
        [(delivered[1], owner)], "the second part, which made the private text whole, is the leak"
    assert main(["audit", str(out)]) == 1


NOTE_TO_BOB = "Your sister called: the contract was signed on Friday after all."


def note_copying_judge(recorded):
    """A role A judge (it reads the operator's notes) that, once the note to Bob is among them, suggests
    a world event carrying it to everyone."""
    body = json.dumps(recorded.body, ensure_ascii=False)
    if "the scene has ended" in body:
        return Reply(text='{"goal_achieved": null, "reason": "cannot tell"}')
    if NOTE_TO_BOB in body:
        return Reply(text=json.dumps({"decision": "suggest_event", "text": f"A voicemail plays aloud: {NOTE_TO_BOB}"}))
    return Reply(text='{"decision": "continue"}')

def take_with_a_note_to_bob(tmp_path, loopback, note: str):
    """A role A run on `loopback`, then a take from beat 2 with `note` to Bob alone; (the take's folder, its
    events), once every world event the judge suggested is seen withheld as carrying the note."""
    parent = tmp_path / "run"
    assert batch(scene_file(tmp_path, loopback), parent, "A") == 0
    take = tmp_path / "take"
    assert main(["branch", str(parent), "--at-beat", "2", "--note", note, "--to", "bob", "--out", str(take),
                 "--quiet"]) == 0
    events = records(take)
    decisions = [e for e in events if e["type"] == "decision" and e.get("decision") == "suggest_event"]
    assert decisions and {e.get("withheld") for e in decisions} == {"it carries words of the operator's note to Bob"}
    return take, events


def test_a_suggestion_carrying_the_operators_note_to_one_actor_is_withheld(tmp_path, loopback, capsys):
    """Issue 35: what a judge writes is checked against everything it was given that the actors were not.
    A role A judge reads every note the operator gave; a note to Bob alone must not reach Alice and
    Charlie through its suggested world event, and the audit names one planted in the record."""
    loopback.default = note_copying_judge
    take, events = take_with_a_note_to_bob(tmp_path, loopback, NOTE_TO_BOB)
    assert not [e for e in events if e["type"] == "event" and "voicemail" in e["text"]]
    assert "signed on Friday" not in actor_requests(take, ("alice", "charlie"))
    assert audit_run(take).clean
    decisions = [e for e in events if e["type"] == "decision" and e.get("decision") == "suggest_event"]
    at = events.index(decisions[0]) + 1
    planted = dict(decisions[0], type="event", suggested_by="coordinator")
    for key in ("decision", "withheld"):
        planted.pop(key)
    (take / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in [*events[:at], planted, *events[at:]]))
    leaks = [(leak.line, leak.owner, leak.kind) for leak in audit_run(take).leaks if leak.source == "events.jsonl"]
    assert leaks == [(at + 1, "bob", "note")]


SHORT_NOTES = ("Keep the pace brisk and let the silences land. Alice is pregnant. Nobody in the room knows it "
               "yet, and the scene must not reveal it before its end. Setting: office conference room, afternoon.")


@pytest.mark.parametrize(("copied", "withheld"), [
    ("A nurse leans in and calls out: Alice is pregnant.", True),      # a short clause with a word no actor saw
    ("The phone rings: ALICE IS PREGNANT!", True),                     # in another case and punctuation
    ("The blinds rattle in the office conference room, afternoon light fading.", False),  # its words all public
    ("Somewhere a printer jams and starts grinding.", False),           # nothing of the notes
])
def test_a_short_clause_of_the_notes_holding_an_unseen_word_is_withheld(tmp_path, loopback, capsys, copied, withheld):
    """A clause of fewer than 5 words of a longer text is too short for the audit to call a leak (stock
    phrases are that short), so the gate reads it more strictly, failing closed: one found whole in a
    suggestion is withheld when a word of it is one no actor has been shown, and only then."""
    loopback.default = copying_judge(copied)
    out = tmp_path / "run"
    assert batch(scene_file(tmp_path, loopback, coordinator_notes=SHORT_NOTES), out, "A") == 0
    events = records(out)
    decision = next(e for e in events if e["type"] == "decision" and e.get("decision") == "suggest_event")
    delivered = [e for e in events if e["type"] == "event"]
    if withheld:
        assert decision["withheld"] == "it carries words of the coordinator notes"
        assert not delivered and "pregnant" not in actor_requests(out).lower()
    else:
        assert "withheld" not in decision and [e["text"] for e in delivered] == [f"A memo slides under the door: {copied}"]
    assert audit_run(out).clean


def test_a_short_clause_of_a_perspective_is_withheld_too(tmp_path, loopback, capsys):
    perspectives = dict(SCENE["perspectives"], alice=SCENE["perspectives"]["alice"] + "\nYou owe Charlie money. "
                        "Nobody else at work knows about it, and you would rather keep it that way.")
    loopback.default = copying_judge("A sticky note on the screen reads: You owe Charlie money.")
    out = tmp_path / "run"
    assert batch(scene_file(tmp_path, loopback, perspectives=perspectives), out, "B") == 0
    events = records(out)
    assert any(e.get("withheld") == "it carries words of Alice's perspective" for e in events if e["type"] == "decision")
    assert not [e for e in events if e["type"] == "event"]


CLAUSE_NOTES = ("Alice oculta algo. El casero es su primo y nadie lo sabe todavía; Bob cede al final. "
               "美咲は何か隠している。林伟会先否认。준은 곧 떠난다. Key point: the boss is leaving.")


@pytest.mark.parametrize(("planted_text", "written"), [
    ("A memo: Bob cede al final.", "Bob cede al final"),
    ("Un cartel dice: Alice oculta algo", "Alice oculta algo"),
    ("A note on the fridge: The Boss is leaving", "The Boss is leaving"),
    ("纸条上写着：林伟会先否认", "林伟会先否认"),
    ("쪽지: 준은 곧 떠난다", "준은 곧 떠난다"),
])
def test_the_audit_reports_a_forged_suggestion_carrying_a_short_clause_of_the_notes(tmp_path, loopback, capsys,
                                                                                  planted_text, written):
    """A clause of the notes of 3 or 4 words (2 in Korean; 4 to 7 characters in Chinese or Japanese) is
    what the gate withholds; the audit of a record that carries one in a coordinator's world event (a
    record forged after the run, or written before the gate) names it, quoted as written, as the gate
    would have: a text the gate withholds is never audited clean."""
    loopback.default = copying_judge("The radiator clanks twice.")
    out = tmp_path / "run"
    assert batch(scene_file(tmp_path, loopback, coordinator_notes=CLAUSE_NOTES), out, "B") == 0
    assert audit_run(out).clean, "the clean suggestion stays clean under these notes"
    log = out / "events.jsonl"
    lines = log.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "event")
    events = [json.loads(line) for line in lines[:at]]
    assert vet(json.loads((out / "private.json").read_text()), [parse_event(e) for e in events], planted_text), "the gate withholds it"
    lines[at] = json.dumps({**json.loads(lines[at]), "text": planted_text}, ensure_ascii=False)
    log.write_text("\n".join(lines) + "\n")
    report = audit_run(out)
    assert [(leak.line, leak.owner, leak.kind) for leak in report.leaks if leak.source == "events.jsonl"] == \
        [(at + 1, "coordinator", "coordinator_notes")]
    capsys.readouterr()
    assert main(["audit", str(out)]) == 1
    assert f"carries the coordinator notes: \"…{written}…\"" in capsys.readouterr().out


@pytest.fixture(scope="module")
def kitchen_record(tmp_path_factory):
    """The start record and events of an offline run of The Apology (role A), to vet suggestions against."""
    import asyncio

    from helpers import example_scene, run_session
    root = tmp_path_factory.mktemp("stock")
    run = asyncio.run(run_session(root, example_scene("the-apology", limits={"max_beats": 3}), isolation="b",
                                  coordinator="A"))
    events = [parse_event(json.loads(line)) for line in (run.dir / "events.jsonl").read_text().splitlines()]
    return json.loads((run.dir / "private.json").read_text()), events


@pytest.mark.parametrize("event", ["A plate slides off the counter and shatters", "A phone starts ringing and won't stop",
                                   "The phone on the conference table rings", "The lights flicker and go out for a moment"])
def test_a_stock_event_a_journal_quotes_from_an_earlier_run_is_no_leak_of_it(kitchen_record, event):
    """A journal records the world events of the runs it was kept in ("And then, of all things: A plate
    slides off the counter and shatters."); the offline judge suggests from a fixed list, so in a later
    run it suggests the same words. They are the product's own words, not the actor's: the suggestion is
    delivered (before, every such suggestion was withheld as carrying that actor's journal, in 8 of 18
    runs of a sweep with journals). The journal's own words still are its own."""
    record, events = kitchen_record
    record = json.loads(json.dumps(record))
    own = "I copied the harbourmaster's master key in the back of the chandlery and told nobody at all."
    record["cast"]["bob"]["journal"] = (f"## Last week\n\nAnd then, of all things: {event}. I didn't expect that "
                                        f"to change the air in the room. {own}\n")
    assert vet(record, events, event) == []
    assert vet(record, events, f"A note is found: {own}"), "the journal's own words are still withheld"


@pytest.mark.parametrize(("suggestion", "withheld"), [
    ("A clerk mutters a number under his breath: 4471.", True),
    ("The safe's dial clicks round to 4-4-7-1", True),         # its digits joined by hyphens, read joined
    ("Someone scrawls 90210 on the whiteboard", True),       # a perspective's number
    ("The lift stops at floor 12", False),                   # two digits: too common to be a secret
    ("A courier asks for flat 308", False),                  # shown: the setting names it
    ("The printer jams on page 512", False),                 # no private text holds it
])
def test_a_number_of_the_notes_or_a_perspective_alone_is_withheld(kitchen_record, suggestion, withheld):
    """A PIN or a safe's combination is a secret on its own, with no word of letters around it: a
    suggestion that carries one from the notes or a perspective, unshown, is withheld, as a code word is."""
    record, events = kitchen_record
    record = json.loads(json.dumps(record))
    record["coordinator_notes"] = "Keep it tense. The vault code is 4471; nobody may say it. Roughly 12 beats."
    record["cast"]["alice"]["perspective"] += "\nYour old postcode was 90210 and you never say where you grew up."
    record["scene"]["setting"] = "Flat 308, a cramped office above a bakery"
    found = vet(record, events, suggestion)
    assert bool(found) == withheld, found
