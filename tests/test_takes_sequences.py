"""Takes along a run's life: a run killed and resumed (once, twice, in a beat or after one) and then taken
again from each beat around its seams; the takes audited, compared and replayed as the parent's record
says they should be. On the offline improviser a take with no change of a resumed run plays what the
resumed run played from that beat, byte for byte."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from promptdesk.core.cli.main import main
from promptdesk.core.record.audit import audit_run
from promptdesk.core.record.recorder import read_events
from promptdesk.core.record.seams import SUPERSEDED
from test_branch import LATENCY, branch, from_beat, own_part
from test_resume import assert_nothing_twice, kill_mid_beat
from helpers import CHARACTERS, example_scene


def cut_after_beat(run_dir: Path, beat: int) -> None:
    """Leave the folder as a kill just after `beat` finished would: the log ends at its `beat_end`."""
    lines = (run_dir / "events.jsonl").read_text().splitlines(keepends=True)
    end = next(i for i, line in enumerate(lines) if '"type": "beat_end"' in line and f'"beat": {beat},' in line)
    (run_dir / "events.jsonl").write_text("".join(lines[:end + 1]))
    prompts = (run_dir / "prompts.jsonl").read_text().splitlines(keepends=True)
    (run_dir / "prompts.jsonl").write_text("".join(p for p in prompts if json.loads(p).get("beat", 0) <= beat))
    for name in ("events.json", "transcript.md", "transcript.txt", "metadata.json"):
        (run_dir / name).unlink()


def played(run: Path, beat: int) -> list[str]:
    """What the run played from `beat` on: its lines from that beat's `beat` event, bar the resumes' seams."""
    return [line for line in from_beat(run, beat) if json.loads(line)["type"] != "resume"]


def resumed(run_dir: Path) -> None:
    assert main(["resume", str(run_dir), "--quiet"]) == 0


@pytest.fixture(scope="module")
def parent(tmp_path_factory) -> Path:
    from test_branch import batch, scene_file
    folder = tmp_path_factory.mktemp("sequences")
    return batch(scene_file(folder), folder / "whole")


# (name, the kills in order: ("mid", beat) kills inside the beat, ("after", beat) just after it finished)
LIVES = [("mid-5", [("mid", 5)]), ("after-4", [("after", 4)]), ("twice", [("mid", 3), ("mid", 6)])]


@pytest.mark.parametrize("name,kills", LIVES, ids=[name for name, _ in LIVES])
def test_a_take_from_each_beat_around_a_resumes_seam_is_clean_and_plays_as_the_resumed_run(parent, tmp_path,
                                                                                           name, kills):
    run = tmp_path / name
    shutil.copytree(parent, run)
    for how, beat in kills:
        (kill_mid_beat if how == "mid" else cut_after_beat)(run, beat)
        resumed(run)
    seams = [e.beat for e in read_events(run) if e.type == "resume"]
    assert seams == [beat + (how == "after") for how, beat in kills]
    assert audit_run(run).clean
    for k in sorted({b + d for b in seams for d in (-1, 0, 1)}):
        take = tmp_path / f"{name}-take{k}"
        assert branch(run, k, take) == 0
        report = audit_run(take)
        assert report.clean, (k, report)
        assert own_part(take) == played(run, k), f"the take from beat {k} played otherwise than the resumed run"
        assert [e.beat for e in read_events(take) if e.type == "resume"] == [s for s in seams if s < k]
        assert_nothing_twice(take)
        if (take / SUPERSEDED).exists():
            moved = sum(e.model_extra["superseded"] for e in read_events(take) if e.type == "resume")
            assert len((take / SUPERSEDED).read_text().splitlines()) >= moved
        # a take of that take, from the seam's beat, is as clean
        again = tmp_path / f"{name}-take{k}-again"
        assert branch(take, max(k, seams[0]), again) == 0
        assert audit_run(again).clean
        assert own_part(again) == played(run, max(k, seams[0]))


def take_sweep(parent: Path, out: Path, seeds: str = "1-2") -> int:
    return main(["sweep", "--branch-from", str(parent), "--at-beat", "6", "--event", "The sprinklers come on",
                 "--seeds", seeds, "--out", str(out)])


def test_a_sweep_of_takes_of_a_take_goes_on_after_its_parent_was_moved_and_refuses_another_run(parent, tmp_path):
    take, moved = tmp_path / "runs" / "take", tmp_path / "archive" / "take"
    take.parent.mkdir()
    assert branch(parent, 3, take, "--note", "Keep it short") == 0
    out = tmp_path / "sweep"
    assert take_sweep(take, out) == 0
    played = (out / "change-seed2" / "events.jsonl").read_text()
    # the sweep stopped before its last take was played: that take's folder and row are not there
    shutil.rmtree(out / "change-seed2")
    rows = (out / "results.jsonl").read_text().splitlines(keepends=True)
    (out / "results.jsonl").write_text("".join(r for r in rows if '"change-seed2"' not in r))
    moved.parent.mkdir()
    shutil.move(take, moved)
    assert take_sweep(take, out) == 2, "the old path holds no run any more"
    assert take_sweep(moved, out) == 0, "the same run, moved: the sweep goes on from where it stopped"
    assert (out / "change-seed2" / "events.jsonl").read_text().replace(str(moved), str(take)) == played
    assert str(moved) in (out / "takes.yaml").read_text()
    assert main(["compare", str(out)]) == 0
    for name in ("retake-seed1", "change-seed2"):
        assert audit_run(out / name).clean
    # another run with the same start record (its private.json), whose record before the beat differs: refused
    other = tmp_path / "other"
    shutil.copytree(moved, other)
    log = (other / "events.jsonl").read_text().splitlines(keepends=True)
    said = next(i for i, line in enumerate(log) if '"type": "speak"' in line and '"beat": 2,' in line)
    record = json.loads(log[said])
    record["text"] = "Something else entirely."
    log[said] = json.dumps(record) + "\n"
    (other / "events.jsonl").write_text("".join(log))
    before = (out / "takes.yaml").read_text()
    assert take_sweep(other, out) == 2
    assert (out / "takes.yaml").read_text() == before


@pytest.mark.parametrize("gone", ["deleted", "moved away"])
def test_takes_whose_take_between_is_gone_are_still_compared_and_reported_as_one_family(parent, tmp_path, capsys,
                                                                                       gone):
    runs = tmp_path / "runs"
    root, middle, child, grandchild = runs / "root", runs / "middle", runs / "child", runs / "grandchild"
    shutil.copytree(parent, root)
    assert branch(root, 2, middle, "--event", "The lights go out") == 0
    assert branch(middle, 5, child, "--note", "Say less", "--to", "bob") == 0
    assert branch(child, 7, grandchild, "--seed", "41") == 0
    if gone == "deleted":
        shutil.rmtree(middle)
    else:
        shutil.move(middle, tmp_path / "elsewhere")
    capsys.readouterr()
    for given, shared, tree in (([root, child], 2, [("root", 0), ("child", 1)]),
                                ([root, child, grandchild], 2, [("root", 0), ("child", 1), ("grandchild", 2)]),
                                ([child, grandchild], 7, [("child", 0), ("grandchild", 1)]),
                                ([root, grandchild], 2, [("root", 0), ("grandchild", 1)])):
        assert main(["compare", *map(str, given), "--json"]) == 0
        result = json.loads(capsys.readouterr().out)
        assert result["branched_at"] == shared, [g.name for g in given]
        assert [(t["run"], t["depth"]) for t in result["takes"]["tree"]] == tree
        beats = {r["run"]: r["beats"] for r in result["runs"]}
        whole = {g.name: json.loads((g / "metadata.json").read_text())["totalBeats"] for g in given}
        assert beats == {name: total - shared for name, total in whole.items()}, "measured from the shared beat only"
        assert main(["report", *map(str, given), "--html", str(tmp_path / "takes.html")]) == 0
        capsys.readouterr()


def test_a_take_stopped_by_the_operator_is_played_on_by_the_branch_its_resume_refusal_gives(parent, tmp_path, capsys):
    import asyncio
    import shlex

    from promptdesk.core.casting.branch import Change, prepare_branch

    whole, stopped = tmp_path / "whole", tmp_path / "stopped"
    event = "A courier drops a box of printouts on the table"  # an event that sends no one out: the take plays on
    assert branch(parent, 2, whole, "--event", event) == 0
    session = prepare_branch(parent, 2, Change(event=event), out=stopped)
    session.subscribe(lambda e: session.stop() if e.type == "beat" and e.beat == 3 else None)  # the console's `s`
    asyncio.run(session.run())
    assert [e.reason for e in read_events(stopped) if e.type == "close"] == ["stop"]
    capsys.readouterr()
    assert main(["resume", str(stopped)]) == 2
    said = capsys.readouterr().err
    assert "nothing to resume" in said and "stopped in beat 3" in said
    command = shlex.split(said.rsplit("`", 2)[1])
    assert command[:2] == ["promptdesk", "branch"]
    on = tmp_path / "played-on"
    assert main([*command[1:], "--out", str(on), "--quiet"]) == 0
    assert own_part(on) == from_beat(whole, 3), "played on from the beat it stopped in, as the take unstopped did"
    assert audit_run(on).clean
    capsys.readouterr()
    assert main(["resume", str(whole)]) == 2
    assert "stopped in beat" not in capsys.readouterr().err, "a take that closed on its own is only finished"


def test_the_commands_of_a_takes_page_make_the_family_again_three_deep(parent, tmp_path, monkeypatch, capsys):
    import html as markup
    import re
    import shlex

    runs = tmp_path / "runs"
    root, first, second, third = runs / "root", runs / "first", runs / "second", runs / "third"
    shutil.copytree(parent, root)
    assert branch(root, 2, first, "--note", "Take your time", "--seed", "5") == 0
    assert branch(first, 4, second, "--note", "Apologise now", "--to", "Bob") == 0
    assert branch(second, 6, third, "--seed", "8") == 0
    page = tmp_path / "family.html"
    assert main(["report", str(third), str(second), str(root), str(first), "--html", str(page)]) == 0
    ran = re.search(r"<dt>Run with</dt><dd>(.*?)</dd>", markup.unescape(page.read_text())).group(1)
    commands = [shlex.split(c) for c in re.findall(r"<code>(.*?)</code>", ran)]
    assert [c[c.index("--out") + 1] for c in commands] == ["root", "first", "second", "third"], "parents first"
    again = tmp_path / "again"
    again.mkdir()
    shutil.copy(parent.parent / "the-apology.yaml", again)
    monkeypatch.chdir(again)
    for command in commands:
        assert command[0] == "promptdesk"
        extra = ["--characters-dir", str(CHARACTERS)] if "--batch" in command else []
        assert main([*command[1:], *extra, "--quiet"]) == 0, command
    capsys.readouterr()
    for run, beat in ((first, 2), (second, 4), (third, 6)):
        assert own_part(again / run.name) == own_part(run), f"{run.name} played again otherwise"


def test_compare_of_takes_beside_a_run_of_no_family_says_they_are_measured_whole(parent, tmp_path, capsys):
    from test_branch import batch, scene_file

    runs = tmp_path / "runs"
    root, take, deeper = runs / "root", runs / "take", runs / "deeper"
    shutil.copytree(parent, root)
    assert branch(root, 3, take, "--event", "The blinds rattle") == 0
    assert branch(take, 5, deeper, "--seed", "12") == 0
    stranger = batch(scene_file(tmp_path), tmp_path / "stranger", isolation="a", seed=9)
    capsys.readouterr()
    assert main(["compare", str(root), str(deeper), str(stranger), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert "branched_at" not in result and result["kin"].startswith("root and deeper are takes of one another")
    assert "stranger is not" in result["kin"]
    assert main(["compare", str(root), str(take), str(deeper), str(stranger)]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "root, take and deeper are takes of one another" in said and "every run is measured whole" in said
    assert main(["compare", str(root), str(take), str(deeper), "--json"]) == 0
    assert "kin" not in json.loads(capsys.readouterr().out), "one family: measured from its branch beat, nothing to say"


def test_metrics_of_a_take_say_what_of_the_whole_record_is_its_own_at_every_depth(parent, tmp_path, capsys):
    from promptdesk.core.experiments.metrics import metrics_of

    first, second = tmp_path / "first", tmp_path / "second"
    assert branch(parent, 3, first, "--note", "Bob, breathe") == 0
    assert branch(first, 6, second, "--seed", "30") == 0
    capsys.readouterr()
    for take, beat, given in ((first, 3, [parent]), (second, 6, [first])):
        assert main(["metrics", str(take), "--json"]) == 0
        out = capsys.readouterr()
        assert json.loads(out.out)["tokens"] == metrics_of(take).tokens, "the metrics stay of the whole record"
        assert main(["compare", *map(str, given), str(take), "--json"]) == 0
        own = next(r for r in json.loads(capsys.readouterr().out)["runs"] if r["run"] == take.name)
        assert f"is a take of {given[0].name} from beat {beat}" in out.err
        assert f"its own, beat {beat} on: {own['beats']} beats, {own['turns']} turns, {own['tokens']:,} tokens" in out.err
    assert main(["metrics", str(parent)]) == 0
    assert "NOTICE" not in capsys.readouterr().err


def test_folder_names_holding_escape_sequences_are_shown_without_them_in_compare_and_metrics(parent, tmp_path, capsys):
    from test_branch import batch, scene_file

    root, take = tmp_path / "root\x1b[31m", tmp_path / "take\x1b]0;owned\x07"
    shutil.copytree(parent, root)
    assert branch(root, 4, take, "--note", "Quiet, all of you") == 0
    stranger = batch(scene_file(tmp_path), tmp_path / "stranger\x1b[2J", isolation="a", seed=9)
    capsys.readouterr()
    for given in ([root, take], [root, take, stranger]):
        assert main(["compare", *map(str, given)]) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out
        assert "take" in out and "root" in out
    assert main(["metrics", str(take)]) == 0
    err = capsys.readouterr().err
    assert "is a take of root from beat 4" in err and "\x1b" not in err and "\x07" not in err


@pytest.mark.parametrize("how,beat", [("mid", 3), ("mid", 6), ("after", 4)])
def test_a_paced_scene_resumed_and_taken_again_goes_on_to_the_tick(tmp_path, how, beat):
    """Simulated time of a resumed run starts at the cut, as a take's starts at its beat: it started at 0 and
    was shifted after, so a paced scene's `t` drifted a tick from the run it continued (and its takes with it)."""
    from test_branch import batch, scene_file

    whole = batch(scene_file(tmp_path, pace=0.7), tmp_path / "whole")
    run = tmp_path / "resumed"
    shutil.copytree(whole, run)
    (kill_mid_beat if how == "mid" else cut_after_beat)(run, beat)
    resumed(run)
    plain = lambda folder: [line for line in (folder / "events.jsonl").read_text().splitlines()  # noqa: E731
                            if json.loads(line)["type"] not in ("resume", "branch")]
    assert plain(run) == plain(whole), "the resumed run played on as the whole run, `t` included"
    take = tmp_path / "take"
    assert branch(run, beat + 2, take) == 0
    assert plain(take) == plain(whole)
