"""The improviser in a crowd: a parallel beat's many lines are answered across the room, not all of
them piled onto whoever spoke last."""

from __future__ import annotations

from collections import Counter, defaultdict

from benchmarks.crowd import town_meeting_yaml, write_crowd
from promptdesk.core.cli.main import main
from promptdesk.core.record.recorder import read_events


def test_a_crowd_answers_many_of_the_beats_speakers_not_only_its_last(tmp_path, capsys):
    slugs = write_crowd(tmp_path / "characters", 12)
    names = {slug: f"Person {int(slug.split('-')[1])}" for slug in slugs}
    scene = tmp_path / "town.yaml"
    scene.write_text(town_meeting_yaml(slugs, 8))
    directed, to_last, most = 0, 0, []
    for seed in (1, 2):
        out = tmp_path / f"run{seed}"
        assert main(["--batch", str(scene), "--isolation", "b", "--coordinator", "C", "--seed", str(seed),
                     "--journals", "none", "--out", str(out), "--quiet"]) == 0, capsys.readouterr().err
        beats = defaultdict(list)
        for event in read_events(out):
            if event.type == "speak":
                beats[event.beat].append(event)
        for beat, speeches in beats.items():
            spoken = [s for s in beats.get(beat - 1, []) if s.action != "silent"]
            targets = [s.target for s in speeches if s.target]
            if not spoken or not targets:
                continue
            directed += len(targets)
            to_last += targets.count(names[spoken[-1].from_])
            most.append(Counter(targets).most_common(1)[0][1] / len(targets))
    assert directed >= 60
    assert to_last / directed < 0.4, f"{to_last} of {directed} lines spoken to someone went to the last speaker"
    assert sum(most) / len(most) < 0.5, "in a typical beat no one speaker draws most of the lines"
