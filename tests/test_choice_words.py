"""The trade-off table says what each choice does (`core/casting/choices.py`, which the wizard and a
refused headless run show): isolation (a) sends the briefing and a window of lines, not the whole
context; role A's judge sees notes.md, the coordinator notes and the director's notes."""

from __future__ import annotations

import json

from promptdesk.core.casting.choices import COORDINATOR, ISOLATION, WINDOW
from promptdesk.core.engine.actors import RECENT_HEADING
from promptdesk.core.engine.scene_parts import Limits
from helpers import example_scene


def flat(text: str) -> str:
    return " ".join(text.split())


async def test_isolation_a_is_said_to_send_the_briefing_and_the_last_window_lines(run_scene):
    option = ISOLATION.option("a")
    assert WINDOW == Limits().window
    assert f"the last {WINDOW} lines" in option.here and "whole context" not in option.tradeoff
    run = await run_scene(example_scene("the-apology", limits={"max_beats": 14}), isolation="a", coordinator="C",
                          seed=2)
    turns = [p["request"] for p in run.prompts() if p["purpose"] == "turn" and p["to"] == "alice"]
    windowed = [r for r in turns if RECENT_HEADING.format(n=WINDOW).split("(")[0] in r["messages"][-1]["content"]]
    assert windowed, "the scene ran long enough for the window to slide"
    for request in turns:
        assert len(request["messages"]) == 1, "one fresh message: no thread"
        witnessed = request["messages"][0]["content"].split("\n\nNOW:\n")[0].splitlines()[1:]
        assert len(witnessed) <= WINDOW


async def test_role_a_is_said_to_see_what_its_judge_is_sent(run_scene):
    here = flat(COORDINATOR.option("A").here)
    for part in ("notes.md", "coordinator notes", "director's notes"):
        assert part in here
    scene = example_scene("the-apology", limits={"max_beats": 3})
    run = await run_scene(scene, isolation="b", coordinator="A",
                          before_run=lambda s: s.add_note("DIRECTOR-NOTE-7 keep it short"))
    system = next(p["request"]["system"] for p in run.prompts() if p["to"] == "judge" and p.get("beat") == 1)
    notes_md = (run.dir / "notes.md").read_text().splitlines()[0]
    assert notes_md in system, "notes.md"
    assert flat(scene.coordinator_notes)[:60] in flat(system), "the coordinator notes"
    assert "DIRECTOR-NOTE-7" in json.dumps(system), "the director's notes"


def test_the_choice_line_of_notes_md_and_the_reports_names_the_coordinator_notes_role_a_sees():
    """`notes.md`'s first lines and every report's "What was run" say what role A's judge is given, as
    the trade-off table does: the coordinator notes too."""
    from promptdesk.core.casting.notes import ROLE_LINES
    for part in ("notes.md", "coordinator notes", "director's notes"):
        assert part in ROLE_LINES["A"]
