"""A loopback model for the crowd benchmark: an OpenAI Chat Completions server in its own process.

`python -m benchmarks.model_server SEED [LOW_S HIGH_S]` serves `POST /v1/chat/completions` on 127.0.0.1 (a free
port, printed as the first line of stdout) until its standard input closes, then prints one JSON
line: every request's timings on the machine's monotonic clock (`time.monotonic`, shared by every
process), so the benchmark can tell when each request's headers and body arrived and when its reply
was sent.

Each call waits a latency drawn from U(`LOW_S`, `HIGH_S`) with a RNG seeded by SEED (drawn in
arrival order), then streams a realistic reply (a thought of two or three sentences and a spoken
line of about 140 characters, in the actor protocol's tags) in a few SSE chunks with usage, the way
the API does. The server runs in a process of its own so that its threads do not share the
engine's interpreter (a model is on another machine); Nagle's algorithm is off, as a real server
would have it for SSE.
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOW_S, HIGH_S = 0.4, 1.0
WORDS = ("road", "budget", "council", "bridge", "school", "traffic", "river", "market", "children", "taxes",
         "summer", "detour", "farm", "noise", "houses", "plan", "vote", "safety", "buses", "trees")


def reply_text(rng: random.Random) -> str:
    """A well-formed turn of realistic size: about 150 characters of thought, 140 of speech."""
    def sentence(n: int) -> str:
        words = [rng.choice(WORDS) for _ in range(n)]
        return " ".join(words).capitalize() + "."

    thinking = f"I think the {rng.choice(WORDS)} matters most here. {sentence(9)} {sentence(7)}"
    tone = rng.choice(("measured", "worried", "firm", "hopeful"))
    speech = f"[TONE: {tone}] \"We cannot decide on the {rng.choice(WORDS)} before we know the cost. {sentence(10)} {sentence(6)}\""
    return f"<thinking>{thinking}</thinking>\n<speech>{speech}</speech>"


class Model:
    """The server's state: the seeded latencies and replies, and every request's timings."""

    def __init__(self, seed: int, low_s: float = LOW_S, high_s: float = HIGH_S) -> None:
        self.rng, self.low_s, self.high_s = random.Random(seed), low_s, high_s
        self.lock = threading.Lock()
        self.requests: list[dict] = []

    def draw(self) -> tuple[float, str]:
        with self.lock:
            return self.rng.uniform(self.low_s, self.high_s), reply_text(self.rng)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        """Quiet."""

    def _read_chunked(self) -> tuple[bytes, float] | None:
        """A body sent in chunks (a request opened ahead of its turn), and when its last chunk began
        to arrive (when the turn sent what only it knew); None when it was abandoned unfinished."""
        parts, last = [], time.monotonic()
        while (line := self.rfile.readline()).strip():
            size = int(line.split(b";")[0], 16)
            if size == 0:
                self.rfile.readline()
                return b"".join(parts), last
            last = time.monotonic()
            parts.append(self.rfile.read(size + 2)[:size])
        return None

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        head = sent = time.monotonic()
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            if (chunked := self._read_chunked()) is None:
                self.close_connection = True
                return
            raw, sent = chunked
        else:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        length = len(raw)
        body_at = time.monotonic()
        body = json.loads(raw)
        model: Model = self.server.model  # type: ignore[attr-defined]
        latency, text = model.draw()
        time.sleep(max(0.0, latency - (time.monotonic() - body_at)))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": body.get("model")}
        prompt = max(1, len(raw) // 4)
        pieces = [text[i:i + 80] for i in range(0, len(text), 80)]
        frames = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}]
        frames += [{**base, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in pieces]
        frames.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        frames.append({**base, "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": len(text) // 4,
                                                         "total_tokens": prompt + len(text) // 4}})
        data = b"".join(f"data: {json.dumps(f)}\n\n".encode() for f in frames) + b"data: [DONE]\n\n"
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n\r\n")
        self.wfile.flush()
        with model.lock:
            model.requests.append({"head": head, "sent": sent, "body": body_at, "done": time.monotonic(), "latency": latency,
                                   "bytes": length, "to": body.get("prompt_cache_key")})


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    """A crowd connects at once: the stdlib's backlog of 5 would make the kernel drop connections."""


def main(argv: list[str]) -> int:
    server = Server(("127.0.0.1", 0), Handler)
    bounds = [float(a) for a in argv[1:3]] if len(argv) >= 3 else [LOW_S, HIGH_S]
    server.model = Model(int(argv[0]) if argv else 1, *bounds)  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
    print(server.server_address[1], flush=True)
    sys.stdin.read()
    server.shutdown()
    with server.model.lock:  # type: ignore[attr-defined]
        print(json.dumps(server.model.requests), flush=True)  # type: ignore[attr-defined]
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
