"""What each actor receives stays what it was, request for request, apart from what is dropped on purpose.

The Apology (three actors taking turns, a scheduled world event at beat 5, a window of 2 so that
isolation (b) drops turns) is played through the real OpenAI SDK against the loopback server, every reply
scripted per actor (so the dialogue cannot depend on the requests), in isolation (a) and (b). Its
requests, rebuilt from `prompts.jsonl`, are compared with the ones the engine sent before the
requests were trimmed (`data/apology_requests_before.json`), once the trimming is applied to those:

- an empty journal section (`## YOUR JOURNAL` with no entries) is left out of the briefing;
- in (b), a past update in the thread keeps neither its beat heading (`BEAT 3 of at most 16`) nor
  its ask (`Respond in character, or stay silent.`), which the newest update repeats (the thread's
  order keeps the beats' order); and only the newest update
  carries the actor's last private thought (before, every kept update carried the thought of the
  turn before it, so a thread re-sent every thought of its window);
- in (b), the newest update says what happened first, then the last private thought, the beat
  heading and the ask (before: thought, heading, what happened, ask), so that the next request
  re-sends it unchanged up to the end of what happened (a cache mark can end there).

Nothing else may differ: not a line routed, not a word of a briefing, not a message's place.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from helpers import ROOT, SCENES
from loopback import LoopbackServer, Reply
from promptdesk.core.casting.build import RunOptions, build_session
from promptdesk.core.casting.scene_file import scene_from_dict
from promptdesk.core.clock import VirtualClock
from promptdesk.core.record.prompt_log import read_prompts

BEFORE = Path(__file__).parent / "data" / "apology_requests_before.json"
THOUGHT = "YOUR LAST PRIVATE THOUGHT (only you ever see it):\n"
ASK = "\n\nRespond in character, or stay silent."


def _characters(tmp: Path) -> Path:
    """The shipped characters, only Alice with a journal (so the others' journal sections are empty)."""
    folder = tmp / "characters"
    shutil.copytree(ROOT / "characters", folder, ignore=shutil.ignore_patterns("*journal.md"))
    (folder / "alice" / "journal.md").write_text("## 2026-01-01 09:00 — Earlier\n\nAlice kept the old plan.\n")
    return folder


def _reply(counts: dict[str, int]):
    def reply(recorded) -> Reply:
        system = recorded.body["messages"][0]["content"]
        name = re.search(r"You are ([^.]+)\. Also present", system).group(1)
        counts[name] = counts.get(name, 0) + 1
        n = counts[name]
        if "journal entry" in json.dumps(recorded.body["messages"][-1]):
            return Reply(text=f"{name} writes journal entry {n}.")
        return Reply(text=f"<thinking>{name} weighs turn {n}: the deadline, the client, the plan.</thinking>\n"
                          f"<speech>[TONE: calm] \"{name} says line {n} about the deadline.\"</speech>")
    return reply


async def _play(tmp: Path, isolation: str) -> dict[str, list[str]]:
    data = yaml.safe_load((SCENES / "the-apology.yaml").read_text())
    counts: dict[str, int] = {}
    with LoopbackServer(_reply(counts)) as server:
        data["provider"] = {"name": "openai", "model": "gpt-4.1-mini", "base_url": server.url("/v1"), "max_retries": 0}
        data["limits"] = {"max_beats": 16, "window": 2}
        data["turns"] = "sequential"  # one call at a time: the order of lines cannot depend on arrival
        options = RunOptions(isolation=isolation, coordinator="C", seed=1, runs_root=tmp / "runs", clock=VirtualClock(),
                             characters_dirs=[_characters(tmp)], write_character_journals=False)
        session = build_session(scene_from_dict(data), options)
        result = await session.run()
    sent: dict[str, list[str]] = {}
    for record in read_prompts(result.run_dir):
        sent.setdefault(record.to, []).append(record.text)
    return sent


def requests_of(tmp: Path, isolation: str) -> dict[str, list[str]]:
    """Every request of the run, per recipient, in order, as canonical JSON text (the caller sets a key)."""
    return asyncio.run(_play(tmp, isolation))


def trimmed(text: str, isolation: str) -> dict:
    """A request as sent before, with what is dropped on purpose taken out."""
    request = json.loads(text)
    request["system"] = request["system"].replace("## YOUR JOURNAL\n\n(no entries yet)\n\n", "")
    if isolation == "b":
        users = [m for m in request["messages"] if m["role"] == "user"]
        for message in users[:-1]:
            content = re.sub(r"^((?:\(Earlier[^\n]*\n\n)?)" + re.escape(THOUGHT) + r".*?\n\n(?=BEAT )", r"\1",
                             message["content"], flags=re.S)
            content = re.sub(r"^((?:\(Earlier[^\n]*\n\n)?)BEAT \d+ of at most \d+\n\n", r"\1", content)
            message["content"] = content.removesuffix(ASK)
        if users:
            users[-1]["content"] = _what_happened_first(users[-1]["content"])
    return request


def _what_happened_first(content: str) -> str:
    """A newest update as sent before (thought, heading, what happened, ask) in today's order."""
    thought = ""
    if content.startswith(THOUGHT):
        thought, _, content = content.partition("\n\n")
        thought += "\n\n"
    heading = re.fullmatch(r"(BEAT \d+ of at most \d+)\n\n(.*)" + re.escape(ASK), content, re.S)
    if heading:
        return f"{heading[2]}\n\n{thought}{heading[1]}{ASK}"
    return f"{content}\n\n{thought.rstrip()}" if thought else content


@pytest.mark.parametrize("isolation", ["a", "b"])
def test_each_actor_receives_what_it_did_apart_from_what_is_dropped_on_purpose(tmp_path, isolation, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")  # for this test only: others check a missing key
    before = json.loads(BEFORE.read_text())[isolation]
    now = requests_of(tmp_path, isolation)
    assert sorted(now) == sorted(before)
    for slug, texts in before.items():
        assert len(now[slug]) == len(texts), slug
        for index, (old, new) in enumerate(zip(texts, now[slug])):
            assert json.loads(new) == trimmed(old, isolation), f"{slug}'s request {index + 1} differs"
