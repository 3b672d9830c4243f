"""The `collaborate` format (spec 001) end to end: acceptance tests A–E and edge cases 3–5 of §11,
on the real SDKs against the loopback server with scripted envelopes, and on the offline improviser.

Participants: `gpt` on OpenAI (structured outputs) and `claude` on Anthropic (instructions,
validation, one repair), both the built-in personas (no character file of those slugs exists).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import deque

import pytest

from promptdesk.core.clock import RealClock, VirtualClock
from promptdesk.core.formats.collaborate.personas import default_providers
from promptdesk.core.casting.scene_file import scene_from_dict
from helpers import requests_text, run_session
from loopback import Recorded, Reply, loopback  # noqa: F401  (fixture)
from test_scene_faults import keys, remote_cast  # noqa: F401  (fixture)

FAIRY = "Write a 2‑paragraph fairy tale—Claude drafts, GPT edits, alternate until done (≤4 rounds)."
HIKING = "Collaborate to outline and refine a 5‑step plan for a weekend hiking trip. Keep it concise."
ONE_SENTENCE = "Summarize this in 1 sentence, then stop."


def collab_scene(server=None, goal: str = FAIRY, max_rounds: int = 4, first: str = "claude", **extra):
    """gpt on OpenAI and claude on Anthropic (both on `server`), or both offline without one."""
    cast = {}
    if server is not None:
        cast = {**remote_cast(server, "gpt", provider="openai", model="gpt-4o-mini"),
                **remote_cast(server, "claude", provider="anthropic", model="claude-sonnet-4-6")}
    else:
        extra.setdefault("provider", {"name": "offline"})
    return scene_from_dict({"name": "collab", "format": "collaborate", "goal": goal, "characters": ["gpt", "claude"],
                            "cast": cast, "collaborate": {"max_rounds": max_rounds, "first": first}, **extra})


def who(recorded: Recorded) -> str:
    """The participant a request is for (its system prompt says `Your name is `x`.`)."""
    return re.search(r"Your name is `(\w+)`", json.dumps(recorded.body)).group(1)


def script(server, **replies: list) -> dict[str, deque]:
    """Serve each participant its own replies in order (dicts are sent as JSON, strings verbatim)."""
    queues = {slug: deque(items) for slug, items in replies.items()}

    def reply(recorded: Recorded) -> Reply:
        item = queues[who(recorded)].popleft()
        item = item(recorded) if callable(item) else item
        return item if isinstance(item, Reply) else Reply(text=item if isinstance(item, str) else json.dumps(item))
    server.default = reply
    return queues


def envelope(message: str, to: str | None = None, task: str = "Your turn.", final: bool | None = None) -> dict:
    data: dict = {"message": message}
    if to:
        data["handoff"] = {"to": to, "task": task}
    if final is not None:
        data["final"] = final
    return data


def of_type(run, *types: str) -> list[dict]:
    return [r for r in run.records() if r["type"] in types]


def request_text(recorded: Recorded) -> str:
    return json.dumps(recorded.body, ensure_ascii=False)


class TestAcceptanceOnLoopback:
    """Spec 001 §8 on the real SDKs: what each participant was sent, and how the router acted."""

    async def test_a_context_is_shared_and_the_tale_alternates_to_a_final(self, tmp_path, loopback):
        script(loopback,
               claude=[envelope("Para 1: a fox finds a lantern.", "gpt", "Edit paragraph 1 and ask for paragraph 2."),
                       envelope("Para 2: the wood follows its light home.", "gpt", "Polish both and finish.")],
               gpt=[envelope("Edited para 1: a small fox found a lantern.", "claude", "Write paragraph 2."),
                    envelope("The finished two-paragraph tale.", final=True)])
        run = await run_session(tmp_path, collab_scene(loopback), isolation="a", coordinator="C")
        assert (run.result.close_reason, run.result.goal_achieved) == ("final", True)
        speakers = [r["from"] for r in of_type(run, "agent_response")]
        assert speakers == ["claude", "gpt", "claude", "gpt"]
        to_gpt = [r for r in loopback.requests if who(r) == "gpt"]
        assert "Para 1: a fox finds a lantern." in request_text(to_gpt[0])
        assert "[router → gpt] Edit paragraph 1 and ask for paragraph 2." in request_text(to_gpt[0])
        assert "Round 2 of 4" in request_text(to_gpt[0]) and FAIRY in request_text(to_gpt[0])
        to_claude = [r for r in loopback.requests if who(r) == "claude"]
        assert "Edited para 1: a small fox found a lantern." in request_text(to_claude[1])

    async def test_openai_gets_strict_structured_outputs_and_anthropic_gets_instructions(self, tmp_path, loopback):
        script(loopback, claude=[envelope("Draft.", "gpt")], gpt=[envelope("Done.", final=True)])
        await run_session(tmp_path, collab_scene(loopback), isolation="a", coordinator="C")
        openai = next(r for r in loopback.requests if r.api == "openai").body
        fmt = openai["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
        assert fmt["json_schema"]["schema"]["properties"]["handoff"]["anyOf"][0]["properties"]["to"]["enum"] == [
            "gpt", "claude"]
        anthropic = next(r for r in loopback.requests if r.api == "anthropic").body
        assert "output_config" not in anthropic
        system = anthropic["system"][0]["text"]
        assert "Return only strict JSON" in system and "Your name is `claude`." in system
        assert anthropic["messages"][-1]["content"].endswith("Return JSON only per schema—no extra text.")

    async def test_b_bounded_rounds_end_at_the_cap(self, tmp_path, loopback):
        script(loopback, claude=[envelope("Step one.", "gpt")], gpt=[envelope("Step two.", "claude")])
        run = await run_session(tmp_path, collab_scene(loopback, goal="Plan a multi-step move.", max_rounds=2),
                                isolation="a", coordinator="C")
        assert run.result.close_reason == "cap"
        assert len(of_type(run, "agent_response")) == 2 and loopback.hits == 2

    async def test_c_message_and_handoff_continues_message_and_final_ends(self, tmp_path, loopback):
        script(loopback, claude=[envelope("Here is a draft.", "gpt", "Review it.")],
               gpt=[envelope("Reviewed; this is complete.", "claude", "ignored because final", final=True)])
        run = await run_session(tmp_path, collab_scene(loopback), isolation="a", coordinator="C")
        assert run.result.close_reason == "final" and loopback.hits == 2
        handoffs = of_type(run, "handoff")
        assert [(h["from"], h["target"], h["text"]) for h in handoffs] == [("claude", "gpt", "Review it.")]

    async def test_a_reply_with_no_handoff_ends_the_collaboration(self, tmp_path, loopback):
        script(loopback, claude=[envelope("Here is everything I have.")])
        run = await run_session(tmp_path, collab_scene(loopback), isolation="a", coordinator="C")
        assert run.result.close_reason == "no_handoff" and loopback.hits == 1

    @pytest.mark.parametrize("bad", ["Sure! Here you go: {\"message\": \"hi\"} Hope that helps.",
                                     json.dumps({"text": "no message key"}),
                                     json.dumps(envelope("hi", "bard", "not a participant")),
                                     json.dumps({"message": "hi", "handoff": {"to": "gpt"}})])
    async def test_d_malformed_anthropic_reply_gets_one_repair_then_falls_back_and_ends(self, tmp_path, loopback, bad):
        script(loopback, claude=[bad, bad])
        run = await run_session(tmp_path, collab_scene(loopback), isolation="a", coordinator="C")
        assert run.result.close_reason == "no_handoff" and loopback.hits == 2
        repair = loopback.requests[1].body["messages"]
        assert repair[-2] == {"role": "assistant", "content": bad} and "not a valid JSON envelope" in repair[-1]["content"]
        [response] = of_type(run, "agent_response")
        assert response["text"] == bad and response["envelope_valid"] is False and response["target"] == "all"
        assert not of_type(run, "handoff")
        assert "WARNING gpt" not in (run.dir / "debug.log").read_text()
        assert "WARNING claude reply is not a valid envelope" in (run.dir / "debug.log").read_text()
        assert "(not a valid envelope" in (run.dir / "transcript.md").read_text()

    async def test_a_multi_paragraph_message_written_with_raw_line_breaks_is_read_as_written(self, tmp_path, loopback):
        """A model's draft of two paragraphs, its line breaks unescaped inside the JSON string, is the
        envelope it plainly is: no repair call, the handoff acted on, the paragraphs kept."""
        raw = '{"message": "Once, a fox found a lantern.\n\nIt lit the way home.", "handoff": {"to": "gpt", "task": "Edit both paragraphs."}}'
        script(loopback, claude=[raw], gpt=[envelope("Edited.", final=True)])
        run = await run_session(tmp_path, collab_scene(loopback), isolation="a", coordinator="C")
        assert run.result.close_reason == "final" and loopback.hits == 2 and not of_type(run, "correct")
        assert of_type(run, "agent_response")[0]["text"] == "Once, a fox found a lantern.\n\nIt lit the way home."
        assert "Edit both paragraphs." in request_text(loopback.requests[1])


    @pytest.mark.parametrize("first", ["gpt", "claude"])
    async def test_d_a_refusal_is_said_as_one_not_shown_as_an_empty_reply(self, tmp_path, loopback, first):
        """OpenAI's `refusal` and Anthropic's `stop_reason: refusal`: the room says the participant refused
        (its words stay in debug.log, as every refusal's), with no repair call; it was "(empty reply)",
        closed as "not JSON (Expecting value at char 0)"."""
        words = "I'm sorry, I can't help with that request."
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        body = ({"id": "r", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini", "usage": usage,
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": None, "refusal": words}}]}
                if first == "gpt" else
                {"id": "r", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6", "stop_sequence": None,
                 "content": [{"type": "text", "text": words}], "stop_reason": "refusal",
                 "usage": {"input_tokens": 10, "output_tokens": 5}})
        script(loopback, **{first: [Reply(body=body)]})
        run = await run_session(tmp_path, collab_scene(loopback, first=first), isolation="a", coordinator="C")
        assert run.result.close_reason == "no_handoff" and loopback.hits == 1, "a refusal is its answer: no repair"
        shown = of_type(run, "agent_response")[0]
        assert shown["text"] == "(refused to answer: its words are in debug.log)" and shown["problem"] == "the model refused to answer"
        assert words in (run.dir / "debug.log").read_text() and words not in (run.dir / "transcript.txt").read_text()


    async def test_d_a_successful_repair_continues(self, tmp_path, loopback):
        script(loopback, claude=["not json at all", envelope("Fixed draft.", "gpt")], gpt=[envelope("Done.", final=True)])
        run = await run_session(tmp_path, collab_scene(loopback), isolation="a", coordinator="C")
        assert run.result.close_reason == "final" and loopback.hits == 3
        assert [r["text"] for r in of_type(run, "agent_response")] == ["Fixed draft.", "Done."]

    async def test_d_openai_wrong_shape_is_not_repaired_and_falls_back(self, tmp_path, loopback):
        script(loopback, gpt=[json.dumps({"message": ""})])
        run = await run_session(tmp_path, collab_scene(loopback, first="gpt"), isolation="a", coordinator="C")
        assert run.result.close_reason == "no_handoff" and loopback.hits == 1

    async def test_e_stop_cancels_the_call_in_flight_and_the_router_posts_the_notice(self, tmp_path, loopback):
        box = {}

        def slow(recorded: Recorded) -> Reply:
            box["loop"].call_soon_threadsafe(box["session"].stop)
            return Reply(text=json.dumps(envelope("never shown", "claude")), delay_s=10)

        script(loopback, claude=[envelope("Draft.", "gpt")], gpt=[slow])

        def hold(session):
            box["session"], box["loop"] = session, asyncio.get_running_loop()

        run = await run_session(tmp_path, collab_scene(loopback), isolation="a", coordinator="C", before_run=hold)
        assert run.result.close_reason == "stop"
        assert [r["text"] for r in of_type(run, "agent_response")] == ["Draft."]
        notice = [r for r in of_type(run, "stop") if r["from"] == "router"]
        assert [n["text"] for n in notice] == ["Collaboration canceled by user."]
        assert "*[ROUTER: Collaboration canceled by user.]*" in (run.dir / "transcript.md").read_text()
        meta = json.loads((run.dir / "metadata.json").read_text())
        assert meta["rounds"] == 1, "the round the stop cut short was never played (the summary says 1 round)"
        assert meta["totalBeats"] == 1, "begun, not played: the beats count it no more than the rounds do"

    async def test_events_carry_the_session_round_cap_and_call_ids(self, tmp_path, loopback):
        script(loopback, claude=[envelope("Draft.", "gpt")], gpt=[envelope("Done.", final=True)])
        run = await run_session(tmp_path, collab_scene(loopback), isolation="a", coordinator="C", clock=RealClock())
        tagged = of_type(run, "human_message", "agent_call", "agent_response", "handoff")
        assert [r["type"] for r in tagged] == ["human_message", "agent_call", "agent_response", "handoff",
                                               "agent_call", "agent_response"]
        assert len({r["session_id"] for r in tagged}) == 1 and all(r["max_rounds"] == 4 for r in tagged)
        assert all(r["thread"] == "default" and r["sender"] == r["from"] for r in tagged)
        assert all(isinstance(r["ts"], int) and r["ts"] > 1_600_000_000 for r in tagged)
        assert of_type(run, "human_message")[0]["from"] == "you"
        calls, responses = of_type(run, "agent_call"), of_type(run, "agent_response")
        assert [c["call_id"] for c in calls] == [r["call_id"] for r in responses]
        assert [r["round"] for r in responses] == [1, 2]
        assert [r["round"] for r in tagged] == [1, 1, 1, 1, 2, 2], "spec 001 §2: the round starts at 1, the goal's too"
        meta = json.loads((run.dir / "metadata.json").read_text())
        assert (meta["format"], meta["rounds"], meta["maxRounds"]) == ("collaborate", 2, 4)
        assert meta["actors"]["claude"]["turns"] == 1 and not (run.dir / "journals").exists()

    async def test_replies_are_not_streamed_as_spec_001_asks_and_the_departures_say_so(self, tmp_path, loopback):
        """Spec 001: "no token streaming" in this milestone. Each envelope is shown whole once read: no
        delta of its text reaches the console, and docs/departures.md claims no streaming either."""
        from pathlib import Path

        script(loopback, claude=[envelope("Draft: a fox finds a lantern.", "gpt", "Edit it.")], gpt=[envelope("Done.", final=True)])
        seen: list = []
        await run_session(tmp_path, collab_scene(loopback), isolation="a", coordinator="C",
                          before_run=lambda session: session.subscribe(seen.append))
        assert [e for e in seen if e.type == "delta"] == [] and len(loopback.requests) == 2
        row = next(line for line in (Path(__file__).parents[1] / "docs" / "departures.md").read_text().splitlines()
                   if line.startswith("| 001 |"))
        assert "stream live" not in row and "not streamed" in row


    async def test_isolation_b_keeps_each_participant_s_own_thread(self, tmp_path, loopback):
        script(loopback, claude=[envelope("Draft.", "gpt", "Edit."), envelope("Second.", "gpt", "Finish.")],
               gpt=[envelope("Edited.", "claude", "Extend."), envelope("Done.", final=True)])
        await run_session(tmp_path, collab_scene(loopback), isolation="b", coordinator="C")
        second = [r for r in loopback.requests if who(r) == "claude"][1].body
        assert second["system"][0]["cache_control"] == {"type": "ephemeral"}
        assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
        reply = second["messages"][1]["content"]  # the last reply carries the trailing cache breakpoint
        assert reply[0]["cache_control"] == {"type": "ephemeral"} and json.loads(reply[0]["text"])["message"] == "Draft."
        last = second["messages"][2]["content"]
        assert isinstance(last, str) and "Draft." not in last and "Edited." in last

    async def test_isolation_b_threads_stay_inside_the_token_window(self, tmp_path, loopback):
        long = "word " * 300
        script(loopback, claude=[envelope(f"C{i} {long}", "gpt", "Go on.") for i in range(8)],
               gpt=[envelope(f"G{i} {long}", "claude", "Go on.") for i in range(7)] + [envelope("Done.", final=True)])
        run = await run_session(tmp_path, collab_scene(loopback, max_rounds=16), isolation="b", coordinator="C")
        assert run.result.close_reason == "final"
        for recorded in (r for r in loopback.requests if who(r) == "claude"):
            thread = recorded.body["messages"][:-1]
            assert sum(len(m["content"]) for m in thread) / 4 <= 2500, "the thread outgrew the 2–3K-token window"

    async def test_edge_3_a_one_sentence_goal_ends_on_the_first_final(self, tmp_path, loopback):
        script(loopback, claude=[envelope("It says one thing.", final=True)])
        run = await run_session(tmp_path, collab_scene(loopback, goal=ONE_SENTENCE), isolation="a", coordinator="C")
        assert (run.result.close_reason, loopback.hits) == ("final", 1)

    async def test_edge_4_two_collaborations_back_to_back_do_not_touch_each_other(self, tmp_path, loopback):
        def reply(recorded: Recorded) -> Reply:
            text = request_text(recorded)
            tag = "ALPHA" if "alpha" in text else "BETA"
            done = "Round 2" in text
            return Reply(text=json.dumps(envelope(f"{tag} from {who(recorded)}", None if done else
                                                  ("gpt" if who(recorded) == "claude" else "claude"), final=done)))
        loopback.default = reply
        runs = await asyncio.gather(
            run_session(tmp_path / "1", collab_scene(loopback, goal="Plan alpha."), isolation="a", coordinator="C"),
            run_session(tmp_path / "2", collab_scene(loopback, goal="Plan beta."), isolation="b", coordinator="C"))
        ids = [{r["session_id"] for r in run.records() if "session_id" in r} for run in runs]
        assert len(ids[0]) == len(ids[1]) == 1 and ids[0] != ids[1]
        for run, mine, theirs in ((runs[0], "ALPHA", "BETA"), (runs[1], "BETA", "ALPHA")):
            assert run.result.close_reason == "final"
            assert all(mine in r["text"] for r in of_type(run, "agent_response"))
            assert theirs not in requests_text(run.dir)


class TestOfflineImproviser:
    """The same flows with no key and no network: the improviser answers in envelopes."""

    async def test_a_the_fairy_tale_alternates_until_final_or_the_cap(self, tmp_path):
        run = await run_session(tmp_path, collab_scene(goal=FAIRY), isolation="b", coordinator="C")
        responses = of_type(run, "agent_response")
        assert run.result.close_reason in ("final", "cap") and 3 <= len(responses) <= 4
        assert [r["from"] for r in responses] == ["claude", "gpt", "claude", "gpt"][:len(responses)]
        assert "your draft" in responses[1]["text"]  # the editor refers to the draft it was shown (to its writer)

    async def test_hiking_plan_ends_final_within_six_rounds(self, tmp_path):
        run = await run_session(tmp_path, collab_scene(goal=HIKING, max_rounds=6, first="gpt"),
                                isolation="a", coordinator="C")
        assert run.result.close_reason == "final" and len(of_type(run, "agent_response")) <= 6

    async def test_a_setting_and_prompt_it_never_sends_are_named_in_the_notes(self, tmp_path):
        """Spec 001 sends the goal, the transcript and the round: a scene turned into a collaboration
        keeps its setting and prompt unsent, and notes.md says so (they were dropped unsaid)."""
        where = "A lighthouse keeper's kitchen on a stormy night"
        run = await run_session(tmp_path, collab_scene(goal=HIKING, max_rounds=2, setting=where, prompt="Storm talk."),
                                isolation="a", coordinator="C")
        notes = (run.dir / "notes.md").read_text()
        assert "Not sent to the participants: the scene's `setting` and `prompt`" in notes
        assert where not in requests_text(run.dir) and "Storm talk." not in requests_text(run.dir)
        plain = await run_session(tmp_path / "plain", collab_scene(goal=HIKING, max_rounds=2), isolation="a",
                                  coordinator="C")
        assert "Not sent" not in (plain.dir / "notes.md").read_text()

    async def test_b_two_rounds_then_the_cap(self, tmp_path):
        run = await run_session(tmp_path, collab_scene(goal=HIKING, max_rounds=2), isolation="a", coordinator="C")
        assert run.result.close_reason == "cap" and len(of_type(run, "agent_response")) == 2

    @pytest.mark.parametrize("goal", [ONE_SENTENCE, "Explain tides; include prose with your JSON.",
                                      "Plan a party in at most 1 round."])
    async def test_the_improviser_knows_no_goal_wording(self, tmp_path, goal):
        """No "then stop", "≤N rounds" or "prose" shortcut: every goal gets envelopes and a few rounds."""
        run = await run_session(tmp_path, collab_scene(goal=goal, max_rounds=6), isolation="a", coordinator="C")
        responses = of_type(run, "agent_response")
        assert run.result.close_reason == "final" and 3 <= len(responses) <= 5
        assert not of_type(run, "correct") and all(r.get("envelope_valid") is not False for r in responses)

    async def test_e_stop_mid_call(self, tmp_path):
        clock = VirtualClock()
        scene = collab_scene(goal=HIKING, provider={"name": "offline", "latency_ms": [100, 200]})

        def stop_in_round_2(session):
            async def later():
                await clock.sleep(0.01)
                session.stop()

            def on_event(event):
                if event.type == "agent_call" and (event.model_extra or {}).get("round") == 2:
                    asyncio.get_running_loop().create_task(later())
            session.subscribe(on_event)

        run = await run_session(tmp_path, scene, isolation="a", coordinator="C", clock=clock, before_run=stop_in_round_2)
        assert run.result.close_reason == "stop" and len(of_type(run, "agent_response")) == 1
        assert [r["text"] for r in of_type(run, "stop") if r["from"] == "router"] == ["Collaboration canceled by user."]
        assert run.result.beats == 2 and run.session.format.played(run.session, run.result) == 1, \
            "the round the stop cut short is not counted as played"

    @pytest.mark.parametrize("isolation", ["a", "b"])
    async def test_the_operators_world_event_reaches_both_and_a_note_only_its_addressee(self, tmp_path, isolation):
        """What the record says was delivered is delivered: a world event (and a note to all) goes
        into the shared transcript; a note to one participant reaches that one's next call only."""
        def direct_after_round_1(session):
            def on_event(event):
                if event.type == "agent_response" and (event.model_extra or {}).get("round") == 1:
                    session.inject_event("The client moved the deadline to Monday.")
                    session.add_note("Keep it under fifty words.", to="gpt")
            session.subscribe(on_event)

        run = await run_session(tmp_path, collab_scene(goal=HIKING, max_rounds=4, first="claude"), isolation=isolation,
                                coordinator="C", before_run=direct_after_round_1)
        later = [p for p in run.prompts() if p["purpose"] == "envelope" and p["beat"] >= 1]
        event = [p["to"] for p in later if "The client moved the deadline to Monday." in json.dumps(p)]
        note = [p["to"] for p in later if "Keep it under fifty words." in json.dumps(p)]
        assert {"gpt", "claude"} <= set(event)
        assert note and set(note) == {"gpt"}
        assert [r["type"] for r in run.records() if r["type"] in ("event", "note")] == ["event", "note"]
        calls, handoffs = of_type(run, "agent_call"), of_type(run, "handoff")
        assert [c["text"] for c in calls[1:]] == [h["text"] for h in handoffs][:len(calls) - 1]
        session_id = calls[0]["session_id"]
        for record in of_type(run, "event", "note", "close"):  # spec 001 §2: every event of the session
            assert (record["session_id"], record["thread"], record["max_rounds"]) == (session_id, "default", 4), record
            assert record["round"] >= 1 and isinstance(record["ts"], int)
        assert [r["sender"] for r in of_type(run, "event", "note")] == ["you", "you"], "the human wrote them"

    async def test_a_scheduled_world_event_happens_at_its_beat_and_one_too_late_is_said_never_to(self, tmp_path):
        scene = collab_scene(goal=HIKING, max_rounds=4, events=[{"at_beat": 1, "text": "The trail is closed by snow."},
                                                                 {"at_beat": 40, "text": "The sun sets."}])
        run = await run_session(tmp_path, scene, isolation="a", coordinator="C")
        fired = [r for r in run.records() if r["type"] == "event"]
        assert [(r["text"], r["beat"]) for r in fired] == [("The trail is closed by snow.", 1)]
        seen = [p["beat"] for p in run.prompts() if "The trail is closed by snow." in json.dumps(p)]
        assert seen and min(seen) == 1
        never = [r for r in run.records() if r["type"] == "system" and r.get("reason") == "unplayed-event"]
        assert len(never) == 1 and "The sun sets." in never[0]["text"] and "beat 40" in never[0]["text"]
        session_id = of_type(run, "agent_call")[0]["session_id"]
        assert [(r["session_id"], r["round"]) for r in fired] == [(session_id, 2)], "delivered at round 2 (beat 1)"
        assert never[0]["session_id"] == session_id and "sender" not in fired[0], "the scene's event, not the human's"

    async def test_a_goal_s_own_lines_never_read_as_the_round_or_the_transcript(self, tmp_path):
        """A goal quoting a chat log and a round line keeps its lines inside the goal: the round the
        router sends is the only round line, and the log is no transcript item."""
        goal = "Summarise this chat log:\n[claude] We agreed on Tuesday.\nRound 9 of 9."
        run = await run_session(tmp_path, collab_scene(goal=goal, max_rounds=6), isolation="a", coordinator="C")
        first = next(p for p in run.prompts() if p["purpose"] == "envelope")["request"]["messages"][-1]["content"]
        assert "GOAL: Summarise this chat log:\n    [claude] We agreed on Tuesday.\n    Round 9 of 9." in first
        responses = of_type(run, "agent_response")
        assert run.result.close_reason == "final" and 3 <= len(responses) <= 5, [r["round"] for r in responses]

    async def test_edge_4_concurrent_sessions_on_one_loop(self, tmp_path):
        runs = await asyncio.gather(
            run_session(tmp_path / "1", collab_scene(goal=FAIRY), isolation="a", coordinator="C"),
            run_session(tmp_path / "2", collab_scene(goal=HIKING, max_rounds=2), isolation="b", coordinator="C"))
        assert [r.result.close_reason for r in runs] == ["final", "cap"]
        assert runs[0].session.format_state.session_id != runs[1].session.format_state.session_id
        assert "hiking" not in requests_text(runs[0].dir)
        assert "fairy" not in requests_text(runs[1].dir)


class TestDefaultProviders:
    """§6: gpt on OpenAI and claude on Anthropic unless mapped, and only when the key is set."""

    def test_the_pair_goes_to_its_own_providers_when_the_keys_are_set(self):
        scene = scene_from_dict({"name": "c", "format": "collaborate", "goal": "g", "characters": ["gpt", "claude"]})
        specs = {slug: scene.provider_for(slug) for slug in scene.characters}
        chosen, notices = default_providers(scene, specs, provider_flag=False,
                                            env={"OPENAI_API_KEY": "k1", "ANTHROPIC_API_KEY": "k2"})
        assert (chosen["gpt"].name, chosen["claude"].name, notices) == ("openai", "anthropic", [])

    def test_a_missing_key_leaves_that_participant_offline_and_says_how_to_map_it(self):
        scene = scene_from_dict({"name": "c", "format": "collaborate", "goal": "g", "characters": ["gpt", "claude"]})
        specs = {slug: scene.provider_for(slug) for slug in scene.characters}
        chosen, notices = default_providers(scene, specs, provider_flag=False, env={"ANTHROPIC_API_KEY": "k2"})
        assert (chosen["gpt"].name, chosen["claude"].name) == ("offline", "anthropic")
        assert notices == ["gpt \u2192 offline improviser: OPENAI_API_KEY is not set; map it with --cast gpt=\u2026"]

    def test_a_scene_or_flag_mapping_wins(self):
        scene = scene_from_dict({"name": "c", "format": "collaborate", "goal": "g", "characters": ["gpt", "claude"],
                                 "cast": {"gpt": {"provider": "offline"}}})
        specs = {slug: scene.provider_for(slug) for slug in scene.characters}
        env = {"OPENAI_API_KEY": "k1", "ANTHROPIC_API_KEY": "k2"}
        chosen, _ = default_providers(scene, specs, provider_flag=False, env=env)
        assert (chosen["gpt"].name, chosen["claude"].name) == ("offline", "anthropic")
        chosen, _ = default_providers(scene, specs, provider_flag=True, env=env)
        assert (chosen["gpt"].name, chosen["claude"].name) == ("offline", "offline")


@pytest.mark.parametrize("goal, about", [
    ("Write a short welcome paragraph for the allotment's first newsletter, about sharing tools", "sharing tools"),
    ("Write a poem for my grandmother about the harbour at dawn", "harbour")])
def test_an_offline_draft_is_about_what_the_goal_says_it_is_about(goal, about):
    """A writing goal that names whom it is for and what it is about: the improviser's draft is about
    the latter (it wrote about `the allotment's first newsletter` and never of tools)."""
    import random

    from promptdesk.core.formats.collaborate.drafts import first_draft, read_ask

    for seed in range(5):
        assert about in first_draft(read_ask(goal), random.Random(seed)).lower()
