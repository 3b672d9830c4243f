"""`b_request_r15_bytes` and its group-chat counterpart: the body as the server received it, and
the same dialogue in a round-robin group chat's shape."""

from __future__ import annotations

import json
from types import SimpleNamespace

from benchmarks import request_size


def line(who: str, text: str, beat: int = 1):
    return SimpleNamespace(from_=who, text=text, beat=beat)


def test_the_group_chat_shape_is_the_system_message_then_one_message_per_line():
    ours = {"model": "m", "messages": [{"role": "system", "content": "You are Bob."},
                                       {"role": "user", "content": "BEAT 1 ..."}], "stream": True}
    theirs = request_size.groupchat_body(ours, "bob", [line("alice", "Hi."), line("bob", "Hello."), line("eve", "Yo")])
    assert theirs == {"model": "m", "stream": True, "messages": [
        {"role": "system", "content": "You are Bob."}, {"role": "user", "content": "Hi.", "name": "alice"},
        {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "Yo", "name": "eve"}]}
    assert request_size.wire(theirs) == json.dumps(theirs, separators=(",", ":"), ensure_ascii=False).encode()


def test_a_short_scene_measures_the_requests_of_the_beat_asked():
    got = request_size.measure(beat=3, cast=["alice", "bob", "charlie"])
    # by beat 3 the group chat holds the briefing and eight lines at most; ours a thread of three turns
    assert 3000 < got["b_request_r15_bytes"] < 8000 and 3000 < got["b_request_r15_groupchat_bytes"] < 8000, got


def test_the_benchmarks_keep_journals_in_a_store_of_their_own(tmp_path):
    """A journal left in the checkout's `.promptdesk/journals/` by a scene played by hand is not read."""
    import os
    import subprocess
    import sys

    from helpers import ROOT

    env = {k: v for k, v in os.environ.items() if k != "PROMPTDESK_JOURNAL_STORE"}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-c", "import os, benchmarks; store = os.environ['PROMPTDESK_JOURNAL_STORE']; "
                          "print(store, os.path.isdir(store), len(os.listdir(store)))"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out[1:] == ["True", "0"] and not out[0].startswith(str(ROOT))
