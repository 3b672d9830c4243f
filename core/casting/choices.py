"""The two pre-experiment choices of spec 000, with their trade-offs: what the wizard presents, and
what a headless run that lacks a choice prints with its refusal (`tradeoff_table`).

Each option carries spec 000's wording (what it is, its trade-off) and what it means in
Promptdesk (DESIGN §3). Nothing here is a default: no option is ever pre-selected.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from promptdesk.core.engine.scene_parts import Limits

WINDOW = Limits().window
"""The default context window, in lines, that an isolation (a) request carries."""


@dataclass(frozen=True)
class Option:
    """One answer to a choice."""

    key: str
    title: str
    """Spec 000's name for the option."""
    here: str
    """What it means in Promptdesk."""
    tradeoff: str
    """Spec 000's trade-off (or requirement) for it."""


@dataclass(frozen=True)
class Choice:
    """One pre-experiment choice: a question and its options."""

    name: str
    question: str
    intro: str
    options: tuple[Option, ...]

    def option(self, key: str | None) -> Option | None:
        """The option with this key, if any."""
        return next((o for o in self.options if o.key == key), None)


ISOLATION = Choice(
    name="isolation",
    question="Choice 1 of 2 — How to enforce actor isolation",
    intro=("Both options enforce isolation structurally: no actor ever sees another's profile, journal, "
           "perspective or thinking. (a) is faster to iterate during development; (b) is more "
           "reproducible and easier to log granularly."),
    options=(
        Option("a", "(a) Sub-agent per actor",
               "Every turn is a fresh, stateless call: the briefing + the last "
               f"{WINDOW} lines this actor witnessed (limits.window), rebuilt from the record. Nothing "
               "persists in the actor between turns.",
               f"Fast to iterate; a turn costs about the same early or late (the briefing and {WINDOW} lines), "
               "but the briefing is re-sent every turn with no cache mark, and the actor remembers only that window."),
        Option("b", "(b) Separate API conversation per actor",
               "Each actor keeps its own message thread for the whole scene; the briefing is a stable, "
               "cached prefix (prompt caching where the provider offers it).",
               "More reproducible, easier to log granularly; needs a provider (the offline improviser "
               "needs no key)."),
    ),
)

COORDINATOR = Choice(
    name="coordinator",
    question="Choice 2 of 2 — Who plays the coordinator role",
    intro=("The coordinator routes, records and decides when the scene ends. Whatever you pick, it never "
           "writes dialogue: it only decides continue, close, nudge or suggest an event."),
    options=(
        Option("A", "A — Parent LLM context",
               "An LLM judge that also sees the operator's context: the run's notes.md, the scene's "
               "coordinator notes and your director's notes. A world event it suggests reaches no actor "
               "unless it passes the isolation audit's leak check.",
               "Simple, observable, judgment-capable. But it carries the context it has loaded: risk of "
               "routing bias. Best for pilots."),
        Option("B", "B — Dedicated coordinator agent",
               "An LLM judge with only a coordinator system prompt and the speech so far.",
               "Isolated from your context, reproducible. But adds an LLM call per beat for a job that is "
               "mostly mechanical."),
        Option("C", "C — Pure code",
               "Rule-based: conservative close words and exit actions, explicit close, caps, stall rules.",
               "Cheapest, most deterministic, zero routing bias. But harder to handle judgment calls "
               "(is this a natural close?). Best for production."),
    ),
)


def tradeoff_table(width: int = 100) -> str:
    """Both choices as plain text: each question, its introduction, and per option what it is, what it
    means here and its trade-off (the wizard's two screens, for a terminal without the console)."""
    out: list[str] = []
    for choice in (ISOLATION, COORDINATOR):
        out += [choice.question, *textwrap.wrap(choice.intro, width), ""]
        for option in choice.options:
            flag = f"--{choice.name} {option.key}"
            out.append(f"  {flag:<16} {option.title}")
            out += textwrap.wrap(option.here, width, initial_indent=" " * 19, subsequent_indent=" " * 19)
            out += textwrap.wrap("Trade-off: " + option.tradeoff, width, initial_indent=" " * 19,
                                 subsequent_indent=" " * 19)
        out.append("")
    return "\n".join(out).rstrip()

