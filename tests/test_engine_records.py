"""The record under hostile text and a hostile disk: any string the engine accepted is written and
read back, readers skip what they cannot read (with a warning) instead of crashing, and a run folder
that cannot be written stops the run with a clear message and exit 1, never a false close reason."""

from __future__ import annotations

import errno
import io
import json
import shutil

import pytest

from promptdesk.core.cli.batch import run_batch
from promptdesk.core.cli.main import parser
from promptdesk.core.errors import RecordingError
from promptdesk.core.record.events import GenericEvent
from promptdesk.core.record.recorder import Recorder, read_events
from helpers import CHARACTERS, SCENES, example_scene
from loopback import Reply, loopback  # noqa: F401  (fixture)
from test_scene_faults import keys, remote_cast, scripted, turn  # noqa: F401  (fixture)

LONE = "\ud800"
"""A lone surrogate: valid in a Python string (and in JSON as an escape), not encodable as UTF-8."""


async def test_a_lone_surrogate_from_a_model_or_the_operator_poisons_nothing(run_scene, loopback):
    def answer(who, recorded):
        if who == "bob":
            return turn(f'[TONE: odd] "caf{LONE}e au lait"', thinking=f"I think in {LONE} broken bytes today.")
        return turn('[TONE: calm] "Go on."')

    loopback.default = scripted(answer)
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"), limits={"max_beats": 3})
    run = await run_scene(scene, isolation="b", coordinator="C",
                          before_run=lambda s: s.inject_event(f"A {LONE} sign flickers"))
    assert run.result.errors == 0 and run.result.close_reason == "max_beats_exceeded"
    events = read_events(run.dir)
    speeches = [e.text for e in events if e.type == "speak" and e.from_ == "bob"]
    assert len(speeches) == 2 and speeches[0] == "caf\ufffde au lait"
    assert [e.text for e in events if e.type == "event"] == ["A \ufffd sign flickers"]
    array = json.loads((run.dir / "events.json").read_text(encoding="utf-8"))
    assert len(array) == len(events)
    heard = [p for p in run.prompts() if p["to"] == "alice" and "caf\ufffde au lait" in json.dumps(p["request"],
                                                                                                    ensure_ascii=False)]
    assert heard, "the line reached the others"


def test_any_string_accepted_is_stored_and_read_back_exactly(tmp_path):
    from datetime import datetime

    from promptdesk.core.record.events import SpeakEvent

    recorder = Recorder(tmp_path / "run")
    recorder.open()
    texts = [f"caf{LONE}e", f"{LONE}x\udfff end", "plain ü ✓ 😀", "\x00\x1b[2J"]
    for i, text in enumerate(texts):
        recorder.record(SpeakEvent(t=float(i), **{"from": "bob"}, text=text, beat=i, raw=text))
    recorder.log("warning", f"a {LONE} in the log")
    recorder.finish(datetime(2026, 1, 1))
    assert [e.text for e in read_events(recorder.run_dir)] == texts
    assert [r["text"] for r in json.loads((recorder.run_dir / "events.json").read_text(encoding="utf-8"))] == texts
    assert "a \\ud800 in the log" in (recorder.run_dir / "debug.log").read_text(encoding="utf-8")
    assert "caf\\ud800e" in (recorder.run_dir / "transcript.txt").read_text(encoding="utf-8")


def test_readers_skip_torn_and_undecodable_lines_with_a_warning(tmp_path):
    good = [GenericEvent(t=float(i), **{"from": "coordinator"}, type="beat", text=f"Beat {i}", beat=i) for i in range(3)]
    lines = [json.dumps(e.to_record()).encode() for e in good]
    (tmp_path / "events.jsonl").write_bytes(lines[0] + b"\n" + b'{"t": 1, "text": "caf\xe9 \xff"}\n' + lines[1]
                                            + b"\n" + b'{"t": 2, "from": "bob", "ty' + b"\n" + lines[2] + b"\n"
                                            + b'{"t": 9, "from": "coordinator", "type": "be')
    warnings: list[str] = []
    events = read_events(tmp_path, warn=warnings.append)
    assert [e.text for e in events] == ["Beat 0", "Beat 1", "Beat 2"]
    assert [w.split(": line ")[1].split(" ")[0] for w in warnings] == ["2", "4", "6"]
    assert all("skipped" in w for w in warnings)


def test_a_record_that_cannot_be_written_says_why_and_stops_appending(tmp_path):
    class Refusing(io.StringIO):
        def flush(self) -> None:
            raise PermissionError(errno.EACCES, "Permission denied")

    recorder = Recorder(tmp_path / "run")
    recorder.open()
    recorder._files["events.jsonl"] = Refusing()
    seen: list[RecordingError] = []
    recorder.on_failure = seen.append
    event = GenericEvent(t=0.0, **{"from": "coordinator"}, type="beat", text="Beat 0", beat=0)
    with pytest.raises(RecordingError) as raised:
        recorder.record(event)
    assert "permission denied" in str(raised.value) and "events.jsonl" in str(raised.value)
    assert str(raised.value).startswith("RECORDING_ERROR:")
    assert seen == [raised.value] and recorder.events == []
    with pytest.raises(RecordingError):
        recorder.record_prompt(0.0, _request())
    recorder.log("warning", "still callable")  # logging never raises over the first failure


def _request():
    from promptdesk.core.providers.base import ChatMessage, Request
    return Request(to="bob", purpose="turn", system="s", messages=[ChatMessage(role="user", content="hi")])


class FillsUp:
    """An `events.jsonl` handle on a disk that fills up: after `lines` lines every write goes to
    /dev/full, where the kernel answers ENOSPC."""

    def __init__(self, real, lines: int) -> None:
        self.real, self.left = real, lines
        self.full = open("/dev/full", "w", encoding="utf-8")  # noqa: SIM115 - closed by close()

    def write(self, text: str) -> int:
        if self.left > 0:
            self.left -= 1
            return self.real.write(text)
        return self.full.write(text)

    def flush(self) -> None:
        self.real.flush()
        self.full.flush()

    def fileno(self) -> int:
        return self.real.fileno()

    def close(self) -> None:
        self.real.close()
        try:
            self.full.close()
        except OSError:
            pass


@pytest.mark.skipif(not shutil.os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_is_reported_with_exit_1_and_no_false_close_reason(tmp_path, loopback, monkeypatch):
    loopback.default = scripted(lambda who, r: turn('[TONE: calm] "Go on."'))
    original = Recorder.open

    def open_on_a_small_disk(self):
        original(self)
        self._files["events.jsonl"] = FillsUp(self._files["events.jsonl"], 12)

    monkeypatch.setattr(Recorder, "open", open_on_a_small_disk)
    out = tmp_path / "run"
    ns = parser().parse_args(["--batch", str(SCENES / "the-apology.yaml"), "--isolation", "b", "--coordinator", "C",
                              "--provider", "anthropic", "--model", "claude-sonnet-4-6", "--base-url", loopback.url(),
                              "--characters-dir", str(shutil.copytree(CHARACTERS, tmp_path / "characters")),
                              "--out", str(out), "--seed", "1", "--max-beats", "20"])
    stream = io.StringIO()
    assert run_batch(ns, stream) == 1
    said = stream.getvalue()
    assert "RECORDING_ERROR: could not write events.jsonl" in said and "the disk is full" in said
    assert "Scene closed" not in said and "stall" not in said
    lines = (out / "events.jsonl").read_text().splitlines()
    assert len(lines) == 12 and not any(json.loads(line)["type"] in ("close", "stop") for line in lines)
    assert json.loads((out / "metadata.json").read_text())["reason"] == "incomplete"
    calls_after = loopback.hits
    assert calls_after <= 6, "the run stopped spending as soon as its record failed"


async def test_a_run_folder_that_cannot_be_started_is_a_recording_error(tmp_path, monkeypatch):
    from helpers import run_session

    def no_space(self, text):
        raise OSError(errno.ENOSPC, "No space left on device", str(self.run_dir / "notes.md"))

    monkeypatch.setattr(Recorder, "write_notes", no_space)
    run = await run_session(tmp_path, example_scene("the-apology"), audit=False, isolation="b", coordinator="C")
    assert run.result.close_reason == "record-error"
    assert "could not write the run folder" in run.result.error and "the disk is full" in run.result.error


def test_a_derived_file_that_cannot_be_written_does_not_cost_the_others(tmp_path):
    from datetime import datetime

    recorder = Recorder(tmp_path / "run")
    recorder.open()
    recorder.record(GenericEvent(t=0.0, **{"from": "coordinator"}, type="beat", text="Beat 0", beat=0))
    (recorder.run_dir / "transcript.md").mkdir()  # where a file should go: IsADirectoryError
    with pytest.raises(RecordingError) as raised:
        recorder.finish(datetime(2026, 1, 1))
    assert "transcript.md" in str(raised.value)
    for name in ("events.json", "transcript.txt", "metadata.json"):
        assert (recorder.run_dir / name).stat().st_size > 0, name


async def test_events_json_is_spec_000s_log_whose_speech_text_is_the_whole_speech_block(run_scene):
    """Spec 000's event log: a `speak` event's `text` is the whole `<speech>` (stage business and all),
    so a replay tool written to 000's schema keeps it; the spoken words are `words`. `events.jsonl`
    keeps them as the engine reads them: the words in `text`, the block in `raw`."""
    run = await run_scene(example_scene("the-apology", limits={"max_beats": 6}), isolation="a", coordinator="C")
    logged = [r for r in run.records() if r["type"] == "speak"]
    spec = [r for r in json.loads((run.dir / "events.json").read_text(encoding="utf-8")) if r["type"] == "speak"]
    assert len(spec) == len(logged) and any(r.get("nonverbal") for r in logged), "some speech has stage business"
    for line, entry in zip(logged, spec):
        assert entry["text"] == line["raw"] and entry["words"] == line["text"] and "raw" not in entry
    staged = next(r for r in spec if r.get("nonverbal"))
    assert f"*{staged['nonverbal']}*" in staged["text"] and staged["nonverbal"] not in staged["words"]


async def test_a_run_folder_deleted_mid_scene_fails_the_run_saying_so_never_plays_on_unrecorded(tmp_path):
    """The record's files written into an unlinked folder are lost: the next beat's commit sees that
    `events.jsonl` was deleted, and the run stops with a recording error naming it (it played on
    silently, its record gone)."""
    from helpers import example_scene, run_session

    def delete_at_beat_2(session):
        def watch(event):
            if event.type == "beat" and event.beat == 2 and session.recorder.run_dir.exists():
                shutil.rmtree(session.recorder.run_dir)
        session.subscribe(watch)

    run = await run_session(tmp_path, example_scene("the-apology", limits={"max_beats": 8}), isolation="a",
                            coordinator="C", audit=False, before_run=delete_at_beat_2)
    failure = run.session.recorder.failure
    assert failure is not None and ".jsonl" in str(failure) and "deleted while the scene played" in str(failure)
    assert "everything recorded before this point is kept" not in str(failure)
    assert run.result.close_reason != "max_beats_exceeded" and run.session.state.beat <= 3


async def test_the_brief_event_names_the_journal_only_when_the_briefing_carries_one(run_scene):
    """Spec 000's `brief` event says what was sent: a character with no journal entries is sent no
    journal section, so its `brief` does not claim one (it said "+ journal" for every actor, and for a
    collaboration's and a roundtable's participants too, which are sent neither)."""
    run = await run_scene(example_scene("the-apology", limits={"max_beats": 2}), isolation="b", coordinator="C")
    first = {}
    for prompt in run.prompts():
        first.setdefault(prompt["to"], prompt["request"]["system"])
    briefs = {r["target"]: r["text"] for r in run.records() if r["type"] == "brief"}
    assert set(briefs) == {"alice", "bob", "charlie"}
    for slug, text in briefs.items():
        journal = "## YOUR JOURNAL" in first[slug]
        assert text == f"Sent actor system prompt + profile{' + journal' if journal else ''} + scene perspective"
    assert any("+ journal" in text for text in briefs.values()), "the example characters keep journals"
    bare = await run_scene(example_scene("the-apology", journals="none", limits={"max_beats": 2}), isolation="b",
                           coordinator="C")
    assert {r["text"] for r in bare.records() if r["type"] == "brief"} == \
        {"Sent actor system prompt + profile + scene perspective"}, "a run without memory sends no journal"
