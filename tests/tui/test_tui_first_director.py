"""What a first-time director reads: every transcript line readable in both themes, the Session panel,
the key bar and the dialogs saying what they mean at every size, and each key that cannot act saying why."""

from __future__ import annotations

import pytest
from test_tui_console_finish import contrast
from tui_support import screen_text, wait_for

from promptdesk.core.record.events import CloseEvent, GenericEvent, SpeakEvent
from promptdesk.tui.app import create_app
from promptdesk.tui.scripted import ScriptedSession
from promptdesk.tui.widgets.transcript import Transcript

CAST = {"alice": "Alice", "bob": "Bob", "charlie": "Charlie", "dana": "Dana", "eve": "Eve", "fay": "Fay",
        "gus": "Gus", "hal": "Hal"}
"""Eight actors: every speaker colour of a theme."""


def every_role() -> list:
    """A beat whose lines use every role the transcript styles: names, speech, target, tone, gesture,
    interruption, reaction, silence, world event, notes, system line, close."""
    def said(slug: str, **kw) -> SpeakEvent:
        return SpeakEvent(t=0, **{"from": slug}, beat=1, **kw)
    return [
        GenericEvent(t=0, **{"from": "coordinator"}, type="start", text="Scene started",
                     scene={"title": "The Apology", "setting": "Office conference room"}),
        GenericEvent(t=0, **{"from": "coordinator"}, type="beat", text="Beat 1", beat=1),
        said("alice", action="speak", target="Bob", tone="firm", nonverbal="folds arms", text="You missed it."),
        said("bob", action="interrupt", interrupt_after="missed", tone="defensive", text="Let me explain."),
        said("charlie", action="react", nonverbal="winces", text=""),
        said("charlie", action="silent", nonverbal="stares at the table", text=""),
        GenericEvent(t=0, **{"from": "operator"}, type="event", text="The phone rings", beat=1),
        GenericEvent(t=0, **{"from": "operator"}, type="note", text="Softer", target="bob", beat=1),
        GenericEvent(t=0, **{"from": "coordinator"}, type="system", text="Bob unable to respond", target="bob",
                     reason="HTTP 500", beat=1),
        *(said(slug, action="speak", text="Agreed.") for slug in ("dana", "eve", "fay", "gus", "hal")),
        CloseEvent(t=0, **{"from": "coordinator"}, text="They agree", reason="natural", goal_achieved=True, beat=1),
    ]


def transcript_cells(app):
    """The style of every visible character of the transcript's text (its borders left out)."""
    region = app.screen.query_one(Transcript).content_region
    for y, strip in enumerate(app.screen._compositor.render_strips()):
        if not region.y <= y < region.bottom:
            continue
        column = 0
        for segment in strip:
            inside = region.x <= column < region.right
            if inside and segment.text.strip() and segment.style is not None:
                yield segment.text.strip(), segment.style
            column += segment.cell_length


@pytest.mark.parametrize("theme", ["light", "dark"])
async def test_every_transcript_line_reads_at_4_5_to_1_in_both_themes_focused_or_not(theme):
    session = ScriptedSession(CAST)
    app = create_app(session=session, theme=theme)
    async with app.run_test(size=(120, 40)) as pilot:
        session.publish(every_role())
        await wait_for(pilot, lambda: "They agree" in screen_text(app), "the lines")
        for focused in (False, True):
            if focused:
                app.screen.query_one(Transcript).focus()
            await pilot.pause()
            cells = list(transcript_cells(app))
            assert any(text == "—" or "silent" in text for text, _ in cells), "the silence is on screen"
            for text, style in cells:
                assert not style.dim and contrast(style) >= 4.5, (theme, focused, text, style, contrast(style))
