"""Promptdesk's nesting bound holds whatever YAML library is installed: flow collections nested past
`MAX_DEPTH` are refused from the text alone, before PyYAML or libyaml is asked (PyYAML 6.0.4's libyaml
refuses deep flow nesting itself, in its own words, before any event is read), and the text scan
agrees with the library on every document the library writes."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from promptdesk.core.casting.scene_file import load_scene
from promptdesk.core.characters.loading import load_character
from promptdesk.core.errors import CharacterLoadError, InvalidConfig
from promptdesk.core.protocol import bounded
from promptdesk.core.protocol.flow_depth import deepest_flow

CAST = "name: s\ncharacters: [ann, ben]\n"


@pytest.fixture
def no_yaml_library(monkeypatch):
    """Any use of the YAML library fails the test: the refusal must come first."""
    def asked(*args, **kwargs):
        raise AssertionError("the YAML library was asked")
    monkeypatch.setattr(bounded, "LOADER", asked)


@pytest.mark.parametrize("opener", ["[", "{a: "])
def test_flow_nested_a_thousand_deep_is_refused_before_the_library_is_asked(no_yaml_library, opener):
    closer = "]" if opener == "[" else "}"
    text = CAST + "limits: " + opener * 1000 + "1" + closer * 1000 + "\n"
    with pytest.raises(bounded.Unbounded) as caught:
        bounded.check_yaml(text)
    assert caught.value.line == 3 and "nested more than 64 levels" in str(caught.value)


def test_a_scene_and_front_matter_nested_deep_are_refused_before_the_library_is_asked(no_yaml_library, tmp_path):
    scene = tmp_path / "deep.yaml"
    scene.write_text(CAST + "limits: " + "[" * 1000 + "]" * 1000 + "\n")
    with pytest.raises(InvalidConfig, match=r"deep\.yaml:3: limits: .*nested more than 64 levels"):
        load_scene(scene)
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "deep.md").write_text("---\nname: deep\ntools: " + "{x: " * 1000 + "}" * 1000 + "\n---\nI go deep.\n")
    with pytest.raises(CharacterLoadError, match=r"deep\.md:3: the front matter's lists and mappings are nested"):
        load_character("deep", [agents])


def test_brackets_in_plain_scalars_quotes_comments_and_block_scalars_are_not_structure():
    text = ("prompt: Bob says [[[[ and {{{{ and - [ ? [\n"
            "quote: '[[[[ it''s [[[['\n"
            "double: \"[[[[ \\\" [[[[\"\n"
            "note: x # [[[[[[[[\n"
            "# [[[[[[[[[[[[[[\n"
            "story: |\n"
            "  [[[[[[[[[[[[[[[[\n"
            "  {{{{{{{{{{{{{{{{\n"
            "flow: [Bob's, \"a]\", 'b}', {k: [1, 2]}]\n")
    assert deepest_flow(text, 3) is None
    assert deepest_flow(text, 2) == 9
    assert yaml.safe_load(text)["flow"][3] == {"k": [1, 2]}


def test_a_multi_line_quoted_scalar_and_flow_keep_their_state_across_lines():
    text = "a: 'first [[[[\n  second ]]]]'\nb: [\n  [\n    [1]\n  ]\n]\n"
    assert deepest_flow(text, 3) is None and deepest_flow(text, 2) == 5


TEXT = st.text(alphabet=st.sampled_from(list("ab []{}'\"#:,-?&!|>\\\n\t")), max_size=12)
DATA = st.recursive(st.one_of(TEXT, st.integers(), st.none()),
                    lambda inner: st.one_of(st.lists(inner, max_size=3),
                                            st.dictionaries(TEXT, inner, max_size=3)),
                    max_leaves=30)


def depth(data) -> int:
    """How deep lists and mappings nest in `data` (a scalar: 0)."""
    if isinstance(data, list):
        return 1 + max((depth(x) for x in data), default=0)
    if isinstance(data, dict):
        return 1 + max((depth(v) for v in data.values()), default=0)
    return 0


@settings(max_examples=300, deadline=None)
@given(DATA, st.sampled_from([True, None, False]), st.sampled_from([12, 80]))
def test_the_text_scan_agrees_with_the_library_on_every_document_it_writes(data, flow_style, width):
    """In flow style the scan finds the data's whole depth; in any style it never finds more."""
    text = yaml.safe_dump({"root": data}, default_flow_style=flow_style, width=width, allow_unicode=True)
    real = depth({"root": data})
    for limit in range(0, real + 2):
        line = deepest_flow(text, limit)
        if flow_style is True:
            assert (line is not None) == (real > limit), (text, limit)
        else:
            assert line is None or real > limit, (text, limit)


def test_the_json_depth_walk_finds_the_limit_exactly_gathers_only_containers_and_is_not_multiplied_by_sharing():
    """`depth_over` walks parsed data level by level (an export of a million small records is read through it):
    a container at depth `limit` is too deep and one above it is not, in lists and objects alike; scalars are
    never containers; data that shares one container at every level (seventy levels of `[x, x]`, which a
    walk that does not keep each container once would take 2^70 steps over) is walked once per level."""
    assert not bounded.depth_over(7) and not bounded.depth_over("[[[[") and not bounded.depth_over([], 1)
    assert bounded.depth_over([[]], 1) and not bounded.depth_over([[]], 2)
    assert bounded.depth_over({"a": [{"b": {}}]}, 3) and not bounded.depth_over({"a": [{"b": 1}]}, 3)
    shared: list = []
    for _ in range(70):
        shared = [shared, shared]
    assert bounded.depth_over(shared) and not bounded.depth_over(shared, 71)
    records = {f":x.Kind:{n}": {"pk": str(n), "tags": ["a", {"b": [1]}]} for n in range(1000)}
    assert not bounded.depth_over(records, 5) and bounded.depth_over(records, 4)  # top, record, tags, {b}, [1]


def test_an_object_with_a_key_given_twice_is_noted_and_one_without_is_a_plain_dict():
    once = bounded.load_json('{"a": {"b": 1}, "c": [{"d": 2}]}', object_pairs_hook=bounded.noting_repeats)
    assert once == {"a": {"b": 1}, "c": [{"d": 2}]} and getattr(once, "repeated", {}) == {}
    twice = bounded.load_json('{"a": 1, "a": 2, "c": {"d": 1, "d": 1, "d": 3}}', object_pairs_hook=bounded.noting_repeats)
    assert twice.repeated == {"a": 2} and twice["c"].repeated == {"d": 3} and twice["c"]["d"] == 3
