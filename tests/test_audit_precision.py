"""The audit's precision, measured on a corpus: offline runs of every format (scene, collaborate,
roundtable) and both isolations, whose characters keep one journal across the runs (so each journal
quotes lines that later runs speak again, the case that used to be reported as a leak; some entries
copy a whole transcript, line after line), all audit clean. The corpus is made once for the module."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from unittest import mock
import re
import shutil
from pathlib import Path

import pytest

from promptdesk.core.casting.build import RunOptions, build_session
from promptdesk.core.cli.main import main
from promptdesk.core.clock import VirtualClock
from promptdesk.core.record.audit import audit_run
from promptdesk.core.record.private import read_private
from promptdesk.core.record.prompt_log import read_prompts
from promptdesk.core.record.recorder import read_events
from helpers import CHARACTERS, example_scene, make_scene
from test_audit import tamper

SCENES = ("the-apology", "fairy-tale", "hiking-plan", "morning-kitchen")
TABLES = ("roundtable-debate", "roundtable-disney", "roundtable-free", "roundtable-six-hats")
SEEDS = (1, 2, 3)


def plan() -> list[tuple[str, str, str, int]]:
    """(format, scene, isolation, seed) for every run, in the order they are played: the scenes of a
    seed first (their journals grow), then that seed's roundtables and collaborations."""
    runs = []
    for seed in SEEDS:
        runs += [("scene", name, iso, seed) for name in SCENES for iso in "ab"]
        if seed < 3:
            runs += [("roundtable", name, iso, seed) for name in TABLES for iso in "ab"]
            runs += [("collaborate", "collab", iso, seed) for iso in "ab"]
    return runs


def scene_of(fmt: str, name: str):
    if fmt == "collaborate":
        return make_scene(name="collab", format="collaborate", goal="Plan a launch checklist for the new rota app.",
                          characters=["gpt", "claude"], collaborate={"max_rounds": 4}, provider={"name": "offline"})
    limits = {"max_beats": 8} if fmt == "scene" else {}
    return example_scene(name, limits=limits) if limits else example_scene(name)


def copy_transcript(run: Path, journals: Path) -> None:
    """An entry in each cast member's journal that copies the run's transcript as it stands (the
    lines as the cast heard them, one after another), as a diligent diarist might."""
    journals.mkdir(exist_ok=True)
    lines = (run / "transcript.txt").read_text().split("[SCENE START]", 1)[1].split("[SCENE END", 1)[0]
    for slug in read_private(run)["cast"]:
        with open(journals / f"{slug}.md", "a") as journal:
            journal.write(f"\n## Notes on {run.name}\n\nWhat was said, word for word:\n{lines}\n")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> list[Path]:
    """Every run folder of the plan, played for real on the offline improviser with journals kept."""
    home = tmp_path_factory.mktemp("corpus")
    cast = home / "characters"
    shutil.copytree(CHARACTERS, cast)

    async def play() -> list[Path]:
        folders = []
        for index, (fmt, name, iso, seed) in enumerate(plan()):
            options = RunOptions(isolation=iso, coordinator="ABC"[index % 3], characters_dirs=[cast], cwd=home,
                                 runs_root=home / "runs", out=home / "runs" / f"{index:02d}-{name}-{iso}-{seed}",
                                 seed=seed, clock=VirtualClock(), journals=home / "journals", headless=True,
                                 write_character_journals=True, on_escalate="conclude")
            result = await build_session(scene_of(fmt, name), options).run()
            folders.append(result.run_dir)
            if fmt == "scene" and iso == "a":
                copy_transcript(result.run_dir, home / "journals")
        return folders

    with mock.patch("promptdesk.core.engine.journals.datetime", FixedDay):  # the journals' dated headings: one corpus
        return asyncio.run(play())


class FixedDay(datetime):
    """Journal headings carry the time they were written; the corpus must not change with the minute.
    At this minute the corpus holds a journal that quotes "… said so far." and the next routed line,
    words a judge's request also holds across its own framing ("SPEECH SO FAR:" then the first line)."""

    @classmethod
    def now(cls, tz=None):  # noqa: D102
        return cls(2026, 11, 23, 23, 29, tzinfo=tz)


def test_the_corpus_is_every_format_and_isolation_with_journals_that_quote_earlier_runs(corpus):
    assert len(corpus) >= 40
    starts = [next(e for e in read_events(run) if e.type == "start") for run in corpus]
    kinds = {(s.model_extra["scene"]["format"], s.model_extra["isolation"]) for s in starts}
    assert kinds == {(f, i) for f in ("scene", "collaborate", "roundtable") for i in "ab"}
    assert {s.model_extra["coordinator"] for s in starts} == {"A", "B", "C"}
    quoting = 0
    for run in corpus:
        journals = " ".join(m["journal"] for m in read_private(run)["cast"].values())
        spoken = {e.text for e in read_events(run) if e.type == "speak" and len(e.text.split()) >= 4}
        quoting += any(text in journals for text in spoken)
    # Three runs, not the four of the stock-line improviser: lines are now built from each scene and
    # never repeated by an actor, so fewer come back word for word in a later run; those that do are
    # what this corpus is for.
    assert quoting >= 3, "the journals should quote lines that later runs speak again"
    assert sum("word for word" in read_private(run)["cast"][slug]["journal"]
               for run in corpus for slug in read_private(run)["cast"]) >= 20


def test_every_run_of_the_corpus_audits_clean_though_private_text_matches_abound(corpus):
    """Zero reported leaks, while the journals' words really do turn up in other actors' requests
    (the audit saw them and excused them as public or the recipient's own)."""
    reports = [audit_run(run) for run in corpus]
    unclean = [f"{r.run_dir.name}: {r.summary()} {[l.describe() for l in r.leaks[:2]]} {r.problems[:2]}"
               for r in reports if not r.clean]
    assert not unclean, "\n".join(unclean)
    assert sum(r.requests for r in reports) > 500
    assert sum(r.excused for r in reports) >= 50


def test_the_cli_audits_the_whole_corpus_in_one_call(corpus, capsys):
    assert main(["audit", *map(str, corpus)]) == 0
    out = capsys.readouterr().out
    assert len(re.findall(r"^Audit clean", out, flags=re.M)) == len(corpus)
    assert f"{len(corpus)} runs audited: {len(corpus)} clean" in out


async def test_a_journal_quoting_across_a_judges_framing_is_not_a_leak_but_the_journal_itself_is(run_scene):
    """A judge is one recipient, so its framing cannot be learnt from several requests: its fixed words
    are public units. A journal line ending "so far" followed by the first routed line the judge got
    matches the judge's request across "SPEECH SO FAR:"; it is no leak. The journal's own sentence is."""
    run = await run_scene(example_scene("the-apology", limits={"max_beats": 4}), isolation="a", coordinator="B")
    first, routed = next((r, m["content"].split("SPEECH SO FAR:\n", 1)[1].split("\n", 1)[0])
                         for r in read_prompts(run.dir) if r.to == "judge"
                         for m in r.request["messages"] if "SPEECH SO FAR:\n" in m["content"])
    assert len(routed.split()) >= 6, routed
    record = json.loads((run.dir / "private.json").read_text())
    secret = "The brass key to the customs shed hangs behind the third ledger."
    record["cast"]["alice"]["journal"] = f"Nobody has said it so far. {routed}\n\n{secret}"
    (run.dir / "private.json").write_text(json.dumps(record))
    report = audit_run(run.dir)
    assert report.clean, [leak.describe() for leak in report.leaks]
    tamper(run.dir, "judge", first.beat, secret, purpose="judge")
    assert {(leak.recipient, leak.owner, leak.kind) for leak in audit_run(run.dir).leaks} == {("judge", "alice", "journal")}
