"""The docs' key table (`docs/guide/console.md`) is complete: every key the footer shows (and every documented hidden key) is in
the row for its screen, written as the footer writes it."""

from __future__ import annotations

import re

from tui_support import ROOT

from promptdesk.tui.app import PromptdeskApp
from promptdesk.tui.screens.replay import ReplayScreen
from promptdesk.tui.screens.stage import StageScreen
from promptdesk.tui.screens.wizard import WizardScreen
from promptdesk.tui.formats.escalation_modal import EscalationModal
from promptdesk.tui.widgets.confirm_modal import ConfirmModal

DISPLAY = {"ctrl+n": "ctrl+n", "escape": "esc", "full_stop": ".", "plus": "+", "minus": "-", "left": "←",
           "right": "→", "space": "space", "home": "home", "end": "end", "ctrl+q": "ctrl+q"}


def rows() -> dict[str, str]:
    text = (ROOT / "docs" / "guide" / "console.md").read_text()
    table = text[text.index("| where | keys |"):]
    return {m.group(1): m.group(2) for m in re.finditer(r"^\| ([a-z ]+) \| (.+) \|$", table, re.M)}


def documented(row: str) -> set[str]:
    return set(re.findall(r"`([^`]+)`", row))


ROW_OF = {"stage.room": "collaboration stage", "stage.leave": "collaboration stage"}
"""Bindings documented in another row than their screen's (the room's keys exist on a collaboration's stage)."""


def test_every_key_of_every_screen_is_in_its_row_of_the_readme_key_table():
    table = rows()
    for where, screen in (("wizard", WizardScreen), ("stage", StageScreen), ("replay", ReplayScreen),
                          ("anywhere", PromptdeskApp), ("escalation dialog", EscalationModal),
                          ("quit dialog", ConfirmModal)):
        for binding in screen.BINDINGS:
            row = documented(table[ROW_OF.get(binding.id or "", where)])
            keys = row | {key for written in row for key in written.split("/")}
            for key in binding.key.split(","):
                shown = binding.key_display or DISPLAY.get(key, key)
                assert shown in keys, (where, binding.id, shown)
