"""Actors: one per character, holding only its own briefing and what was routed to it.

Isolation (a) — `StatelessActor`: every turn is one fresh request, rebuilt from the public lines
this actor has witnessed; no conversation persists in the actor between turns.
Isolation (b) — `ThreadActor`: the actor keeps its own message thread for the whole scene; the
briefing is a stable, cached prefix and the thread grows only by what is routed to it, dropping its
oldest turns in blocks (`limits.window`) so that requests stay bounded.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from promptdesk.core.engine.briefing import answered, beat_update, for_protocol, kept_and_framing
from promptdesk.core.characters.loading import Character
from promptdesk.core.providers.base import ChatMessage, Provider, Request

WITNESSED_HEADING = "WHAT YOU HAVE WITNESSED SO FAR (speech only; your own lines marked 'you'):"
RECENT_HEADING = ("WHAT YOU HAVE WITNESSED RECENTLY (the last {n} lines; earlier ones are not repeated; "
                  "speech only; your own lines marked 'you'):")
DROPPED_NOTE = "(Earlier lines of this scene were dropped from this conversation to keep it short.)"
DEFAULT_WINDOW = 10
NORMALISED = re.compile(r"<thinking>(.*)</thinking>\n<speech>(.*)</speech>", re.DOTALL)


WIDE = re.compile("[\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf"
                  "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]")
"""Characters of scripts a tokenizer spends about a token each on (Han, kana, Hangul, Thai, Lao, Myanmar,
Khmer), where four characters of a Latin text make one."""


def tokens(text: str) -> int:
    """A provider-neutral token estimate: about four characters a token, a character of a `WIDE` script
    a token each (a Japanese or Chinese text is counted near its real size, not a quarter of it)."""
    wide = len(WIDE.findall(text))
    return math.ceil((len(text) - wide) / 4) + wide


def cut_to(text: str, units: int) -> str:
    """The longest start of `text` of at most `units` quarter-tokens (`tokens`' measure: a character a
    quarter, a `WIDE` one four)."""
    total = 0
    for index, char in enumerate(text):
        total += 4 if WIDE.match(char) else 1
        if total > units:
            return text[:index]
    return text


class Actor:
    """Common to both isolation options: identity, briefing, provider and the pending inbox."""

    isolation = "?"

    def __init__(self, character: Character, briefing: str, provider: Provider) -> None:
        self.slug = character.slug
        self.name = character.name
        self.briefing = briefing
        self.provider = provider
        self.inbox: list[str] = []
        self.turn_timeout_s: float | None = None
        self.journal_timeout_s: float | None = None
        """The engine's guard around this actor's journal entry (None: `turn_timeout_s`)."""

    def receive(self, item: str) -> None:
        """Queue one routed line (speech, world event, note) for this actor's next turn."""
        self.inbox.append(item)

    def take_inbox(self, beat: int, last_beat: int | None) -> tuple[str, list[str]]:
        """The user message for this turn and the items in it, emptying the inbox."""
        items, self.inbox = self.inbox, []
        return beat_update(beat, items, last_beat=last_beat), items

    def request(self, user_text: str, beat: int, purpose: str = "turn") -> Request:
        raise NotImplementedError

    def remember(self, user_text: str, items: list[str], response: str, own_line: str | None) -> None:
        """Keep what this isolation option keeps after a turn."""
        raise NotImplementedError

    def ahead(self) -> Request | None:
        """How the next turn's request begins, when that is known before the turn is asked (None: not)."""
        return None

    def correction(self, original: Request, bad: str, prompt: str) -> Request:
        """The same request plus the malformed answer and the correction prompt of spec 000."""
        messages = [*original.messages, ChatMessage(role="assistant", content=bad or "(empty)"),
                    ChatMessage(role="user", content=prompt)]
        return original.model_copy(update={"messages": messages, "purpose": "correct", "thread_kept": None})


class StatelessActor(Actor):
    """Isolation (a): a sub-agent per turn. Holds the last `window` public lines it witnessed, never
    its own thinking; older lines are forgotten and the heading says so."""

    isolation = "a"

    def __init__(self, character: Character, briefing: str, provider: Provider, *, window: int = DEFAULT_WINDOW) -> None:
        super().__init__(character, briefing, provider)
        self.window = window
        self.witnessed: list[str] = []
        self.forgotten = 0

    def request(self, user_text: str, beat: int, purpose: str = "turn") -> Request:
        content = user_text
        if self.witnessed:
            heading = WITNESSED_HEADING if not self.forgotten else RECENT_HEADING.format(n=len(self.witnessed))
            content = heading + "\n" + "\n".join(self.witnessed) + "\n\nNOW:\n" + user_text
        return Request(to=self.slug, purpose=purpose, system=self.briefing, beat=beat,
                       messages=[ChatMessage(role="user", content=content)])

    def remember(self, user_text: str, items: list[str], response: str, own_line: str | None) -> None:
        self.witnessed += items
        if own_line:
            self.witnessed.append(f"(you) {own_line}")
        excess = len(self.witnessed) - self.window
        if excess > 0:
            self.witnessed, self.forgotten = self.witnessed[excess:], self.forgotten + excess


LAST_THOUGHT_HEADING = "YOUR LAST PRIVATE THOUGHT (only you ever see it):"


@dataclass(frozen=True)
class Exchange:
    """One turn of an actor's own thread: what it was told, and its reply split into thinking and speech."""

    user: str
    thinking: str | None
    speech: str | None
    raw: str

    def reply(self, with_thinking: bool) -> str:
        """The assistant message as re-sent: whole, or its speech alone."""
        if self.speech is None or with_thinking:
            return self.raw
        return f"<speech>{self.speech}</speech>"


class ThreadActor(Actor):
    """Isolation (b): its own API conversation for the whole scene, with a cached briefing.

    Bounded: once the thread holds twice `window` turns (or, with a `token_budget`, more tokens than
    it allows, even in its one newest turn), the oldest turns are dropped at once (`window`, or half), so
    the request prefix stays byte-stable between drops (caching keeps working) and the first message
    left says that earlier lines were dropped. `thread_thinking` decides which past thoughts are re-sent:
    `keep` every reply whole, `drop` none, `last` (default) only the most recent one. Under `last`
    every re-sent reply is its speech alone and the most recent thought follows what happened in the
    new update (`LAST_THOUGHT_HEADING`); the thread keeps that update without it (`answered`: nor
    its beat heading and ask), so each request carries one thought, once. The newest update is the only message
    a later request sends otherwise than it was sent: everything before it stays a cacheable prefix."""

    isolation = "b"

    def __init__(self, character: Character, briefing: str, provider: Provider, *, window: int = DEFAULT_WINDOW,
                 thread_thinking: str = "last") -> None:
        super().__init__(character, briefing, provider)
        self.window = window
        self.thread_thinking = thread_thinking
        self.exchanges: list[Exchange] = []
        self.dropped = 0
        self.token_budget: int | None = None
        """When set (collaborate's 2–3K-token window), the kept turns also stay under this estimate."""
        self._messages: list[ChatMessage] = []
        self._rendered = (0, 0)
        """The kept turns `_messages` renders, and the `dropped` count it was rendered for."""

    @property
    def thread(self) -> list[ChatMessage]:
        """The messages re-sent before this turn's update (a copy of the list; the messages are shared).

        Kept from turn to turn rather than rendered anew: a turn adds its two messages, and only a
        drop renders the kept turns again, so the cost of a turn does not grow with the thread (and
        the prompt log sees the very same message objects, whose comparison costs nothing)."""
        kept = len(self.exchanges) - self.dropped
        if self._rendered[1] != self.dropped or self._rendered[0] > kept:
            self._messages, self._rendered = [], (0, self.dropped)
        for index in range(self._rendered[0], kept):
            exchange = self.exchanges[self.dropped + index]
            user = DROPPED_NOTE + "\n\n" + exchange.user if index == 0 and self.dropped else exchange.user
            self._messages += [ChatMessage(role="user", content=user),
                               ChatMessage(role="assistant", content=exchange.reply(self.thread_thinking == "keep"))]
        self._rendered = (kept, self.dropped)
        return list(self._messages)

    def update(self, user_text: str) -> tuple[str, int | None]:
        """The new user message, and how much of it the thread keeps (None: all of it).

        What happened comes first, as the thread will keep it (`answered`); then what this request
        alone carries: under `last` the most recent thought, then the beat heading and the ask. So
        the next request re-sends this one unchanged up to the end of what happened, and a cached
        prefix can end there (`Request.thread_kept`)."""
        kept, framing = kept_and_framing(user_text)
        last = self.exchanges[-1] if self.exchanges and self.thread_thinking == "last" else None
        thought = f"{LAST_THOUGHT_HEADING}\n{last.thinking}" if last and last.thinking and last.speech is not None else ""
        alone = "\n\n".join(part for part in (thought, framing) if part)
        return (f"{kept}\n\n{alone}", len(kept)) if alone else (user_text, None)

    def request(self, user_text: str, beat: int, purpose: str = "turn") -> Request:
        content, kept = self.update(user_text)
        if self.dropped and self.dropped == len(self.exchanges):  # every earlier turn dropped: say so here
            content, kept = f"{DROPPED_NOTE}\n\n{content}", None if kept is None else kept + len(DROPPED_NOTE) + 2
        return Request(to=self.slug, purpose=purpose, system=self.briefing, beat=beat,
                       cache_prefix=True, cache_key=f"promptdesk-{self.slug}", thread_kept=kept,
                       messages=[*self.thread, ChatMessage(role="user", content=content)])

    def ahead(self) -> Request | None:
        """How the next turn's request begins: this request with the thread alone, its update (which
        the end of the beat decides) left out (`Provider.open_early`)."""
        return self.request("", 0).model_copy(update={"messages": self.thread, "thread_kept": None})

    def remember(self, user_text: str, items: list[str], response: str, own_line: str | None) -> None:
        thinking, speech = split_reply(response)
        self.exchanges.append(Exchange(answered(user_text), thinking, speech, response))
        while self._over():
            kept = len(self.exchanges) - self.dropped
            self.dropped += max(1, min(self.window, kept // 2))

    def _over(self) -> bool:
        """Twice the window of turns kept, or (with a token budget) more tokens than it allows."""
        kept = self.exchanges[self.dropped:]
        if len(kept) >= 2 * self.window:
            return True
        return bool(self.token_budget) and len(kept) > 0 and \
            sum(tokens(m.content) for m in self.thread) > (self.token_budget or 0)


def split_reply(response: str) -> tuple[str | None, str | None]:
    """The thinking and speech of a normalised reply (`<thinking>…</thinking>\n<speech>…</speech>`),
    or (None, None) when it has another shape."""
    match = NORMALISED.fullmatch(response)
    return (match.group(1), match.group(2)) if match else (None, None)


def make_actor(isolation: str, character: Character, briefing: str, provider: Provider, *,
               window: int = DEFAULT_WINDOW, thread_thinking: str = "last") -> Actor:
    """The actor class for the chosen isolation option, with the scene's context window; the
    briefing's answer instructions follow the provider's protocol (`for_protocol`)."""
    briefing = for_protocol(briefing, getattr(provider, "protocol", "tags"))
    if isolation == "b":
        return ThreadActor(character, briefing, provider, window=window, thread_thinking=thread_thinking)
    if isolation == "a":
        return StatelessActor(character, briefing, provider, window=window)
    raise KeyError(isolation)
