"""The YAML blocks of spec 002 and their deterministic fallbacks. Pure functions, no I/O.

The facilitator answers a question (`action: question`) or a synthesis (`action: synthesis`);
a participant answers with `position`, `rationale` and `confidence` (0-1). Each parser returns the
parsed value and, when the text could not be used as it stands, a `problem` saying why: the caller
logs it. Invalid facilitator YAML gets spec 002's fallback texts; an unusable participant answer is
salvaged (its first line as the position, the rest as the rationale, confidence unknown).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from promptdesk.core.protocol.bounded import Unbounded, load_yaml
from promptdesk.core.protocol.fences import first_indented_block
from promptdesk.core.protocol.reasoning import without_reasoning

NEXT_ACTIONS = ("continue", "phase", "conclude", "escalate")
_FENCE = re.compile(r"```(?:ya?ml|json)?[ \t]*\r?\n(.*?)(?:```|\Z)", re.S | re.I)
MAX_ROUNDS_NOTE = "Discussion reached maximum rounds without full consensus."


@dataclass
class Question:
    """The facilitator's question for one round."""

    question: str
    participants: str | list[str] = "all"
    focus: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"question": self.question, "participants": self.participants, "focus": self.focus}


@dataclass
class Synthesis:
    """The facilitator's synthesis of one round, and what to do next."""

    synthesis: str
    consensus: list[str] = field(default_factory=list)
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)
    next_action: str = "continue"
    next_focus: str = ""
    recommendation: str = ""
    output_type: str = ""
    """What the discussion produces (spec 002: e.g. `summary`), when the facilitator says."""

    def to_dict(self) -> dict[str, Any]:
        data = {"synthesis": self.synthesis, "consensus": self.consensus, "conflicts": self.conflicts,
                "resolved": self.resolved, "next_action": self.next_action, "next_focus": self.next_focus}
        extra = {"recommendation": self.recommendation, "output_type": self.output_type}
        return {**data, **{k: v for k, v in extra.items() if v}}


@dataclass
class Answer:
    """One participant's answer. `confidence` is None when it was missing or unusable."""

    position: str
    rationale: str = ""
    confidence: float | None = None
    fallback: bool = False

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"position": self.position, "rationale": self.rationale, "confidence": self.confidence}
        return {**data, "fallback": True} if self.fallback else data


def fenced(text: str, tags: tuple[str, ...] = ("yaml", "yml")) -> str | None:
    """The body of the first fenced block, or None when there is none. The block ends at a fence on a
    line of its own, indented as the opening one: a fence inside the YAML (a code sample in a
    rationale, a topic that quotes one) is indented deeper and never cuts the block short. A block
    that never closes that way ends at the next fence, or at the end of the text."""
    block = first_indented_block(text, tags=tags)
    if block is not None:
        return block
    match = _FENCE.search(text)
    return match.group(1) if match else None


_KEY_LINE = re.compile(r"[A-Za-z_][\w-]*[ \t]*:(?:[ \t]|$)")


def _keyed_lines(text: str, keys: tuple[str, ...]) -> str | None:
    """The `key: value` lines of an unfenced answer with prose around them (a model's "Sure, here is my
    view:" before, "Happy to discuss." after): from the first line that opens with one of `keys` to the
    last line that still reads as YAML (a key, an indented or list line, a blank); None without one."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if (m := _KEY_LINE.match(ln.lstrip()))
                  and m.group(0).split(":")[0].strip().lower() in keys), None)
    if start is None:
        return None
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][:1] in " \t-" or _KEY_LINE.match(lines[end])):
        end += 1
    return "\n".join(lines[start:end])


def _braced(text: str) -> str | None:
    """A JSON object with prose around it (`My answer: {"position": ...}`): first `{` to last `}`."""
    start, end = text.find("{"), text.rfind("}")
    return text[start:end + 1] if 0 <= start < end and (start or end < len(text) - 1) else None


def _keys_folded(data: dict[Any, Any], keys: tuple[str, ...]) -> dict[Any, Any]:
    """`data` with its keys read case-blind (`Position:` is `position:`; a key already written in
    lower case wins), and unwrapped when the whole answer sits under one key (`answer: {position: ...}`)."""
    folded: dict[Any, Any] = {}
    for key, value in data.items():
        low = key.strip().lower() if isinstance(key, str) else key
        if low not in folded or low == key:
            folded[low] = value
    if keys and not any(k in folded for k in keys) and len(folded) == 1:
        inner = next(iter(folded.values()))
        if isinstance(inner, dict):
            return _keys_folded(inner, ())
    return folded


def _load(body: str) -> tuple[dict[str, Any] | None, str | None]:
    if not body.strip():
        return None, "empty answer"
    try:
        data = load_yaml(body, unique_keys=True, as_written=True)
    except Unbounded as exc:
        return None, f"unusable YAML ({exc})"
    except yaml.YAMLError as exc:
        return None, f"invalid YAML ({str(exc).splitlines()[0]})"
    if not isinstance(data, dict):
        return None, f"the YAML is {type(data).__name__}, not a mapping"
    return data, None


def yaml_block(text: str, keys: tuple[str, ...] = ()) -> tuple[dict[str, Any] | None, str | None]:
    """The mapping in the first fenced YAML (or JSON) block, else the whole text, else, when the text
    has prose around its answer, the object in braces or the `key: value` lines that open with one of
    `keys` (the field the caller needs); else None and the problem. Keys are read case-blind. A
    reasoning model's `<think>` preamble is never read (`without_reasoning`). Every value is the text
    written (`position: yes` is `yes`, not `True`; `position: 007` keeps its zeros), and a key given twice
    in one mapping is a problem (YAML would keep the last silently), as in every YAML file read."""
    text = without_reasoning(text or "")
    block = fenced(text, ("yaml", "yml", "json"))
    first: tuple[dict[str, Any] | None, str | None] | None = None
    for body in (block if block is not None else text, _braced(text), _keyed_lines(text, keys)):
        if body is None:
            continue
        data, problem = _load(body)
        if data is not None:
            data = _keys_folded(data, keys)
        found = (data, problem)
        if first is None:
            first = found
        if data is not None and (not keys or any(k in data for k in keys)):
            return found
    return first if first is not None else (None, "empty answer")


def fallback_question(topic: str) -> Question:
    """Spec 002's fallback for question generation (a topic asked as a question keeps one question mark)."""
    topic = topic.rstrip().rstrip("?\uff1f\u061f").rstrip()
    return Question(question=f"What are the key considerations for {topic}?", participants="all",
                    focus="Core requirements and constraints")


def fallback_synthesis(topic: str) -> Synthesis:
    """Spec 002's fallback for a synthesis."""
    return Synthesis(synthesis=f"Discussion on {topic} requires further exploration.", next_focus="Clarify positions")


def fallback_conclusion(consensus: list[str], conflicts: list[dict[str, Any]]) -> Synthesis:
    """Spec 002's fallback for the concluding synthesis when `max_rounds` is reached."""
    return Synthesis(synthesis=MAX_ROUNDS_NOTE, consensus=list(consensus), conflicts=list(conflicts),
                     next_action="conclude",
                     recommendation="Review consensus points and address unresolved items separately.",
                     output_type="summary")


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [_text(i) if not isinstance(i, dict) else "; ".join(f"{k}: {v}" for k, v in i.items()) for i in items
            if _text(i)]


def conflict(item: Any) -> dict[str, Any]:
    """A conflict as `{topic, positions?}`, from a string or a mapping (`topic`/`issue`/`conflict` key)."""
    if isinstance(item, dict):
        topic = _text(item.get("topic") or item.get("issue") or item.get("conflict") or item.get("description"))
        out: dict[str, Any] = {"topic": topic or "; ".join(f"{k}: {v}" for k, v in item.items())}
        if isinstance(item.get("positions"), dict):
            out["positions"] = {str(k): _text(v) for k, v in item["positions"].items()}
        return out
    return {"topic": _text(item)}


UNKNOWN_PARTICIPANTS = "unknown participants"
"""How the note of a question naming participants not at the table begins (the question itself is kept)."""


def _named(value: Any, cast: Mapping[str, str]) -> str | None:
    """The slug of the participant `value` names, by slug or by name in any case (a model writes
    `Alice` or `alice` for `alice`); None when it names no one at the table."""
    wanted = _text(value).lower()
    return next((slug for slug, name in cast.items() if wanted in (slug.lower(), name.strip().lower())), None)


def parse_question(text: str, topic: str, cast: Sequence[str] | Mapping[str, str]) -> tuple[Question, str | None]:
    """The facilitator's question; spec 002's fallback question when there is none to read. `cast` is
    the table (slugs, or slug -> name): `participants` may name them by slug or name, as a list or as
    one text (`alice, bob`); anything but `all` that names no one is noted and read as `all`."""
    data, problem = yaml_block(text, ("question",))
    if data is None or not _text(data.get("question")):
        return fallback_question(topic), problem or "no `question` in the facilitator's YAML"
    table = dict(cast) if isinstance(cast, Mapping) else {s: s for s in cast}
    wanted = data.get("participants", "all")
    if isinstance(wanted, str) and wanted.strip().lower() not in ("all", "everyone", ""):
        wanted = [w for w in re.split(r"\s*[,;]\s*|\s+and\s+", wanted.strip()) if w.strip()]
    chosen: str | list[str] = "all"
    note = None
    if isinstance(wanted, list) and wanted:
        found = [(w, _named(w, table)) for w in wanted]
        chosen = list(dict.fromkeys(slug for _, slug in found if slug))
        unknown = [w for w, slug in found if slug is None]
        if unknown:
            note = f"{UNKNOWN_PARTICIPANTS} {unknown} dropped"
        chosen = chosen or "all"
    return Question(_text(data["question"]), chosen, _text(data.get("focus"))), note


def parse_synthesis(text: str, topic: str) -> tuple[Synthesis, str | None]:
    """The facilitator's synthesis; spec 002's fallback synthesis when there is none to read."""
    data, problem = yaml_block(text, ("synthesis", "next_action"))
    if data is None or not (_text(data.get("synthesis")) or "next_action" in data):
        return fallback_synthesis(topic), problem or "no `synthesis` in the facilitator's YAML"
    written = _text(data.get("next_action")).lower()
    named = {w for w in re.findall(r"[a-z]+", written) if w in NEXT_ACTIONS}
    action = written if written in NEXT_ACTIONS else named.pop() if len(named) == 1 else "continue" if not written else ""
    note = None
    if not action:  # `Conclude.`, `next phase`, `conclude (we agree)` name one; `continue or conclude` none
        note, action = f"unknown next_action {written!r} read as continue", "continue"
    conflicts = data.get("conflicts") or []
    conflicts = [conflict(c) for c in (conflicts if isinstance(conflicts, list) else [conflicts]) if c]
    return Synthesis(synthesis=_text(data.get("synthesis")), consensus=_strings(data.get("consensus")),
                     conflicts=[c for c in conflicts if c["topic"]], resolved=_strings(data.get("resolved")),
                     next_action=action, next_focus=_text(data.get("next_focus")),
                     recommendation=_text(data.get("recommendation")), output_type=_text(data.get("output_type"))), note


def confidence(value: Any) -> float | None:
    """A confidence in [0, 1]. Percentages (`70%`, `70`) are scaled, a decimal comma (`0,8`) reads as a
    point and a fraction (`7/10`) is divided; a remark after the number (`0.8 (fairly sure)`, `70% - not
    certain`) and a closing full stop are left aside; a bare number above 1 up to 10 (`7`: seven out of ten, or
    seven percent?) is not guessed at, nor is anything else: None."""
    if isinstance(value, bool) or value is None:
        return None
    raw = str(value).strip().rstrip(".")
    said = re.fullmatch(r"([+-]?[\d.,]+\s*(?:%|/\s*\d+(?:\.\d+)?)?)\s*(?:\(.*\)|[-\u2013\u2014:;,]\s.*)", raw, re.S)
    raw = said.group(1).strip() if said else raw  # `0.8 (fairly sure)`, `70% - I am not certain`
    percent = raw.endswith("%")
    raw = raw.removesuffix("%").strip()
    if re.fullmatch(r"[+-]?\d+,\d+", raw):
        raw = raw.replace(",", ".")
    fraction = re.fullmatch(r"(\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)", raw)
    try:
        number = float(fraction.group(1)) / float(fraction.group(2)) if fraction else float(raw)
    except (ValueError, ZeroDivisionError):
        return None
    if percent or (not fraction and 10 < number <= 100):
        number /= 100
    elif not fraction and number > 1:
        return None
    return round(number, 3) if 0 <= number <= 1 else None


def parse_answer(text: str) -> tuple[Answer, str | None]:
    """A participant's answer; a salvaged one (first line, rest, no confidence) when unreadable."""
    data, problem = yaml_block(text, ("position",))
    if data is None or not _text(data.get("position")):
        return salvage_answer(text), problem or "no `position` in the participant's YAML"
    value = confidence(data.get("confidence"))
    given = data.get("confidence")
    note = None if value is not None else f"confidence {given if given is None else repr(given)[1:-1][:40]} is not a number in 0-1"
    return Answer(_text(data["position"]), _text(data.get("rationale")), value), note


def salvage_answer(text: str) -> Answer:
    """The deterministic fallback for a participant: first line as position, the rest as rationale;
    never a reasoning model's private reasoning (`without_reasoning`)."""
    lines = [ln.strip(" -*#>`\t") for ln in without_reasoning(text or "").splitlines()]
    lines = [ln for ln in lines if ln and not ln.lower().startswith(("yaml", "```"))]
    if not lines:
        return Answer("(no answer)", "", None, fallback=True)
    return Answer(lines[0][:200], " ".join(lines[1:])[:800], None, fallback=True)
