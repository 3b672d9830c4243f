"""The docs' "Where Promptdesk departs from the documents" (`docs/departures.md`): a table with one whole row per departure,
naming every requirement it lists, and the departures declined before it moved there (not kept
elsewhere as declines of their own)."""

from __future__ import annotations

import re

from helpers import ROOT

PAGE = "docs/departures.md"
HEADING = "# Where Promptdesk departs from the documents"
COLUMNS = ["Document", "Id", "The document asks", "What Promptdesk does instead", "Why"]

LISTED = {"0.48", "0.49", "3.12", "3.17", "4.15", "4.16", "4.17", "4.18", "4.32", "4.37", "4.39"}
"""Requirement ids this section lists as departures (each must have its row)."""

READINGS = {"0.30", "4.34"}
"""Ambiguous requirements whose reading the section states (met as read, with why)."""

DECLINED_BEFORE = ("sub-agent", "maxBeats", "goalAchieved: false")
"""The departures declined before the section existed, each now a row of it."""


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
    assert len(table) >= len(LISTED) + len(DECLINED_BEFORE)
    for row in table:
        assert len(row) == len(COLUMNS), row
        document, ident, asks, instead, why = row
        assert document in ("000", "001", "002", "003", "004"), row
        assert ident == "—" or re.fullmatch(r"[0-4]\.\d+", ident), row
        assert ident == "—" or ident.startswith(str(int(document[-1])) + "."), row
        assert all(len(cell) > 20 for cell in (asks, instead, why)), row


def test_the_section_names_each_requirement_it_lists():
    ids = {row[1] for row in rows()}
    assert LISTED <= ids, LISTED - ids
    assert len([row[1] for row in rows() if row[1] != "—"]) == len(ids - {"—"}), "one row per requirement"
    for ident in READINGS:
        assert re.search(rf"\*\*{re.escape(ident)}\*\*", section()), ident


def test_the_departures_declined_before_are_rows_of_the_section_and_declined_nowhere_else():
    table = " ".join(" ".join(row) for row in rows())
    for words in DECLINED_BEFORE:
        assert words in table, words
    docs = "".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").rglob("*.md")))
    outside = (ROOT / "README.md").read_text(encoding="utf-8") + docs.replace(section(), "")
    assert "**Declined:" not in outside
