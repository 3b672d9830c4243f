"""`PROMPTDESK_KEYMAP` is checked before the console opens: a remapping that cannot apply is refused,
naming what to fix, instead of leaving a key that silently does nothing."""

from __future__ import annotations

import argparse
import re

import pytest

from helpers import ROOT
from promptdesk.tui.app import run_compare_app, run_console
from promptdesk.tui.keymap import binding_ids, keymap_from, refusal


def test_every_binding_id_the_console_declares_can_be_remapped():
    declared = {m for path in (ROOT / "tui").rglob("*.py")
                for m in re.findall(r"Binding\([^)]*?\bid=\"([\w.-]+)\"", path.read_text(encoding="utf-8"), re.S)}
    assert len(declared) > 30 and declared <= binding_ids()


@pytest.mark.parametrize("text", ["", " ; ", "stage.stop=x;stage.inject=i", "stage.stop=ctrl+s,x", "replay.play=full_stop"])
def test_a_keymap_that_can_apply_is_taken(text):
    assert refusal(text) is None


@pytest.mark.parametrize(("text", "named"), [
    ("stage.stopp=x", "'stage.stopp' is no binding id (did you mean stage.stop?)"),
    ("stage.stop", "'stage.stop' is not id=key"),
    ("=x", "'=x' is not id=key"),
    ("stage.stop=", "stage.stop='': give keys"),
    ("stage.stop=,", "stage.stop=',': give keys"),
    ("stage.stop=a b", "stage.stop='a b': give keys"),
    ("stage.stop=\x1b[31mx", "stage.stop='\\x1b[31mx': give keys"),
])
def test_a_keymap_that_cannot_apply_is_refused_naming_the_item_and_listing_the_ids(text, named):
    message = refusal(f"stage.inject=i;{text}")
    assert message is not None and message.startswith("INVALID_CONFIG: PROMPTDESK_KEYMAP: ")
    assert named in message and "stage.inject" in message.split("The binding ids:")[1]
    assert "stage.inject=i" not in message.split(". Write")[0], "only what is wrong is named"


@pytest.mark.parametrize("opens", [lambda: run_console(argparse.Namespace()), lambda: run_compare_app([], "run")])
def test_the_console_refuses_an_unusable_keymap_before_it_opens(monkeypatch, capsys, opens):
    monkeypatch.setenv("PROMPTDESK_KEYMAP", "stage.stop=x;replay.plya=p")
    assert opens() == 2
    assert "'replay.plya' is no binding id (did you mean replay.play?)" in capsys.readouterr().err


def test_pairs_are_read_as_written():
    assert keymap_from("stage.stop=x; stage.inject=i,ctrl+i") == {"stage.stop": "x", "stage.inject": "i,ctrl+i"}
