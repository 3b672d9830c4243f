"""`promptdesk.core.providers.json_text` escapes a text's pieces once each and joins them: the result is
exactly the standard library's, for any text, any separator, and however full its memory is."""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

from promptdesk.core.providers import json_text
from promptdesk.core.providers.json_text import escaped, message_json

ODD = st.lists(st.sampled_from(['a', 'Z', ' ', '"', '\\', '\n', '\t', '\x01', '\x7f', 'é', '—', '🎭', '\ud800',
                                '\\n', '</', '\u2028']), max_size=40).map("".join)
LINES = st.lists(ODD, min_size=0, max_size=60)


def standard(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


@settings(max_examples=300, deadline=None)
@given(lines=LINES, separator=st.sampled_from(["\n", "\\n", '"', "é", "ab"]), repeat=st.integers(1, 3))
def test_a_text_cut_into_pieces_is_escaped_exactly_as_the_standard_library_does(lines, separator, repeat):
    text = "\n".join(lines) * 10
    for _ in range(repeat):  # the second time from its memory
        assert escaped(text, separator) == standard(text)
    json_form = json.dumps(text, ensure_ascii=False)
    assert escaped(json_form, "\\n") == standard(json_form), "JSON text, cut where it holds an escaped newline"


@settings(max_examples=200, deadline=None)
@given(role=st.sampled_from(["user", "assistant", 'od"d']), content=st.builds("\n".join, LINES))
def test_a_message_is_the_standard_librarys_json_of_it(role, content):
    message = {"role": role, "content": content * 8}
    assert message_json(role, content * 8) == json.dumps(message, ensure_ascii=False)
    assert message_json(role, content * 8, compact=True) == json.dumps(message, ensure_ascii=False, separators=(",", ":"))


def test_its_memory_starts_again_when_full_and_the_answers_stay_the_same(monkeypatch):
    monkeypatch.setattr(json_text, "MEMO_CHARS", 1_000)
    monkeypatch.setattr(json_text, "_memo", {})
    texts = ["\n".join(f'line {n} of {k}: "quoted" \\ — é' for n in range(40)) for k in range(30)]
    for text in texts + texts:
        assert escaped(text) == standard(text)
    assert 0 < len(json_text._memo) <= 80, "the memory was emptied as it filled"
