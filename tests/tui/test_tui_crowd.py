"""A crowd on the console: twenty actors on a 140x45 stage show as many thinking panes as fit, the
operator picks which (the `v` key's checklist, or the palette), hidden panes keep their thoughts, and
the replay does the same."""

from __future__ import annotations

from pathlib import Path

from tui_support import run_options, wait_for

from benchmarks.crowd import town_meeting_yaml, write_crowd
from promptdesk.core.casting.build import build_session
from promptdesk.core.casting.scene_file import load_scene
from promptdesk.core.clock import VirtualClock
from promptdesk.tui.app import create_app
from promptdesk.tui.widgets.pane_picker import PanePicker, pane_capacity, shown_panes, with_pane
from promptdesk.tui.widgets.stage_view import StageView
from promptdesk.tui.widgets.thinking_pane import ThinkingPane

CROWD = 20
SIZE = (140, 45)


def town_meeting(workspace: Path) -> Path:
    """Twenty residents (character files in the workspace) and the scene they play."""
    scene = workspace / "scenes" / "town-meeting.yaml"
    scene.write_text(town_meeting_yaml(write_crowd(workspace / "characters", CROWD), max_beats=3))
    return scene


def crowd_session(workspace: Path, out: str):
    return build_session(load_scene(town_meeting(workspace)),
                         run_options(workspace, isolation="b", coordinator="C", clock=VirtualClock(), out=Path(out)))


def test_capacity_and_choice_rules():
    assert pane_capacity(140, 16) == 10 and pane_capacity(100, 12) == 8
    assert pane_capacity(60, 8) == 4, "8 panes in 60 columns could not each say PRIVATE"
    cast = [f"p{i}" for i in range(12)]
    assert shown_panes(cast, None, 10) == cast[:10]
    assert shown_panes(cast, ["p11", "p3", "nobody"], 10) == ["p3", "p11"]
    assert with_pane(cast[:10], "p11", 10) == [*cast[1:10], "p11"]


async def test_a_crowd_shows_the_panes_that_fit_and_the_operator_picks_them(workspace):
    session = crowd_session(workspace, "runs/crowd-live")
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: session.state.status == "closed", "the close")
        stage = app.screen
        stage.flush()
        await pilot.pause()
        view = stage.query_one(StageView)
        shown = [pane.slug for pane in view.query(ThinkingPane) if pane.display]
        assert 8 <= len(shown) < CROWD and shown == view.shown == [f"person-{n:02d}" for n in range(1, len(shown) + 1)]
        hidden = view.pane("person-20")
        assert not hidden.display and hidden.thoughts, "a hidden pane keeps its actor's thoughts"
        titles = {command.title for command in app.get_system_commands(stage)}
        assert {"Show thinking: Person 20", "Hide thinking: Person 1"} <= titles
        next(c for c in app.get_system_commands(stage) if c.title == "Show thinking: Person 20").callback()
        await pilot.pause()
        assert "person-20" in view.shown and "person-01" not in view.shown and len(view.shown) == len(shown)
        assert view.pane("person-20").display and not view.pane("person-01").display

        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, PanePicker)
        picker = app.screen
        from textual.widgets import SelectionList
        choices = picker.query_one(SelectionList)
        choices.deselect_all()
        choices.select("person-07")
        choices.select("person-13")
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is stage and view.shown == ["person-07", "person-13"]
        assert [p.slug for p in view.query(ThinkingPane) if p.display] == ["person-07", "person-13"]


async def test_the_replay_of_a_crowd_picks_its_panes_too(workspace):
    session = crowd_session(workspace, "runs/crowd-replay")
    await session.run()
    app = create_app(replay=Path("runs/crowd-replay"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = app.screen.query_one(StageView)
        assert len(view.shown) < CROWD
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, PanePicker)
        await pilot.press("escape")
        await pilot.pause()
        next(c for c in app.get_system_commands(app.screen) if c.title == "Hide thinking: Person 2").callback()
        await pilot.pause()
        assert "person-02" not in view.shown and not view.pane("person-02").display


def test_a_twenty_actor_stage_at_140x45(workspace, snap_compare):
    """The town meeting (twenty residents, three beats) closed on a 140x45 stage: the transcript with
    the residents' lines in cycling speaker colours, the Session panel (scrollable: Turns lists all
    twenty), and under a "Thinking: 10 of 20 shown · v picks which" rule, ten PRIVATE thinking panes
    (Person 1 to Person 10) in two rows of five."""
    session = crowd_session(workspace, "runs/town-meeting")

    async def closed(pilot) -> None:
        await wait_for(pilot, lambda: session.state.status == "closed", "the close")
        pilot.app.screen.flush()
        pilot.app.screen.refresh_state()
        await pilot.pause()

    assert snap_compare(create_app(session=session), terminal_size=SIZE, run_before=closed)


def test_every_layout_of_the_panes_that_fit_keeps_each_pane_wide_enough_to_say_private():
    from promptdesk.tui.widgets.pane_picker import MARKED_HEIGHT, MARKED_WIDTH
    from promptdesk.tui.widgets.stage_view import pane_grid

    for width in range(MARKED_WIDTH, 201, 7):
        for height in range(MARKED_HEIGHT, 41, 3):
            for count in range(1, pane_capacity(width, height) + 1):
                rows, columns = pane_grid(count, width, height)
                assert rows * columns >= count and width // columns >= MARKED_WIDTH, (width, height, count)


async def test_every_pane_shown_in_a_narrow_terminal_still_says_private_whole():
    """At 60x20 and 80x24 a cast of 8 or 12 shows only as many panes as can each say PRIVATE whole
    (and their actor's name, cut but never to nothing); `v` picks the others."""
    from promptdesk.tui.scripted import ScriptedSession
    from tui_support import screen_text

    for size in ((60, 20), (80, 24), (100, 30)):
        for count in (8, 12):
            cast = {f"p{i:02d}": f"Maximilian Person {i:02d}" for i in range(count)}
            session = ScriptedSession(cast)
            app = create_app(session=session)
            async with app.run_test(size=size) as pilot:
                await wait_for(pilot, lambda: session.state.status == "running", "the start")
                await pilot.pause()
                view = app.screen.query_one(StageView)
                shown = [pane for pane in view.query(ThinkingPane) if pane.display]
                text = screen_text(app)
                assert shown and text.count("PRIVATE") == len(shown), (size, count, text)
                assert "PRI…" not in text and "P…" not in text
                for pane in shown:
                    assert len(str(pane.border_title).rstrip("…")) >= 3, (size, count, pane.border_title)
                if len(shown) < count:
                    assert f"Thinking: {len(shown)} of {count} shown · v picks which" in text


async def test_a_narrow_pane_says_no_turn_yet_until_its_actor_has_thought():
    """Panes titled by the name alone (a long name in the cast) still say, below, that their actor has
    not thought yet, as the wide ones do; once it has, they say PRIVATE only."""
    from promptdesk.core.record.events import ThinkEvent
    from promptdesk.tui.scripted import ScriptedSession

    cast = {f"p{i:02d}": f"Maximilian Bartholomew Person the {i:02d}th" for i in range(10)}
    session = ScriptedSession(cast)
    app = create_app(session=session)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_for(pilot, lambda: session.state.status == "running", "the start")
        await pilot.pause()
        panes = [pane for pane in app.screen.query_one(StageView).query(ThinkingPane) if pane.display]
        assert panes and not panes[0].wide
        assert all(str(pane.border_subtitle) == "PRIVATE · no turn yet" for pane in panes)
        session.publish([ThinkEvent(t=1.0, **{"from": "p00"}, text="Hm.", beat=0)])
        app.screen.flush()
        await pilot.pause()
        assert str(panes[0].border_subtitle) == "PRIVATE" and str(panes[1].border_subtitle) == "PRIVATE · no turn yet"


FOCUS_GROUP = {"nadia-kowalski": "Nadia Kowalski", "nadia-kowalska": "Nadia Kowalska", "patricia-ng": "Patricia Ng",
               "patrick-ng": "Patrick Ng", "tom-o-neil": "Tom O'Neil", "tom-o-neill": "Tom O'Neill",
               "maximilian-stern-1": "Maximilian Stern the Elder", "maximilian-stern-2": "Maximilian Stern the Younger"}


def test_a_name_cut_short_never_reads_as_another_cast_members():
    from promptdesk.tui.lines import fit_name

    names = list(FOCUS_GROUP.values())
    for room in (6, 7, 9, 11, 13, 18):
        cut = [fit_name(name, room, names) for name in names]
        assert len(set(cut)) == len(cut), (room, cut)
        assert all(len(shown) <= room or shown in names for shown in cut), (room, cut)
    assert fit_name("Nadia Kowalski", 9, names) == "Nadi…lski"
    assert fit_name("Nadia Kowalski", 9, ["Nadia Kowalski", "Ann"]) == "Nadia Ko…", "no clash: cut at the end as before"
    assert fit_name("Ann Lee", 9, names) == "Ann Lee"


async def test_a_focus_group_of_similar_names_has_panes_and_session_rows_told_apart_at_80x24():
    """Nadia Kowalski and Nadia Kowalska, Patricia Ng and Patrick Ng: their panes at 80x24 were both titled
    `Nadia K…` and `Patric…`, and two Maximilian Sterns read alike in the Session panel's Turns; every
    title and row now differs (the cut moves to where the names differ)."""
    from promptdesk.tui.scripted import ScriptedSession
    from promptdesk.tui.widgets.state_panel import render_state

    session = ScriptedSession(FOCUS_GROUP)
    app = create_app(session=session)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: session.state.status == "running", "the start")
        await pilot.pause()
        view = app.screen.query_one(StageView)
        titles = [str(pane.border_title) for pane in view.query(ThinkingPane) if pane.display]
        assert len(titles) >= 4 and any(title.endswith("…") or "…" in title for title in titles), titles
        assert len(set(titles)) == len(titles), titles
        rows = [line.strip() for line in render_state(session.state, 34).plain.splitlines()
                if line.strip().startswith("Max")]
        assert len(rows) == 2 and rows[0] != rows[1], rows


def test_the_confirm_step_wraps_a_crowds_cast_between_names_only(workspace):
    """Fifty residents on the wizard's confirm step at 80 and 140 columns: each name stands whole on one
    row (it read `… Sir Robert` then `Hale, Rob Hale, …` below, and `Grace` / `Odell`, where a Grace and
    a Grace Odell are both cast)."""
    from rich.console import Console

    from promptdesk.tui.summary import summary

    names = [*FOCUS_GROUP.values(), "Sir Robert Hale", "Rob Hale", "Grace Odell", "Grace", "Hart Lee", "Lee",
             *(f"Resident Number {n}" for n in range(36))]
    slugs = [f"r{n:02d}" for n in range(len(names))]
    scene = workspace / "scenes" / "crowd.yaml"
    scene.write_text("name: crowd\nformat: scene\nturns: parallel\nsetting: The hall\nprompt: A meeting.\n"
                     f"characters: [{', '.join(slugs)}]\nprovider: {{name: offline}}\n")
    for width in (80, 140):
        console = Console(width=width, record=True, color_system=None)
        console.print(summary(load_scene(scene), run_options(workspace), names=dict(zip(slugs, names))))
        rows = console.export_text().splitlines()
        first = next(i for i, row in enumerate(rows) if row.startswith("Cast"))
        last = next(i for i, row in enumerate(rows) if row.startswith("Isolation"))
        cast_rows = [row[12:].strip() for row in rows[first:last]]
        shown = [name.strip() for row in cast_rows for name in row.split(",") if name.strip()]
        assert shown == names, (width, cast_rows)
