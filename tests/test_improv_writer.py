"""The offline improviser read line by line as a writer reads: what it makes of words a scene file
holds (an event whose subject opens on a word that is also a verb, an abbreviation inside a sentence,
a profile bullet opening on an adverb, a goal naming someone by a family title). Each test states a
property of the reading over several inputs, never one wording."""

from __future__ import annotations

import re

import pytest

from promptdesk.core.improv.directions import read_event

_DETERMINER = r"(?:a|an|the|some|his|her|their)"


@pytest.mark.parametrize("text", ["The crash bell goes off in bay two", "A drop of water falls from the ceiling",
                                  "The cut rope snaps loudly", "The break room door slams shut",
                                  "The stop sign falls over", "Her call button buzzes twice"])
def test_an_event_object_is_a_noun_phrase_of_the_event_even_when_its_noun_is_also_a_verb(text):
    event = read_event(text)
    words = event.thing.split()
    assert len(words) >= 2 and not re.fullmatch(_DETERMINER, words[-1], re.I)
    assert not any(re.fullmatch(_DETERMINER, a, re.I) and re.fullmatch(_DETERMINER, b, re.I)
                   for a, b in zip(words, words[1:]))
    assert " ".join(words[1:]).lower() in text.lower()
    assert event.action and event.action.split()[0] not in event.thing.split()
