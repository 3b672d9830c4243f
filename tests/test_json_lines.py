"""JSON-lines files are split at `\n` alone: a line's JSON may hold U+2028, U+2029 or U+0085 raw (our
writers use `ensure_ascii=False`; the Claude Code CLI does not escape them), which `str.splitlines`
would cut in two."""

from __future__ import annotations

import json

from promptdesk.core.experiments.retry_failed import FAILED_RESULTS, set_failed_aside
from promptdesk.core.experiments.sweep_plan import RESULTS_FILE, read_results
from promptdesk.core.protocol.bounded import json_lines
from promptdesk.core.providers.claude_sessions import rewrite_replies

ODD = "one\u2028two\u2029three\x85four\x0bfive\x1cend"


def test_lines_break_at_newlines_only_and_keep_them_when_asked():
    text = json.dumps({"a": ODD}, ensure_ascii=False) + "\n" + '{"b": 1}\n' + '{"torn'
    assert [json.loads(x) for x in json_lines(text)[:2]] == [{"a": ODD}, {"b": 1}]
    assert json_lines(text, keepends=True) == [json.dumps({"a": ODD}, ensure_ascii=False) + "\n", '{"b": 1}\n', '{"torn']
    assert json_lines("") == [] and json_lines("x\n") == ["x"]


def test_a_sweeps_results_holding_a_line_separator_are_read_and_set_aside_whole(tmp_path):
    rows = [{"run": "a-1", "scene": f"Scene {ODD}", "close_reason": "provider-error"},
            {"run": "b-1", "scene": f"Scene {ODD}", "close_reason": "natural"}]
    (tmp_path / RESULTS_FILE).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    assert read_results(tmp_path) == rows
    assert set_failed_aside(tmp_path, {"a-1", "b-1"}) == ["a-1"]
    assert read_results(tmp_path) == rows[1:]
    assert [json.loads(x) for x in json_lines((tmp_path / FAILED_RESULTS).read_text(encoding="utf-8"))] == rows[:1]


def test_a_claude_transcript_whose_reply_holds_a_line_separator_is_rewritten(tmp_path):
    entries = [{"type": "user", "message": {"role": "user", "content": "Begin."}},
               {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": ODD}]}}]
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries), encoding="utf-8")
    assert rewrite_replies(path, ["<speech>kept</speech>"])
    reply = json.loads(json_lines(path.read_text(encoding="utf-8"))[1])
    assert reply["message"]["content"] == [{"type": "text", "text": "<speech>kept</speech>"}]
