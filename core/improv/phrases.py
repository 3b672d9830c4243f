"""The improviser's manner banks: the mood of each move, tones, gestures. No proper names and no
spoken words: every line is drawn from the scene grammar (`scene_rules`) with the request's own words.
"""

from __future__ import annotations

MOOD_OF = {"open": "neutral", "press": "tense", "explain": "tense", "question": "neutral",
           "echo": "neutral", "concede": "soft", "mediate": "soft", "propose": "warm",
           "agree": "warm", "interrupt": "tense", "event": "startled", "wind_down": "warm",
           "close": "warm", "confide": "soft", "apologise": "soft", "accept": "warm", "agree_goal": "warm",
           "admit": "soft", "mention": "neutral", "ask": "neutral", "aftermath": "neutral"}

TONES = {
    "tense": ("frustrated", "firm", "stern", "defensive", "impatient", "tense"),
    "neutral": ("measured", "curious", "careful", "direct", "level"),
    "soft": ("softening", "earnest", "apologetic", "quiet", "gentle"),
    "warm": ("relieved", "warm", "accepting", "hopeful", "grateful"),
    "startled": ("startled", "surprised", "alarmed", "wary"),
}

VALENCE = {
    "tense": {"angry", "frustrated", "disappointed", "upset", "stressed", "annoyed", "irritated",
              "impatient", "tense", "guarded", "defensive", "furious", "stern", "sharp"},
    "soft": {"anxious", "nervous", "sad", "hurt", "quiet", "apologetic", "gentle", "calm", "shy"},
    "warm": {"pleased", "happy", "warm", "relaxed", "amused", "content", "grateful", "relieved",
             "hopeful", "friendly", "cheerful", "kind"},
}

GESTURES = {
    "tense": ("crosses {their} arms", "taps the table", "leans forward", "narrows {their} eyes", "sits up straight"),
    "neutral": ("tilts {their} head", "glances at the window", "folds {their} hands", "nods slowly"),
    "soft": ("looks down at {their} hands", "rubs the back of {their} neck", "exhales slowly", "lowers {their} voice"),
    "warm": ("sits back", "smiles a little", "relaxes {their} shoulders", "nods"),
    "startled": ("looks up sharply", "flinches", "turns toward the noise"),
}

SILENT_GESTURES = ("shifts uncomfortably in {their} chair", "looks out the window", "stares at the table",
                   "fiddles with a pen", "glances between them", "listens", "nods slightly")

GESTURE_VERBS = frozenset(
    "maintains makes avoids relaxes crosses folds leans looks glances taps drums fidgets sighs nods "
    "shrugs smiles frowns rubs raises lowers sits stands paces adjusts touches clenches fiddles "
    "shifts tilts laughs gestures points stares narrows rolls scratches grips wrings".split())


def theirs(gesture: str, pronoun: str) -> str:
    """A stock gesture with the character's own possessive (`rubs the back of his neck`; `their` when the
    profile gives no pronoun), never a bare body part (`rubs the back of neck`)."""
    return gesture.replace("{their}", {"he": "his", "she": "her"}.get(pronoun, "their"))
