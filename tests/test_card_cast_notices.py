"""A card cast directly says what it drops (stderr and notes.md), as `import` does, and offers its
scenario and first message to a scene that opts in with `card_scenario: true`."""

from __future__ import annotations

import json

from promptdesk.core.cli.main import main
from promptdesk.core.record.prompt_log import read_requests
from test_import import v2


def cast(tmp_path, monkeypatch, scene: str):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cards").mkdir()
    (tmp_path / "cards" / "sera.json").write_text(json.dumps(v2()))
    native = tmp_path / "characters" / "alice"
    native.mkdir(parents=True)
    (native / "profile.md").write_text("# Alice\n\nDirect.\n")
    prompt = "" if "\nprompt:" in "\n" + scene else "prompt: A scene.\n"  # a key given twice is refused
    (tmp_path / "s.yaml").write_text("name: m\n" + prompt + "characters: [cards/sera.json, alice]\n" + scene)
    run = tmp_path / "run"
    assert main(["--batch", "s.yaml", "--isolation", "a", "--coordinator", "C", "--max-beats", "2", "--seed", "1",
                 "--out", str(run)]) == 0
    return run, {r["to"]: r["request"]["system"] for r in read_requests(run)}


def test_a_card_cast_directly_reports_what_it_drops_on_stderr_and_in_the_notes(tmp_path, monkeypatch, capsys):
    run, briefs = cast(tmp_path, monkeypatch, "")
    err, notes = capsys.readouterr().err, (run / "notes.md").read_text()
    for text in (err, notes):
        assert "Seraphina (card cards/sera.json): dropped (no place in Promptdesk): system_prompt, " \
               "post_history_instructions, character_book, alternate_greetings" in text
        assert "Seraphina (card cards/sera.json): not used: scenario, first message (set `card_scenario: true`" in text
    assert "wakes in" not in briefs["sera"] and "bowl of broth" not in briefs["sera"]


def test_card_scenario_offers_the_scenario_and_first_message_where_the_scene_leaves_them_unset(tmp_path, monkeypatch,
                                                                                             capsys):
    run, briefs = cast(tmp_path, monkeypatch, "card_scenario: true\n")
    assert "A wounded the visitor wakes in Seraphina's cottage." in briefs["alice"]
    assert "You are awake, the visitor." in briefs["sera"]
    notes = (run / "notes.md").read_text()
    assert "dropped (no place in Promptdesk)" in notes and "not used" not in notes


def test_card_scenario_keeps_what_the_scene_sets(tmp_path, monkeypatch, capsys):
    run, briefs = cast(tmp_path, monkeypatch, "card_scenario: true\nsetting: A train at night.\n"
                                              "prompt: Talk about the timetable.\nperspectives: {sera: You are tired.}\n")
    assert "A train at night." in briefs["alice"] and "wakes in" not in briefs["alice"]
    assert "You are tired." in briefs["sera"] and "bowl of broth" not in briefs["sera"]


def test_a_card_cast_directly_says_what_import_would_note_about_it(tmp_path, monkeypatch, capsys):
    """A macro left as written and a V3 nickname are told on stderr and in notes.md for a card cast
    directly, as `import` tells them; the `--user` hint, which a scene has no flag for, is not."""
    monkeypatch.chdir(tmp_path)
    card = {"spec": "chara_card_v3", "spec_version": "3.0",
            "data": {"name": "Seraphina", "nickname": "Sera", "description": "{{char}} greets {{user}}. {{random:a,b}}"}}
    (tmp_path / "sera.json").write_text(json.dumps(card))
    (tmp_path / "s.yaml").write_text("name: m\nprompt: A scene.\ncharacters: [sera.json, other.json]\n")
    (tmp_path / "other.json").write_text(json.dumps(v2(name="Other One")))
    run = tmp_path / "run"
    assert main(["--batch", "s.yaml", "--isolation", "a", "--coordinator", "C", "--max-beats", "1", "--seed", "1",
                 "--out", str(run)]) == 0
    err, notes = capsys.readouterr().err, (run / "notes.md").read_text()
    for text in (err, notes):
        assert "Seraphina (card sera.json): left as written" in text and "{{random:…}} in description" in text
        assert "Seraphina (card sera.json): {{char}} in the card was written as its nickname 'Sera'" in text
        assert "--user" not in text


def test_two_cards_or_a_card_and_a_character_cast_under_one_slug_are_named_as_such(tmp_path, monkeypatch, capsys):
    """`a/x.json` and `b/x.json` are both cast as `x`: the refusal names both files, not "'x' is listed twice"
    (which the scene never says)."""
    monkeypatch.chdir(tmp_path)
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.json").write_text(json.dumps(v2(name=f"Card {folder.upper()}")))
    for cast, named in (("[a/x.json, b/x.json]", ("'b/x.json' is cast as 'x'", "the card 'a/x.json'")),
                        ("[x, a/x.json]", ("'a/x.json' is cast as 'x'", "the character 'x'"))):
        (tmp_path / "s.yaml").write_text(f"name: m\nprompt: A scene.\ncharacters: {cast}\n")
        assert main(["--batch", "s.yaml", "--isolation", "a", "--coordinator", "C"]) == 2
        err = capsys.readouterr().err
        assert all(text in err for text in named) and "listed twice" not in err, err


def test_a_card_file_named_with_accents_is_cast_under_its_ascii_spelling():
    """The slug is what a scene's `perspectives` and `cast:` type: `Zoë Sørensen.png` is `zoe-sorensen`,
    the spelling `import` gives the name, not `zo-s-rensen`."""
    from promptdesk.core.engine.scene import card_slug
    assert card_slug("cards/Zoë Sørensen.png") == "zoe-sorensen"
    assert card_slug("cards/Seraphina.card.png") == "seraphina" and card_slug("李伟.json") == "card"


def test_card_scenario_says_what_the_scene_does_not_take_and_why(tmp_path, monkeypatch, capsys):
    """Opting in took one card's scenario and every unset perspective; a second card's scenario, and a
    first message where the scene gives its own perspective, were left out without a word (without the
    key each is said to be unused)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cards").mkdir()
    (tmp_path / "cards" / "sera.json").write_text(json.dumps(v2()))
    (tmp_path / "cards" / "tom.json").write_text(json.dumps(v2(name="Old Tom", scenario="A storm over the harbour.",
                                                               first_mes="*Tom lights his pipe.* Evening.")))
    (tmp_path / "s.yaml").write_text("name: m\ncharacters: [cards/sera.json, cards/tom.json]\ncard_scenario: true\n"
                                     "perspectives: {tom: You want to sell the boat.}\n")
    run = tmp_path / "run"
    assert main(["--batch", "s.yaml", "--isolation", "a", "--coordinator", "C", "--max-beats", "2", "--seed", "1",
                 "--out", str(run)]) == 0
    err, notes = capsys.readouterr().err, (run / "notes.md").read_text()
    for text in (err, notes):
        assert ("Old Tom (card cards/tom.json): not used: scenario (the scene takes one card's scenario: "
                "Seraphina's, the first cast with one)") in text
        assert ("Old Tom (card cards/tom.json): not used: first message (the scene gives this character a "
                "perspective of its own)") in text
        assert "Seraphina (card cards/sera.json): not used" not in text
    briefs = {r["to"]: r["request"]["system"] for r in read_requests(run)}
    assert "storm over the harbour" not in briefs["tom"] and "lights his pipe" not in briefs["tom"]
    assert "wakes in Seraphina's cottage" in briefs["tom"]
