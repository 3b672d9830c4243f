"""`--protocol` / `protocol:` concern scene actors: a collaboration keeps its envelopes and personas, a
roundtable its YAML and prompts (the setting is ignored with a notice, in the wizard too);
`--schema-format` reaches an openai-compatible server from the command line; and an HTTP error on a
request that carried a JSON schema names the setting to change, unless its cause is another one."""

from __future__ import annotations

import json

import pytest

from promptdesk.core.casting.build import RunOptions, build_session
from promptdesk.core.casting.scene_file import load_scene
from promptdesk.core.engine.briefing import ACTOR_JSON_PROMPT
from helpers import CHARACTERS, SCENES, batch_run, served_scene
from loopback import LoopbackServer, Reply
from test_scene_faults import keys  # noqa: F401  (fixture)

JSON_TURN = json.dumps({"thinking": "Weigh it.", "action": "speak", "to": "Bob", "tone": "calm", "stage_direction": None,
                        "words": "Go on."})


@pytest.mark.parametrize("scene_name", ["fairy-tale", "roundtable-debate"])
@pytest.mark.parametrize("where", ["flag", "scene file"])
def test_the_protocol_is_ignored_with_a_notice_where_actors_keep_their_own_replies(tmp_path, scene_name, where):
    scene = load_scene(SCENES / f"{scene_name}.yaml")
    provider = {"name": "openai-compatible", "model": "llama3", "base_url": "http://127.0.0.1:9/v1"}
    if where == "scene file":
        scene = scene.model_copy(update={"provider": scene.provider.model_copy(update={**provider, "protocol": "json"})})
        options = RunOptions(isolation="a", coordinator="C", seed=1, characters_dirs=[CHARACTERS], runs_root=tmp_path)
    else:
        options = RunOptions(isolation="a", coordinator="C", seed=1, characters_dirs=[CHARACTERS], runs_root=tmp_path,
                             provider="openai-compatible", model="llama3", base_url=provider["base_url"], protocol="json")
    session = build_session(scene, options)
    session.recorder.release()
    for actor in session.actors.values():
        assert getattr(actor.provider, "protocol", "tags") == "tags"
        assert not actor.briefing.startswith(ACTOR_JSON_PROMPT[:60]), "the persona and its reply format stay"
    notice = next(n for n in session.notices if "ignored" in n)
    assert "concerns scene actors" in notice and session.scene.format in notice
    assert notice in session.notes


def test_a_scene_still_answers_in_json_under_the_flag(tmp_path):
    options = RunOptions(isolation="a", coordinator="C", seed=1, characters_dirs=[CHARACTERS], runs_root=tmp_path,
                         provider="openai-compatible", model="llama3", base_url="http://127.0.0.1:9/v1", protocol="json")
    session = build_session(load_scene(SCENES / "the-apology.yaml"), options)
    session.recorder.release()
    assert all(actor.briefing.startswith(ACTOR_JSON_PROMPT) for actor in session.actors.values())
    assert not any("ignored" in n for n in session.notices)


@pytest.mark.parametrize("schema_format, wire", [("json_object", "json_object"), (None, "json_schema")])
def test_the_schema_format_flag_reaches_the_server(tmp_path, capsys, schema_format, wire):
    with LoopbackServer(Reply(text=JSON_TURN)) as server:
        flags = ["--protocol", "json", *(["--schema-format", schema_format] if schema_format else [])]
        code, err, _ = batch_run(capsys, tmp_path, served_scene(tmp_path, server), *flags)
        bodies = [r.body for r in server.requests]
    assert code == 0, err
    assert bodies and all(body["response_format"]["type"] == wire for body in bodies)


def test_an_http_error_on_a_schema_request_names_the_setting_to_change(tmp_path, capsys):
    refusal = Reply(status=400, error_message="response_format type json_schema is not supported")
    with LoopbackServer(refusal) as server:
        code, err, out = batch_run(capsys, tmp_path, served_scene(tmp_path, server), "--protocol", "json")
    assert code != 0 or "unable to respond" in err
    said = (out / "events.jsonl").read_text() + (out / "debug.log").read_text()
    assert "--schema-format json_object" in said and "llama-cpp-python" in said and "--protocol tags" in said


@pytest.mark.parametrize("status, message", [
    (400, "This model's maximum context length is 8192 tokens; your messages resulted in 9120 tokens"),
    (400, "Requested tokens (9120) exceed context window of 8192"),
    (500, "Internal server error"),
    (503, "The server is overloaded"),
    (413, "Request entity too large"),
])
def test_an_error_with_another_cause_carries_no_schema_hint(tmp_path, capsys, status, message):
    with LoopbackServer(Reply(status=status, error_message=message)) as server:
        _, _, out = batch_run(capsys, tmp_path, served_scene(tmp_path, server), "--protocol", "json")
    said = (out / "events.jsonl").read_text() + (out / "debug.log").read_text()
    assert message.split()[0] in said, "the server's own words are kept"
    assert "--schema-format" not in said and "--protocol tags" not in said
