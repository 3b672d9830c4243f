"""The audit's search for private grams in a request: every run of words that is one, in order.

`Material.candidates` looks only where a private gram could begin; this checks it against the plain
definition (every run of every indexed size, at every position) on generated texts."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from promptdesk.core.record.audit_material import Material

WORDS = st.sampled_from(["the", "blue", "umbrella", "was", "never", "mine", "bob", "i", "knew", "it", "x"])


def every_run(tokens: list[str], material: Material) -> list[tuple[str, int, int]]:
    found = []
    for start in range(len(tokens)):
        for size in sorted(material.sizes):
            if start + size <= len(tokens) and " ".join(tokens[start:start + size]) in material.index:
                found.append((" ".join(tokens[start:start + size]), start, start + size))
    return found


@settings(max_examples=200, deadline=None)
@given(private=st.lists(st.lists(WORDS, min_size=1, max_size=12), min_size=1, max_size=4),
       request=st.lists(WORDS, max_size=60))
def test_candidates_are_every_private_run_in_order(private, request):
    material = Material()
    for n, text in enumerate(private):
        material.add(f"owner{n % 2}", "thinking", " ".join(text))
    assert list(material.candidates(request)) == every_run(request, material)
    material.add("owner9", "journal", " ".join(request[:9]) or "x")  # the index grows: still every run
    assert list(material.candidates(request)) == every_run(request, material)
