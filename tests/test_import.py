"""`promptdesk import`: character cards V1/V2/V3 (JSON and PNG) and TinyTroupe personas become
characters that play, with a mapping a person can predict and refusals that say why."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest
from PIL import Image
from PIL.PngImagePlugin import PngInfo

from promptdesk.core.characters.loading import load_character
from promptdesk.core.cli.main import main
from promptdesk.core.improv.temperament import read_temperament
from helpers import make_scene, run_session

V2_DATA = {
    "name": "Seraphina",
    "description": "{{char}} is a guardian of the glade. She heals travellers who stumble in. {{user}} is one.",
    "personality": "gentle, protective, quietly stubborn",
    "scenario": "A wounded {{user}} wakes in {{char}}'s cottage.",
    "first_mes": "*{{char}} sets down a bowl of broth.* You are awake, {{user}}.",
    "mes_example": "<START>\n{{user}}: Where am I?\n{{char}}: *smiles* Safe, for now.\n<START>\n{{char}}: Rest.",
    "creator_notes": "Made for quiet scenes.",
    "system_prompt": "Never break character.",
    "post_history_instructions": "Stay terse.",
    "alternate_greetings": ["Hello again."],
    "character_book": {"entries": [{"keys": ["glade"], "content": "The glade is old."}]},
    "tags": ["fantasy", "healer"],
    "creator": "someone",
    "character_version": "1.2",
    "extensions": {},
}


def v2(**data) -> dict:
    return {"spec": "chara_card_v2", "spec_version": "2.0", "data": {**V2_DATA, **data}}


def v3(**data) -> dict:
    return {"spec": "chara_card_v3", "spec_version": "3.0", "data": {**V2_DATA, "nickname": "Sera", **data}}


def png(path: Path, **chunks: str) -> Path:
    """A real 2x2 PNG with the given tEXt chunks, written by Pillow."""
    info = PngInfo()
    for key, value in chunks.items():
        info.add_text(key, value)
    Image.new("RGB", (2, 2), (200, 30, 30)).save(path, "PNG", pnginfo=info)
    return path


def b64(card: dict) -> str:
    return base64.b64encode(json.dumps(card).encode()).decode()


def run_import(capsys, *args) -> tuple[int, str]:
    code = main(["import", *map(str, args)])
    return code, capsys.readouterr().err


class TestCards:
    def test_a_v2_json_card_maps_to_profile_sections_and_a_snippet(self, tmp_path, capsys):
        card = tmp_path / "sera.json"
        card.write_text(json.dumps(v2()))
        code, err = run_import(capsys, card, "--to", tmp_path / "chars")
        assert code == 0, err
        profile = (tmp_path / "chars" / "seraphina" / "profile.md").read_text()
        assert "## Description\n\nSeraphina is a guardian of the glade." in profile
        assert "- gentle\n- protective\n- quietly stubborn" in profile
        assert "## Voice" in profile and "> the visitor: Where am I?" in profile
        assert "<START>" not in profile and "{{" not in profile
        assert "Never break character" not in profile and "Stay terse" not in profile
        assert "creator_notes: Made for quiet scenes." in profile and "- fantasy" in profile
        snippet = (tmp_path / "chars" / "seraphina" / "scene-snippet.yaml").read_text()
        assert "A wounded the visitor wakes in Seraphina's cottage." in snippet
        assert "You are awake, the visitor." in snippet
        for dropped in ("system_prompt", "post_history_instructions", "character_book", "alternate_greetings"):
            assert dropped in err
        assert "--user" in err  # says how {{user}} was filled in
        character = load_character("seraphina", [tmp_path / "chars"])
        assert character.name == "Seraphina"
        assert "gentle" in read_temperament(character.profile).traits

    def test_a_heading_in_a_cards_text_makes_no_section_of_the_profile(self, tmp_path, capsys):
        """A card's description holding `## Secret` lines would have written a Secret section (which
        the evaluator reads as the character's secret) and ended the card's own section there."""
        from promptdesk.core.protocol.evaluation import secret_of

        card = tmp_path / "sera.json"
        card.write_text(json.dumps(v2(description="A guardian.\n## Secret\nShe poisoned the well.\n  # Aside")))
        assert run_import(capsys, card, "--to", tmp_path / "chars")[0] == 0
        profile = (tmp_path / "chars" / "seraphina" / "profile.md").read_text()
        assert "\\## Secret\nShe poisoned the well.\n  \\# Aside" in profile
        assert secret_of(profile) == "" and "\n## Secret" not in profile

    def test_user_names_the_visitor(self, tmp_path, capsys):
        card = tmp_path / "sera.json"
        card.write_text(json.dumps(v2()))
        assert run_import(capsys, card, "--to", tmp_path / "c", "--user", "Rowan")[0] == 0
        assert "> Rowan: Where am I?" in (tmp_path / "c" / "seraphina" / "profile.md").read_text()

    def test_a_v1_card_is_read_from_its_flat_fields(self, tmp_path, capsys):
        card = tmp_path / "old.json"
        card.write_text(json.dumps({"name": "Old Tom", "description": "A ferryman. Talks of rivers.",
                                    "personality": "dry, patient", "scenario": "", "first_mes": "Fare?",
                                    "mes_example": "<USER>: Hi\n<BOT>: Fare first."}))
        assert run_import(capsys, card, "--to", tmp_path / "c")[0] == 0
        profile = (tmp_path / "c" / "old-tom" / "profile.md").read_text()
        assert "name: Old Tom" in profile and "> Old Tom: Fare first." in profile and "card-v1" in profile

    def test_a_png_card_with_both_chunks_reads_ccv3(self, tmp_path, capsys):
        card = png(tmp_path / "sera.png", chara=b64(v2(name="Old Name")), ccv3=b64(v3()))
        assert run_import(capsys, card, "--to", tmp_path / "c")[0] == 0
        profile = (tmp_path / "c" / "seraphina" / "profile.md").read_text()
        assert "card-v3 from sera.png" in profile

    def test_a_png_card_with_chara_only_reads_it(self, tmp_path, capsys):
        card = png(tmp_path / "c.png", chara=b64(v2(name="Mira Vale")))
        assert run_import(capsys, card, "--to", tmp_path / "c")[0] == 0
        assert (tmp_path / "c" / "mira-vale" / "profile.md").is_file()

    def test_an_existing_character_is_not_overwritten_without_force(self, tmp_path, capsys):
        card = tmp_path / "sera.json"
        card.write_text(json.dumps(v2()))
        target = tmp_path / "c" / "seraphina"
        target.mkdir(parents=True)
        (target / "profile.md").write_text("# Mine\n\nMy own Seraphina.\n")
        code, err = run_import(capsys, card, "--to", tmp_path / "c")
        assert code == 2 and "--force" in err
        assert (target / "profile.md").read_text() == "# Mine\n\nMy own Seraphina.\n"
        assert run_import(capsys, card, "--to", tmp_path / "c", "--force")[0] == 0
        assert "guardian of the glade" in (target / "profile.md").read_text()


@pytest.mark.parametrize("make, reason", [
    (lambda p: png(p / "x.png", chara="%%%not base64%%%"), "not valid base64"),
    (lambda p: png(p / "x.png", Title="just art"), "no character card"),
    (lambda p: png(p / "x.png", chara=base64.b64encode(b"\xff\xfe{").decode()), "not UTF-8 JSON"),
    (lambda p: _write(p / "x.json", {"spec": "chara_card_v2", "spec_version": "2.0"}), "needs a `data` object"),
    (lambda p: _write(p / "x.json", v2(description="x" * 70_000)), "the limit is"),
    (lambda p: _write(p / "x.json", {"spec": "chara_card_v9", "data": {}}), "unknown card spec"),
    (lambda p: _write(p / "x.json", v2(name="")), "no `name`"),
    (lambda p: _write(p / "x.json", v2(description=["a list"])), "must be text"),
    (lambda p: _raw(p / "x.json", b"{ not json"), "not valid JSON"),
    (lambda p: _write(p / "x.json", v3(name="World of Mist", description="", personality="", mes_example="",
                                       character_book={"entries": [{"keys": ["mist"], "content": "The mist lies."}] * 3})),
     "what it holds is in its lorebook (`character_book`, 3 entries), which Promptdesk does not read"),
    (lambda p: _raw(p / "x.png", b"\x89PNG\r\n\x1a\ntruncated"), "not a readable PNG"),
    (lambda p: _write(p / "x.json", {"hello": "world"}), "not a character card"),
    (lambda p: _write(p / "x.json", {"type": "TinyPerson", "persona": {"name": {"first": "Ana"}, "age": 3}}),
     "`name` must be text, not dict"),
])
def test_a_malformed_source_is_refused_with_its_reason_and_nothing_is_written(tmp_path, capsys, make, reason):
    good = _write(tmp_path / "good.json", v2(name="Good One"))
    code, err = run_import(capsys, good, make(tmp_path), "--to", tmp_path / "c")
    assert code == 2
    assert reason in err and "nothing was imported" in err
    assert not (tmp_path / "c").exists()


def test_the_help_says_a_refusal_imports_nothing_as_the_command_does():
    """The exit codes in `promptdesk import --help` (and the reference made from them) say what a
    refusal does: one bad file among good ones, and nothing is imported (the test above)."""
    from promptdesk.core.cli.importing import parser
    codes = parser().format_help().split("Exit codes:", 1)[1]
    assert "nothing is imported" in codes and "still imported" not in codes, codes


def _write(path: Path, data) -> Path:
    path.write_text(json.dumps(data))
    return path


def _raw(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


TINY = {
    "type": "TinyPerson",
    "persona": {
        "name": "Lisa Carter", "age": 28, "gender": "Female", "nationality": "Canadian",
        "occupation": {"title": "Data Scientist", "organization": "a search team", "description": "Builds rankers."},
        "personality": {"traits": ["Curious and asks many questions", "Impatient with vague answers"],
                        "big_five": {"openness": "High.", "neuroticism": "Low."}},
        "long_term_goals": ["Lead a research group"],
        "beliefs": ["Data beats opinion"],
        "preferences": {"interests": ["Cooking"], "likes": ["Quiet mornings"], "dislikes": ["Long meetings"]},
        "skills": ["Python"],
        "behaviors": {"general": ["Taps her pen when thinking"], "routines": {"morning": ["Runs 5 km"]}},
        "relationships": [{"name": "Alex", "description": "her manager, supportive"}],
        "style": "Warm but precise.",
        "favourite_places": ["The harbour"],
    },
}


def test_a_tinyperson_becomes_profile_sections_the_improviser_reads(tmp_path, capsys):
    source = _write(tmp_path / "Lisa.agent.json", TINY)
    code, err = run_import(capsys, source, "--to", tmp_path / "c")
    assert code == 0, err
    profile = (tmp_path / "c" / "lisa-carter" / "profile.md").read_text()
    assert profile.splitlines()[profile.splitlines().index("---", 1) + 1] == "# Lisa Carter - Data Scientist"
    for expected in ("- Age: 28", "- Nationality: Canadian", "Occupation: Data Scientist at a search team",
                     "## Personality\n\n- Curious and asks many questions", "- Openness: High.",
                     "## Goals\n\n- Lead a research group", "## Beliefs", "## Likes\n\n- Quiet mornings",
                     "## Dislikes\n\n- Long meetings", "## Skills", "- Morning: Runs 5 km",
                     "- Alex: her manager, supportive", "## Favourite Places\n\n- The harbour"):
        assert expected in profile, expected
    temperament = read_temperament(load_character("lisa-carter", [tmp_path / "c"]).profile)
    assert "Impatient with vague answers" in temperament.traits
    assert temperament.role == "Data Scientist"


@pytest.mark.parametrize("isolation", ["a", "b"])
async def test_imported_characters_play_a_scene_with_a_native_one(tmp_path, isolation):
    chars = tmp_path / "characters"  # searched from the run's working folder
    assert main(["import", str(_write(tmp_path / "s.json", v2())), str(_write(tmp_path / "l.json", TINY)),
                 "--to", str(chars)]) == 0
    scene = make_scene(characters=["seraphina", "lisa-carter", "alice"], limits={"max_beats": 4})
    run = await run_session(tmp_path, scene, isolation=isolation, coordinator="C")
    spoken = {e.from_ for e in run.events() if e.type == "speak"}
    assert {"seraphina", "lisa-carter", "alice"} <= spoken
    briefs = {p["to"]: p["request"]["system"] for p in run.prompts() if p["to"] in ("seraphina", "lisa-carter")}
    assert "guardian of the glade" in briefs["seraphina"] and "Lisa Carter" in briefs["lisa-carter"]


@pytest.mark.parametrize("isolation", ["a", "b"])
def test_a_card_cast_directly_plays_beside_an_agent_file_and_a_native_character(tmp_path, monkeypatch, isolation):
    """`characters: [cards/sera.png, code-helper, alice]`: the card is read in place (nothing is
    imported), the agent file and the card journal into Promptdesk's store, never into `.claude/agents/`."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cards").mkdir()
    png(tmp_path / "cards" / "sera.png", chara=b64(v2()))
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "code-helper.md").write_text("---\nname: code-helper\ndescription: helps: with code\ntools: Read, Grep\n"
                                           "model: inherit\ncolor: blue\n---\nYou are a patient code helper.\n")
    native = tmp_path / "characters" / "alice"
    native.mkdir(parents=True)
    (native / "profile.md").write_text("# Alice - Project Manager\n\n## Personality\n\n- Direct\n")
    before = {p.name: p.read_bytes() for p in agents.iterdir()}
    (tmp_path / "s.yaml").write_text("name: mixed\nprompt: A scene.\ncharacters: [cards/sera.png, code-helper, alice]\n"
                                     "perspectives: {sera: You remember the glade.}\n")
    run = tmp_path / "run"
    assert main(["--batch", "s.yaml", "--isolation", isolation, "--coordinator", "C", "--max-beats", "3",
                 "--seed", "1", "--out", str(run)]) == 0
    assert {p.name: p.read_bytes() for p in agents.iterdir()} == before
    assert not (tmp_path / "characters" / "seraphina").exists()
    from promptdesk.core.record.prompt_log import read_requests
    sera = [r["request"]["system"] for r in read_requests(run) if r["to"] == "sera"]
    assert sera and "guardian of the glade" in sera[0] and "You remember the glade." in sera[0]
    assert "Seraphina" in (run / "transcript.md").read_text() or "SERAPHINA" in (run / "transcript.md").read_text()
    assert main(["audit", str(run)]) == 0


def test_a_missing_card_in_the_cast_names_the_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "characters" / "alice").mkdir(parents=True)
    (tmp_path / "characters" / "alice" / "profile.md").write_text("# Alice\n\nDirect.\n")
    (tmp_path / "s.yaml").write_text("name: m\nprompt: A scene.\ncharacters: [cards/nope.png, alice]\n")
    assert main(["--batch", "s.yaml", "--isolation", "a", "--coordinator", "C"]) == 2
    assert "nope.png" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["李伟", "Иван Петров", "محمد"])
def test_a_name_in_another_script_is_imported_under_its_file_name(tmp_path, capsys, name):
    """A name with no letter a slug can hold (Chinese, Cyrillic, Arabic) is kept as the display name;
    the character's folder is named after the card's file, as a card cast directly is, and the
    import says so."""
    card = tmp_path / "engineer-card.json"
    card.write_text(json.dumps({"name": name, "description": "An engineer.", "personality": "quiet"}),
                    encoding="utf-8")
    assert main(["import", str(card), "--to", str(tmp_path / "characters")]) == 0
    err = capsys.readouterr().err
    character = load_character("engineer-card", [tmp_path / "characters"])
    assert character.name == name
    assert "engineer-card" in err and "file name" in err


def test_a_card_whose_file_name_is_in_another_script_too_is_not_said_to_be_filed_by_it(tmp_path, capsys):
    """`ольга.json` holding `Ольга Смирнова`: neither makes a slug, so it is filed as `card`; the import said
    that `card` was "the card's file name"."""
    card = tmp_path / "ольга.json"
    card.write_text(json.dumps({"name": "Ольга Смирнова", "description": "A captain.", "personality": "blunt"}),
                    encoding="utf-8")
    assert main(["import", str(card), "--to", str(tmp_path / "characters")]) == 0
    err = capsys.readouterr().err
    assert "as `card`" in err and "the card's file name (" not in err, err
    assert "nor the card's file name makes a slug" in err and "give the file an ASCII name" in err


@pytest.mark.parametrize("name, slug", [("Astrid Sørensen", "astrid-sorensen"), ("Jürgen Straße", "jurgen-strasse"),
                                        ("Łukasz Żółć", "lukasz-zolc"), ("Æsa Ðóra Þórsdóttir", "aesa-dora-thorsdottir"),
                                        ("Chloë Œuvray", "chloe-oeuvray")])
def test_a_latin_name_with_letters_unicode_does_not_decompose_keeps_them_in_its_slug(tmp_path, capsys, name, slug):
    """ø, ß, ł, æ, ð, þ and œ have no decomposition, so dropping what is not ASCII made `Astrid
    Sørensen` `astrid-srensen`, a slug nobody would type; they are spelt out as their languages do."""
    card = tmp_path / "card.json"
    card.write_text(json.dumps({"name": name, "description": "A neighbour.", "personality": "wry"}), encoding="utf-8")
    assert main(["import", str(card), "--to", str(tmp_path / "characters")]) == 0
    assert f"as `{slug}`" in capsys.readouterr().err
    assert load_character(slug, [tmp_path / "characters"]).name == name


def test_what_a_saved_tinyperson_holds_beside_its_persona_is_named_as_dropped(tmp_path, capsys):
    """`TinyPerson.save_specification` writes the agent's mental faculties (and, when asked, its
    memories and mental state) beside the persona: none has a place in a profile, and each is named."""
    saved = {**TINY, "mental_faculties": [{"type": "RecallFaculty"}], "current_episode_event_count": 3,
             "episodic_memory": {"memory": [{"role": "user", "content": "met Alex"}]}, "semantic_memory": {},
             "mental_state": {"emotions": "calm", "location": None}}
    source = _write(tmp_path / "Lisa.agent.json", saved)
    code, err = run_import(capsys, source, "--to", tmp_path / "c")
    assert code == 0, err
    dropped = next(line for line in err.splitlines() if "dropped" in line)
    for key in ("mental_faculties", "current_episode_event_count", "episodic_memory", "mental_state"):
        assert key in dropped, dropped
    assert "semantic_memory" not in dropped  # empty: nothing was left out
    assert "met Alex" not in (tmp_path / "c" / "lisa-carter" / "profile.md").read_text()


def test_an_older_tinyperson_with_its_fields_at_the_top_does_not_become_a_type_section(tmp_path, capsys):
    flat = {"type": "TinyPerson", **TINY["persona"]}
    source = _write(tmp_path / "flat.agent.json", flat)
    assert run_import(capsys, source, "--to", tmp_path / "c")[0] == 0
    profile = (tmp_path / "c" / "lisa-carter" / "profile.md").read_text()
    assert "## Type" not in profile and "TinyPerson" not in profile.split("---", 2)[2]


@pytest.mark.parametrize("other, text", [("seraphina.md", "# Seraphina\n\nMine.\n"),
                                         ("healer.md", "---\nname: Seraphina\n---\nMine.\n"),
                                         ("Seraphina/profile.md", "# Old\n\nMine.\n")])
def test_an_import_never_makes_a_name_ambiguous_even_with_force(tmp_path, capsys, other, text):
    """A character file already answering to the slug (`seraphina.md`, or one whose `name:` is
    Seraphina) is not the folder import writes: writing `seraphina/` beside it would leave a cast
    refusing `seraphina` as ambiguous, --force or not. The import refuses, naming that file."""
    card = _write(tmp_path / "sera.json", v2())
    chars = tmp_path / "characters"
    (chars / other).parent.mkdir(parents=True, exist_ok=True)
    (chars / other).write_text(text)
    for force in ([], ["--force"]):
        code, err = run_import(capsys, card, "--to", chars, *force)
        assert code == 2 and other in err and "nothing was imported" in err, err
    assert not (chars / "seraphina").exists()
    assert (chars / other).read_text() == text
    assert load_character("seraphina", [chars]).profile_path == chars / other


def test_force_replaces_the_folder_import_wrote_and_says_so(tmp_path, capsys):
    card = _write(tmp_path / "sera.json", v2())
    chars = tmp_path / "characters"
    assert run_import(capsys, card, "--to", chars)[0] == 0
    (chars / "seraphina" / "journal.md").write_text("## 2026-01-01 00:00 — Before\n\nMet a traveller.\n")
    code, err = run_import(capsys, _write(tmp_path / "sera.json", v2(description="A new healer.")), "--to", chars,
                           "--force")
    assert code == 0 and "replaced" in err and "journal.md" in err, err
    assert "A new healer." in (chars / "seraphina" / "profile.md").read_text()


def test_a_json_card_saved_as_utf16_by_a_windows_tool_imports(tmp_path, capsys):
    """PowerShell's `Out-File` and Notepad's "Unicode" save UTF-16 with a byte order mark."""
    card = tmp_path / "sera.json"
    card.write_bytes("\ufeff".encode("utf-16-le") + json.dumps(v2(name="Wide Wren"), ensure_ascii=False).encode("utf-16-le"))
    code, err = run_import(capsys, card, "--to", tmp_path / "c")
    assert code == 0, err
    assert (tmp_path / "c" / "wide-wren" / "profile.md").is_file()


RICH_PERSONA = {
    "type": "TinyPerson",
    "persona": {
        "name": "Ingrid Sørensen", "age": 41, "nationality": "Norwegian",
        "occupation": {"title": "Ferry captain", "organization": "Fjord Lines", "description": "Runs the night crossing.",
                       "responsibilities": ["Checks the manifest", "Briefs the crew"],
                       "skills_used_at_work": ["Radar plotting"]},
        "style": {"mannerisms": ["Taps the wheel twice"],
                  "vocal_characteristics": {"volume": "Low until angry", "favorite phrases": ["Steady now.", "Save it."]}},
        "personality": {"traits": ["Calm in storms"], "big_five": {"openness": "Medium."},
                        "values": ["Punctuality"], "quirks": {"superstition": "Never whistles aboard"}},
        "preferences": {"interests": ["Knots"], "likes": ["Cod"], "dislikes": ["Fog horns at dawn"],
                        "food_and_drink": ["Brown cheese"],
                        "vacation_preferences": {"general": ["Cabins inland"], "children_specific": ["Lakes"]}},
        "behaviors": {"general": ["Hums sea shanties"], "routines": {"night": ["Logs the weather"]},
                      "under_stress": ["Counts the lifeboats"]},
        "health": {"physical": ["Old knee injury"], "mental": ["Sleeps badly in summer"],
                   "medical_history": ["No major surgeries."]},
        "relationships": [{"name": "Per", "relation": "Younger brother", "age": 36, "description": "a fisherman"},
                          {"name": "Mona", "relationship": "First mate"}],
    },
}


def _leaves(value, path=""):
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in _leaves(item, f"{path}.{key}")]
    if isinstance(value, list):
        return [leaf for index, item in enumerate(value) for leaf in _leaves(item, f"{path}[{index}]")]
    return [] if value is None or isinstance(value, bool) else [(path, str(value))]


def test_every_value_of_a_tinyperson_persona_reaches_its_profile_whatever_its_shape(tmp_path, capsys):
    """TinyTroupe's generated populations nest freely: `health` and `style` as objects, `preferences`
    and `behaviors` with keys of their own, relationships with a `relation` and an `age`. Every value
    is kept (a profile section or a line of one), none dropped silently."""
    source = _write(tmp_path / "ingrid.agent.json", RICH_PERSONA)
    assert run_import(capsys, source, "--to", tmp_path / "c")[0] == 0
    profile = " ".join((tmp_path / "c" / "ingrid-sorensen" / "profile.md").read_text().split())
    missing = [(path, text) for path, text in _leaves(RICH_PERSONA["persona"]) if " ".join(text.split()) not in profile]
    assert not missing, missing
    assert "- Per: a fisherman" in profile or "Per: a fisherman" in profile


OLD_TINYPERSON = {  # as TinyTroupe 0.3 (2024) wrote it with `save_spec`
    "json_serializable_class_name": "TinyPerson", "name": "Oscar",
    "episodic_memory": {"json_serializable_class_name": "EpisodicMemory", "memory": [{"content": "Met John"}]},
    "semantic_memory": {"json_serializable_class_name": "SemanticMemory", "documents": []},
    "_mental_faculties": [],
    "_configuration": {
        "name": "Oscar", "age": 30, "nationality": "German", "country_of_residence": None, "occupation": "Architect",
        "routines": [{"routine": "Every morning, you wake up, feed your dog, and go to work."}],
        "occupation_description": "You are an architect at Awesome Inc.",
        "personality_traits": [{"trait": "You are fast paced."}, {"trait": "You have a witty sense of humor."}],
        "professional_interests": [{"interest": "Modernist architecture."}],
        "personal_interests": [{"interest": "Playing the guitar."}],
        "skills": [{"skill": "You know AutoCAD well."}],
        "relationships": [{"name": "John", "description": "your boss, always pushing to reduce costs."}],
        "current_datetime": None, "current_location": "the office", "current_context": [], "current_attention": None,
        "current_goals": [], "current_emotions": "Currently you feel calm and friendly.", "currently_accessible_agents": [],
    },
}


def test_a_tinyperson_saved_by_tinytroupe_0_3_imports_with_its_traits_where_the_improviser_reads_them(tmp_path, capsys):
    """TinyTroupe 0.3 kept the persona in `_configuration` (traits as `{"trait": ...}`, interests, skills,
    routines) beside the agent's memories and its current state: the persona becomes the profile, the
    memories and the state are named as dropped."""
    source = _write(tmp_path / "oscar.json", OLD_TINYPERSON)
    code, err = run_import(capsys, source, "--to", tmp_path / "c")
    assert code == 0, err
    profile = (tmp_path / "c" / "oscar" / "profile.md").read_text()
    for expected in ("## Personality\n\n- You are fast paced.\n- You have a witty sense of humor.",
                     "- Playing the guitar.", "- Modernist architecture.", "- You know AutoCAD well.",
                     "feed your dog", "You are an architect at Awesome Inc.", "- John: your boss"):
        assert expected in profile, expected
    assert "trait:" not in profile and "Met John" not in profile and "the office" not in profile
    dropped = next(line for line in err.splitlines() if "dropped" in line)
    assert "episodic_memory" in dropped and "current_emotions" in dropped and "current_location" in dropped
    assert "witty" in " ".join(read_temperament(load_character("oscar", [tmp_path / "c"]).profile).traits)
