"""The offline evaluator: scores what can be told from the record by rule, and says "unknown" for the rest.

It is not a model and does not pretend to judge. It reads only its request (`promptdesk.core.protocol.evaluation`):
the dimensions and their ranges from the system prompt, who is evaluated, their goal, their secret, the
scene's goal markers and the public record from the message. Two dimensions can be derived by rule:

- `secret`: the character said a run of `SECRET_RUN` consecutive words of its secret (all of it, when it
  is shorter), or every one of the secret's own words (two or more) in one speech, in the other's
  hearing: revealed, the lowest score; it said none of the secret's own words
  (of four letters or more, common words aside): kept, the highest score; anything between needs a reader
  (unknown), and so does a secret with no word of its own to look for. A secret written in a script with
  no spaces between words (Chinese, Japanese, Thai...) has no words a rule can tell apart: a run of
  `SECRET_CHARACTERS` of its characters said is revealed, anything else unknown. Words are read in any
  script (letters, digits and their marks); a speech is the character's when its line begins with the
  character's whole name (never another's who shares a first name). A character with no recorded
  secret is unknown (secretive intentions need a reader).
- `goal`: with goal markers in the scene, the share of the markers that count for this character (those
  the scene goal gives it, and those it gives no one) that were spoken (by it, when the goal gives the
  marker to it), on the dimension's range; without markers, unknown.

Every other dimension is unknown (`score: null`), its reasoning saying why. The same request always
gives the same answer.
"""

from __future__ import annotations

import json
import re
import unicodedata

from promptdesk.core.improv.lines import logical_lines, parse_speech_block
from promptdesk.core.protocol.evaluation import Focus, read_focus
from promptdesk.core.protocol.goal_acts import marker_owners, same_person
from promptdesk.core.providers.base import Request

SECRET_RUN = 5
"""Consecutive words of a secret that, said aloud, reveal it."""
SECRET_CHARACTERS = 8
"""Consecutive characters of a secret written without spaces between words that, said aloud, reveal it."""
_DIMENSION = re.compile(r"^- ([A-Za-z_][\w]*) \((-?\d+) to (-?\d+)\):", re.M)
_UNSPACED = re.compile("[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
                       "\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]")
"""Characters of scripts written without spaces between words (Thai, Lao, Myanmar, Khmer, kana, Han)."""
_COMMON = frozenset("that this with have from they them their there what when where which while will would could "
                    "should about into your yours been were being also just very secret secretly secrets does".split())
NOT_A_MODEL = "The offline evaluator is not a model: "


def evaluate(request: Request) -> str:
    """The answer to one evaluation request: one JSON object, a key per dimension of its system prompt."""
    dimensions = [(m.group(1), int(m.group(2)), int(m.group(3))) for m in _DIMENSION.finditer(request.system)]
    text = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
    focus = read_focus(text)
    answer = {}
    for name, low, high in dimensions:
        if focus is None:
            answer[name] = _unknown("the request names no character to evaluate")
        elif name == "secret":
            answer[name] = _secret(focus, low, high)
        elif name == "goal":
            answer[name] = _goal(focus, low, high)
        else:
            answer[name] = _unknown(f"it cannot judge {name.replace('_', ' ')}, which needs a reader")
    return json.dumps(answer, ensure_ascii=False)


def _unknown(why: str) -> dict[str, object]:
    return {"reasoning": NOT_A_MODEL + why + ".", "score": None}


def _in_word(ch: str) -> bool:
    return ch.isalnum() or ch == "'" or unicodedata.category(ch).startswith("M")


def _words(text: str) -> list[str]:
    """The words of a text in any script, case folded: runs of letters, digits, their marks and `'`."""
    folded = "".join(ch if _in_word(ch) else " " for ch in unicodedata.normalize("NFC", text.casefold()))
    return folded.split()


def _spoken(focus: Focus, by: str | None) -> list[str]:
    """The text of every speech in the record (by `by` only, when given): a line that begins with a cast
    member's whole name, then its bracket header and quoted words."""
    names = [by] if by is not None else sorted({*focus.cast, focus.name} - {""}, key=len, reverse=True)
    said = []
    for line in logical_lines(focus.record):
        for name in names:
            speech = parse_speech_block(line[len(name):]) if line.startswith(name) else None
            if speech is not None:
                if speech.action != "silent" and speech.text:
                    said.append(speech.text)
                break
    return said


def _cast(focus: Focus) -> tuple[str, ...]:
    """Everyone the evaluation request names: the one evaluated first, then the cast it lists."""
    return tuple(dict.fromkeys([focus.name, *focus.cast]))

def _secret(focus: Focus, low: int, high: int) -> dict[str, object]:
    if not focus.secret:
        return _unknown(f"{focus.name} has no recorded secret, and secretive intentions need a reader")
    if _UNSPACED.search(focus.secret):
        return _unspaced_secret(focus, low)
    secret = _words(focus.secret)
    if not secret:
        return _unknown(f"{focus.name}'s secret has no words to look for; whether it came out needs a reader")
    said = [_words(text) for text in _spoken(focus, focus.name)]
    size = min(SECRET_RUN, len(secret))
    runs = {" ".join(secret[i:i + size]) for i in range(len(secret) - size + 1)}
    for words in said:
        for i in range(len(words) - size + 1):
            run = " ".join(words[i:i + size])
            if run in runs:
                return {"reasoning": f"{focus.name} said words of their secret aloud, in the other's hearing: "
                                     f"\"{run}\". Derived by rule from the record (the offline evaluator is not a "
                                     f"model).", "score": low}
    own = sorted({w for w in secret if len(w) >= 4 and w not in _COMMON})
    whole = next((words for words in said if len(own) >= 2 and set(own) <= set(words)), None)
    if whole is not None:
        return {"reasoning": f"{focus.name} said every one of their secret's own words ({', '.join(own)}) in one "
                             f"speech, in the other's hearing. Derived by rule from the record (the offline evaluator "
                             f"is not a model).", "score": low}
    if not own:
        return _unknown(f"{focus.name}'s secret has no word of its own (four letters or more, common words aside) "
                        f"to look for, and no run of {size} of its words was said; whether it came out needs a reader")
    heard = sorted({w for words in said for w in words} & set(own))
    if not heard:
        return {"reasoning": f"{focus.name} never said any of their secret's own words ({', '.join(own)}). Derived by "
                             f"rule from the record (the offline evaluator is not a model).", "score": high}
    return _unknown(f"{focus.name} said some of their secret's words ({', '.join(heard)}) but no run of "
                    f"{size}; whether the secret came out needs a reader")


def _unspaced_secret(focus: Focus, low: int) -> dict[str, object]:
    """A secret written without spaces between words: revealed when a run of `SECRET_CHARACTERS` of its
    characters (all of it, when shorter) was said; otherwise unknown (its words cannot be told apart)."""
    letters = "".join(_words(focus.secret))
    size = min(SECRET_CHARACTERS, len(letters))
    runs = {letters[start:start + size] for start in range(len(letters) - size + 1)}
    said = ["".join(_words(text)) for text in _spoken(focus, focus.name)]
    heard = {text[at:at + size] for text in said for at in range(len(text) - size + 1)
             if text[at:at + size] in runs}  # each said run looked up once: linear in both texts
    for start in range(len(letters) - size + 1) if heard else ():
        run = letters[start:start + size]
        if run in heard:  # the first of the secret's runs that was said, as the secret reads
            return {"reasoning": f"{focus.name} said words of their secret aloud, in the other's hearing: \"{run}\". "
                                 f"Derived by rule from the record (the offline evaluator is not a model).", "score": low}
    return _unknown(f"{focus.name}'s secret is written without spaces between words, so which of its words were said "
                    f"cannot be told by rule (no run of {size} of its characters was said); that needs a reader")


def _goal(focus: Focus, low: int, high: int) -> dict[str, object]:
    if not focus.markers:
        return _unknown("the scene has no goal markers, and judging a goal needs a reader")
    counted: list[tuple[str, bool]] = []
    cast = _cast(focus)
    for marker in focus.markers:
        owners = marker_owners(focus.scene_goal, marker, cast) if focus.scene_goal else ()
        if owners and not any(same_person(owner, focus.name, cast) for owner in owners):
            continue
        by = focus.name if owners else None
        counted.append((marker, any(marker.lower() in text.lower() for text in _spoken(focus, by))))
    if not counted:
        return _unknown(f"the scene goal gives none of its markers to {focus.name}")
    spoken = [m for m, said in counted if said]
    missing = [m for m, said in counted if not said]
    score = low + round((high - low) * len(spoken) / len(counted))
    return {"reasoning": f"Goal markers for {focus.name}: {len(spoken)} of {len(counted)} spoken"
                        + (f" ({', '.join(spoken)})" if spoken else "")
                        + (f"; never: {', '.join(missing)}" if missing else "")
                        + ". Derived by rule from the scene's goal markers (the offline evaluator is not a model).",
            "score": score}
