"""The audit's recall: a leak of any kind of private material (profile, journal, perspective,
coordinator notes, thinking), long or short (a phrase under a shingle, a single code word), planted
into a real run's `prompts.jsonl` as the engine would have written it, is reported, naming whose
material, what kind and to whom. The run is a real scene through the real Anthropic SDK against the
loopback server, whose scripted replies give the actors short and long thoughts."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from promptdesk.core.casting.build import RunOptions, build_session
from promptdesk.core.cli.main import main
from promptdesk.core.clock import VirtualClock
from promptdesk.core.record.audit import audit_run
from promptdesk.core.record.prompt_log import read_prompts
from helpers import example_scene
from loopback import CANARY, LoopbackServer, Recorded, Reply
from test_audit import tamper
from test_scene_faults import actor_of, remote_cast, turn

PROFILES = {
    "alice": "# Alice\n\nA harbour pilot of thirty years who reads the tides by the colour of the gulls and "
             "never trusts a chart printed after the great storm.\n",
    "bob": "# Bob\n\nNight porter; collects brass keys.\n",
    "charlie": "# Charlie\n\nA quiet archivist who keeps the lighthouse logs and answers every question with "
               "another question about dates.\n",
}
JOURNALS = {
    "alice": "Buried the ring at Pell Quay.",
    "bob": "## Last spring\n\nI copied the harbourmaster's master key in the back of the chandlery and told "
           "nobody, not even my sister, because the copy still opens the customs shed.\n",
}
PERSPECTIVES = {
    "alice": "You hid the key.",
    "bob": "You owe the harbourmaster eleven hundred crowns and he has started asking where the money went.",
    "charlie": "You want the meeting over before the tide turns.",
}
NOTES = "The customs shed must stay out of the talk until beat three. Safe phrase for the operator: ZEPHYR-7."
SAID = "We start at nine sharp."
THOUGHTS = {
    "bob": ["Xylophagous.", SAID],
    "charlie": ["The ledger under the stairs shows forty missing crates from the March shipment, and I signed it."],
    "alice": ["I will keep my voice level and let them talk first."],
}


def cast_folder(root: Path) -> Path:
    folder = root / "characters"
    for slug, profile in PROFILES.items():
        (folder / slug).mkdir(parents=True)
        (folder / slug / "profile.md").write_text(profile)
        if slug in JOURNALS:
            (folder / slug / "journal.md").write_text(JOURNALS[slug])
    return folder


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, monkeypatch_module) -> Path:
    """One isolation (b) scene whose actors answer from the loopback server: Bob thinks one odd word,
    then repeats what Alice says aloud; Charlie thinks at length."""
    root = tmp_path_factory.mktemp("recall")
    said: Counter = Counter()

    def reply(request: Recorded) -> Reply:
        who = actor_of(request)
        thoughts = THOUGHTS.get(who, ["..."])
        thought = thoughts[min(said[who], len(thoughts) - 1)]
        said[who] += 1
        speech = f'[TONE: calm] "{SAID}"' if who == "alice" else '[TONE: calm] "Let us go through the timeline again."'
        return Reply(text=turn(speech, thought))

    with LoopbackServer(default=reply) as server:
        scene = example_scene("the-apology", cast=remote_cast(server, "alice", "bob", "charlie"),
                              perspectives=PERSPECTIVES, coordinator_notes=NOTES, events=[], limits={"max_beats": 4})
        options = RunOptions(isolation="b", coordinator="C", characters_dirs=[cast_folder(root)], cwd=root,
                             out=root / "run", clock=VirtualClock(), write_character_journals=False, seed=1)
        asyncio.run(build_session(scene, options).run())
    return root / "run"


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ANTHROPIC_API_KEY", CANARY)
        yield patch


@pytest.fixture
def run(recorded, tmp_path) -> Path:
    """A fresh copy of the recorded run to plant a leak in."""
    return Path(shutil.copytree(recorded, tmp_path / "run"))


def first_turn(run_dir: Path, recipient: str, purpose: str = "turn") -> int:
    return min(r.beat for r in read_prompts(run_dir) if r.to == recipient and r.purpose == purpose and r.beat)


def test_the_recorded_run_is_clean_and_holds_every_kind_of_private_text(recorded):
    report = audit_run(recorded)
    assert report.clean and report.requests >= 12, report.summary()
    private = (recorded / "private.json").read_text()
    assert "Night porter" in private and "Buried the ring" in private and "ZEPHYR-7" in private
    thinking = (recorded / "events.jsonl").read_text()
    assert '"text": "Xylophagous."' in thinking and "forty missing crates" in thinking


PLANTS = [
    # (planted text, recipient, owner, kind)
    ("a harbour pilot of thirty years who reads the tides by the colour", "charlie", "alice", "profile"),
    (PROFILES["bob"].upper(), "charlie", "bob", "profile"),
    ("because the copy still opens the customs shed", "alice", "bob", "journal"),
    ("buried the ring at pell quay", "bob", "alice", "journal"),
    ("He has started asking where the money went, you owe the harbourmaster eleven hundred crowns", "alice", "bob",
     "perspective"),
    ("You hid the key!", "charlie", "alice", "perspective"),
    ("The customs shed must stay out of the talk until beat three.", "bob", "coordinator", "coordinator_notes"),
    ("Psst: zephyr-7", "alice", "coordinator", "coordinator_notes"),
    ("the ledger under the stairs shows forty missing crates from the march shipment", "alice", "charlie", "thinking"),
    ("XYLOPHAGOUS", "charlie", "bob", "thinking"),
]


@pytest.mark.parametrize("text,recipient,owner,kind", PLANTS, ids=[f"{k}-{o}-{len(t.split())}w" for t, _, o, k in PLANTS])
def test_a_planted_leak_of_every_kind_long_or_short_is_named(run, capsys, text, recipient, owner, kind):
    tamper(run, recipient, first_turn(run, recipient), text)
    report = audit_run(run)
    assert {(leak.recipient, leak.owner, leak.kind) for leak in report.leaks} == {(recipient, owner, kind)}
    assert main(["audit", str(run)]) == 1
    out = capsys.readouterr().out
    whose = "the coordinator notes" if owner == "coordinator" else f"{owner}'s {kind}"
    assert f"sent to {recipient} ({recipient.title()}) carries {whose}" in out


def test_a_short_private_text_that_was_also_said_aloud_is_not_a_leak(run):
    """Bob's second thought repeats what Alice said: the words are public, wherever they turn up."""
    tamper(run, "charlie", first_turn(run, "charlie"), "Reminder: " + SAID.upper())
    assert audit_run(run).clean


@pytest.mark.parametrize("role", ["A", "B"])
async def test_the_coordinator_notes_reach_a_judge_only_in_role_a(run_scene, role):
    """Role A's judge is given the notes (its operator context); role B's never is."""
    run = await run_scene(example_scene("the-apology", limits={"max_beats": 4}), isolation="a", coordinator=role)
    notes = (run.dir / "private.json").read_text()
    assert ("Charlie mediates" in json.loads(notes)["operator_context"]) == (role == "A")
    tamper(run.dir, "judge", first_turn(run.dir, "judge", purpose="judge"),
           "Remember: Alice starts confrontational but professional; Bob is defensive.", purpose="judge")
    leaks = {(leak.recipient, leak.owner, leak.kind) for leak in audit_run(run.dir).leaks}
    assert leaks == (set() if role == "A" else {("judge", "coordinator", "coordinator_notes")})


def echo_later(run_dir: Path, who: str, text: str, kind: str) -> int:
    """Rewrite `who`'s last `speak` (or `think`) event of the record as `text`; returns its beat."""
    log = run_dir / "events.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    last = max(i for i, event in enumerate(events) if event["type"] == kind and event.get("from") == who)
    events[last].update({"text": text}, **({"raw": text} if "raw" in events[last] else {}))
    log.write_text("".join(json.dumps(event) + "\n" for event in events))
    return events[last]["beat"]


@pytest.mark.parametrize("kind", ["speak", "think"])
def test_a_leak_the_recipient_then_says_aloud_or_thinks_is_still_named(run, kind):
    """A leaked secret that the recipient reacts to later (says it aloud, or thinks it) was neither
    public nor the recipient's own when the request carried it: its echo does not excuse it."""
    at = first_turn(run, "charlie")
    tamper(run, "charlie", at, PERSPECTIVES["bob"])
    assert echo_later(run, "charlie", PERSPECTIVES["bob"], kind) > at
    leaks = audit_run(run).leaks
    assert {(leak.recipient, leak.owner, leak.kind) for leak in leaks} == {("charlie", "bob", "perspective")}
    assert min(leak.beat for leak in leaks) == at


def test_words_said_aloud_before_the_request_still_excuse_it(run):
    """The other side: what the cast heard before the request was sent is public for it."""
    tamper(run, "charlie", first_turn(run, "charlie") + 2, PERSPECTIVES["bob"])
    echo = run / "events.jsonl"
    events = [json.loads(line) for line in echo.read_text().splitlines()]
    first = next(i for i, event in enumerate(events) if event["type"] == "speak" and event.get("from") == "alice")
    events[first]["text"] = PERSPECTIVES["bob"]
    echo.write_text("".join(json.dumps(event) + "\n" for event in events))
    assert audit_run(run).clean


def test_an_actor_who_guesses_another_s_secret_word_for_word_has_leaked_nothing(run):
    """Alice says Bob's secret aloud, word for word, without any request having carried it to her (a
    guess): no request carried it, and from her line on the words are public for everyone."""
    echo_later(run, "alice", PERSPECTIVES["bob"], "speak")
    assert PERSPECTIVES["bob"] not in "".join(r.text for r in read_prompts(run) if r.to == "alice")
    report = audit_run(run)
    assert report.clean, [leak.describe() for leak in report.leaks]


@pytest.fixture(scope="module")
def parent_run(tmp_path_factory) -> Path:
    """An offline isolation (b) run of The Apology under role A (its judge is shown every note)."""
    from helpers import run_session
    root = tmp_path_factory.mktemp("noted")
    return asyncio.run(run_session(root, example_scene("the-apology", limits={"max_beats": 6}), isolation="b",
                                   coordinator="A")).dir


@pytest.mark.parametrize("note", [
    "Tell them you were offered the Henderson job last week.",
    "Tu hermana está viva.",
    "你妹妹还活着。",
    "동생은 살아있다.",
])
def test_a_directors_note_to_one_actor_is_that_actors_own(parent_run, tmp_path, capsys, note):
    """A director's note given to Bob alone is Bob's: a take that routes it as the engine does audits
    clean (Bob's own requests, the judge that reads every note), and the same words in a request to
    Alice before anyone said them aloud are a leak, named as the operator's note to Bob. The note was
    public text to the audit, so the engine sending it to the wrong actor went unseen."""
    take = tmp_path / "take"
    assert main(["branch", str(parent_run), "--at-beat", "2", "--note", note, "--to", "bob", "--out", str(take),
                 "--quiet"]) == 0
    capsys.readouterr()
    assert audit_run(take).clean
    tamper(take, "alice", 3, f'Charlie [TONE: calm] "{note}"')
    report = audit_run(take)
    assert {(leak.recipient, leak.owner, leak.kind) for leak in report.leaks} == {("alice", "bob", "note")}
    assert main(["audit", str(take)]) == 1
    assert "sent to alice (Alice) carries the operator's note to bob (Bob)" in capsys.readouterr().out
