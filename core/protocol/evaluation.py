"""What the evaluator is sent after a scene closes: one request per actor, word for word.

The evaluator sees what Sotopia's evaluator sees: the scene, every character's profile, private goal
(its perspective) and secret, and the public record (each speech as it was routed, the world events
and the director's notes), never any actor's thinking. Each request asks about one character only;
its last lines (`EVALUATE:` and after) restate who is evaluated, their goal and their secret on one
line each, so that a reader of the request alone (the offline evaluator) finds them whatever the
profiles hold.

A character's secret is the body of its profile's `## Secret` section (`secret_of`): the Sotopia
importer writes one, and any hand-written profile may have one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from promptdesk.core.protocol.lines import folded, scene_lines
from promptdesk.core.protocol.rubrics.base import Rubric

EVALUATOR = "evaluator"
"""The recipient (`to`) of every evaluation request, and the `from` of every evaluation event."""
PURPOSE = "evaluate"
NONE = "(none)"
SCENE_HEAD = "THE SCENE"
CAST_HEAD = "THE CHARACTERS"
RECORD_HEAD = "WHAT WAS SAID AND DONE"
FOCUS = "EVALUATE: "
GOAL_LINE = "Their goal: "
SECRET_LINE = "Their secret: "
MARKERS_LINE = "Scene goal markers: "
NOTHING_SAID = "(nothing was said)"
RETRY = ("Your answer could not be read in full ({problems}). Answer again with the whole JSON object: every "
         "dimension, each with its reasoning and a whole-number score within its range.")
"""The second try's message, after the first answer (`promptdesk.core.engine.evaluation`)."""
_SECRET_HEADING = re.compile(r"^#{1,6}\s*+secrets?+", re.I | re.M)
"""A `## Secret` heading's start; its end is scanned (`secret_of`): an expression that also read the blanks
and colon after the word backtracked through them, quadratic in a long run of blanks (36 s for 100,000)."""
_HEADING = re.compile(r"^#{1,6}\s", re.M)


@dataclass(frozen=True)
class Member:
    """One cast member as the evaluator is told about them."""

    slug: str
    name: str
    profile: str
    perspective: str = ""
    secret: str = ""


@dataclass(frozen=True)
class Episode:
    """One closed scene as the evaluator sees it."""

    title: str
    setting: str
    prompt: str
    cast: tuple[Member, ...]
    lines: tuple[str, ...]
    """The public record, one routed line each (speech, world events, notes), in order."""
    goal: str = ""
    goal_markers: tuple[str, ...] = field(default_factory=tuple)

    def member(self, slug: str) -> Member:
        return next(m for m in self.cast if m.slug == slug)


def secret_of(profile: str) -> str:
    """The body of a profile's `## Secret` (or `## Secrets`) section, stripped; "" when it has none."""
    text = profile or ""
    for heading in _SECRET_HEADING.finditer(text):
        at, line_end = heading.end(), -1
        for colon in (False, True):  # blanks, then at most one colon and blanks: the heading's line ends at the last break
            if colon:
                if not text.startswith(":", at):
                    break
                at += 1
            while at < len(text) and text[at].isspace():
                line_end = at if text[at] == "\n" else line_end
                at += 1
        if line_end >= 0:
            end = _HEADING.search(text, line_end + 1)
            return text[line_end + 1:end.start() if end else len(text)].strip()
    return ""


def system_text(rubric: Rubric) -> str:
    """The evaluator's system prompt: the rubric's."""
    return rubric.system_prompt()


def request_text(episode: Episode, slug: str) -> str:
    """The one user message asking about the cast member `slug` (see the module docstring)."""
    scene = scene_lines(episode.title, episode.setting, episode.prompt, episode.goal, "Scene goal")
    cast = [f"CHARACTER {n}: {m.name}\nProfile:\n{m.profile.strip() or NONE}\nPrivate goal and perspective:\n"
            f"{m.perspective.strip() or NONE}\nSecret:\n{m.secret.strip() or NONE}"
            for n, m in enumerate(episode.cast, start=1)]
    focus = episode.member(slug)
    tail = [f"{FOCUS}{folded(focus.name)}", f"{GOAL_LINE}{folded(focus.perspective) or NONE}",
            f"{SECRET_LINE}{folded(focus.secret) or NONE}"]
    if episode.goal_markers:
        tail.append(MARKERS_LINE + ", ".join(folded(m) for m in episode.goal_markers))
    tail.append(f"Score {folded(focus.name)} only, on every dimension. JSON only:")
    return "\n\n".join([f"{SCENE_HEAD}\n" + "\n".join(scene), f"{CAST_HEAD}\n\n" + "\n\n".join(cast),
                        f"{RECORD_HEAD}\n" + ("\n".join(episode.lines) or NOTHING_SAID), "\n".join(tail)])


@dataclass(frozen=True)
class Focus:
    """What the end of an evaluation request says (read back by the offline evaluator)."""

    name: str
    goal: str
    secret: str
    markers: tuple[str, ...]
    record: str
    """The public record's lines, as sent."""
    scene_goal: str = ""
    cast: tuple[str, ...] = ()
    """Every cast member's name, as the request lists them (`CHARACTER n: <name>`)."""


def read_focus(text: str) -> Focus | None:
    """Who an evaluation request asks about, their goal, secret and the goal markers, and the record's
    lines, read from the request's own text; None when it is not an evaluation request."""
    head, found, tail = text.rpartition("\n\n" + FOCUS)
    if not found:
        return None
    fields = {"name": "", "goal": "", "secret": "", "markers": ""}
    lines = tail.splitlines()
    fields["name"] = lines[0].strip() if lines else ""
    for line in lines[1:]:
        for key, prefix in (("goal", GOAL_LINE), ("secret", SECRET_LINE), ("markers", MARKERS_LINE)):
            if line.startswith(prefix):
                fields[key] = line[len(prefix):].strip()
    before, _, record = head.rpartition(f"\n\n{RECORD_HEAD}\n")
    scene, _, cast = before.partition(f"\n\n{CAST_HEAD}\n")
    scene_goal = re.search(r"^Scene goal: (.*)$", scene, re.M)
    markers = tuple(m.strip() for m in fields["markers"].split(",") if m.strip())
    unset = lambda value: "" if value == NONE else value  # noqa: E731
    names = tuple(dict.fromkeys(n.strip() for n in re.findall(r"^CHARACTER \d+: (.+)$", cast, re.M) if n.strip()))
    return Focus(fields["name"], unset(fields["goal"]), unset(fields["secret"]), markers,
                 "" if record == NOTHING_SAID else record, scene_goal.group(1).strip() if scene_goal else "", names)

