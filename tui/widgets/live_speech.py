"""Speech as it streams in, one line per actor, until the finished line lands in the transcript."""

from __future__ import annotations

import re

from textual.content import Content
from textual.widgets import Static

from promptdesk.tui.lines import Cast, safe

QUOTES_AND_GESTURES = re.compile(r"\*[^*]*\*?|[\"“”]")
"""What is not words in a speech's body: `*gestures*` (one still open too) and quotes."""

STREAM_TAIL = 160
"""How much of each speech being streamed is shown (its most recent characters)."""
MAX_ROWS = 5
"""At most this many actors' streams are shown at once."""


class LiveSpeech(Static):
    """Who is speaking right now and what they have said so far (streamed deltas)."""

    DEFAULT_CSS = """
    LiveSpeech { height: 1; color: $text-muted; padding: 0 1; display: none; }
    LiveSpeech.-active { display: block; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(markup=False, **kwargs)
        self.cast = Cast({})
        self.buffers: dict[str, str] = {}
        """Slug to the speech streamed so far in the current turn."""
        self._shown: list[str] = []

    def stream(self, slug: str, fragment: str) -> None:
        """Add a streamed fragment of `slug`'s speech."""
        self.buffers[slug] = self.buffers.get(slug, "") + safe(fragment)

    def end(self, slug: str) -> None:
        """The actor's speech is finished (or abandoned): stop showing it."""
        self.buffers.pop(slug, None)

    def clear(self) -> None:
        """Stop showing every stream."""
        self.buffers.clear()
        self.refresh_view()

    def refresh_view(self) -> None:
        """Redraw after a batch of changes."""
        words = {slug: " ".join(spoken_so_far(text).split()) for slug, text in self.buffers.items()}
        rows = [f"{self.cast.name(slug)} ▸ {text[-STREAM_TAIL:]}" for slug, text in words.items() if text][:MAX_ROWS]
        if rows == self._shown:
            return
        if len(rows) != len(self._shown):
            self.set_class(bool(rows), "-active")
            self.styles.height = max(1, len(rows))
        self._shown = rows
        self.update(Content("\n".join(rows)), layout=False)


def spoken_so_far(text: str) -> str:
    """The words of a speech being streamed, as the transcript will show them: never its `[TO:, TONE:]`
    header, gestures or quotes. Fail closed: nothing while the header is still open, and nothing at all
    once the speech holds a `<` (a speech with a tag in it is private as a whole)."""
    body = text.lstrip()
    if "<" in body:
        return ""
    if body.startswith("["):
        depth = 0
        for index, ch in enumerate(body):
            depth += {"[": 1, "]": -1}.get(ch, 0)
            if depth == 0:
                body = body[index + 1:]
                break
        else:
            return ""
    return QUOTES_AND_GESTURES.sub("", body).strip()
