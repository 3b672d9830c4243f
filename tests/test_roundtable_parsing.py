"""Spec 002's YAML blocks and their deterministic fallbacks, the escalation triggers and the
strategy files, as pure functions."""

from __future__ import annotations

import pytest

from promptdesk.core.errors import InvalidConfig
from promptdesk.core.formats.roundtable.answers import (MAX_ROUNDS_NOTE, confidence, fallback_conclusion, fallback_question,
                                     parse_answer, parse_question,
                                     parse_synthesis)
from promptdesk.core.formats.roundtable.escalation import EscalationDesk, keyword_hits, triggers
from promptdesk.core.formats.roundtable.answers import Answer, Synthesis
from promptdesk.core.formats.roundtable.state import RoundtableState
from promptdesk.core.formats.roundtable.strategies import Strategy, available, load_strategy, search_dirs

CAST = ["alice", "bob"]


class TestQuestion:
    def test_a_fenced_yaml_question_is_read(self):
        text = "Here:\n```yaml\naction: question\nquestion: Why?\nparticipants: [bob]\nfocus: cost\n```"
        question, problem = parse_question(text, "pricing", CAST)
        assert (question.question, question.participants, question.focus, problem) == ("Why?", ["bob"], "cost", None)

    @pytest.mark.parametrize("text", ["question: [unclosed", "just prose", "", "- a list\n- of things",
                                      "action: question\nfocus: no question"])
    def test_invalid_yaml_gets_spec_002s_fallback_question(self, text):
        question, problem = parse_question(text, "pricing", CAST)
        assert question.question == "What are the key considerations for pricing?"
        assert fallback_question("Should the pier be rebuilt this year?").question == \
            "What are the key considerations for Should the pier be rebuilt this year?", "one question mark, not '??'"
        assert question.participants == "all" and question.focus == "Core requirements and constraints"
        assert problem

    def test_unknown_participants_are_dropped_and_noted(self):
        question, problem = parse_question("question: Q\nparticipants: [bob, zed]", "t", CAST)
        assert question.participants == ["bob"] and "zed" in problem


class TestSynthesis:
    def test_conflicts_are_read_from_strings_and_mappings(self):
        text = ("action: synthesis\nsynthesis: S\nconsensus: [a]\nconflicts:\n  - x vs y\n"
                "  - {topic: cost, positions: {alice: high}}\nnext_action: PHASE\nrecommendation: R")
        synthesis, problem = parse_synthesis(text, "t")
        assert problem is None and synthesis.next_action == "phase" and synthesis.recommendation == "R"
        assert synthesis.conflicts == [{"topic": "x vs y"}, {"topic": "cost", "positions": {"alice": "high"}}]

    @pytest.mark.parametrize("text", ["synthesis: [oops", "not yaml at all: : :", "42"])
    def test_invalid_yaml_gets_spec_002s_fallback_synthesis(self, text):
        synthesis, problem = parse_synthesis(text, "pricing")
        assert synthesis.synthesis == "Discussion on pricing requires further exploration."
        assert (synthesis.consensus, synthesis.conflicts, synthesis.resolved) == ([], [], [])
        assert synthesis.next_action == "continue" and synthesis.next_focus == "Clarify positions" and problem

    def test_an_unknown_next_action_is_read_as_continue_and_noted(self):
        synthesis, problem = parse_synthesis("synthesis: S\nnext_action: dance", "t")
        assert synthesis.next_action == "continue" and "dance" in problem

    def test_the_max_rounds_fallback_keeps_consensus_and_conflicts(self):
        synthesis = fallback_conclusion(["a"], [{"topic": "b"}])
        assert synthesis.synthesis == MAX_ROUNDS_NOTE and synthesis.next_action == "conclude"
        assert synthesis.consensus == ["a"] and synthesis.conflicts == [{"topic": "b"}]
        assert synthesis.recommendation == "Review consensus points and address unresolved items separately."


class TestAnswer:
    def test_a_participant_answer_is_read(self):
        answer, problem = parse_answer("```yaml\nposition: Ship\nrationale: Fast\nconfidence: 0.8\n```")
        assert (answer.position, answer.rationale, answer.confidence, answer.fallback, problem) == \
            ("Ship", "Fast", 0.8, False, None)

    def test_invalid_yaml_is_salvaged_first_line_as_position(self):
        answer, problem = parse_answer("I think: we should: ship\nbecause it is ready")
        assert answer.fallback and answer.position == "I think: we should: ship"
        assert answer.rationale == "because it is ready" and answer.confidence is None and problem

    def test_an_unusable_confidence_is_unknown_and_noted(self):
        answer, problem = parse_answer("position: P\nconfidence: very")
        assert answer.confidence is None and not answer.fallback and "very" in problem

    def test_a_code_fence_inside_the_answer_does_not_end_its_block(self):
        text = ("```yaml\nposition: Return the new total\nrationale: |\n  Like this:\n  ```python\n"
                "  def add(total, x):\n      return total + x\n  ```\nconfidence: 0.9\n```\n")
        answer, problem = parse_answer(text)
        assert problem is None and not answer.fallback
        assert answer.position == "Return the new total" and answer.confidence == 0.9
        assert "return total + x" in answer.rationale

    @pytest.mark.parametrize("raw,value", [(0.4, 0.4), ("70%", 0.7), (85, 0.85), (1, 1.0), (-1, None), (True, None),
                                           ("0,8", 0.8), ("7/10", 0.7), ("5%", 0.05), (7, None), ("7", None),
                                           (float("nan"), None), ("1/0", None)])
    def test_confidence_is_scaled_or_refused(self, raw, value):
        assert confidence(raw) == value


def test_a_critical_keyword_in_a_script_without_spaces_is_found_inside_its_sentence():
    """Chinese, Japanese and Thai are written without spaces: `安全` in `这是安全问题` was never a whole word."""
    assert keyword_hits(["安全", "法律"], ["这是一个安全问题，必须先解决。"]) == ["安全"]
    assert keyword_hits(["セキュリティ"], ["セキュリティが心配です"]) == ["セキュリティ"]
    assert keyword_hits(["legal"], ["a paralegal said so"]) == [] and keyword_hits(["legal"], ["legal risk"]) == ["legal"]


def test_a_decimal_comma_is_a_confidence_and_seven_is_no_escalation_by_percent():
    """`0,8` (a reply in German, French or Russian) was unknown; a bare `7` (meant out of ten) was read as
    7% and escalated the round as doubt (under the 0.3 threshold)."""
    answer, problem = parse_answer("```yaml\nposition: Warten\nrationale: Das Budget ist knapp.\nconfidence: 0,8\n```")
    assert (answer.confidence, problem) == (0.8, None)
    answer, problem = parse_answer("```yaml\nposition: wait\nrationale: thin budget\nconfidence: 7\n```")
    assert answer.confidence is None and problem == "confidence 7 is not a number in 0-1"


def _state(**kw):
    strategy = load_strategy("free", search_dirs())
    return RoundtableState(topic="t", strategy=strategy, participants={"alice": "Alice", "bob": "Bob"}, **kw)


class TestTriggers:
    def fire(self, state, answers, synthesis, **kw):
        options = {"max_rounds_per_conflict": 3, "threshold": 0.3, "keywords": ["security", "must-have"], **kw}
        return {t.kind for t in triggers(state, answers, synthesis, **options)}

    def test_a_conflict_escalates_after_max_rounds_per_conflict_rounds(self):
        state, synthesis = _state(), Synthesis("s", conflicts=[{"topic": "Cost!"}])
        fired = []
        for _ in range(3):
            state.age_conflicts(synthesis)
            fired.append(self.fire(state, {}, synthesis))
        assert fired == [set(), set(), {"conflict"}]

    def test_a_resolved_conflict_starts_over(self):
        state = _state()
        state.age_conflicts(Synthesis("s", conflicts=[{"topic": "cost"}]))
        state.age_conflicts(Synthesis("s"))
        state.age_conflicts(Synthesis("s", conflicts=[{"topic": "cost"}]))
        assert state.conflict_ages == {"cost": 1}

    def test_low_confidence_escalates(self):
        assert self.fire(_state(), {"bob": Answer("p", "r", 0.2)}, Synthesis("s")) == {"confidence"}
        assert self.fire(_state(), {"bob": Answer("p", "r", None)}, Synthesis("s")) == set()

    def test_critical_keywords_are_whole_words_in_any_case(self):
        assert keyword_hits(["security", "must-have"], ["A SECURITY hole", "a must-have"]) == ["security", "must-have"]
        assert keyword_hits(["legal"], ["illegal", "paralegal"]) == []

    def test_the_facilitator_can_ask(self):
        assert self.fire(_state(), {}, Synthesis("s", next_action="escalate")) == {"facilitator"}


def test_an_answer_needs_an_open_escalation_and_a_known_choice():
    desk = EscalationDesk()
    with pytest.raises(ValueError, match="no escalation"):
        desk.answer("accept")
    with pytest.raises(ValueError, match="accept | own | continue"):
        desk.answer("maybe")


def test_every_shipped_strategy_loads_with_its_phases():
    dirs = search_dirs()
    assert {"free", "disney", "six-hats", "debate"} <= set(available(dirs))
    assert [p.name for p in load_strategy("disney", dirs).phases] == ["dreamer", "realist", "critic"]
    assert len(load_strategy("six-hats", dirs).phases) == 6
    assert load_strategy("debate", dirs).roles_for(["a", "b", "c"]) == {"a": "for", "b": "against", "c": "for"}


def test_a_user_strategy_folder_comes_first_and_errors_name_the_file(tmp_path):
    (tmp_path / "mine.yaml").write_text("title: Mine\nphases:\n  - {name: one, goal: g, min_rounds: 2}\n")
    (tmp_path / "bad.yaml").write_text("phases: []\n")
    dirs = search_dirs([tmp_path])
    assert load_strategy("mine", dirs).phases[0].min_rounds == 2
    with pytest.raises(InvalidConfig, match="bad.yaml"):
        load_strategy("bad", dirs)
    with pytest.raises(InvalidConfig, match="available: .*disney"):
        load_strategy("nope", dirs)


@pytest.mark.parametrize("body,named", [
    ("phases:\n  - {name: one, goal: g, min_round: 2}\n",
     "mine.yaml:2: phases[0] (one).min_round: unknown key 'min_round' (did you mean 'min_rounds'?)"),
    ("phase:\n  - {name: one, goal: g}\n", "mine.yaml:1: phase: unknown key 'phase' (did you mean 'phases'?)"),
    ("phases:\n  - {name: one, goal: g, min_rounds: yes}\n",
     "mine.yaml:2: phases[0] (one).min_rounds: Input should be a valid integer (got True); YAML reads it as true/false"),
    ("name: theirs\nphases:\n  - {name: one, goal: g}\n", "name: 'theirs' is not the file's name ('mine')"),
    ("title: T\nphases:\n  - name: one\n    goal: g\n  - name: two\n    goal: g\n    min_rounds: 0\n"
     "    speakers: 3\n", "mine.yaml:7: phases[1] (two).min_rounds: Input should be greater than 0 (got 0)\n"
     f"{{path}}:8: phases[1] (two).speakers: write `all` or a list of roles or participants' slugs (got 3)"),
])
def test_a_strategy_files_mistake_names_the_file_the_line_the_field_and_the_fix(tmp_path, body, named):
    (tmp_path / "mine.yaml").write_text(body)
    with pytest.raises(InvalidConfig) as caught:
        load_strategy("mine", search_dirs([tmp_path]))
    assert str(tmp_path / "mine.yaml") in caught.value.message
    assert named.format(path=tmp_path / "mine.yaml") in caught.value.message


def test_a_phase_speaker_named_in_a_strategy_file_is_refused_at_its_line(tmp_path):
    (tmp_path / "mine.yaml").write_text("roles: {pro: for}\nphases:\n  - name: one\n    goal: g\n"
                                        "  - name: two\n    goal: g\n    speakers: [pro, alcie]\n")
    strategy = load_strategy("mine", search_dirs([tmp_path]))
    with pytest.raises(InvalidConfig, match=r"mine\.yaml:7: phases\[1\] \(two\)\.speakers: 'alcie' .*'alice'"):
        strategy.check_speakers(["alice", "bob"])


def test_a_phase_speaker_that_is_neither_a_role_nor_a_participant_is_named():
    (strategy := Strategy(name="s", roles={"pro": "argues for"}, phases=[{"name": "one", "goal": "g",
                                                                         "speakers": ["pros"]}]))
    with pytest.raises(InvalidConfig, match=r"phases\[0\] \(one\)\.speakers: 'pros' is neither a role .*\(did you mean 'pro'\?\)"):
        strategy.check_speakers(["alice", "bob"])
    Strategy(name="s", roles={"pro": "p"}, phases=[{"name": "one", "goal": "g", "speakers": ["pro", "bob"]}]
             ).check_speakers(["alice", "bob"])


def test_a_mistyped_strategy_name_gets_the_nearest_one():
    with pytest.raises(InvalidConfig, match=r"no strategy 'sixhats' \(did you mean 'six-hats'\?\)"):
        load_strategy("sixhats", search_dirs())


SECRET = "I secretly prefer B because of my bonus"


@pytest.mark.parametrize("reply", [
    f"<think>{SECRET}</think>\nposition: A\nrationale: cheaper\nconfidence: 0.7",
    f"{SECRET}\n</think>\n\nposition: A\nrationale: cheaper\nconfidence: 0.7",  # the template opened it
    f"<Thinking>\n{SECRET}\n</Thinking>\n```yaml\nposition: A\nrationale: cheaper\nconfidence: 0.7\n```",
])
def test_a_reasoning_models_think_preamble_is_never_a_participants_answer(reply):
    answer, problem = parse_answer(reply)
    assert (answer.position, answer.rationale, answer.confidence, problem) == ("A", "cheaper", 0.7, None)


@pytest.mark.parametrize("reply", [f"<think>{SECRET}", f"<think>{SECRET}</think>", f"Well.\n<think>{SECRET}"])
def test_reasoning_that_never_closes_or_is_all_there_is_is_never_salvaged_into_a_position(reply):
    answer, _ = parse_answer(reply)
    assert "secretly" not in answer.position + answer.rationale and answer.fallback


def test_a_facilitators_think_preamble_does_not_cost_its_question():
    question, problem = parse_question(f"<think>{SECRET}</think>\nquestion: Which option?\nparticipants: all",
                                       "pricing", ["ana"])
    assert question.question == "Which option?" and problem is None


@pytest.mark.parametrize("written", ["yes", "No", "off", "007", "2020-01-01", "1e3"])
def test_a_participants_position_is_the_text_written_never_what_yaml_guesses(written):
    """`position: yes` (a natural answer to "Should the pier be rebuilt?") was recorded as `True`, `No` as
    `False`, `007` as `7`: a roundtable answer's values are the text written, as a scene file's are."""
    answer, note = parse_answer(f"position: {written}\nrationale: {written}\nconfidence: 0.8")
    assert (answer.position, answer.rationale, answer.confidence, note) == (written, written, 0.8, None)


def test_a_key_given_twice_in_an_answer_is_a_problem_never_its_last_copy():
    """The docs: no key given twice in one mapping of any YAML read, a roundtable answer included (YAML keeps
    the last silently: `position: keep it` then `position: tear it down` was read as the second)."""
    answer, note = parse_answer("position: keep it\nconfidence: 0.9\nposition: tear it down\n")
    assert answer.fallback and "given twice" in note and "position" in note


@pytest.mark.parametrize("text", [
    'My answer: {"position": "Adopt it", "rationale": "Safe.", "confidence": 0.6}',
    '```JSON\n{"position": "Adopt it", "rationale": "Safe.", "confidence": 0.6}\n```',
    "Sure.\nposition: Adopt it\nrationale: Safe.\nconfidence: 0.6\nI hope this helps!",
    "```yaml\nanswer:\n  Position: Adopt it\n  Rationale: Safe.\n  Confidence: 0.6\n```",
])
def test_an_answer_with_prose_json_or_capitals_around_it_is_read(text):
    from promptdesk.core.formats.roundtable.answers import parse_answer
    assert parse_answer(text) == (Answer("Adopt it", "Safe.", 0.6), None)


def test_a_lower_case_key_wins_over_its_capitalised_twin():
    from promptdesk.core.formats.roundtable.answers import parse_answer
    assert parse_answer("Position: A\nposition: B\nconfidence: 0.5")[0].position == "B"


@pytest.mark.parametrize("speakers,named", [("[critic]", "['critic'] seats no one at this table (roles go round-robin: "
                                                          "alice dreamer, bob realist)"),
                                            ("[]", "[] seats no one at this table")])
def test_a_phase_whose_speakers_seat_no_one_at_the_table_is_refused_not_played_by_everyone(tmp_path, speakers, named):
    (tmp_path / "mine.yaml").write_text("roles: {dreamer: d, realist: r, critic: c}\nphases:\n  - name: crit\n"
                                        f"    goal: g\n    speakers: {speakers}\n")
    strategy = load_strategy("mine", search_dirs([tmp_path]))
    with pytest.raises(InvalidConfig) as caught:
        strategy.check_speakers(["alice", "bob"])
    assert f"mine.yaml:5: phases[0] (crit).speakers: {named}" in caught.value.message
    strategy.check_speakers(["alice", "bob", "carol"]) if speakers != "[]" else None


@pytest.mark.parametrize("participants,chosen", [
    ("Kofi Mensah", ["kofi-mensah"]),  # one participant as a text, by name: not everyone
    ("bob and kofi-mensah", ["bob", "kofi-mensah"]),
    ("[BOB, Inés Ortiz]", ["bob", "ines-ortiz"]),
    ("ALL", "all"),
])
def test_the_facilitators_participants_are_read_by_slug_or_name_as_a_list_or_a_text(participants, chosen):
    from promptdesk.core.formats.roundtable.answers import parse_question
    table = {"ines-ortiz": "Inés Ortiz", "kofi-mensah": "Kofi Mensah", "bob": "Bob"}
    question, note = parse_question(f"question: Where now?\nparticipants: {participants}\n", "t", table)
    assert (question.participants, note) == (chosen, None)


def test_a_single_participant_text_naming_no_one_is_noted_and_read_as_all():
    from promptdesk.core.formats.roundtable.answers import parse_question
    question, note = parse_question("question: Q?\nparticipants: zed\n", "t", ["bob", "carol"])
    assert question.participants == "all" and note == "unknown participants ['zed'] dropped"


@pytest.mark.parametrize("written,read", [("0.8 (fairly sure)", 0.8), ("70% - not certain", 0.7), ("0.70.", 0.7),
                                          ("7/10 (roughly)", 0.7), ("7 (out of 10)", None), ("high", None)])
def test_a_confidence_with_a_remark_after_it_is_the_number(written, read):
    assert confidence(written) == read


@pytest.mark.parametrize("written,read", [("Conclude.", "conclude"), ("next phase", "phase"),
                                          ("conclude (we agree)", "conclude"), ("continue or conclude", "continue")])
def test_a_next_action_written_in_a_phrase_is_the_one_action_it_names(written, read):
    from promptdesk.core.formats.roundtable.answers import parse_synthesis
    synthesis, note = parse_synthesis(f"synthesis: ok\nnext_action: {written}\n", "t")
    assert synthesis.next_action == read and (note is None) == (read != "continue")


def test_a_strategy_with_two_phases_of_one_name_is_refused_at_the_second(tmp_path):
    (tmp_path / "mine.yaml").write_text("phases:\n  - name: Draft\n    goal: g\n  - name: review\n    goal: g\n"
                                        "  - name: draft\n    goal: g\n")
    with pytest.raises(InvalidConfig, match=r"mine\.yaml:6: phases\[2\]\.name: 'draft' names phase 1 too"):
        load_strategy("mine", search_dirs([tmp_path]))
