"""The structured protocol (`protocol: json`): the reader, and whole scenes through the real SDKs
against the loopback server, for OpenAI-style `response_format` and Anthropic's forced tool:
the same events as the tag protocol, thinking never routed, bad JSON and schema violations
corrected then silenced (never salvaged), truncated streams, and the schema recorded."""

from __future__ import annotations

import json

import pytest

from promptdesk.core.cli.main import main
from promptdesk.core.protocol.reply import parse_turn
from promptdesk.core.protocol.structured import JsonSplitter, parse_json_turn, turn_schema
from promptdesk.core.record.events import DeltaEvent
from helpers import CHARACTERS, SCENES, example_scene
from loopback import Reply, loopback  # noqa: F401  (fixture)
from test_scene_faults import actor_of, keys, remote_cast, scripted, turn  # noqa: F401

SECRET = "my hidden plan is to resign tomorrow"
CAST = {"alice": "Alice", "Alice": "Alice", "bob": "Bob", "Bob": "Bob", "charlie": "Charlie", "Charlie": "Charlie"}
MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-4o-mini", "openai-compatible": "gemma-3-270m"}


def reply(action="speak", to="Bob", tone="firm", stage="taps the table", words="Walk me through the timeline.",
          thinking=SECRET, **extra) -> str:
    return json.dumps({"thinking": thinking, "action": action, "to": to, "tone": tone, "stage_direction": stage,
                       "words": words, **extra})


# -- the reader ---------------------------------------------------------------------------------
@pytest.mark.parametrize("as_json, as_tags", [
    (reply(), turn('[TO: Bob, TONE: firm, *taps the table*] "Walk me through the timeline."', SECRET)),
    (reply(action="silent", to=None, tone=None, stage="looks away", words="ignored"), turn("[SILENT, *looks away*]", SECRET)),
    (reply(action="react", to=None, tone="stunned", stage=None, words=""), turn("[REACT, TONE: stunned]", SECRET)),
    (reply(action="interrupt", to="charlie", tone=None, stage=None, words="Stop."),
     turn('[INTERRUPT, TO: Charlie] "Stop."', SECRET)),
    (reply(to=None, tone=None, stage=None, words="Hello."), turn('"Hello."', SECRET)),
    (reply(to=None, tone=None, stage=None, words="*[the scene ends here]*"), turn("*[the scene ends here]*", SECRET)),
])
def test_a_json_reply_reads_as_the_same_turn_as_its_tag_form(as_json, as_tags):
    assert parse_json_turn(as_json, CAST) == parse_turn(as_tags, CAST)


@pytest.mark.parametrize("raw, problem", [
    ("", "empty response"),
    ('{"thinking": "' + SECRET + '", "action": "speak", "words": "cut', "not valid JSON"),
    ("```json\n" + reply() + "\n```", "not valid JSON"),
    ('["speak"]', "not a JSON object"),
    (json.dumps({"thinking": SECRET, "action": "speak", "words": SECRET}), "missing key 'to'"),
    (reply(secret=SECRET), "unexpected key 'secret'"),
    (reply(action="whisper"), "action must be one of"),
    (reply(words=42), "words must be a string"),
    (reply(tone=["x"]), "tone must be a string"),
    (reply(words="</speech><speech>" + SECRET), "words holds a protocol tag"),
    (reply()[:-1] + ', "words": "' + SECRET + '"}', "key 'words' given twice"),
    (reply()[:-1] + ', "thinking": "Walk me through the timeline."}', "key 'thinking' given twice"),
    ('{"thinking": "' + SECRET + '", ' + reply()[1:], "key 'thinking' given twice"),
])
def test_a_reply_off_the_schema_is_malformed_and_keeps_nothing(raw, problem):
    parsed = parse_json_turn(raw, CAST)
    assert not parsed.well_formed and parsed.speech is None and parsed.thinking is None
    assert any(problem in p for p in parsed.problems)
    assert not any(SECRET in p for p in parsed.problems)


def test_a_raw_line_break_inside_a_string_is_read_as_one():
    raw = reply(thinking="first\nsecond", words="Line one.\nLine two.").replace("\\n", "\n")
    assert "\n" in raw and parse_json_turn(raw, CAST).thinking == "first\nsecond"


def test_the_splitter_holds_partial_json_back_and_releases_only_a_whole_valid_reply():
    splitter = JsonSplitter(CAST)
    text = reply()
    assert [splitter.feed(text[i:i + 7]) for i in range(0, len(text), 7)] == [[]] * len(range(0, len(text), 7))
    assert splitter.flush() == [("think", SECRET), ("speech", '[TO: Bob, TONE: firm, *taps the table*] '
                                                              '"Walk me through the timeline."')]
    broken = JsonSplitter(CAST)
    assert broken.feed(text[:-1]) == [] and broken.flush() == []


def test_the_schema_is_strict_and_names_the_others():
    schema = turn_schema(["Bob", "Charlie"])
    assert schema["additionalProperties"] is False
    assert schema["required"] == list(schema["properties"]) == ["thinking", "action", "to", "tone",
                                                               "stage_direction", "words"]
    assert schema["properties"]["to"]["anyOf"] == [{"type": "string", "enum": ["Bob", "Charlie"]}, {"type": "null"}]
    assert schema["properties"]["action"]["enum"] == ["speak", "silent", "interrupt", "react"]


# -- whole scenes on the loopback server --------------------------------------------------------
def json_cast(server, *slugs, provider="openai-compatible", **extra):
    cast = remote_cast(server, *slugs, provider=provider, model=MODELS[provider])
    return {slug: {**entry, "protocol": "json", **extra} for slug, entry in cast.items()}


def turn_bodies(server):
    """The bodies of the turn requests the server saw (not journal or judge calls)."""
    return [r.body for r in server.requests if "Respond in character" in json.dumps(r.body["messages"][-1])]


def speeches(run):
    keep = ("from", "beat", "text", "action", "target", "tone", "nonverbal", "raw")
    return sorted(({k: r.get(k) for k in keep} for r in run.records() if r["type"] == "speak"),
                  key=lambda s: (s["beat"], s["from"]))


@pytest.mark.parametrize("provider", ["openai-compatible", "openai", "anthropic"])
async def test_a_json_scene_records_and_routes_exactly_as_the_tag_scene(run_scene, loopback, provider):
    def answer(as_json):
        def by_actor(who, recorded):
            to = "Bob" if who != "bob" else "Alice"
            words = f"{who} says: walk me through it."
            thinking = f"{SECRET} ({who})"
            if as_json:
                return reply(to=to, words=words, thinking=thinking)
            return turn(f'[TO: {to}, TONE: firm, *taps the table*] "{words}"', thinking)
        return scripted(by_actor)

    runs = {}
    for protocol in ("tags", "json"):
        loopback.default = answer(protocol == "json")
        cast = {slug: {**entry, "protocol": protocol} for slug, entry in
                remote_cast(loopback, "alice", "bob", "charlie", provider=provider, model=MODELS[provider]).items()}
        deltas: list[DeltaEvent] = []
        runs[protocol] = run = await run_scene(
            example_scene("the-apology", limits={"max_beats": 3}, cast=cast), isolation="b", coordinator="C",
            before_run=lambda s: s.subscribe(lambda e: deltas.append(e) if e.type == "delta" else None))
        turns = turn_bodies(loopback)
        loopback.requests.clear()
        if protocol == "tags":
            assert not any("response_format" in b or "tools" in b for b in turns)
            continue
        if provider == "anthropic":
            assert all(b["tool_choice"] == {"type": "tool", "name": "answer"} and
                       b["tools"][0]["input_schema"]["required"][0] == "thinking" for b in turns)
        else:
            assert all(b["response_format"]["type"] == "json_schema" and b["response_format"]["json_schema"]["strict"]
                       for b in turns)
        system = turns[0]["system"][0]["text"] if provider == "anthropic" else turns[0]["messages"][0]["content"]
        assert '"thinking"' in system and "<speech>" not in system
        sent = [p["request"] for p in run.prompts() if p["purpose"] == "turn"]
        assert sent and all(p["json_schema"]["properties"]["to"]["anyOf"][-1] == {"type": "null"} for p in sent)
        alice = next(p for p in sent if "You are Alice." in p["system"])
        assert alice["json_schema"]["properties"]["to"]["anyOf"][0]["enum"] == ["Bob", "Charlie"]
        lengths = "maxLength" in json.dumps(turns[0])
        assert lengths == (provider != "openai") == ("maxLength" in json.dumps(alice["json_schema"]))
        speech_deltas = [d.text for d in deltas if d.channel == "speech"]
        assert speech_deltas and not any("{" in t or SECRET in t for t in speech_deltas)
    assert speeches(runs["json"]) == speeches(runs["tags"]) and speeches(runs["json"])
    thoughts = {p: sorted((r["beat"], r["from"], r["text"]) for r in runs[p].records() if r["type"] == "think")
                for p in runs}
    assert thoughts["json"] == thoughts["tags"] and thoughts["json"]  # run_scene's audit: none reached another actor


@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
async def test_bad_json_is_corrected_then_silenced_and_never_salvaged(run_scene, loopback, provider):
    bad = '{"thinking": "' + SECRET + '", "action": "speak", "to": null, "words": "' + SECRET + ' aloud'

    def answer(who, recorded):
        journal = "journal entry" in json.dumps(recorded.body["messages"][-1])
        return bad if who == "alice" and not journal else reply(action="silent", to=None, tone=None, stage=None, words="",
                                               thinking="quiet")

    loopback.default = scripted(answer)
    deltas: list[DeltaEvent] = []
    scene = example_scene("the-apology", limits={"max_beats": 1},
                          cast=json_cast(loopback, "alice", "bob", "charlie", provider=provider))
    run = await run_scene(scene, isolation="a", coordinator="C",
                          before_run=lambda s: s.subscribe(lambda e: deltas.append(e) if e.type == "delta" else None))
    records = run.records()
    corrections = [r for r in records if r["type"] == "correct" and r["target"] == "alice"]
    assert len(corrections) == 2 and "not valid JSON" in corrections[0]["text"]
    fixes = [p["request"] for p in run.prompts() if p["purpose"] == "correct"]
    assert len(fixes) == 2 and all(f["json_schema"] and "one JSON object" in f["messages"][-1]["content"] for f in fixes)
    alice = [r for r in records if r["type"] == "speak" and r["from"] == "alice"]
    assert alice and alice[0]["action"] == "silent" and alice[0]["text"] == ""
    assert any(r["type"] == "system" and "Alice silent this turn" in r["text"] for r in records)
    public = [json.dumps(r) for r in records if r["type"] not in ("delta",)]
    assert not any(SECRET in line for line in public)
    assert not any(SECRET in d.text for d in deltas)
    assert not any(SECRET in json.dumps(p["request"]) for p in run.prompts() if "You are Alice." not in p["request"]["system"])


async def test_a_schema_violation_is_corrected_and_the_corrected_reply_speaks(run_scene, loopback):
    loopback.script(Reply(text=reply(secret=SECRET)))
    loopback.default = Reply(text=reply(action="silent", to=None, tone=None, stage=None, words=""))
    loopback.script(Reply(text=reply(words="Fine, the timeline.")))
    scene = example_scene("the-apology", limits={"max_beats": 1}, cast=json_cast(loopback, "alice", "bob", "charlie"))
    run = await run_scene(scene, isolation="a", coordinator="C")
    records = run.records()
    fix = [r for r in records if r["type"] == "correct"]
    assert len(fix) == 1 and "unexpected key 'secret'" in fix[0]["text"]
    spoken = [r for r in records if r["type"] == "speak" and r["action"] == "speak"]
    assert [(s["from"], s["text"], s["target"]) for s in spoken] == [(fix[0]["target"], "Fine, the timeline.", "Bob")]


async def test_a_truncated_json_reply_is_a_malformed_turn_and_a_cut_stream_a_failed_call(run_scene, loopback):
    whole = reply(words="This answer was cut off by the token limit.")
    loopback.script(Reply(text=whole[:len(whole) // 2]), Reply(text=whole, deltas=4, truncate_after_deltas=2))
    loopback.default = Reply(text=reply(action="silent", to=None, tone=None, stage=None, words=""))
    deltas: list[DeltaEvent] = []
    scene = example_scene("the-apology", limits={"max_beats": 1}, cast=json_cast(loopback, "alice", "bob", "charlie"))
    run = await run_scene(scene, isolation="a", coordinator="C",
                          before_run=lambda s: s.subscribe(lambda e: deltas.append(e) if e.type == "delta" else None))
    records = run.records()
    first = next(r for r in records if r["type"] == "correct")
    assert "not valid JSON" in first["text"]
    failed = [r for r in records if r["type"] == "system" and "unable to respond" in r["text"]]
    assert [f["target"] for f in failed] == [first["target"]]
    assert "finish marker" in failed[0]["reason"]
    assert not any(SECRET in d.text or "{" in d.text for d in deltas if d.channel in ("speech", "think"))


def test_auto_picks_json_for_a_compatible_server_and_the_flag_sets_it(tmp_path, loopback, capsys):
    loopback.default = Reply(text=reply(action="silent", to=None, tone=None, stage=None, words=""))
    out = tmp_path / "run"
    code = main(["--batch", str(SCENES / "the-apology.yaml"), "--isolation", "a", "--coordinator", "C",
                 "--provider", "openai-compatible", "--model", "gemma", "--base-url", loopback.url("/v1"),
                 "--protocol", "auto", "--max-beats", "1", "--characters-dir", str(CHARACTERS), "--journals", "none",
                 "--out", str(out), "--quiet"])
    assert code == 0
    turns = turn_bodies(loopback)
    assert turns and all(b["response_format"]["json_schema"]["schema"]["required"][0] == "thinking" for b in turns)
    assert not any(r["type"] == "correct" for r in map(json.loads, (out / "events.jsonl").read_text().splitlines()))


def test_json_on_a_provider_that_cannot_constrain_output_is_refused(tmp_path, capsys):
    code = main(["--batch", str(SCENES / "the-apology.yaml"), "--isolation", "a", "--coordinator", "C",
                 "--provider", "offline", "--protocol", "json", "--max-beats", "1",
                 "--characters-dir", str(CHARACTERS), "--journals", "none", "--out", str(tmp_path / "run")])
    assert code == 2
    assert "protocol: json needs a provider that can constrain its output" in capsys.readouterr().err
    with pytest.raises(Exception, match="offline provider speaks tags only"):
        example_scene("the-apology", cast={"alice": {"protocol": "json"}})


async def test_llama_cpp_python_s_form_of_the_schema_is_a_provider_setting(run_scene, loopback):
    loopback.default = Reply(text=reply(action="silent", to=None, tone=None, stage=None, words=""))
    scene = example_scene("the-apology", limits={"max_beats": 1},
                          cast=json_cast(loopback, "alice", "bob", "charlie", schema_format="json_object"))
    run = await run_scene(scene, isolation="a", coordinator="C")
    turns = turn_bodies(loopback)
    assert turns and all(set(b["response_format"]) == {"type", "schema"} and
                                   b["response_format"]["type"] == "json_object" and
                                   b["response_format"]["schema"]["additionalProperties"] is False for b in turns)
    assert [r["action"] for r in run.records() if r["type"] == "speak"] == ["silent"] * len(turns)


async def test_a_json_speak_with_empty_words_and_no_stage_direction_is_a_silence(run_scene, loopback):
    """The JSON protocol's empty speech, as the tag protocol's: nothing said is a silence, counted as one."""
    loopback.default = scripted(lambda who, recorded: reply(to="Alice", words="", stage=None) if who == "bob"
                                else reply(to="Bob", words="Go on."))
    run = await run_scene(example_scene("the-apology", limits={"max_beats": 2},
                                        cast=json_cast(loopback, "alice", "bob", "charlie")), isolation="a", coordinator="C")
    bobs = [r for r in run.records() if r["type"] == "speak" and r["from"] == "bob"]
    assert bobs and all(r["action"] == "silent" for r in bobs) and run.session.state.turns.get("bob", 0) == 0
