"""A rubric: integer dimensions with their ranges, the JSON schema of one actor's scores, and the
reading of an evaluator's answer against it.

An answer is one JSON object holding, for every dimension, `{"reasoning": "...", "score": N}` (or Sotopia's
own `["reasoning", N]`; a score written as text, `"7"`, is that whole number, as Sotopia's model reads it). Reading
it (`Rubric.read`) never makes a score fit: a score outside its range, a missing dimension, a score
that is not a whole number is a *problem* of that dimension (the evaluator is asked once more, then the
score is recorded as unknown); a score given as `null` is the evaluator's own "cannot tell" (an
unknown with its reasoning, not a problem). A score outside its range is kept apart as `answered`,
for the record, and never appears among the scores.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from promptdesk.core.protocol.bounded import depth_over, load_json, noting_repeats
from promptdesk.core.protocol.fences import fenced_blocks, whole_fence
from promptdesk.core.protocol.reasoning import without_reasoning

_WHOLE = re.compile(r"\s*[+-]?[0-9]{1,6}(?:\.0*)?\s*")
"""A score written as text that is a whole number (`"7"`, `" -3"`, `"7.0"`: what Sotopia's pydantic model reads as
an integer), read as that number; `"7/10"`, `"7.5"` are not."""
ANSWER_MAX_CHARS = 200_000
"""The longest answer read (seven reasonings are a few thousand characters)."""


@dataclass(frozen=True)
class Dimension:
    """One scored dimension: its name, its integer range (both ends included) and what it measures."""

    name: str
    low: int
    high: int
    measures: str
    """What the dimension measures and how its range reads, as the evaluator is told."""

    @property
    def range_text(self) -> str:
        return f"{self.low} to {self.high}"

    def holds(self, score: int) -> bool:
        return self.low <= score <= self.high


@dataclass
class Reading:
    """What an answer says, dimension by dimension (see the module docstring)."""

    scores: dict[str, int | None] = field(default_factory=dict)
    """Every dimension's score; None when unknown (declared so, or a problem)."""
    reasoning: dict[str, str] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)
    """Dimension -> what is wrong with its score (these are asked for again)."""
    declared: dict[str, str] = field(default_factory=dict)
    """Dimension -> why the evaluator gave no score (`null`): its own "cannot tell"."""
    answered: dict[str, Any] = field(default_factory=dict)
    """Dimension -> a score given outside its range (or not a whole number), as given: never a score."""
    whole: str | None = None
    """What is wrong with the answer as a whole (not JSON, not an object), when it is."""

    @property
    def ok(self) -> bool:
        """True when every dimension was read: a score in range, or the evaluator's own null."""
        return self.whole is None and not self.problems

    def problem_text(self) -> str:
        """Every problem in one line, for the evaluator's second try and the record."""
        if self.whole:
            return self.whole
        return "; ".join(f"{name}: {why}" for name, why in self.problems.items())


@dataclass(frozen=True)
class Rubric:
    """A named set of dimensions, the words that introduce them, and how to cite the rubric."""

    name: str
    title: str
    dimensions: tuple[Dimension, ...]
    instructions: str
    """What the evaluator is, and how it should score (the start of its system prompt)."""
    citation: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.dimensions)

    def dimension(self, name: str) -> Dimension:
        return next(d for d in self.dimensions if d.name == name)

    def schema(self) -> dict[str, Any]:
        """The JSON schema of one actor's scores: every dimension required, each an object of its
        `reasoning` (text) and `score` (an integer within the dimension's range), nothing else."""
        return {
            "type": "object",
            "properties": {d.name: {
                "type": "object", "description": d.measures,
                "properties": {"reasoning": {"type": "string"},
                               "score": {"type": "integer", "minimum": d.low, "maximum": d.high}},
                "required": ["reasoning", "score"], "additionalProperties": False} for d in self.dimensions},
            "required": list(self.names),
            "additionalProperties": False,
        }

    def system_prompt(self) -> str:
        """The evaluator's system prompt: the instructions, then each dimension with its range."""
        lines = [f"- {d.name} ({d.range_text}): {d.measures}" for d in self.dimensions]
        shape = ", ".join(f'"{d.name}": {{"reasoning": "...", "score": {d.low}}}' for d in self.dimensions[:2])
        return (f"{self.instructions}\n\nThe dimensions, each scored with a whole number in its range:\n"
                + "\n".join(lines)
                + f"\n\nAnswer with one JSON object and nothing else, one key per dimension, each holding your "
                  f"reasoning first and then the score: {{{shape}, ...}}")

    def read(self, text: str) -> Reading:
        """What `text` (an evaluator's answer) says, dimension by dimension (see the module docstring)."""
        reading = Reading()
        try:
            answer = read_answer(text)
        except ValueError as exc:
            reading.whole = str(exc)
            reading.scores = dict.fromkeys(self.names)
            return reading
        for dimension in self.dimensions:
            if twice := _given_twice(answer, dimension.name):
                reading.scores[dimension.name], reading.problems[dimension.name] = None, twice
                continue
            _read_dimension(dimension, answer.get(dimension.name), dimension.name in answer, reading)
        return reading

    def overall(self, scores: dict[str, int | None]) -> float | None:
        """The mean of the known scores of one actor (Sotopia's `overall_score`), None when none is known."""
        known = [s for s in (scores.get(n) for n in self.names) if s is not None]
        return round(sum(known) / len(known), 4) if known else None


def read_answer(text: str) -> dict[str, Any]:
    """The JSON object an answer holds: the whole text, or the one fenced block it is (```json ...```),
    after a reasoning model's `<think>` preamble (`without_reasoning`); else, when a written preamble or
    afterword surrounds it, the one fenced block or the one `{...}` the text holds (`_embedded`: two
    objects, a draft and a final one, are not told apart: not read). ValueError saying why when it holds none."""
    body = without_reasoning(text or "").strip()
    if not body:
        raise ValueError("the answer is empty")
    if len(body) > ANSWER_MAX_CHARS:
        raise ValueError(f"the answer is {len(body):,} characters, over the limit of {ANSWER_MAX_CHARS:,}")
    fenced = whole_fence(body, fold=True)
    if fenced is not None:
        body = fenced.strip()
    try:
        answer = load_json(body, object_pairs_hook=noting_repeats)
    except ValueError as exc:
        answer = _embedded(body)
        if answer is None:
            raise ValueError(f"the answer is not one JSON object ({str(exc).splitlines()[0][:120]})") from None
    if not isinstance(answer, dict):
        raise ValueError(f"the answer is a JSON {type(answer).__name__}, not an object")
    return answer



def _given_twice(answer: dict[str, Any], name: str) -> str | None:
    """Why a dimension given more than once (or its score given more than once) cannot be read: JSON keeps
    the last copy silently, and which score the evaluator meant cannot be told (`{"goal": {"score": 12},
    "goal": {"score": 7}}` was read as 7)."""
    times = getattr(answer, "repeated", {}).get(name)
    if times:
        return f"given {times} times, which score is meant cannot be told"
    times = getattr(answer.get(name), "repeated", {}).get("score")
    return f"its score is given {times} times, which is meant cannot be told" if times else None


def _embedded(body: str) -> Any:
    """The one JSON object inside words around it: the only fenced block, else the span from the first `{`
    to the last `}` when it is one JSON object, else the one object found where a `{` opens one (braces in the
    words, `{goal}`, `{dimension: score}`, open none and are passed over); two objects (a draft and a final one)
    are not told apart. None when there is no such one object."""
    blocks = fenced_blocks(body)
    span = blocks[0] if len(blocks) == 1 else (body[body.find("{"):body.rfind("}") + 1] if not blocks else "")
    try:
        found = load_json(span.strip(), object_pairs_hook=noting_repeats) if span.strip() else None
    except ValueError:
        found = None
    if isinstance(found, dict) or blocks:
        return found if isinstance(found, dict) else None
    objects = _objects(body)
    return objects[0] if len(objects) == 1 else None


_OPENINGS_TRIED = 16
"""At most this many `{` are tried as the start of an object (each try reads at most the rest of the answer)."""


def _objects(body: str) -> list[dict[str, Any]]:
    """The JSON objects the text holds where a `{` opens one, each read whole (a `{` inside one is its own);
    a `{` that opens none (words in braces) is passed over."""
    decoder, found, at = json.JSONDecoder(object_pairs_hook=noting_repeats), [], body.find("{")
    for _ in range(_OPENINGS_TRIED):
        if at < 0:
            break
        try:
            value, end = decoder.raw_decode(body, at)
        except (ValueError, RecursionError):
            at = body.find("{", at + 1)
            continue
        if isinstance(value, dict) and not depth_over(value):
            found.append(value)
        at = body.find("{", end)
    return found


def _read_dimension(dimension: Dimension, value: Any, present: bool, reading: Reading) -> None:
    """Read one dimension's `{"reasoning", "score"}` (or a bare score) into `reading`."""
    name = dimension.name
    reading.scores[name] = None
    if not present:
        reading.problems[name] = "missing"
        return
    if isinstance(value, dict):
        reasoning, score = value.get("reasoning"), value.get("score", ...)
    elif isinstance(value, list) and len(value) == 2 and isinstance(value[0], str):
        reasoning, score = value  # Sotopia's own form, `tuple[str, int]`: ["reasoning", 7]
    else:
        reasoning, score = "", value
    reading.reasoning[name] = reasoning if isinstance(reasoning, str) else ""
    if isinstance(score, str) and _WHOLE.fullmatch(score):
        score = int(score.strip().split(".")[0])  # "7", as Sotopia's pydantic model reads it: a whole number as text
    if score is ...:
        reading.problems[name] = "no score"
    elif score is None:
        reading.declared[name] = reading.reasoning[name] or "the evaluator gave no score"
    elif isinstance(score, bool) or not isinstance(score, (int, float)) or (
            isinstance(score, float) and (not math.isfinite(score) or not score.is_integer())):
        reading.problems[name] = f"the score {json.dumps(score)[:40]} is not a whole number"
        reading.answered[name] = score if isinstance(score, (int, float, str)) else json.dumps(score)[:40]
    elif not dimension.holds(int(score)):
        reading.problems[name] = f"the score {int(score)} is outside {dimension.range_text}"
        reading.answered[name] = int(score)
    else:
        reading.scores[name] = int(score)
