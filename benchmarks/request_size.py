"""How large isolation (b)'s request grows, against the same dialogue in a group chat's shape.

A 5-actor parallel scene (the shipped alice, bob, charlie, maria-stern, sam-reed), isolation (b),
default settings, through the real OpenAI SDK to the loopback server of `tests/loopback.py`, every
reply a realistic turn (`benchmarks.model_server.reply_text`: a thought of about 150 characters and
a spoken line of about 140, seeded).

- `b_request_r15_bytes` (goal: no larger than the next figure): the largest body, in bytes as the
  server received it, among the five turn requests of beat 15.
- `b_request_r15_groupchat_bytes`: for the same actor, the same dialogue in the shape a round-robin
  group chat (AutoGen AgentChat's) sends: its system message (the same briefing), then every line
  of the scene so far as one message (its own as `assistant`, the others' as `user` with the
  speaker's `name`), in order, the rest of the body as ours.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import tempfile
from pathlib import Path

from benchmarks.long_scene import Endless
from benchmarks.model_server import reply_text
from promptdesk.core.casting.build import RunOptions, build_session
from promptdesk.core.casting.scene_file import scene_from_dict

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
CAST = ["alice", "bob", "charlie", "maria-stern", "sam-reed"]
KEY = "sk-bench-not-a-real-key"
BEAT = 15


def scene(base_url: str, beats: int, cast: list[str] = CAST):
    return scene_from_dict({
        "name": "bench-request", "characters": cast, "turns": "parallel", "setting": "A long meeting room",
        "prompt": "Five colleagues argue about a missed deadline.", "goal": "They agree on a plan.",
        "limits": {"max_beats": beats, "soft_cap_per_character": 200, "hard_cap_per_character": 300,
                   "stall_beats": 50},
        "provider": {"name": "openai", "model": "gpt-4.1-mini", "base_url": base_url, "max_retries": 0}})


async def _run(folder: Path, beat: int, cast: list[str], isolation: str = "b"):
    """Play the scene (room for 40 beats, so no closing note is due) until beat `beat` was asked."""
    from loopback import LoopbackServer, Reply

    rng = random.Random(7)
    with LoopbackServer(lambda recorded: Reply(text=reply_text(rng), deltas=4)) as server:
        options = RunOptions(isolation=isolation, coordinator="C", seed=1, runs_root=folder,
                             characters_dirs=[ROOT / "characters"], write_character_journals=False)
        session = build_session(scene(server.url("/v1"), 40, cast), options)
        session.coordinator = Endless()
        session.subscribe(lambda event: session.stop() if event.type == "beat" and event.beat == beat + 1 else None)
        await session.run()
        return session, list(server.requests)


def groupchat_body(ours: dict, slug: str, speeches: list) -> dict:
    """`ours` with its messages replaced by the same dialogue in a round-robin group chat's shape."""
    messages = [ours["messages"][0]]
    for speech in speeches:
        own = speech.from_ == slug
        line = {"role": "assistant" if own else "user", "content": speech.text}
        messages.append(line if own else {**line, "name": speech.from_})
    return {**ours, "messages": messages}


def measure(beat: int = BEAT, cast: list[str] = CAST) -> dict[str, float]:
    os.environ.setdefault("OPENAI_API_KEY", KEY)
    with tempfile.TemporaryDirectory() as tmp:
        session, requests = asyncio.run(_run(Path(tmp), beat, cast))
    before = [e for e in session.recorder.events if e.type == "speak" and e.beat < beat and e.action != "silent"]
    asked = f"BEAT {beat} of at most"
    sized = []
    for recorded in requests:
        if asked not in recorded.body["messages"][-1]["content"]:
            continue
        key = recorded.body["prompt_cache_key"]
        slug = key.removeprefix("promptdesk-")
        theirs = groupchat_body(recorded.body, slug, before)
        sized.append((recorded.size, len(wire(theirs)), slug))
    ours, theirs, slug = max(sized)
    return {"b_request_r15_bytes": ours, "b_request_r15_groupchat_bytes": theirs}


def wire(body: dict) -> bytes:
    """A body as the SDK serialises it."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def run() -> dict[str, float]:
    return measure()


if __name__ == "__main__":
    for name, value in run().items():
        print(f"{name}: {value}")
