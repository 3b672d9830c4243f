"""The smaller refusals of the fourth hardening pass: every number flag of every command refuses NaN and
infinity; `--timeout` bounds an attempt from its first byte to its last; resuming a finished run exits
2 saying so (and writes nothing); a JSON `to` outside the cast is a malformed turn; `import --to FILE`
exits 2 with the reason."""

from __future__ import annotations

import asyncio
import math
import time

import pytest

from promptdesk.core.cli.main import main
from promptdesk.core.cli.reference import parsers
from promptdesk.core.errors import ProviderError
from promptdesk.core.protocol.structured import parse_json_turn
from promptdesk.core.providers.base import ChatMessage, Request
from helpers import example_scene
from loopback import CANARY, LoopbackServer, Reply


def number_options():
    """(command, flag, argparse type) of every option that takes a number, in every command."""
    for name, parser in parsers():
        for action in parser._actions:
            kind = action.type
            if kind in (int, float) or getattr(kind, "__name__", "") == "convert":
                yield name, action.option_strings[0] if action.option_strings else action.dest, kind


def test_every_number_flag_refuses_nan_and_infinity():
    found = list(number_options())
    assert len(found) >= 10, found
    for command, flag, kind in found:
        for text in ("nan", "inf", "-inf"):
            try:
                value = kind(text)
            except (ValueError, TypeError, __import__("argparse").ArgumentTypeError):
                continue
            assert math.isfinite(value), f"{command} {flag} takes {text!r}"


def test_no_number_flag_uses_a_bare_float():
    """A bare `type=float` takes 'nan' and 'inf': every float flag uses a type of `promptdesk.core.cli.numbers`."""
    bare = [(command, flag) for command, flag, kind in number_options() if kind is float]
    assert bare == []


@pytest.mark.parametrize("argv", [
    ["--batch", "SCENE", "--isolation", "a", "--coordinator", "C", "--budget-usd", "nan"],
    ["--batch", "SCENE", "--isolation", "a", "--coordinator", "C", "--timeout", "inf"],
    ["sweep", "SCENE", "--isolation", "a", "--coordinator", "C", "--seeds", "1", "--budget-usd", "inf"],
    ["branch", "RUN", "--at-beat", "-1"],
    ["sweep", "--branch-from", "RUN", "--at-beat", "nan", "--seeds", "1"],
])
def test_a_number_flag_given_nan_inf_or_a_negative_beat_exits_2(argv, tmp_path, capsys):
    scene = tmp_path / "scene.yaml"
    scene.write_text(example_scene("the-apology").model_dump_json())
    argv = [str(scene) if a == "SCENE" else str(tmp_path) if a == "RUN" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and ("must be" in err or "invalid" in err), err


async def test_the_timeout_bounds_a_whole_attempt_not_the_gap_between_reads(monkeypatch):
    """A server that sends a byte every 0.25 s never lets a 1 s read timeout fire; the attempt still
    ends at about 1 s, as a retryable timeout."""
    from promptdesk.core.providers.registry import make_remote
    from promptdesk.core.providers.spec import ProviderSpec

    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    with LoopbackServer(Reply(text="one two three four five six seven eight", deltas=8, gap_s=0.25)) as server:
        provider = make_remote(ProviderSpec(name="openai-compatible", model="llama3", base_url=server.url("/v1"),
                                            timeout_s=1.0, max_retries=0))
        request = Request(to="ann", purpose="turn", system="s", messages=[ChatMessage(role="user", content="hi")])
        provider.prepare()  # the SDK imported and the client built, as a session does before its first beat
        started = time.monotonic()
        with pytest.raises(ProviderError) as failed:
            await provider.complete(request, lambda text: None, lambda: None)
        took = time.monotonic() - started
        await provider.aclose()
    assert 0.9 < took < 1.9 and "timed out" in str(failed.value) and failed.value.retryable


async def test_resuming_a_finished_run_without_journals_exits_2_and_changes_nothing(run_scene, capsys):
    run = await run_scene(example_scene("the-apology"), isolation="a", coordinator="C", journals="none")
    before = {p.name: p.read_bytes() for p in run.dir.iterdir() if p.is_file() and p.name != ".lock"}
    for _ in range(2):
        assert await asyncio.to_thread(main, ["resume", str(run.dir)]) == 2
        assert "is finished" in capsys.readouterr().err
    after = {p.name: p.read_bytes() for p in run.dir.iterdir() if p.is_file() and p.name != ".lock"}
    assert after == before


def test_a_json_to_outside_the_cast_is_a_malformed_turn():
    cast = {"ann": "Ann", "Ann": "Ann", "bob": "Bob", "Bob": "Bob"}
    reply = '{"thinking": "t", "action": "speak", "to": "%s", "tone": null, "stage_direction": null, "words": "Hi."}'
    turn = parse_json_turn(reply % "Mallory", cast)
    assert not turn.well_formed and turn.speech is None
    assert "to names no one in the cast" in turn.problems[0] and "Mallory" not in turn.problems[0]
    assert parse_json_turn(reply % "bob", cast).speech.target == "Bob"


def test_import_to_a_file_exits_2_naming_it(tmp_path, capsys):
    card = tmp_path / "card.json"
    card.write_text('{"spec": "chara_card_v2", "data": {"name": "Sera", "description": "Heals."}}')
    target = tmp_path / "not-a-folder"
    target.write_text("mine")
    for to in (target, target / "below"):
        assert main(["import", str(card), "--to", str(to)]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and "is a file" in err and str(target) in err
    assert target.read_text() == "mine"
