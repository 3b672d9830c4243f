"""The audit's words of an ASCII text, found in one pass (`audit_words.words`, `_scan`), are those the
general reading finds, the one every other script takes: a text and the same text with a word of
another script after it read alike up to that word."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from promptdesk.core.record.audit_words import _scan, json_words, words

ASCII = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=300)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(ASCII)
def test_an_ascii_text_reads_as_the_general_reading_reads_it(text):
    tail = " Caf\u00e9"
    general_words, general_ends = _scan(text + tail)
    assert general_words[-1] == "cafe"
    assert words(text) == general_words[:-1] == words(text + tail)[:-1]
    assert _scan(text) == (general_words[:-1], general_ends[:-1])
    assert json_words(text)[0] == json_words(text + tail)[0][:-1]


def test_the_one_pass_reading_lowers_and_splits_as_before():
    assert words("Bob KNEW the_Deadline, 3 weeks-early!") == ["bob", "knew", "the_deadline", "3", "weeks", "early"]
    assert _scan("Ab cd")[1] == [2, 5]


_ENCODED = st.text(alphabet="=%\\xU+-./01abcdefABCDEF:2937 \n\u200b<>&#;", max_size=200)


@settings(max_examples=300, deadline=None)
@given(_ENCODED)
def test_the_readings_of_any_text_never_raise(text):
    """The readings that undo encodings (quoted-printable, byte escapes, code points, runs of hex or bits,
    Morse) take whatever a judge writes: a run that decodes to no text is read as written."""
    from promptdesk.core.record.audit_readings import readings

    found = readings(text)
    assert found[0] == text and all(isinstance(reading, str) for reading in found)


def test_escapes_and_runs_that_decode_to_no_text_are_read_as_written():
    from promptdesk.core.record.audit_readings import readings

    for text in ("\\777\\400", "01" * 40, "0100000101" * 3, "U+110000 U+0000", "\\0 \\110000 ", "=FF=FE=00"):
        assert readings(text)[0] == text
