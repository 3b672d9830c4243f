"""Word banks the improviser draws from. No proper names: every name it says comes from the request.

Slots: `{to}` the addressee, `{topic}` a noun phrase from the scene, `{echo}` a few words from the
last line someone else said, `{place}` the setting.
"""

from __future__ import annotations

SPEECH: dict[str, tuple[str, ...]] = {
    "open": (
        "Thanks for coming. I wanted to talk about {topic}.",
        "I'm glad we could all sit down. It's about {topic}.",
        "Before anyone says anything, I want to put {topic} on the table.",
        "{to}, have you got a minute? It's about {topic}.",
        "Let's not dance around it. We're here because of {topic}.",
    ),
    "press": (
        "We need to talk about {topic}. Now.",
        "I want a straight answer about {topic}.",
        "How did {topic} get this far without anyone saying a word?",
        "Don't tell me it was nobody's fault, {to}.",
        "Be honest with me, {to}. What happened?",
        "I keep coming back to {topic}. Explain it to me.",
    ),
    "explain": (
        "Look, I can explain what happened with {topic}.",
        "It wasn't as simple as it looks from the outside.",
        "I know how it sounds. Let me finish.",
        "There's more to {topic} than anyone has said so far.",
        "I didn't plan for it to go this way, {to}.",
    ),
    "question": (
        "What would you have done, {to}?",
        "Can I ask what you actually need from me here?",
        "Is that really what this is about?",
        "So where does that leave {topic}?",
        "What does a good outcome look like to you, {to}?",
    ),
    "echo": (
        "'{echo}'? That's not how I remember it.",
        "When you say '{echo}', what do you mean exactly?",
        "You said '{echo}'. I'm still thinking about that.",
        "'{echo}' - fine. But that isn't the whole story, {to}.",
    ),
    "concede": (
        "You're right. I should have said something sooner.",
        "Fair. I'll own my part in {topic}.",
        "I hear you, {to}. I do.",
        "That's fair, and it stings a little.",
        "I'm sorry. I mean that.",
    ),
    "mediate": (
        "Maybe we should all take a breath.",
        "Can we slow down for a second?",
        "I think we want the same thing here.",
        "Let's keep this about {topic}, not about each other.",
    ),
    "propose": (
        "Here's what I suggest: we sort out {topic} step by step, together.",
        "What if we check in every week until {topic} is settled?",
        "Let's write down who does what about {topic}, today.",
        "I can take the first step on {topic} tomorrow morning.",
    ),
    "agree": (
        "Okay. Let's do that.",
        "That works for me, {to}.",
        "Agreed. No more surprises.",
        "I can live with that.",
    ),
    "interrupt": (
        "No - let me stop you there.",
        "Hold on, {to}. That's not it.",
        "Wait. Before you go on -",
        "Sorry, I have to jump in. This is about {topic}, remember?",
        "No. We keep circling {topic} and never landing.",
        "Stop. We are talking about {topic}, not a detail.",
    ),
    "event": (
        "Should someone deal with that?",
        "Well. That's one way to break the tension.",
        "Let's not pretend that didn't happen.",
        "Of all the moments.",
    ),
    "wind_down": (
        "I think we're nearly there.",
        "We've covered most of it, haven't we?",
        "Let's not drag this out longer than it needs.",
    ),
}

MOOD_OF = {"open": "neutral", "press": "tense", "explain": "tense", "question": "neutral",
           "echo": "neutral", "concede": "soft", "mediate": "soft", "propose": "warm",
           "agree": "warm", "interrupt": "tense", "event": "startled", "wind_down": "warm",
           "close": "warm"}

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
    "tense": ("crosses arms", "taps the table", "leans forward", "narrows eyes", "sits up straight"),
    "neutral": ("tilts head", "glances at the window", "folds hands", "nods slowly"),
    "soft": ("looks down at hands", "rubs the back of neck", "exhales slowly", "lowers voice"),
    "warm": ("sits back", "smiles a little", "relaxes shoulders", "nods"),
    "startled": ("looks up sharply", "flinches", "turns toward the noise"),
}

SILENT_GESTURES = ("shifts uncomfortably in chair", "looks out the window", "stares at the table",
                   "fiddles with a pen", "glances between them", "listens", "nods slightly")

GESTURE_VERBS = frozenset(
    "maintains makes avoids relaxes crosses folds leans looks glances taps drums fidgets sighs nods "
    "shrugs smiles frowns rubs raises lowers sits stands paces adjusts touches clenches fiddles "
    "shifts tilts laughs gestures points stares narrows rolls scratches grips wrings".split())

EVENT_CUES = (
    (("phone", "ring", "buzz"), "glances at the phone",
     ("Should someone get that?", "Leave it. This matters more.", "Of course. Right now.")),
    (("door", "knock", "enter", "janitor"), "turns toward the door",
     ("Were we expecting anyone?", "Can it wait a minute?", "Come in - or don't.")),
    (("thunder", "storm", "rain", "lightning", "lights"), "looks up at the ceiling",
     ("That storm is getting closer.", "Well, that fits the mood.", "Nobody panic.")),
    (("crash", "drop", "smash", "glass", "spill"), "jumps at the noise",
     ("Is everyone alright?", "What was that?", "Nobody move for a second.")),
)
