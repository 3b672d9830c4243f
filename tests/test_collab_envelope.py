"""The envelope of spec 001 §3 and the context window of §5, as pure functions."""

from __future__ import annotations

import json

from hypothesis import given, strategies as st

from promptdesk.core.formats.collaborate.context import Item, tokens, user_message, window
from promptdesk.core.formats.collaborate.envelope import fallback, parse_envelope, schema

PAIR = ["gpt", "claude"]
SPEC_SCHEMA = {
    "type": "object",
    "properties": {
        "message": {"type": "string", "minLength": 1},
        "handoff": {"type": "object",
                    "properties": {"to": {"type": "string", "enum": ["gpt", "claude"]},
                                   "task": {"type": "string", "minLength": 1, "maxLength": 500}},
                    "required": ["to", "task"], "additionalProperties": False},
        "final": {"type": "boolean"},
    },
    "required": ["message"],
    "additionalProperties": False,
}


def test_the_schema_is_spec_001_s_for_the_default_pair():
    assert schema(PAIR) == SPEC_SCHEMA


def test_valid_envelopes_parse_and_final_ignores_the_handoff():
    env, problem = parse_envelope('{"message": "hi", "handoff": {"to": "gpt", "task": "go"}, "final": true}', PAIR)
    assert problem is None and env.is_final and env.next_handoff is None
    env, _ = parse_envelope('```json\n{"message": "hi", "handoff": {"to": "claude", "task": "go"}}\n```', PAIR)
    assert env.next_handoff.to == "claude"
    env, _ = parse_envelope('{"message": "hi", "handoff": null, "final": null}', PAIR)  # OpenAI strict form
    assert env.next_handoff is None and not env.is_final


def test_invalid_replies_name_what_is_wrong():
    cases = {
        "prose then {\"message\": \"hi\"}": "not JSON",
        '{"message": ""}': "wrong shape",
        '{"message": "  "}': "message is blank",
        '{"message": "hi", "extra": 1}': "wrong shape",
        '{"message": "hi", "final": "yes"}': "final",
        '{"message": "hi", "handoff": {"to": "bard", "task": "x"}}': "'bard' is not one of gpt, claude",
        '{"message": "hi", "handoff": {"to": "gpt", "task": "' + "x" * 501 + '"}}': "handoff.task",
        '["message"]': "wrong shape",
    }
    for text, expected in cases.items():
        env, problem = parse_envelope(text, PAIR)
        assert env is None and expected in problem, (text, problem)


@given(st.text())
def test_parsing_never_raises(text):
    parse_envelope(text, PAIR)


def test_the_window_keeps_the_last_eight_oldest_first():
    items = [Item("gpt" if i % 2 else "claude", f"message {i}") for i in range(12)]
    assert [i.text for i in window(items)] == [f"message {i}" for i in range(4, 12)]


def test_over_the_budget_the_oldest_go_first_and_a_lone_item_is_cut():
    items = [Item("gpt", "a" * 400), Item("claude", "b" * 400), Item("router", "c" * 40, to="gpt")]
    kept = window(items, token_budget=150)
    assert [i.role for i in kept] == ["claude", "router"]
    [only] = window([Item("gpt", "z" * 10_000)], token_budget=100)
    assert tokens(only.line()) <= 100


def test_the_user_message_has_goal_window_round_and_instruction_in_order():
    text = user_message("G", [Item("claude", "draft"), Item("router", "edit it", to="gpt")], 2, 6)
    assert text.index("GOAL: G") < text.index("[claude] draft") < text.index("[router → gpt] edit it") \
        < text.index("Round 2 of 6.") < text.index("Return JSON only per schema—no extra text.")
    json.dumps(text)


def test_a_reasoning_models_think_preamble_is_not_part_of_the_envelope():
    reply = '<think>They will never notice the bug.</think>\n{"message": "Here is the plan.", "final": true}'
    envelope, problem = parse_envelope(reply, ["gpt", "claude"])
    assert problem is None and envelope.message == "Here is the plan." and envelope.is_final


def test_the_fallback_message_never_carries_the_reasoning():
    assert fallback("<think>They will never notice the bug.</think>\nHere is the plan.").message == "Here is the plan."
    assert fallback("Here is the plan.\n<think>They will never notice").message == "Here is the plan."
    assert fallback("<think>They will never notice the bug.").message == "(empty reply)"


def test_a_key_given_twice_is_a_wrong_shape_never_its_last_copy():
    """JSON keeps the last copy of a key silently: `"final": false` then `"final": true` ended the
    collaboration on a draft, and `handoff.to` given twice routed to the second. As the JSON protocol of
    a scene's actors does, a key given twice makes the envelope unreadable (the fallback: a plain message)."""
    for text in ('{"message": "draft A", "final": false, "message": "draft B", "final": true}',
                 '{"message": "m", "handoff": {"to": "bob", "task": "check it", "to": "ann"}}'):
        envelope, problem = parse_envelope(text, ["ann", "bob"])
        assert envelope is None and "given twice" in problem, (text, problem)


def test_a_window_in_japanese_stays_near_its_token_budget():
    """Spec 001 §5/§13: about 2-3K tokens of transcript. A Japanese character is about a token, not a
    quarter of one: eight messages of 600 characters (some 4,800 tokens) were all kept under the default
    2,500, and a lone 5,000-character message was cut at about 10,000 characters, i.e. not at all."""
    items = [Item("gpt" if n % 2 else "claude", f"第{n}稿：" + "山の道を歩く計画を立てます。" * 40) for n in range(8)]
    kept = window(items)
    assert 2 <= len(kept) <= 4 and kept[-1] == items[-1]
    assert sum(len(i.line()) for i in kept) <= 2600
    lone = window([Item("gpt", "川" * 5000)], token_budget=1000)
    assert len(lone) == 1 and lone[0].text.endswith(" …") and len(lone[0].text) <= 1000
    english = window([Item("gpt", "x" * 5000)], token_budget=1000)
    assert english[0].text == "x" * 3960 + " …", "a Latin text is cut where it always was"
