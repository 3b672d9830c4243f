"""Code fences in model output are found in linear time, and found as before.

An evaluator's answer, a collaborate envelope and a roundtable answer were read with regular expressions
that tried every opening fence and scanned to the end of the text from each: "```" then 20,000 newlines
took an evaluator's reader 7 s, 100 KB of "```yaml" lines a roundtable's 8 s (quadratic: at the reply limit,
minutes). `promptdesk.core.protocol.fences` reads them by lines.
"""

from __future__ import annotations

import pytest
from test_reader_timing import within_a_second

from promptdesk.core.formats.collaborate.envelope import parse_envelope
from promptdesk.core.formats.roundtable.answers import fenced, parse_answer
from promptdesk.core.protocol.bounded import REPLY_MAX_CHARS
from promptdesk.core.protocol.fences import fenced_blocks, first_indented_block, whole_fence
from promptdesk.core.protocol.rubrics import SOTOPIA
from promptdesk.core.protocol.rubrics.base import ANSWER_MAX_CHARS


def _blank_run(opening: str, blank: str, size: int) -> str:
    return opening + blank * ((size - len(opening) - 1) // len(blank)) + "x"


@pytest.mark.parametrize("blank", ["\n", " ", "\t", " \n", "\r\n", "\u3000"])
@pytest.mark.parametrize("opening", ["```", "```json"])
def test_an_evaluator_answer_of_one_opening_and_blanks_is_read_in_linear_time(opening, blank):
    text = _blank_run(opening, blank, ANSWER_MAX_CHARS)
    within_a_second(lambda: SOTOPIA.read(text))


def test_an_evaluator_answer_of_openings_that_never_close_is_read_in_linear_time():
    text = ("```json\n" * (ANSWER_MAX_CHARS // 8))[:ANSWER_MAX_CHARS]
    within_a_second(lambda: SOTOPIA.read(text))


@pytest.mark.parametrize("blank", ["\n", " \n", "\r\n"])
def test_a_collaborate_envelope_of_one_opening_and_blanks_is_read_in_linear_time(blank):
    text = _blank_run("```json", blank, REPLY_MAX_CHARS)
    within_a_second(lambda: parse_envelope(text, ["ann", "bob"]))


@pytest.mark.parametrize("opening", ["```yaml\n", "  ```yml\r\n", "```\n"])
def test_a_roundtable_answer_of_openings_that_never_close_is_read_in_linear_time(opening):
    text = (opening + "x\n") * (REPLY_MAX_CHARS // (len(opening) + 2)) if opening == "```\n" else \
        opening * (REPLY_MAX_CHARS // len(opening))
    within_a_second(lambda: parse_answer(text))


def test_a_whole_fence_is_unwrapped_as_before():
    assert whole_fence('```json\n{"a": 1}\n```').strip() == '{"a": 1}'
    assert whole_fence('```JSON {"a": 1}```', fold=True).strip() == '{"a": 1}'
    assert whole_fence('```JSON {"a": 1}```').strip() == 'JSON {"a": 1}'
    assert whole_fence('```json {"a": 1}```', newline=True) is None  # the envelope's opening ends its line
    assert whole_fence('```json  \n{"a": 1}```', newline=True) == '{"a": 1}'
    assert whole_fence("```\n```", newline=True) == ""
    assert whole_fence("`````") is None and whole_fence('{"a": 1}') is None


def test_fenced_blocks_are_found_as_before():
    assert fenced_blocks('Here:\n```json\n{"a": 1}\n```\nand\n```\n{"b": 2}\n```  \n') == ['{"a": 1}', '{"b": 2}']
    assert fenced_blocks("```\n```\nbody\n```") == ["```\nbody"]  # the line after an opening is body
    assert fenced_blocks("```json\n{}\n") == [] and fenced_blocks("```json x\n{}\n```") == []


def test_a_roundtable_block_closes_at_a_fence_indented_as_its_opening():
    text = "Answer:\n  ```yaml\n  position: a\n  rationale: |\n    ```\n    code\n    ```\n  ```\nafter"
    assert first_indented_block(text, tags=("yaml", "yml")) == "  position: a\n  rationale: |\n    ```\n    code\n    ```\n"
    assert fenced("```yaml\nposition: b\n") == "position: b\n"  # never closed: to the end
    assert fenced("no fence") is None
