"""Issue 10 §4: the clean transcripts hold what the audience sees, and nothing of the engine's
bookkeeping: speech and world events (director's notes reach the actors but, as spec 004 says,
stay out of the transcripts)."""

from __future__ import annotations

from helpers import example_scene
from loopback import loopback  # noqa: F401  (fixture)
from test_scene_faults import judging, keys, remote_cast  # noqa: F401  (fixture)


async def test_decisions_and_unsent_suggestions_stay_out_of_the_transcripts(run_scene, loopback):
    answer = judging(lambda body: '{"decision": "close", "reason": "natural", "text": "DECIDED-CLOSE"}'
                     if "Beat 4 " in body else '{"decision": "suggest_event", "text": "UNSENT: a fire alarm"}')

    def note(session):
        session.subscribe(lambda e: session.add_note("Speak up, Bob", to="bob") if e.type == "beat" and e.beat == 1 else None)

    loopback.default = answer
    judge = {"name": "openai", "model": "gpt-4o-mini", "base_url": loopback.url("/v1"), "max_retries": 0}
    scene = example_scene("the-apology", judge=judge, cast=remote_cast(loopback, "alice", "bob", "charlie"),
                          events=[{"at_beat": 2, "text": "The phone rings"}])
    run = await run_scene(scene, isolation="a", coordinator="B", before_run=note)
    assert run.result.close_reason == "natural"
    assert any(r["type"] == "decision" and "UNSENT" in r["text"] for r in run.records())
    md, txt = (run.dir / "transcript.md").read_text(), (run.dir / "transcript.txt").read_text()
    for transcript in (md, txt):
        assert "DECISION" not in transcript and "UNSENT" not in transcript and "DECIDED-CLOSE" not in transcript
        assert "The phone rings" in transcript and "Go on, I am listening." in transcript
    assert "Speak up, Bob" not in txt and "Speak up, Bob" not in md, "moderator notes are hidden (spec 004)"
    assert any(r["type"] == "note" and r["text"] == "Speak up, Bob" for r in run.records())


BIDI = "\u202e\u2067\u202b\u200f"


async def test_direction_controls_a_model_writes_stay_out_of_every_transcript(run_scene, loopback):
    """A right-to-left override left open (U+202E) shows the rest of its line reversed in an editor or a
    Markdown view: `transcript.md` kept it (the routed line and `transcript.txt` did not); right-to-left
    words themselves stay as written."""
    from loopback import Reply
    from test_scene_faults import turn

    loopback.default = lambda recorded: Reply(text=turn('[TONE: warm] "مرحبا يا \u202eصديقي and \u2067שלום עולם"',
                                                         thinking="أفكر \u202bفي الأمر"))
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"), limits={"max_beats": 3})
    run = await run_scene(scene, isolation="a", coordinator="C")
    for name in ("transcript.md", "transcript.txt", "notes.md"):
        text = (run.dir / name).read_text()
        assert not set(text) & set(BIDI), name
    md = (run.dir / "transcript.md").read_text()
    assert "مرحبا يا صديقي and שלום עולם" in md
