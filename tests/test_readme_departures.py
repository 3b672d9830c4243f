"""The docs' "Where Promptdesk departs from the documents" (`docs/departures.md`): a table with one whole
row per departure, and exactly the departures the suite knows: `DEPARTS` holds every requirement id
Promptdesk does not meet as written, each with the test that pins what it does instead, so that a new
departure cannot go unlisted (add its id and its test here, and its row there) and a row cannot
outlive the behaviour it describes (its pinning test must exist). The same holds for the departures
declined before the section existed (rows without an id) and the stated readings."""

from __future__ import annotations

import ast
import re

from helpers import ROOT

PAGE = "docs/departures.md"
HEADING = "# Where Promptdesk departs from the documents"
COLUMNS = ["Document", "Id", "The document asks", "What Promptdesk does instead", "Why"]

DEPARTS = {
    "0.9": "test_coordinator.py::test_role_a_judge_also_sees_notes_and_the_directors_notes",
    "0.45": "test_moderator.py::test_the_stall_note_and_directors_notes_reach_the_actors_but_not_the_transcripts",
    "0.49": "test_spec_small_items.py::test_the_transcript_title_numbers_the_scene_by_its_runs_else_by_its_number",
    "0.59": "test_spec_small_items.py::test_a_headless_run_without_both_choices_prints_the_tradeoffs_with_its_refusal",
    "0.67": "test_json_protocol.py::test_a_json_scene_records_and_routes_exactly_as_the_tag_scene",
    "3.12": "test_moderator.py::test_suggested_events_are_injected_asked_or_only_recorded",
    "3.17": "test_moderator.py::test_a_scene_without_a_prompt_is_refused",
    "4.2": "test_run_folder.py::test_sessions_built_in_the_same_second_never_share_a_folder",
    "4.15": "test_close_rules.py::test_role_c_goal_verdict_comes_from_goal_markers_only",
    "4.16": "test_wind_down.py::test_wind_down_timing_action_or_off_under_every_coordinator_role",
    "4.17": "test_wind_down.py::test_unset_wind_down_is_timing_and_closing_action_makes_it_action",
    "4.18": "test_moderator.py::test_headless_suggestions_are_off_unless_inject_is_asked",
    "4.32": "test_arcs.py::test_arcs_give_each_actor_its_last_tone_per_beat",
    "4.37": "test_moderator.py::test_role_c_winds_down_and_closes_with_goal_when_bob_apologises_and_alice_accepts",
    "4.39": "test_wind_down.py::test_wordless_reactions_after_the_close_note_are_not_final_positions",
    "4.45": "test_success.py::test_success_is_true_only_for_a_scene_that_closed_on_its_own",
}
"""Every requirement id the suite knows Promptdesk to depart from, and the test that pins what it does instead."""

DECLINED_BEFORE = {
    "sub-agent": "test_claude_code.py::test_a_scene_plays_through_the_real_cli_and_the_record_is_what_the_model_saw",
    "maxBeats": "test_departure_pins.py::test_an_unset_max_beats_is_the_hard_cap_times_the_cast",
    "goalAchieved: false": "test_scene_engine.py::test_max_beats_forces_a_close_with_goal_not_achieved",
    "web room": "test_collaborate_cli.py::test_a_collaboration_runs_headless_from_flags_alone",
}
"""The departures declined before the audit numbered them (rows with `—`), by words of their row."""

READINGS = {
    "0.30": "test_scene_engine.py::test_a_scene_closes_naturally_on_close_words",
    "0.48": "test_engine_records.py::test_events_json_is_spec_000s_log_whose_speech_text_is_the_whole_speech_block",
    "4.34": "test_arcs.py::test_character_insights_put_each_beats_thinking_beside_the_response_it_led_to",
}
"""Ambiguous requirements whose reading the section states (met as read, with why), and the test of it."""


def section() -> str:
    text = (ROOT / PAGE).read_text(encoding="utf-8")
    assert text.count(HEADING + "\n") == 1, "the page has one departures section"
    return text.split(HEADING, 1)[1].split("\n## ", 1)[0]


def rows() -> list[list[str]]:
    lines = [line for line in section().splitlines() if line.startswith("|")]
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines]
    assert cells and cells[0] == COLUMNS
    assert set("".join(cells[1])) <= set("- ")
    return cells[2:]


def test_every_row_names_its_document_requirement_instead_and_why():
    table = rows()
    for row in table:
        assert len(row) == len(COLUMNS), row
        document, ident, asks, instead, why = row
        assert document in ("000", "001", "002", "003", "004"), row
        assert ident == "—" or re.fullmatch(r"[0-4]\.\d+", ident), row
        assert ident == "—" or ident.startswith(str(int(document[-1])) + "."), row
        assert all(len(cell) > 20 for cell in (asks, instead, why)), row


def test_the_section_lists_exactly_the_departures_the_suite_knows():
    ids = [row[1] for row in rows() if row[1] != "—"]
    assert len(ids) == len(set(ids)), "one row per requirement"
    assert set(ids) - set(DEPARTS) == set(), "a row the suite does not know to depart: add it to DEPARTS with its test"
    assert set(DEPARTS) - set(ids) == set(), "a departure the section does not list: give it a row"


def test_the_departures_declined_before_are_rows_of_the_section_and_declined_nowhere_else():
    undated = [" ".join(row) for row in rows() if row[1] == "—"]
    assert len(undated) == len(DECLINED_BEFORE), "every row without an id is one the suite knows"
    for words in DECLINED_BEFORE:
        assert sum(words in row for row in undated) == 1, words
    docs = "".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").rglob("*.md")))
    outside = (ROOT / "README.md").read_text(encoding="utf-8") + docs.replace(section(), "")
    assert "**Declined:" not in outside


def test_the_section_states_each_reading():
    readings = section().split("**Readings of ambiguous requirements**", 1)[1]
    stated = set(re.findall(r"^- \*\*([0-4]\.\d+)\*\*", readings, re.M))
    assert stated == set(READINGS)
    assert not stated & set(DEPARTS), "a requirement is either met as read or a departure, not both"


def test_every_departure_and_reading_is_pinned_by_a_test_of_the_suite():
    defined: dict[str, set[str]] = {}
    for where in [*DEPARTS.values(), *DECLINED_BEFORE.values(), *READINGS.values()]:
        name, function = where.split("::")
        if name not in defined:
            tree = ast.parse((ROOT / "tests" / name).read_text(encoding="utf-8"))
            defined[name] = {node.name for node in ast.walk(tree)
                             if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
        assert function in defined[name], f"{where} pins a departure but is not in the suite"
