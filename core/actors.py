"""Actors: one per character, holding only its own briefing and what was routed to it.

Isolation (a) — `StatelessActor`: every turn is one fresh request, rebuilt from the public lines
this actor has witnessed; no conversation persists in the actor between turns.
Isolation (b) — `ThreadActor`: the actor keeps its own message thread for the whole scene; the
briefing is a stable, cached prefix and the thread grows only by what is routed to it.
"""

from __future__ import annotations

from core.briefing import beat_update
from core.characters import Character
from core.providers.base import ChatMessage, Provider, Request

WITNESSED_HEADING = "WHAT YOU HAVE WITNESSED SO FAR (speech only; your own lines marked 'you'):"


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

    def correction(self, original: Request, bad: str, prompt: str) -> Request:
        """The same request plus the malformed answer and the correction prompt of spec 000."""
        messages = [*original.messages, ChatMessage(role="assistant", content=bad or "(empty)"),
                    ChatMessage(role="user", content=prompt)]
        return original.model_copy(update={"messages": messages, "purpose": "correct"})


class StatelessActor(Actor):
    """Isolation (a): a sub-agent per turn. Holds public lines witnessed, never its own thinking."""

    isolation = "a"

    def __init__(self, character: Character, briefing: str, provider: Provider) -> None:
        super().__init__(character, briefing, provider)
        self.witnessed: list[str] = []

    def request(self, user_text: str, beat: int, purpose: str = "turn") -> Request:
        content = user_text
        if self.witnessed:
            content = WITNESSED_HEADING + "\n" + "\n".join(self.witnessed) + "\n\nNOW:\n" + user_text
        return Request(to=self.slug, purpose=purpose, system=self.briefing, beat=beat,
                       messages=[ChatMessage(role="user", content=content)])

    def remember(self, user_text: str, items: list[str], response: str, own_line: str | None) -> None:
        self.witnessed += items
        if own_line:
            self.witnessed.append(f"(you) {own_line}")


class ThreadActor(Actor):
    """Isolation (b): its own API conversation for the whole scene, with a cached briefing."""

    isolation = "b"

    def __init__(self, character: Character, briefing: str, provider: Provider) -> None:
        super().__init__(character, briefing, provider)
        self.thread: list[ChatMessage] = []

    def request(self, user_text: str, beat: int, purpose: str = "turn") -> Request:
        return Request(to=self.slug, purpose=purpose, system=self.briefing, beat=beat,
                       cache_prefix=True, cache_key=f"promptdesk-{self.slug}",
                       messages=[*self.thread, ChatMessage(role="user", content=user_text)])

    def remember(self, user_text: str, items: list[str], response: str, own_line: str | None) -> None:
        self.thread += [ChatMessage(role="user", content=user_text),
                        ChatMessage(role="assistant", content=response)]


def make_actor(isolation: str, character: Character, briefing: str, provider: Provider) -> Actor:
    """The actor class for the chosen isolation option."""
    cls = {"a": StatelessActor, "b": ThreadActor}[isolation]
    return cls(character, briefing, provider)
