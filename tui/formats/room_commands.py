"""What the operator types in a collaboration's room, read by one pure function (no UI, no engine).

- `GOAL` — a collaboration of the default pair (`gpt`, `claude`) on GOAL;
- `@gpt text` — a single call: a one-participant collaboration with `max_rounds` 1;
- `@router collaborate gpt claude: GOAL` — a collaboration of the two named participants.

Anything else gives a `RoomError` whose message says what to type instead.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

ROUTER = "router"
DEFAULT_PAIR = ("gpt", "claude")
USAGE = "type a goal, “@gpt text” for a single call, or “@router collaborate gpt claude: GOAL”"


@dataclass(frozen=True)
class RoomCommand:
    """A new session to start: who takes part, on what goal, and its round cap (None: the default)."""

    goal: str
    participants: tuple[str, ...]
    max_rounds: int | None = None

    @property
    def single(self) -> bool:
        """True for a single call to one participant."""
        return len(self.participants) == 1


@dataclass(frozen=True)
class RoomError:
    """What was typed cannot be run; `message` says why and what to type."""

    message: str


def parse_room(text: str, known: Collection[str], pair: tuple[str, str] = DEFAULT_PAIR) -> RoomCommand | RoomError:
    """Read one line typed in the room; `known` are the participants that can be named."""
    text = text.strip()
    if not text:
        return RoomError(f"Nothing typed: {USAGE}.")
    if not text.startswith("@"):
        return RoomCommand(text, pair)
    name, _, rest = text[1:].partition(" ")
    name, rest = name.strip().lower(), rest.strip()
    if name == ROUTER:
        return _router(rest, known)
    if name not in known:
        return RoomError(f"No participant called @{name or '?'} ({_known(known)}); {USAGE}.")
    if not rest:
        return RoomError(f"Nothing to say to @{name}: type “@{name} text”.")
    return RoomCommand(rest, (name,), max_rounds=1)


def _router(rest: str, known: Collection[str]) -> RoomCommand | RoomError:
    verb, _, rest = rest.partition(" ")
    if verb.lower() != "collaborate":
        return RoomError("@router understands one command: “@router collaborate gpt claude: GOAL”.")
    names, colon, goal = rest.partition(":")
    slugs = tuple(s.lower() for s in names.replace(",", " ").split())
    if not colon:
        return RoomError("Put a colon before the goal: “@router collaborate gpt claude: GOAL”.")
    if len(slugs) != 2:
        return RoomError(f"A collaboration takes two participants, got {len(slugs)}: "
                         "“@router collaborate gpt claude: GOAL”.")
    if slugs[0] == slugs[1]:
        return RoomError(f"@{slugs[0]} is named twice: a collaboration takes two different participants.")
    unknown = [s for s in slugs if s not in known]
    if unknown:
        return RoomError(f"No participant called @{unknown[0]} ({_known(known)}).")
    if not goal.strip():
        return RoomError("The goal is empty: “@router collaborate gpt claude: GOAL”.")
    return RoomCommand(goal.strip(), slugs)


def _known(known: Collection[str]) -> str:
    return "known: " + ", ".join(f"@{s}" for s in sorted(known)) if known else "no participants known"
