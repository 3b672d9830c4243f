"""A Sotopia environment and its two agents as a Promptdesk scene (the data of a scene file).

- `setting`: the scenario's first sentence; `prompt`: the whole scenario, then who the two are to each
  other (`Ava Lee and Ben Ko are friends.`) and, with `--background-story`, when the export holds one for
  the pair at that level, their background story (shared: both are told it). By default none is told, as
  Sotopia's own runner: Sotopia wrote the stories from both agents' whole profiles, and many tell a secret.
- `perspectives`: each agent's own goal (its extra information and hints as their text) and what it is
  told of the other by Sotopia's relationship rule (`relationship`); private to that agent.
- `turns`: `sequential` (Sotopia's round-robin: the two alternate, the first agent opens) or `parallel`
  (Promptdesk's beats: both may answer every beat); `limits.max_beats` 20 turns either way (Sotopia's
  episode length: 20 sequential turns, or 10 parallel beats).
- `evaluate: sotopia`: scored on SOTOPIA-EVAL's seven dimensions after the close.
- `benchmark`: where it comes from (pks, codename, relationship, turn order), for the record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from promptdesk.core.experiments.sotopia.export import Agent, Environment
from promptdesk.core.experiments.sotopia.relationship import level_name, pair_sentence, render_goal, told_about

TURNS = {"sequential": "round-robin", "parallel": "parallel"}
"""`--turns` -> the turn order the scene's `benchmark:` records."""
EPISODE_TURNS = 20
"""Sotopia's episode length, in turns."""
SETTING_MAX = 200


@dataclass(frozen=True)
class Casting:
    """One scene to write: the environment, its two agents (in the combo's order) and their slugs."""

    key: str
    """The record the scene comes from (the combo's key, or the environment's with `--per environment`)."""
    environment: Environment
    agents: tuple[Agent, Agent]
    slugs: tuple[str, str]
    combo: str | None
    name: str


def scene_data(casting: Casting, *, turns: str, story: str) -> dict[str, Any]:
    """The scene file's data (see the module docstring); `story` is "" when none is told."""
    env, (first, second), (one, two) = casting.environment, casting.agents, casting.slugs
    prompt = [env.scenario, pair_sentence(first, second, env.relationship)]
    if story:
        prompt.append(f"Their background: {story}")
    return {
        "name": casting.name,
        "title": f"{_words(env.codename) or 'Sotopia scenario'}: {first.name} and {second.name}",
        "turns": turns,
        "setting": _first_sentence(env.scenario),
        "prompt": "\n\n".join(prompt),
        "characters": [one, two],
        "perspectives": {one: perspective(env.goals[0], second, env.relationship),
                         two: perspective(env.goals[1], first, env.relationship)},
        "initial_speaker": one,
        "limits": {"max_beats": EPISODE_TURNS if turns == "sequential" else EPISODE_TURNS // 2},
        "evaluate": "sotopia",
        "benchmark": {"name": "sotopia", "scenario": env.codename, "environment": env.pk, "combo": casting.combo,
                      "agents": [first.pk, second.pk], "relationship": level_name(env.relationship),
                      "turn_order": TURNS[turns]},
    }


def perspective(goal: str, other: Agent, level: int) -> str:
    """One agent's private perspective: its goal, then what it knows of the other."""
    return f"Your goal: {render_goal(goal)}\n\n{told_about(other, level)}"


def header(casting: Casting, source: str) -> str:
    """The comment lines a scene file opens with: where it comes from and how to cite it."""
    env = casting.environment
    return (f"# Imported from Sotopia (Zhou et al., ICLR 2024; MIT licence) by `promptdesk import sotopia {source}`:\n"
            f"# environment {_one_line(env.codename) or env.pk}, agents {casting.agents[0].name} and "
            f"{casting.agents[1].name}. Edit freely: importing again keeps an edited file unless --force.\n")


def _first_sentence(text: str) -> str:
    first = re.split(r"(?<=[.!?])\s+", " ".join(text.split()), maxsplit=1)[0]
    return first if len(first) <= SETTING_MAX else first[:SETTING_MAX - 1].rstrip() + "…"


def _words(codename: str) -> str:
    words = " ".join(re.split(r"[_\s]+", _one_line(codename))).strip()
    return words[:1].upper() + words[1:]


def _one_line(text: str) -> str:
    return " ".join(text.split())
