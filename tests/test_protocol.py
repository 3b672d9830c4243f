"""The actor protocol: tags of spec 000, bracket header of spec 004 (Appendix B, parser tests)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptdesk.core.engine.journals import entry_of
from promptdesk.core.protocol.reply import (
    CORRECTION_PROMPT,
    EXPLICIT_CLOSE,
    ParsedTurn,
    Speech,
    TagSplitter,
    parse_speech,
    parse_turn,
    salvage,
)
from promptdesk.core.protocol.lines import speech_line
from promptdesk.core.record.events import SpeakEvent

PROPERTY = settings(max_examples=200, deadline=None)


def turn(thinking: str, speech: str) -> str:
    """A response rendered exactly as the protocol asks."""
    return f"<thinking>{thinking}</thinking>\n<speech>{speech}</speech>"


# --- spec 004 "Response Parser Tests" -------------------------------------------------------


def test_directed_dialog_with_tone_has_target_tone_and_unquoted_content():
    parsed = parse_speech('[TO: Bob, TONE: angry] "Why did you do that?"')
    assert parsed.action == "speak"
    assert parsed.target == "Bob"
    assert parsed.tone == "angry"
    assert parsed.content == "Why did you do that?"
    assert parsed.nonverbal is None
    assert parsed.interrupt_after is None
    assert parsed.closes_scene is False


def test_interruption_with_phrase_records_the_phrase_and_the_tone():
    parsed = parse_speech('[INTERRUPT after "I want to", TONE: furious] "No!"')
    assert parsed.action == "interrupt"
    assert parsed.interrupt_after == "I want to"
    assert parsed.tone == "furious"
    assert parsed.content == "No!"
    assert parsed.target is None


def test_silent_with_nonverbal_is_silent_and_keeps_the_gesture():
    parsed = parse_speech("[SILENT, *crosses arms*]")
    assert parsed.action == "silent"
    assert parsed.nonverbal == "crosses arms"
    assert parsed.content == ""
    assert parsed.tone is None
    assert parsed.raw == "[SILENT, *crosses arms*]"


def test_malformed_response_does_not_raise_and_is_plain_speech():
    raw = "Just some text without formatting"
    parsed = parse_speech(raw)
    assert parsed == Speech(action="speak", content=raw, raw=raw)


# --- spec 004 Message Format Specification and Appendix B ----------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            '[TO: Bob, TONE: frustrated] "I can\'t believe you would miss such an important deadline!"',
            dict(action="speak", target="Bob", tone="frustrated",
                 content="I can't believe you would miss such an important deadline!"),
        ),
        (
            '[TONE: nervous] "Maybe we should all take a moment to calm down."',
            dict(action="speak", target=None, tone="nervous",
                 content="Maybe we should all take a moment to calm down."),
        ),
        (
            '[TO: Alice, TONE: apologetic, *looks down at hands*] "You\'re right. I messed up."',
            dict(action="speak", target="Alice", tone="apologetic", nonverbal="looks down at hands",
                 content="You're right. I messed up."),
        ),
        (
            '[INTERRUPT after "I want to", TONE: angry] "No! You don\'t get to make excuses!"',
            dict(action="interrupt", interrupt_after="I want to", tone="angry",
                 content="No! You don't get to make excuses!"),
        ),
        (
            "[SILENT, *shifts uncomfortably in chair*]",
            dict(action="silent", nonverbal="shifts uncomfortably in chair", content="", tone=None),
        ),
        (
            "[REACT, TONE: shocked, *drops coffee mug*]",
            dict(action="react", tone="shocked", nonverbal="drops coffee mug", content=""),
        ),
    ],
    ids=["directed", "general", "nonverbal", "interruption", "silent", "react"],
)
def test_message_format_examples_parse_field_by_field(raw, expected):
    parsed = parse_speech(raw)
    for field, value in expected.items():
        assert getattr(parsed, field) == value, field
    assert parsed.raw == raw


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('[TO: Bob, TONE: angry] "Why?"',
         Speech("speak", "Why?", '[TO: Bob, TONE: angry] "Why?"', target="Bob", tone="angry")),
        ('[TONE: nervous] "Um, maybe..."',
         Speech("speak", "Um, maybe...", '[TONE: nervous] "Um, maybe..."', tone="nervous")),
        ('[TO: Alice, TONE: sad, *looks down*] "Sorry."',
         Speech("speak", "Sorry.", '[TO: Alice, TONE: sad, *looks down*] "Sorry."',
                target="Alice", tone="sad", nonverbal="looks down")),
        ('[INTERRUPT after "I think", TONE: angry] "No!"',
         Speech("interrupt", "No!", '[INTERRUPT after "I think", TONE: angry] "No!"',
                tone="angry", interrupt_after="I think")),
        ("[SILENT]", Speech("silent", "", "[SILENT]")),
        ("[SILENT, *crosses arms*]", Speech("silent", "", "[SILENT, *crosses arms*]", nonverbal="crosses arms")),
        ("[REACT, TONE: shocked, *gasps*]",
         Speech("react", "", "[REACT, TONE: shocked, *gasps*]", tone="shocked", nonverbal="gasps")),
    ],
    ids=["directed", "general", "nonverbal", "interruption", "silent", "silent-nonverbal", "react"],
)
def test_appendix_b_quick_reference_examples_parse_exactly(raw, expected):
    assert parse_speech(raw) == expected


# --- tolerance of the header ---------------------------------------------------------------


def test_header_keys_are_case_insensitive_and_spaces_are_ignored():
    parsed = parse_speech('  [ to:  Bob ,   Tone:nervous ]   "Hi."  ')
    assert (parsed.target, parsed.tone, parsed.content) == ("Bob", "nervous", "Hi.")


def test_curly_quotes_are_stripped_like_straight_quotes():
    parsed = parse_speech("[INTERRUPT after “I want to”, TONE: angry] “No!”")
    assert parsed.action == "interrupt"
    assert parsed.interrupt_after == "I want to"
    assert parsed.content == "No!"


def test_content_may_span_several_lines_after_the_header():
    parsed = parse_speech('[TO: Bob]\n"First line.\nSecond line."')
    assert parsed.content == "First line.\nSecond line."
    assert parsed.target == "Bob"


def test_unknown_header_keys_are_ignored():
    parsed = parse_speech('[TO: Bob, MOOD: grim, VOLUME: low, TONE: flat] "Fine."')
    assert (parsed.target, parsed.tone, parsed.content) == ("Bob", "flat", "Fine.")


def test_missing_closing_quote_still_yields_the_words():
    assert parse_speech('[TONE: sad] "I never meant it').content == "I never meant it"


def test_unquoted_text_after_a_header_is_the_content():
    assert parse_speech("[TO: Bob] You missed it.").content == "You missed it."


def test_several_gestures_are_joined_with_semicolons():
    assert parse_speech("[SILENT, *sighs*, *looks away*]").nonverbal == "sighs; looks away"


def test_interrupt_phrase_may_contain_a_comma():
    parsed = parse_speech('[INTERRUPT after "well, I", TONE: cold] "Stop."')
    assert (parsed.interrupt_after, parsed.tone, parsed.content) == ("well, I", "cold", "Stop.")


def test_interrupt_with_an_unclosed_phrase_keeps_the_other_keys():
    parsed = parse_speech('[INTERRUPT after "I want to, TONE: angry] "No!"')
    assert (parsed.action, parsed.interrupt_after, parsed.tone) == ("interrupt", "I want to", "angry")


def test_interrupt_without_a_phrase_is_still_an_interruption():
    parsed = parse_speech('[INTERRUPT, TONE: angry] "Enough."')
    assert (parsed.action, parsed.interrupt_after, parsed.content) == ("interrupt", None, "Enough.")


def test_speech_without_header_is_plain_speech_with_quotes_stripped():
    assert parse_speech('"It was the third thing I said."') == Speech(
        "speak", "It was the third thing I said.", '"It was the third thing I said."'
    )


def test_stage_direction_without_header_is_plain_speech():
    raw = "*[opens the door]* Hi, come in."
    assert parse_speech(raw) == Speech("speak", raw, raw)


def test_bracket_with_no_recognised_item_is_not_a_header():
    assert parse_speech("[laughs] Oh, come on.").content == "[laughs] Oh, come on."


def test_quotes_are_kept_when_the_text_is_not_one_quoted_string():
    raw = '"Fine," she said. "Go."'
    assert parse_speech(raw).content == raw


# --- explicit close -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [EXPLICIT_CLOSE, "*[The Scene Ends Here]*", "[the scene ends here]", "* [ the scene ends here. ] *",
     'Goodbye, then.\n*[the scene ends here]*'],
)
def test_explicit_close_alone_on_a_line_closes_the_scene(raw):
    assert parse_speech(raw).closes_scene is True


def test_mentioning_the_close_mid_sentence_does_not_close_the_scene():
    assert parse_speech("I wish I could say *[the scene ends here]* and leave.").closes_scene is False


def test_explicit_close_in_a_well_formed_turn_closes_the_scene():
    parsed = parse_turn(turn("I have said what I came to say.", EXPLICIT_CLOSE))
    assert parsed.well_formed
    assert parsed.speech.closes_scene is True


# --- tag protocol ---------------------------------------------------------------------------


def test_correction_prompt_is_the_wording_of_spec_000():
    assert CORRECTION_PROMPT == (
        "Your last response did not use `<thinking>` and `<speech>` tags. "
        "Please reformat without changing the content."
    )


def test_well_formed_turn_splits_thinking_and_speech():
    parsed = parse_turn(turn("\n  She is stalling.\n", '[TO: Bob, TONE: cold] "Well?"'))
    assert parsed == ParsedTurn(
        thinking="She is stalling.",
        speech=Speech("speak", "Well?", '[TO: Bob, TONE: cold] "Well?"', target="Bob", tone="cold"),
        well_formed=True,
        problems=(),
    )


def test_tags_in_another_case_or_with_spaces_are_not_the_protocol_and_stay_private():
    parsed = parse_turn('\n  <THINKING> hm </Thinking>\n\n< SPEECH >"Yes."</ speech >\n')
    assert not parsed.well_formed
    assert parsed.speech is None
    assert "a tag other than <thinking> and <speech>" in parsed.problems


def test_missing_thinking_is_parsed_but_not_well_formed():
    parsed = parse_turn("<speech>Hello.</speech>")
    assert parsed.thinking is None
    assert parsed.speech.content == "Hello."
    assert not parsed.well_formed
    assert parsed.problems == ("no <thinking> tag",)


def test_text_after_thinking_without_a_speech_tag_is_private():
    parsed = parse_turn("<thinking>Careful.</thinking>\nHello, Bob.")
    assert parsed.thinking == "Careful."
    assert parsed.speech is None
    assert parsed.problems == ("no <speech> tag", "text outside the tags")


def test_unclosed_thinking_runs_to_the_end_and_hides_the_speech_inside_it():
    parsed = parse_turn("<thinking>Stay calm.\n<speech>Of course.</speech>")
    assert parsed.speech is None
    assert parsed.thinking == "Stay calm.\n<speech>Of course.</speech>"
    assert parsed.problems == ("unclosed <thinking> tag", "no <speech> tag")


def test_unclosed_speech_is_not_a_speech():
    parsed = parse_turn("<thinking>x</thinking><speech>I was going to say")
    assert parsed.speech is None
    assert parsed.problems == ("unclosed <speech> tag",)


def test_prose_around_the_tags_is_private_and_not_well_formed():
    parsed = parse_turn("Sure! <thinking>a</thinking><speech>b</speech> Hope that helps.")
    assert (parsed.thinking, parsed.speech.raw) == ("a", "b")
    assert parsed.problems == ("text outside the tags",)


def test_no_tags_at_all_is_no_speech():
    parsed = parse_turn('  [TO: Bob] "Hi."  ')
    assert (parsed.thinking, parsed.speech) == (None, None)
    assert parsed.problems == ("no <thinking>/<speech> tags",)
    assert not parsed.well_formed


def test_two_speech_blocks_are_no_speech_at_all():
    parsed = parse_turn(turn("t", "first") + "<speech>second</speech>")
    assert parsed.speech is None
    assert parsed.problems == ("more than one <speech> tag",)


def test_stray_closing_tag_is_reported_and_the_text_before_it_stays_private():
    parsed = parse_turn("I will lie to him.</thinking>\n<speech>Hello.</speech>")
    assert parsed.speech.raw == "Hello."
    assert parsed.problems == ("no <thinking> tag", "a stray closing tag", "text outside the tags")


def test_a_stray_closing_tag_inside_thinking_stays_in_the_thinking():
    parsed = parse_turn("<thinking>a</speech> b</thinking><speech>c</speech>")
    assert (parsed.thinking, parsed.speech.raw, parsed.well_formed) == ("a</speech> b", "c", True)


def test_speech_nested_in_thinking_is_private_thinking():
    parsed = parse_turn("<thinking>Draft: <speech>I hate you.</speech></thinking><speech>Hi.</speech>")
    assert parsed.speech.raw == "Hi."
    assert "I hate you." in parsed.thinking


def test_speech_nested_in_any_other_tag_is_private():
    for wrapper in ("think", "reasoning", "reflection", "scratchpad", "Speech", "SPEECH", "x-notes"):
        parsed = parse_turn(f"<{wrapper}><speech>secret</speech></{wrapper}>")
        assert parsed.speech is None and not parsed.well_formed, wrapper
        if wrapper not in ("think", "reasoning"):  # those two open a reasoning preamble (below)
            assert "a tag other than <thinking> and <speech>" in parsed.problems


TURN = '<thinking>I am calm.</thinking>\n<speech>[TONE: calm] "Hi."</speech>'


@pytest.mark.parametrize("preamble", ["<think>Let me plan. <speech>[TONE: x] \"leak\"</speech></think>\n",
                                      "<reasoning>\nStep 1.\n</reasoning>", "<THINK>x</think>\n",
                                      "The template opened it. She lies.</think>\n\n", "<thought>y</thought>"])
def test_a_reasoning_preamble_is_private_and_leaves_the_turn_well_formed(preamble):
    """A reasoning model served without a reasoning parser opens every reply with its chain of thought:
    private, never the speech, and no reason to ask for a correction (two wasted calls a turn)."""
    parsed = parse_turn(preamble + TURN)
    assert (parsed.well_formed, parsed.problems, parsed.speech.raw, parsed.thinking) == \
        (True, (), '[TONE: calm] "Hi."', "I am calm.")
    pieces = TagSplitter().feed(preamble + TURN)
    assert "".join(t for c, t in pieces if c == "speech") == '[TONE: calm] "Hi."'


@pytest.mark.parametrize("reply", ["Hello. <think>x</think>" + TURN, TURN + "<think>after</think>",
                                   "<think>a</think><think>b</think>" + TURN, "</think></think>" + TURN,
                                   "<thinking>I</thinking><think>x</think><speech>[TONE: c] \"Hi.\"</speech>",
                                   "<think>never closed " + TURN])
def test_reasoning_anywhere_but_first_and_once_is_still_a_problem(reply):
    parsed = parse_turn(reply)
    assert not parsed.well_formed


DRAFTED = '<speech>[TO: Bob] "my secret plan"</speech>'


@pytest.mark.parametrize("reply", [f"Let me draft: {DRAFTED} no.</think>\n<thinking>t</thinking> I stay quiet.",
                                   f"{DRAFTED}</think><thinking>t</thinking>",
                                   f"<thinking>t</thinking>{DRAFTED}</think>",
                                   f"Hmm {DRAFTED}</thinking><speech>[TONE: calm] \"Hi.\"</speech>",
                                   f"<think>a</think><thinking>t</thinking>{DRAFTED}</think>"])
def test_a_speech_drafted_before_a_stray_reasoning_close_stays_private(reply):
    """`…</think>` with no opening tag: the chat template opened the reasoning, so a `<speech>` before
    it was drafted inside it (and one before a stray `</thinking>`, inside a thinking never opened):
    it is never the speech, not even once corrections fail, and never reaches a journal."""
    for parsed in (parse_turn(reply), salvage(reply)):
        assert parsed.speech is None and not parsed.well_formed
    assert "my secret plan" not in entry_of(reply)


def test_protocol_tag_with_attributes_is_another_tag():
    parsed = parse_turn('<thinking type="private"><speech>secret</speech></thinking><speech type="x">s</speech>')
    assert parsed.speech is None
    assert parsed.thinking is None


def test_a_speech_inside_a_quoted_attribute_is_private():
    parsed = parse_turn('<thinking note="<speech>secret</speech>">x</thinking>\n<speech>Hi.</speech>')
    assert (parsed.speech.raw, parsed.thinking) == ("Hi.", None)
    assert parse_turn("<reasoning a='<speech>secret</speech>'/>").speech is None


def test_tags_inside_a_code_fence_are_private_text():
    for fence in ("```", "~~~"):
        parsed = parse_turn(f"{fence}xml\n<thinking>a</thinking><speech>secret</speech>\n{fence}")
        assert parsed.speech is None, fence
        assert parsed.problems == ("no <thinking>/<speech> tags",)


def test_tags_inside_a_comment_or_cdata_are_private_text():
    for opener, closer in (("<!--", "-->"), ("<![CDATA[", "]]>")):
        parsed = parse_turn(f"{opener} <speech>secret</speech> {closer}<thinking>t</thinking><speech>Hi.</speech>")
        assert parsed.speech.raw == "Hi.", opener
        assert parsed.problems == ("text outside the tags",)
        hidden = parse_turn(f"<thinking>t</thinking><speech>Hi {opener} secret {closer}</speech>")
        assert hidden.speech is None and "a tag inside <speech>" in hidden.problems


def test_a_closing_tag_inside_a_fence_in_thinking_does_not_end_the_thinking():
    raw = "<thinking>```\n</thinking><speech>secret</speech>\n```</thinking><speech>Hi.</speech>"
    parsed = parse_turn(raw)
    assert (parsed.speech.raw, parsed.well_formed) == ("Hi.", True)


def test_a_tag_inside_the_speech_makes_it_no_speech():
    for inner in ("<think>secret</think>", "</thinking>", "<b>", "<thinking>x</thinking>", "<br/>"):
        parsed = parse_turn(f"<thinking>t</thinking><speech>Hello {inner} there</speech>")
        assert parsed.speech is None, inner
        assert "a tag inside <speech>" in parsed.problems


def test_problems_never_quote_the_response():
    parsed = parse_turn('<SECRET-NAME attr="SECRET">x</SECRET-NAME></SECRETCLOSE>SECRET')
    assert not any("SECRET" in problem for problem in parsed.problems)


def test_less_than_signs_and_backticks_in_speech_are_kept():
    parsed = parse_turn("<thinking>t</thinking><speech>I <3 you, 2 < 3, `code` and ``` fences</speech>")
    assert parsed.well_formed
    assert parsed.speech.raw == "I <3 you, 2 < 3, `code` and ``` fences"


# --- salvage --------------------------------------------------------------------------------


def test_salvage_of_untagged_text_is_silence():
    salvaged = salvage("Well, I suppose you're right.")
    assert salvaged.speech is None
    assert not salvaged.well_formed
    assert salvaged.problems


def test_salvage_keeps_only_the_well_formed_speech():
    salvaged = salvage("Sure! <speech>Fine.</speech> Anything else?")
    assert salvaged.speech.raw == "Fine."


def test_salvage_never_puts_private_thinking_into_the_speech():
    salvaged = salvage("<thinking>I secretly hate him.</thinking> <speech>Nice to see you.</speech> ok")
    assert salvaged.speech.raw == "Nice to see you."
    assert salvaged.thinking == "I secretly hate him."


def test_salvage_of_a_reasoning_model_answer_without_speech_is_silence():
    salvaged = salvage("<think>I should pretend.</think>\nOkay, I'll say hello.")
    assert salvaged.speech is None


def test_salvage_of_a_well_formed_turn_is_still_marked_not_well_formed():
    salvaged = salvage(turn("a", "b"))
    assert (salvaged.speech.content, salvaged.well_formed) == ("b", False)


# --- TagSplitter ----------------------------------------------------------------------------


def split_all(fragments: list[str]) -> dict[str, str]:
    """Feed fragments then flush; join what each channel received."""
    splitter, joined = TagSplitter(), {"think": "", "speech": ""}
    pieces = [piece for fragment in fragments for piece in splitter.feed(fragment)]
    for channel, text in pieces + splitter.flush():
        joined[channel] += text
    return joined


def test_splitter_handles_a_tag_split_across_fragments():
    joined = split_all(["<thin", "king>plan", "</thi", "nking><", "speech>Hi", "</speech", ">"])
    assert joined == {"think": "plan", "speech": "Hi"}


def test_splitter_never_emits_tags_or_text_outside_them():
    splitter = TagSplitter()
    assert splitter.feed("Sure! <thinking>a</thinking> between <speech>b</speech> after") == [
        ("think", "a"), ("speech", "b"),
    ]


def test_splitter_keeps_a_plain_less_than_sign_in_speech():
    assert split_all(["<speech>I <", "3 you <", "</speech>"])["speech"] == "I <3 you <"


def test_splitter_never_streams_private_regions_as_speech():
    joined = split_all(["<think>I will <spe", "ech>lie</speech></think>", "<thinking type='x'><speech>no",
                        "</speech></thinking>", "```\n<speech>fenced</speech>\n``", "`", "<speech>Hi.</speech>"])
    assert joined["speech"] == "Hi."
    assert "lie" in joined["think"] and "fenced" not in joined["speech"]


def test_splitter_streams_only_the_first_speech_and_stops_at_a_tag_inside_it():
    assert split_all(["<speech>One <th", "ink>secret</think> two</speech><speech>again</speech>"])["speech"] == "One "


def test_splitter_drops_text_before_a_stray_closing_tag():
    assert split_all(["secret plan", "</thinking>\n<speech>Hello.</speech>"]) == {"think": "", "speech": "Hello."}


def test_splitter_holds_a_possible_partial_tag_until_flushed():
    splitter = TagSplitter()
    assert splitter.feed("<speech>wait <spe") == [("speech", "wait ")]
    assert splitter.flush() == [("speech", "<spe")]


# --- properties -----------------------------------------------------------------------------

FRAGMENTS = ["<thinking>", "</thinking>", "<speech>", "</speech>", "<SPEECH >", "< /thinking",
             "[", "]", "TO:", "TONE:", "INTERRUPT after", "SILENT", "REACT", ",", "\"", "“", "”",
             "*", "\n", " ", "<", ">", "[the scene ends here]"]
protocol_soup = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=6), max_size=30).map("".join)
any_text = st.text() | protocol_soup
safe_text = st.text().filter(lambda s: not re.search(r"<\s*[/!?]?\s*[A-Za-z]|<!|```|~~~", s))  # no tag, comment or fence


@PROPERTY
@given(any_text)
def test_parsers_never_raise_on_any_text(text):
    assert isinstance(parse_turn(text), ParsedTurn)
    assert isinstance(parse_speech(text), Speech)
    assert isinstance(salvage(text), ParsedTurn)


@PROPERTY
@given(any_text)
def test_well_formed_means_no_problems(text):
    parsed = parse_turn(text)
    assert parsed.well_formed == (parsed.problems == ())
    assert not salvage(text).well_formed


@PROPERTY
@given(safe_text, safe_text)
def test_well_formed_rendering_round_trips(thinking, speech):
    parsed = parse_turn(f"<thinking>{thinking}</thinking><speech>{speech}</speech>")
    assert parsed.well_formed
    assert parsed.thinking == thinking.strip()
    assert parsed.speech.raw == speech.strip()


@PROPERTY
@given(safe_text, safe_text, st.data())
def test_splitter_fed_any_split_reproduces_thinking_and_speech(thinking, speech, data):
    raw = turn(thinking, speech)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=12)))
    fragments = [raw[start:end] for start, end in zip([0, *cuts], [*cuts, len(raw)])]
    joined = split_all(fragments)
    parsed = parse_turn(raw)
    assert joined["think"].strip() == parsed.thinking
    assert joined["speech"].strip() == parsed.speech.raw


@pytest.mark.parametrize(("raw", "expected"), [
    ('**[TO: Bob, TONE: sad]** "I tried."', ("speak", "Bob", "sad", "I tried.")),
    ("**[SILENT, *looks away*]**", ("silent", None, None, "")),
    ("**[laughs]** Hi", ("speak", None, None, "**[laughs]** Hi")),
    ("*[opens the door]* Hi", ("speak", None, None, "*[opens the door]* Hi")),
])
def test_a_header_in_markdown_bold_is_still_the_header(raw, expected):
    speech = parse_speech(raw, {"bob": "Bob"})
    assert (speech.action, speech.target, speech.tone, speech.content) == expected and speech.raw == raw


@pytest.mark.parametrize("said, words, gesture", [
    ('[TO: Bob, TONE: warm] *waves* "Goodbye, Bob."', "Goodbye, Bob.", "waves"),
    ('[TO: Bob, TONE: warm] "Goodbye, Bob." *waves*', "Goodbye, Bob.", "waves"),
    ('[TO: Bob, TONE: warm, *nods*] *smiles* "Fine."', "Fine.", "nods; smiles"),
    ('*[stands]* \u201cI should go.\u201d', "I should go.", "stands"),
    ('*[opens the door]* Hi, come in.', "*[opens the door]* Hi, come in.", None),
    ('"Goodbye" *waves* "and good luck"', '"Goodbye" *waves* "and good luck"', None),
])
def test_a_gesture_outside_the_header_around_the_quoted_words_is_read_as_the_headers(said, words, gesture):
    """A model that writes its gesture between the header and the words (or after them) said the words
    in the quotes and did the gesture: the words are the quoted string and the gesture is `nonverbal`,
    so the routed line is `[TO: Bob, TONE: warm, *waves*] "Goodbye, Bob."`, never a speech that says
    "*waves*" with the words quoted inside it. Where the rest is not one quoted string, it stays as written."""
    speech = parse_speech(said, {"Bob": "Bob"})
    assert (speech.content, speech.nonverbal) == (words, gesture)
    if gesture:
        event = SpeakEvent(t=0, **{"from": "alice"}, text=speech.content, nonverbal=speech.nonverbal,
                           target=speech.target, tone=speech.tone, action=speech.action, raw=said)
        assert speech_line("Alice", event).endswith(f'*{gesture}*] "{words}"')


@pytest.mark.parametrize("said, closes", [
    ('[TONE: flat] "I have nothing more to say." *[the scene ends here]*', True),
    ('*[the scene ends here]* "Enough."', True),
    ('[TONE: flat, *the scene ends here*] "Enough."', True),
    ('*[the scene ends here]*', True),
    ('[TONE: calm] "The scene ends here, you think?"', False),
    ('[TONE: calm] *smiles* "So."', False),
])
def test_spec_000s_explicit_close_as_the_speech_s_gesture_closes(said, closes):
    """`*[the scene ends here]*` is the actor's deliberate close (spec 000) also beside its last words, on
    the same line: it is the speech's gesture, not words; said as words it is not the close."""
    assert parse_speech(said, {}).closes_scene is closes
