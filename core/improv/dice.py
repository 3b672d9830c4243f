"""The improviser's only source of chance: a `random.Random` seeded from a sha256 of its inputs."""

from __future__ import annotations

import hashlib
import random


def rng_for(seed: int, *parts: str) -> random.Random:
    """A generator that depends only on the seed and the given parts, never on time or globals."""
    digest = hashlib.sha256(str(seed).encode())
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big") + data)
    return random.Random(int.from_bytes(digest.digest()[:16], "big"))
