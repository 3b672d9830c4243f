"""`prompts.jsonl` records each request once (whole, or as a delta against its recipient's previous
request) and `promptdesk.core.record.prompt_log.read_prompts` rebuilds every request byte for byte."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from promptdesk.core.errors import PromptdeskError
from promptdesk.core.record.prompt_log import PromptLogError, PromptLogWriter, common_prefix, read_prompts, request_text
from promptdesk.core.providers.base import ChatMessage, Request
from helpers import example_scene
from loopback import loopback  # noqa: F401  (fixture)
from test_scene_faults import keys, remote_cast, scripted, turn  # noqa: F401

LIMITS = {"max_beats": 60, "soft_cap_per_character": 500, "hard_cap_per_character": 500, "stall_beats": 100}


def never_closing():
    """Scripted actors that talk on every call and answer malformed on every 17th (then correct it)."""
    calls: dict[str, int] = {}

    def answer(slug: str, recorded) -> str:
        calls[slug] = calls.get(slug, 0) + 1
        if calls[slug] % 17 == 5:
            return "I forgot the tags this time."
        n = calls[slug]
        return turn(f'[TONE: calm] "{slug} says something new, number {n}."', f"{slug} privately counts {n}.")
    return scripted(answer)


def spy(session, sent: list[Request]) -> None:
    """Collect every request handed to a provider, as the engine handed it."""
    for provider in {id(a.provider): a.provider for a in session.actors.values()}.values():
        original = provider.complete

        async def complete(request, on_delta=None, on_reset=None, _original=original):
            sent.append(request.model_copy(deep=True))
            return await _original(request, on_delta, on_reset)
        provider.complete = complete


async def test_every_request_of_a_60_beat_run_is_rebuilt_byte_for_byte(run_scene, loopback):
    loopback.default = never_closing()
    perspectives = example_scene("the-apology").perspectives
    scene = example_scene("the-apology", limits=LIMITS, characters=["alice", "bob"],
                          perspectives={s: perspectives[s] for s in ("alice", "bob")},
                          cast=remote_cast(loopback, "alice", "bob", provider="openai-compatible", model="llama3"))
    sent: list[Request] = []
    run = await run_scene(scene, isolation="a", coordinator="C", before_run=lambda s: spy(s, sent))
    assert run.result.close_reason == "max_beats_exceeded" and run.result.beats == 60
    rebuilt = list(read_prompts(run.dir))
    assert len(rebuilt) == len(sent) > 115
    assert any(r.purpose == "correct" for r in rebuilt)
    for record, request in zip(rebuilt, sent):
        assert (record.to, record.purpose, record.beat) == (request.to, request.purpose, request.beat)
        assert record.text == request_text(request)
        assert Request.model_validate({**record.request, "to": record.to, "purpose": record.purpose,
                                       "beat": record.beat}) == request
    assert_compact(run.dir, sent, ratio=4)  # (a) re-sends only its window of lines, so each request is small


@pytest.mark.parametrize("isolation", ["a", "b"])
async def test_offline_runs_are_recorded_as_deltas_and_read_back_exactly(run_scene, isolation):
    sent: list[Request] = []
    run = await run_scene(example_scene("the-apology"), isolation=isolation, coordinator="C",
                          before_run=lambda s: spy(s, sent))
    assert [r.text for r in read_prompts(run.dir)] == [request_text(r) for r in sent]
    assert_compact(run.dir, sent, ratio=3)


def assert_compact(run_dir, sent: list[Request], ratio: float) -> None:
    """Nearly every line is a delta, and the file is far smaller than the requests it holds."""
    lines = [json.loads(line) for line in (run_dir / "prompts.jsonl").read_text().splitlines()]
    first_of = {line["to"] for line in lines}
    assert len([line for line in lines if "extends" in line]) >= (len(lines) - len(first_of)) * 0.9
    whole = sum(len(request_text(r).encode()) for r in sent)
    assert (run_dir / "prompts.jsonl").stat().st_size * ratio < whole


def test_a_request_that_is_not_an_extension_is_written_whole(tmp_path):
    writer = PromptLogWriter()
    first = Request(to="bob", system="S" * 400, messages=[ChatMessage(role="user", content="one")])
    longer = first.model_copy(update={"messages": [*first.messages, ChatMessage(role="assistant", content='twö\n"\x1b')]})
    other = Request(to="bob", system="T" * 400, messages=[ChatMessage(role="user", content="one")])
    lines = [writer.line(0.0, r) for r in (first, longer, other)]
    (tmp_path / "prompts.jsonl").write_text("\n".join(lines) + "\n")
    parsed = [json.loads(line) for line in lines]
    assert "request" in parsed[0] and parsed[1]["extends"] == 1 and "request" in parsed[2]
    assert [r.text for r in read_prompts(tmp_path)] == [request_text(r) for r in (first, longer, other)]


def test_a_sliding_window_of_lines_is_recorded_as_what_it_still_shows_plus_what_is_new(tmp_path):
    """Isolation (a) re-sends the briefing and a window of the latest lines: when the window slides,
    the lines it still shows are a `copy` of the previous request, and an edited copy is caught."""
    writer, briefing = PromptLogWriter(), "You play Bob. " * 40
    lines = [f"Alice: \"Line number {n} of the scene, said at some length so it matters.\"" for n in range(12)]
    window = lambda first: Request(to="bob", system=briefing, messages=[ChatMessage(
        role="user", content="SCENE SO FAR\n" + "\n".join(lines[first:first + 8]) + "\n\nYour turn.")])
    requests = [window(0), window(2), window(4)]
    written = [writer.line(float(i), r) for i, r in enumerate(requests)]
    parsed = [json.loads(line) for line in written]
    assert "copy" in parsed[1] and "copy" in parsed[2]
    assert "number 3 " not in parsed[1]["append"] and "number 9 " in parsed[1]["append"]
    (tmp_path / "prompts.jsonl").write_text("\n".join(written) + "\n")
    assert [r.text for r in read_prompts(tmp_path)] == [request_text(r) for r in requests]
    parsed[2]["copy"][1] -= 5
    (tmp_path / "prompts.jsonl").write_text("\n".join(json.dumps(p) for p in parsed) + "\n")
    with pytest.raises(PromptLogError, match="request 3 rebuilt to"):
        list(read_prompts(tmp_path))


def test_the_update_a_thread_keeps_shorter_is_not_recorded_again(tmp_path):
    """Isolation (b) keeps the update it answered up to the end of what happened, which the previous
    request already holds: the next line keeps that much of it and appends only what follows (the
    reply, the new update), prepared ahead or not."""
    happened = "Alice [TONE: calm] \"The river is rising — we should go.\"\n" * 30
    sent = ChatMessage(role="user", content=happened + "\n\nYOUR LAST PRIVATE THOUGHT: stay.\n\nBEAT 2")
    first = Request(to="bob", system="S" * 400, messages=[sent])
    thread = [ChatMessage(role="user", content=happened), ChatMessage(role="assistant", content="<speech>No.</speech>")]
    second = first.model_copy(update={"messages": [*thread, ChatMessage(role="user", content="Carol: \"Then go.\"\n\nBEAT 3")]})
    texts = []
    for prepared in (False, True):
        writer = PromptLogWriter()
        lines = [writer.line(0.0, first)]
        if prepared:
            writer.prepare(first.model_copy(update={"messages": thread}))
        lines.append(writer.line(1.0, second))
        appended = json.loads(lines[1])["append"]
        assert "river is rising" not in appended and appended.startswith('"}, {"role": "assistant"')
        (tmp_path / "prompts.jsonl").write_text("\n".join(lines) + "\n")
        texts.append([r.text for r in read_prompts(tmp_path)])
    assert texts[0] == texts[1] == [request_text(first), request_text(second)]


def test_a_thread_whose_newest_update_was_kept_shorter_is_a_delta_built_without_serialising_it_all(tmp_path, monkeypatch):
    """Isolation (b) re-sends its newest update without the last thought and the ask: the line is
    still built from the previous one's text (new messages only), and read back byte for byte."""
    import promptdesk.core.record.prompt_log as prompt_log

    writer = PromptLogWriter()
    thread = [ChatMessage(role="user", content="BEAT 1\n\nAlice: \"Hi.\""), ChatMessage(role="assistant", content="Hé")]
    first = Request(to="bob", system="S" * 400, messages=[*thread, ChatMessage(role="user", content="THOUGHT\n\nBEAT 2 ask")])
    second = first.model_copy(update={"messages": [*thread, ChatMessage(role="user", content="BEAT 2"),
                                                   ChatMessage(role="assistant", content="Yes."),
                                                   ChatMessage(role="user", content="THOUGHT 2\n\nBEAT 3 ask")]})
    lonely = Request(to="eve", system="S" * 400, messages=[ChatMessage(role="user", content="THOUGHT\n\nBEAT 2 ask")])
    lone_next = lonely.model_copy(update={"messages": [ChatMessage(role="user", content="BEAT 2"),
                                                       ChatMessage(role="assistant", content="No."),
                                                       ChatMessage(role="user", content="BEAT 3")]})
    lines = [writer.line(0.0, first), writer.line(0.0, lonely)]
    whole = []
    monkeypatch.setattr(prompt_log, "request_text", lambda r: whole.append(r) or request_text(r))
    lines += [writer.line(1.0, second), writer.line(1.0, lone_next)]
    assert whole == [], "the newer requests were serialised whole"
    parsed = [json.loads(line) for line in lines]
    assert parsed[2]["extends"] == 1 and "BEAT 1" not in parsed[2]["append"]
    assert parsed[2]["keep"] == common_prefix(request_text(first), request_text(second))
    assert parsed[3]["extends"] == 2
    (tmp_path / "prompts.jsonl").write_text("\n".join(lines) + "\n")
    monkeypatch.undo()
    assert [r.text for r in read_prompts(tmp_path)] == [request_text(r) for r in (first, lonely, second, lone_next)]


def test_a_delta_without_its_base_is_an_error_and_a_torn_line_is_skipped(tmp_path):
    writer = PromptLogWriter()
    first = Request(to="bob", system="S" * 400, messages=[ChatMessage(role="user", content="one")])
    longer = first.model_copy(update={"messages": [*first.messages, ChatMessage(role="user", content="two")]})
    lines = [writer.line(0.0, first), writer.line(1.0, longer)]
    (tmp_path / "prompts.jsonl").write_text(lines[0] + "\n" + lines[1][:30])
    warnings: list[str] = []
    assert [r.id for r in read_prompts(tmp_path, warn=warnings.append)] == [1]
    assert "line 2" in warnings[0]
    (tmp_path / "prompts.jsonl").write_text(lines[1] + "\n")
    with pytest.raises(PromptLogError, match="extends request 1") as caught:
        list(read_prompts(tmp_path))
    assert isinstance(caught.value, PromptdeskError)


@settings(max_examples=400, deadline=None)
@given(shared=st.text(alphabet="ab—\n\"", max_size=700), a_tail=st.text(alphabet="abc", max_size=40),
       b_tail=st.text(alphabet="abd", max_size=40), cut=st.integers(0, 700), i=st.integers(0, 800), j=st.integers(0, 800))
def test_common_prefix_is_the_longest_shared_start_at_any_offsets(shared, a_tail, b_tail, cut, i, j):
    """`common_prefix` compares in slices that grow and shrink: the answer is that of comparing
    character by character, for strings of any length and offsets inside or past them."""
    a, b = shared + a_tail, shared[:cut] + b_tail
    for x, y in ((i, j), (i, i)):
        expected = 0
        while x + expected < len(a) and y + expected < len(b) and a[x + expected] == b[y + expected]:
            expected += 1
        assert common_prefix(a, b, x, y) == expected


def test_a_log_whose_lines_each_double_the_last_is_no_memory_bomb(tmp_path):
    """A line may copy its base twice over (`keep` all of it and `copy` all of it): thirty such lines of a
    hundred bytes each, their `length` written to match, rebuilt to a terabyte (`audit` grew past 3 GB in
    two minutes). A request past `REQUEST_MAX_CHARS` is measured before it is built and refused unread."""
    from in_child import in_child
    from promptdesk.core.record.prompt_log import REQUEST_MAX_CHARS

    first = {"id": 1, "t": 0.0, "to": "ann", "purpose": "turn", "beat": 0,
             "request": {"system": "s" * 1000, "messages": [{"role": "user", "content": "hi"}]}}
    size = len(request_text(first["request"]))
    lines = [json.dumps(first)]
    for n in range(2, 42):
        lines.append(json.dumps({"id": n, "t": 0.0, "to": "ann", "purpose": "turn", "beat": 0, "extends": n - 1,
                                 "keep": size, "copy": [0, size], "append": "", "length": 2 * size}))
        size *= 2
    (tmp_path / "prompts.jsonl").write_text("\n".join(lines) + "\n")

    def longest() -> int:
        warnings: list[str] = []
        most = max(len(record.text) for record in read_prompts(tmp_path, warn=warnings.append,
                                                                 on_problem=warnings.append))
        assert any("would rebuild to" in w for w in warnings)
        return most

    outcome = in_child(longest, seconds=20, memory_mb=1500)
    assert outcome.error is None, outcome
    assert int(outcome.value) <= REQUEST_MAX_CHARS


def test_a_log_that_is_a_device_or_a_line_without_end_is_never_read_into_memory(tmp_path, monkeypatch):
    """`prompts.jsonl` linked to `/dev/zero` (no line break, no end) held `audit` and `metrics` past 8 GB;
    a line over the limit is passed over unread (named as such), a device refused as no regular file."""
    import os
    from in_child import in_child
    from promptdesk.core.record import prompt_log

    if os.path.exists("/dev/zero"):
        (tmp_path / "prompts.jsonl").symlink_to("/dev/zero")
        outcome = in_child(lambda: list(read_prompts(tmp_path)), seconds=10, memory_mb=300)
        assert outcome.error in ("OSError",) and "not a regular file" in outcome.message, outcome
        (tmp_path / "prompts.jsonl").unlink()
    first = {"id": 1, "t": 0.0, "to": "ann", "purpose": "turn", "beat": 0,
             "request": {"system": "s", "messages": [{"role": "user", "content": "hi"}]}}
    (tmp_path / "prompts.jsonl").write_text(json.dumps(first) + "\n" + "x" * 5_000 + "\n" + json.dumps(first | {"id": 3}) + "\n")
    monkeypatch.setattr(prompt_log, "LINE_MAX_BYTES", 1_000)
    unread: list[tuple[int, str, str]] = []
    records = list(read_prompts(tmp_path, on_unreadable=lambda n, line, exc: unread.append((n, line, str(exc)))))
    assert [r.id for r in records] == [1, 3]
    assert unread == [(2, "", "the line is over the limit of 1,000 bytes; it was not read")]
