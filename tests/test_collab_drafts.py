"""Offline collaborations make what their goal asks for: a short piece in paragraphs for a writing goal,
numbered steps for a planning goal, numbered placeholders (and the admission that it knows no facts)
for a goal that asks for facts, and reach `final` only with such a draft. Every message says it was
improvised, and none parrots the goal. Measured on the recorded responses, over several seeds and goals
the improviser has never seen."""

from __future__ import annotations

import re

import pytest

from helpers import run_session
from test_collaborate import FAIRY, HIKING, collab_scene, of_type

GOALS = {
    FAIRY: ("paragraphs", 2),
    HIKING: ("numbered", 5),
    "Draft a 3-paragraph bedtime story about a lighthouse keeper.": ("paragraphs", 3),
    "Put together a four-step plan for moving the team to a new office.": ("numbered", 4),
    "Name three rivers in Europe.": ("numbered", 3),
}


def shape(text: str, kind: str) -> int:
    """How many parts of the kind a message holds: paragraphs of prose, or numbered lines."""
    body = text.split("\n", 1)[1] if "\n" in text else ""
    if kind == "paragraphs":
        return len([p for p in body.split("\n\n") if len(p.split()) >= 12])
    return len(re.findall(r"^\d+\.\s+\S", body, re.M))


def parrots(text: str, goal: str, n: int = 8) -> bool:
    words = re.sub(r"[^\w\s]", " ", goal.lower()).split()
    plain = " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())
    return any(" ".join(words[i:i + n]) in plain for i in range(len(words) - n + 1))


@pytest.mark.parametrize("goal", list(GOALS))
async def test_a_collaboration_drafts_what_its_goal_asks_for_and_ends_only_with_that_draft(tmp_path, goal):
    kind, size = GOALS[goal]
    for seed in (1, 2, 3):
        run = await run_session(tmp_path / str(seed), collab_scene(goal=goal, max_rounds=6), seed=seed,
                                isolation="b", coordinator="C")
        responses = [r["text"] for r in of_type(run, "agent_response")]
        assert responses and all(shape(text, kind) >= size for text in responses), responses
        assert all("improvised" in text.split("\n", 1)[0] for text in responses)
        assert not any(parrots(text, goal) for text in responses)
        if run.result.close_reason == "final":
            assert shape(responses[-1], kind) >= size
        assert len(set(responses)) == len(responses), "each turn changes something"


@pytest.mark.parametrize("goal", ["Name three rivers in Europe.", "List five novels by Czech writers."])
async def test_a_goal_asking_for_facts_gets_placeholders_and_no_invented_names(tmp_path, goal):
    """The improviser knows no facts: its items name what was asked for and invent no proper name."""
    asked = set(re.findall(r"\b[A-Z][a-z]+", goal))
    run = await run_session(tmp_path, collab_scene(goal=goal, max_rounds=6), seed=4, isolation="b", coordinator="C")
    for text in (r["text"] for r in of_type(run, "agent_response")):
        items = re.findall(r"^\d+\.\s+(.*)$", text, re.M)
        assert items
        for item in items:
            names = set(re.findall(r"(?<![.:] )(?<!^)\b[A-Z][a-z]+", item))
            assert names <= asked, item
            assert re.findall(r"[a-z]{4,}", goal.lower().split(" ", 2)[2])[0][:4] in item.lower()


def test_participants_whose_slugs_hold_dots_collaborate_offline_to_a_final(tmp_path, capsys, monkeypatch):
    """`powershell-5.1-expert` is a slug (a dot between its parts): the improviser knows its own name and
    its partner's, hands off by them, and the collaboration reaches `final` with no envelope repaired."""
    from promptdesk.core.cli.main import main

    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "powershell-5.1-expert.md").write_text("---\nname: powershell-5.1-expert\n---\nYou know PowerShell 5.1.\n")
    (agents / "v2.reviewer.md").write_text("---\nname: v2.reviewer\n---\nYou review scripts.\n")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    assert main(["--batch", "--collaborate", "Outline a 4-step plan to move a script to PowerShell 7",
                 "--participants", "powershell-5.1-expert,v2.reviewer", "--isolation", "b", "--coordinator", "C",
                 "--seed", "1", "--journals", "none", "--out", str(out), "--quiet"]) == 0
    records = [__import__("json").loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert [r["reason"] for r in records if r["type"] == "close"] == ["final"]
    assert not [r for r in records if r["type"] == "correct"], "no envelope needed repairing"
    handoffs = [r.get("target") for r in records if r["type"] == "handoff"]
    assert handoffs and set(handoffs) <= {"powershell-5.1-expert", "v2.reviewer"}


WRITINGS = {
    "Draft a three-paragraph letter to the landlord about the broken heating": ("Dear Landlord,", "broken heating", 3),
    "Write an email to Ms Okafor asking for an extension": ("Dear Ms Okafor,", "the extension", 2),
    "Write a two-stanza poem about the sea": ("", "the sea", 2),
    "Write a short toast for my sister's wedding": ("", "my sister's wedding", 2),
    "Write a four-paragraph essay on remote work": ("", "remote work", 4),
}


@pytest.mark.parametrize("goal", list(WRITINGS))
def test_a_writing_goal_gets_writing_of_its_own_kind_about_its_own_subject_never_a_fairy_tale(goal):
    """A letter opens to its addressee and speaks of its matter; a poem, a toast, an essay are about the
    goal's subject; none of them is a tale, and revising one never writes past a letter's sign-off."""
    import random

    from promptdesk.core.formats.collaborate.drafts import draft_in, first_draft, read_ask, revise

    opening, subject, size = WRITINGS[goal]
    ask = read_ask(goal)
    for seed in range(4):
        rng = random.Random(seed)
        draft = first_draft(ask, rng)
        assert "once upon a time" not in draft.lower() and "set out alone" not in draft
        assert draft.startswith(opening) and subject in draft
        assert len([p for p in draft.split("\n\n") if len(p.split()) >= 12]) >= size
        for _ in range(size + 1):
            draft, _ = revise(draft, ask, rng)
            assert draft_in("head\n" + draft, ask)
        assert not re.search(r"(?:sincerely|regards),", draft), draft
        assert not re.search(r"\b(\w+(?: \w+){1,3}), \1\b", draft)


@pytest.mark.parametrize("goal, subject", [("Write an email to Ms Okafor asking for an extension", "the extension"),
                                           ("Write a short toast for my sister's wedding", "my sister's wedding"),
                                           ("Plan a surprise birthday party for Grandma in five steps",
                                            "the surprise birthday party for Grandma"),
                                           ("Write something for the newsletter", "the newsletter")])
def test_the_subject_of_a_goal_is_read_whole_with_its_article_and_its_owner(goal, subject):
    from promptdesk.core.formats.collaborate.drafts import read_ask

    ask = read_ask(goal)
    assert ask.subject == subject and ask.genre != "letter"


def test_a_list_of_facts_names_what_it_lists_once():
    import random

    from promptdesk.core.formats.collaborate.drafts import first_draft, read_ask

    draft = first_draft(read_ask("List the capitals of the Baltic states"), random.Random(1))
    assert "the the" not in draft and "capital of the Baltic states" in draft
