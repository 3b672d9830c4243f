"""Untrusted text (actors, character files, scene files) is shown literally and never interpreted."""

from __future__ import annotations

from pathlib import Path

from tui_support import screen_text, wait_for, wizard_app

from promptdesk.core.record.events import GenericEvent, SpeakEvent, ThinkEvent
from promptdesk.tui.app import create_app
from promptdesk.tui.scripted import ScriptedSession
from promptdesk.tui.widgets.stage_view import StageView
from promptdesk.tui.widgets.transcript import Transcript

SIZE = (120, 40)
CLICK = "[@click=app.quit]"
CLEAR, OSC52 = "\x1b[2J", "\x1b]52;c;cm0gLXJmIH4=\x07"
EVIL_NAME = "[b]Alice[/b] [@click=app.quit]"


def hostile_events() -> list:
    return [
        GenericEvent(t=0.0, **{"from": "coordinator"}, type="beat", text="Beat 0", beat=0),
        ThinkEvent(t=0.1, **{"from": "alice"}, text=f"{CLICK} think [/bold] {CLEAR}quietly", beat=0),
        SpeakEvent(t=0.2, **{"from": "alice"}, text=f"Press {CLICK}here to leave", tone="[/bold]", beat=0),
        SpeakEvent(t=0.3, **{"from": "bob"}, text=f"[whispers] I knew.{OSC52}", nonverbal="[red]shrugs[/]", beat=0),
        GenericEvent(t=0.4, **{"from": "operator"}, type="event", text=f"[/bold]{CLEAR}Lights out", beat=0),
    ]


async def test_markup_and_escapes_from_actors_are_shown_literally_and_never_act(tmp_path):
    session = ScriptedSession({"alice": EVIL_NAME, "bob": "Bob"}, title=f"[@click=app.quit]Evil{CLEAR}")
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        session.publish(hostile_events())
        stage = app.screen
        await wait_for(pilot, lambda: len(stage.query_one(Transcript).entries) == 4, "the lines")
        await pilot.pause()
        lines = stage.query_one(Transcript).plain_lines()
        assert f'{EVIL_NAME} ([/bold])  "Press {CLICK}here to leave"' in lines
        assert 'Bob *[red]shrugs[/]*  "[whispers] I knew."' in lines
        assert "⚡ EVENT (from you): [/bold]Lights out" in lines
        assert stage.query_one(StageView).pane("alice").thoughts == [f"{CLICK} think [/bold] quietly"]
        text = screen_text(app)
        assert "[whispers] I knew." in text and CLICK in text and "PRIVATE · [b]Alice[/b]" in text
        assert "\x1b" not in text and "\x07" not in text and "52;c" not in text
        row = next(y for y, line in enumerate(text.splitlines()) if "here to leave" in line)
        column = text.splitlines()[row].index(CLICK)
        await pilot.click(offset=(column + 3, row))
        await pilot.pause()
        assert app.is_running and app.return_code is None


async def test_typed_text_with_markup_reaches_the_engine_unchanged(tmp_path):
    session = ScriptedSession({"alice": "Alice", "bob": "Bob"})
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("e", *"[/bold] [@click=app.quit]", "enter")
        assert session.controls[-1] == ("inject_event", ("[/bold] [@click=app.quit]",))
        assert app.is_running


async def test_scene_and_character_files_are_shown_literally_in_the_wizard(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scenes").mkdir()
    (tmp_path / "characters").mkdir()
    (tmp_path / "characters" / "ann.md").write_text("---\nname: \"[b]Ann[/b] [@click=app.quit]\"\n---\nAnn.\n")
    (tmp_path / "characters" / "ben.md").write_text("# Ben\x1b[2J [/bold]\nBen.\n")
    (tmp_path / "scenes" / "evil.yaml").write_text(
        'name: evil\ntitle: "[@click=app.quit] Evil [/bold] \\e[2J"\nprompt: A scene.\ncharacters: [ann, ben]\n')
    app = wizard_app(tmp_path, "evil.yaml")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "[@click=app.quit] Evil [/bold]" in screen_text(app)
        await pilot.press("ctrl+n")
        text = screen_text(app)
        assert "[b]Ann[/b] [@click=app.quit] (ann)" in text
        # A control character in a display name is refused (issue 9 §3); the refusal is shown literally.
        assert "ben: failed to parse" in text and "'Ben\\x1b[2J [/bold]'" in text
        assert "\x1b" not in text and app.is_running


CROWD = {"slash": "[/]", "styled": "[bold]Bo[/] [link=https://x.example]here[/link]",
         **{f"p{i}": f"Person {i}" for i in range(8)}}
"""A cast larger than the panes that fit at 100x30, two names written as markup (one that does not parse)."""


async def test_the_pane_picker_shows_names_written_as_markup_literally():
    app = create_app(session=ScriptedSession(dict(CROWD)))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("v")
        from promptdesk.tui.widgets.pane_picker import PanePicker
        await wait_for(pilot, lambda: isinstance(app.screen, PanePicker), "the pane picker")
        await pilot.pause()
        text = screen_text(app)
        assert "[/]" in text and "[bold]Bo[/] [link=https://x.example]here[/link]" in text
        await pilot.press("escape")
        await pilot.pause()
        assert app.is_running and app.return_code is None


async def test_the_palette_lists_names_and_changes_written_as_markup_literally(tmp_path):
    import json
    import shutil

    await palette_shows(create_app(session=ScriptedSession(dict(CROWD))), (100, 30), "thinking",
                        "Hide thinking: [/]", "Hide thinking: [bold]Bo[/] [link=https://x.example]here[/link]")
    fixture = Path(__file__).parent / "fixtures" / "replay-run"
    parent, take = shutil.copytree(fixture, tmp_path / "parent"), shutil.copytree(fixture, tmp_path / "take")
    change = {"event": "[/] The [@click=app.quit]phone[/] rings"}
    (take / "private.json").write_text(json.dumps({"take": {"parent": str(parent), "beat": 1, "change": change}}))
    await palette_shows(create_app(replay=parent), (140, 30), "take", "Take: take",
                        'world event "[/] The [@click=app.quit]phone[/] rings"')


async def palette_shows(app, size: tuple[int, int], typed: str, ready: str, literal: str) -> None:
    """Type `typed` into the palette: once `ready` shows, `literal` is on screen as written, and the
    app still runs (no markup read, no action run)."""
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+p", *typed)
        await wait_for(pilot, lambda: ready in screen_text(app), f"the palette's commands for {typed!r}")
        assert literal in screen_text(app)
        assert app.is_running and app.return_code is None
