"""Pacing: a minimum of seconds per beat, waited between beats on the session's clock."""

from __future__ import annotations

import asyncio

import pytest
from helpers import CHARACTERS, example_scene, make_scene, run_session

from promptdesk.core.cli.main import main, parser
from promptdesk.core.clock import VirtualClock
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.engine.pacing import Pace, resolve
from promptdesk.core.casting.scene_file import ProviderSpec
from promptdesk.core.casting.build import RunOptions, build_session


def beat_times(run) -> list[float]:
    return [r["t"] for r in run.records() if r["type"] == "beat"]


async def test_a_paced_scene_spaces_its_beats_by_the_pace_on_the_session_clock(tmp_path):
    scene = example_scene("the-apology", limits={"max_beats": 5})
    run = await run_session(tmp_path, scene, isolation="b", coordinator="C", pace=1.5)
    times = beat_times(run)
    assert len(times) >= 3
    assert all(later - earlier >= 1.5 for earlier, later in zip(times, times[1:])), times
    assert run.records()[0]["pace_s"] == 1.5


async def test_an_unpaced_scene_does_not_wait(tmp_path):
    run = await run_session(tmp_path, example_scene("the-apology", limits={"max_beats": 5}),
                            isolation="b", coordinator="C")
    times = beat_times(run)
    assert times[-1] - times[0] < 0.5, times


async def test_the_pace_changed_mid_scene_applies_from_the_next_safe_point(tmp_path):
    def slow_down_at_beat_two(session) -> None:
        session.subscribe(lambda e: session.set_pace(4) if e.type == "beat" and e.beat == 2 else None)

    run = await run_session(tmp_path, example_scene("the-apology", limits={"max_beats": 5}), isolation="b",
                            coordinator="C", pace=1, before_run=slow_down_at_beat_two)
    gaps = [round(b - a, 2) for a, b in zip(beat_times(run), beat_times(run)[1:])]
    assert gaps[0] >= 1 and gaps[1] >= 1 and gaps[1] < 4 and all(g >= 4 for g in gaps[2:]), gaps


async def test_a_stop_ends_the_pace_wait_at_once(tmp_path):
    clock = VirtualClock()

    async def stop_after(seconds: float, session) -> None:
        await clock.sleep(seconds)
        session.stop()

    def stop_while_waiting(session) -> None:
        session.subscribe(lambda e: asyncio.ensure_future(stop_after(5, session))
                          if e.type == "beat" and e.beat == 0 else None)

    run = await run_session(tmp_path, example_scene("the-apology"), isolation="b", coordinator="C", pace=60,
                            clock=clock, before_run=stop_while_waiting)
    assert run.result.close_reason == "stop"
    assert clock.now() < 60 and beat_times(run) == [0.0]


def test_the_pace_is_the_flag_else_the_scene_else_the_offline_default_for_an_all_offline_cast():
    offline, remote = ProviderSpec(name="offline"), ProviderSpec(name="anthropic")
    assert resolve(2.0, 3.0, 1.5, [offline]) == 2.0
    assert resolve(None, 3.0, 1.5, [offline]) == 3.0
    assert resolve(None, None, 1.5, [offline, offline]) == 1.5
    assert resolve(None, None, 1.5, [offline, remote]) == 0.0
    assert resolve(None, None, 0.0, [offline]) == 0.0
    assert resolve(99, None, 0.0, []) == 60.0


def test_a_pace_waits_only_after_a_beat_has_begun():
    pace = Pace(1.5)
    assert pace.remaining(10.0) == 0.0
    pace.began(10.0)
    assert pace.remaining(10.5) == 1.0 and pace.remaining(12.0) == 0.0


def test_the_console_paces_the_offline_improviser_and_the_batch_does_not(tmp_path):
    from promptdesk.core.cli.batch import options_from
    from promptdesk.tui.app import console_options

    scene = example_scene("the-apology")
    args = parser().parse_args(["x.yaml", "--isolation", "b", "--coordinator", "C"])
    where = dict(runs_root=tmp_path / "runs", characters_dirs=[CHARACTERS], cwd=tmp_path)
    from dataclasses import replace
    console = build_session(scene, replace(console_options(args), **where))
    batch = build_session(scene, replace(options_from(args), **where))
    assert (console.state.pace_s, batch.state.pace_s) == (1.5, 0.0)
    flagged = parser().parse_args(["x.yaml", "--isolation", "b", "--coordinator", "C", "--pace", "0"])
    assert build_session(scene, replace(console_options(flagged), **where)).state.pace_s == 0.0
    in_file = example_scene("the-apology", pace=0.5)
    assert build_session(in_file, replace(console_options(args), **where)).state.pace_s == 0.5


def test_a_bad_pace_is_refused_naming_what_to_fix(tmp_path, capsys):
    assert main(["--batch", "scenes/the-apology.yaml", "--isolation", "b", "--coordinator", "C", "--pace", "-1"]) == 2
    assert "--pace" in capsys.readouterr().err
    with pytest.raises(InvalidConfig, match="pace"):
        make_scene(pace=-1)


async def test_a_pace_changed_mid_scene_is_recorded_and_the_replay_shows_it(tmp_path):
    """The operator's pace change is a `pace` event (once per change, none for the same pace or after
    the close), so the replay's Session panel shows the pace as it was at each moment, not the start's."""
    from promptdesk.core.record.recorder import read_events
    from promptdesk.tui.stage_state import StateFold

    def change_at(session) -> None:
        changes = {1: 2.5, 2: 2.5, 3: 0}
        session.subscribe(lambda e: session.set_pace(changes[e.beat]) if e.type == "beat" and e.beat in changes else None)

    run = await run_session(tmp_path, example_scene("the-apology", limits={"max_beats": 5}), isolation="b",
                            coordinator="C", pace=1, before_run=change_at)
    run.session.set_pace(9)  # after the close: nothing more is recorded
    paces = [(r["beat"], r["pace_s"], r["from"]) for r in run.records() if r["type"] == "pace"]
    assert paces == [(1, 2.5, "operator"), (3, 0.0, "operator")], paces
    fold = StateFold()
    seen = []
    for event in read_events(run.dir):
        fold.feed([event])
        if event.type == "beat":
            seen.append((event.beat, fold.state.pace_s))
    assert seen[:5] == [(0, 1.0), (1, 1.0), (2, 2.5), (3, 2.5), (4, 0.0)], seen
