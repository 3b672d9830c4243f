"""Reproducible by seed: on the offline improviser, simulated latency decides arrival order on a
simulated clock, so the same scene, choices and seed give the same record at any `--concurrency`,
under any machine load, in a sweep or alone. Real models keep real arrival order, and the record
says which applies."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from promptdesk.core.cli.main import main
from promptdesk.core.clock import VirtualClock
from promptdesk.core.record.events import SpeakEvent
from promptdesk.core.record.recorder import read_events
from helpers import CHARACTERS, example_scene
from loopback import Reply, loopback  # noqa: F401  (fixture)
from test_scene_faults import keys, remote_cast, turn  # noqa: F401  (fixture)

CLOSE_LATENCY = {"latency_ms": [20, 45]}
"""Arrivals a few milliseconds apart: on the wall clock, any load swaps them."""


def scene_file(tmp_path: Path, name: str = "the-apology", **update) -> Path:
    scene = example_scene(name, provider=CLOSE_LATENCY, **update)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(scene.model_dump(mode="json", by_alias=True, exclude_none=True)))
    return path


@contextlib.contextmanager
def cpu_burners(count: int = 2) -> Iterator[None]:
    """Processes that keep every core busy while the block runs."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


def sweep(scene: Path, out: Path, concurrency: int) -> None:
    assert main(["sweep", str(scene), "--isolation", "a,b", "--coordinator", "C", "--seeds", "1-3",
                 "--concurrency", str(concurrency), "--max-beats", "7", "--characters-dir", str(CHARACTERS),
                 "--out", str(out)]) == 0


def runs(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir() if (p / "events.jsonl").is_file())


@pytest.mark.parametrize("name", ["the-apology", "roundtable-free"])
def test_the_same_seed_gives_the_same_record_at_any_concurrency_under_load(tmp_path, name):
    scene = scene_file(tmp_path, name)
    with cpu_burners():
        sweep(scene, tmp_path / "one", 1)
        sweep(scene, tmp_path / "eight", 8)
    assert main(["--batch", str(scene), "--isolation", "b", "--coordinator", "C", "--seed", "2", "--max-beats", "7",
                 "--characters-dir", str(CHARACTERS), "--out", str(tmp_path / "alone"), "--quiet"]) == 0
    names = runs(tmp_path / "one")
    assert names == runs(tmp_path / "eight") and len(names) == 6
    for run in names:
        one, eight = (tmp_path / d / run / "events.jsonl" for d in ("one", "eight"))
        assert one.read_bytes() == eight.read_bytes(), f"{run} played differently at concurrency 8"
    alone = (tmp_path / "alone" / "events.jsonl").read_bytes()
    assert alone == (tmp_path / "one" / "b-C-seed2" / "events.jsonl").read_bytes()
    start = json.loads(alone.splitlines()[0])
    assert start["arrivals"] == "simulated"


def test_simulated_latency_really_decides_the_order_of_a_beat(tmp_path):
    """The record above is not the same merely because everyone answers in cast order."""
    scene = scene_file(tmp_path)
    assert main(["--batch", str(scene), "--isolation", "a", "--coordinator", "C", "--seed", "5", "--max-beats", "8",
                 "--characters-dir", str(CHARACTERS), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    cast = ["alice", "bob", "charlie"]
    orders = {}
    for event in read_events(tmp_path / "run"):
        if isinstance(event, SpeakEvent) and event.beat:
            orders.setdefault(event.beat, []).append(event.from_)
    assert any(order != sorted(order, key=cast.index) for order in orders.values() if len(order) > 1)
    calls = [e for e in read_events(tmp_path / "run") if e.type == "call" and e.purpose == "turn"]
    assert all(0.02 <= e.latency_s <= 0.045 for e in calls)   # simulated, not what the machine took


def test_a_time_limit_is_simulated_time_too(tmp_path):
    """A turn whose simulated latency outlasts its limit times out, the same way every run,
    without the wall clock waiting for it."""
    scene = example_scene("the-apology", provider={"latency_ms": [30_000, 40_000], "timeout_s": 2, "max_retries": 0, "retry_after_cap_s": 0})
    path = tmp_path / "slow.yaml"
    path.write_text(yaml.safe_dump(scene.model_dump(mode="json", by_alias=True, exclude_none=True)))
    code = main(["--batch", str(path), "--isolation", "a", "--coordinator", "C", "--seed", "1", "--max-beats", "3",
                 "--characters-dir", str(CHARACTERS), "--out", str(tmp_path / "run"), "--quiet"])
    events = read_events(tmp_path / "run")
    timeouts = [e for e in events if e.type == "system" and "unable to respond" in e.text]
    assert code == 1 and timeouts and events[-1].reason == "provider-error"
    assert all(e.t < 30 for e in events if e.type == "call")          # cut at 7 simulated seconds
    assert max(e.t for e in events) < 60


async def test_the_virtual_clock_wakes_by_deadline_and_a_cancelled_sleeper_moves_no_time():
    clock, woke = VirtualClock(), []

    async def nap(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        woke.append((name, clock.now()))

    long = asyncio.ensure_future(nap("long", 9.0))
    await asyncio.gather(nap("b", 2.0), nap("a", 1.0), nap("c", 2.0), asyncio.sleep(0))
    long.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await long
    await clock.sleep(0.5)
    assert woke == [("a", 1.0), ("b", 2.0), ("c", 2.0)] and clock.now() == 2.5


async def test_a_limit_on_simulated_time_raises_without_waiting():
    clock = VirtualClock(timeouts=True)
    with pytest.raises(TimeoutError):
        await clock.wait_for(clock.sleep(100.0), 3.0)
    assert clock.now() == 3.0
    assert await clock.wait_for(asyncio.sleep(0, result="answer"), 3.0) == "answer"


async def test_a_realtime_virtual_clock_keeps_simulated_order():
    clock, woke = VirtualClock(realtime=True), []

    async def nap(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        woke.append(name)

    await asyncio.gather(nap("late", 0.02), nap("early", 0.01))
    assert woke == ["early", "late"] and clock.now() == 0.02


def test_real_models_keep_real_arrival_order_and_the_record_says_so(tmp_path, loopback, keys):
    loopback.default = lambda recorded: Reply(text=turn("Go on."))
    scene = example_scene("the-apology", cast=remote_cast(loopback, "bob"))
    path = tmp_path / "mixed.yaml"
    path.write_text(yaml.safe_dump(scene.model_dump(mode="json", by_alias=True, exclude_none=True)))
    assert main(["--batch", str(path), "--isolation", "a", "--coordinator", "C", "--seed", "1", "--max-beats", "2",
                 "--characters-dir", str(CHARACTERS), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    assert read_events(tmp_path / "run")[0].model_extra["arrivals"] == "real"


def test_a_run_played_again_is_the_same_without_journals_and_differs_by_what_the_first_one_wrote(tmp_path):
    """The docs' promise, both halves: the journals are part of the input. The first run appends to
    the characters' journals and a second run of the same seed reads that entry; with `--journals none`
    two runs are the same byte for byte."""
    scene = scene_file(tmp_path)
    cast = tmp_path / "cast"
    import shutil

    shutil.copytree(CHARACTERS, cast)

    def play(out: str, *flags: str) -> bytes:
        assert main(["--batch", str(scene), "--isolation", "b", "--coordinator", "C", "--seed", "4", "--max-beats", "6",
                     "--characters-dir", str(cast), "--out", str(tmp_path / out), "--quiet", *flags]) == 0
        return (tmp_path / out / "events.jsonl").read_bytes()

    assert play("bare1", "--journals", "none") == play("bare2", "--journals", "none")
    assert play("kept1") != play("kept2"), "the second run read the first one's journal entries"
