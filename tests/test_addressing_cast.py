"""A speech's `TO:` is resolved against the cast's display names and slugs (longest first), so any
name that may be cast (commas, brackets, quotes, non-Latin letters) can be addressed, recorded and
counted in the who-addressed-whom table."""

from __future__ import annotations

import json
import unicodedata

import pytest

from promptdesk.core.experiments.metrics import metrics_of
from promptdesk.core.protocol.reply import parse_speech, parse_turn
from loopback import loopback  # noqa: F401  (fixture)

NAMES = {"gloria-pa": "Gloria, PA", "ace": 'Tom "Ace" Quinn', "wang": "王小明, 博士", "evil": "[Evil], Esq."}
CAST = {key: name for slug, name in NAMES.items() for key in (slug, name)} | {"glo": "Gloria", "Gloria": "Gloria"}


@pytest.mark.parametrize("header, target, tone", [
    ("[TO: Gloria, PA, TONE: earnest]", "Gloria, PA", "earnest"),
    ("[TONE: dry, TO: Gloria, PA]", "Gloria, PA", "dry"),
    ("[TO: gloria, pa, TONE: a]", "Gloria, PA", "a"),
    ("[TO: Gloria, TONE: a]", "Gloria", "a"),
    ('[TO: Tom "Ace" Quinn, TONE: wry]', 'Tom "Ace" Quinn', "wry"),
    ("[TO: 王小明, 博士, TONE: 平静]", "王小明, 博士", "平静"),
    ("[TO: [Evil], Esq., TONE: cold, *nods*]", "[Evil], Esq.", "cold"),
    ('[TO: "Gloria, PA", TONE: a]', "Gloria, PA", "a"),
    ("[TO: wang, TONE: a]", "王小明, 博士", "a"),
])
def test_a_cast_name_is_addressed_whole_and_recorded_by_its_display_name(header, target, tone):
    speech = parse_speech(f'{header} "Hello."', CAST)
    assert (speech.target, speech.tone, speech.content) == (target, tone, "Hello.")


def test_without_the_cast_or_a_match_the_header_reads_item_by_item_as_before():
    assert parse_speech('[TO: Gloria, PA, TONE: earnest] "Hi"').target == "Gloria"
    speech = parse_speech('[TO: Nobody, TONE: x] "Hi"', CAST)
    assert (speech.target, speech.tone) == ("Nobody", "x")
    assert parse_speech('[laughs] "Hi"', CAST).target is None
    turn = parse_turn('<thinking>t</thinking>\n<speech>[TO: Gloria, PA, TONE: earnest] "Hi"</speech>', CAST)
    assert turn.well_formed and turn.speech.target == "Gloria, PA"


async def test_a_scene_records_and_counts_addresses_to_names_with_commas_quotes_and_other_scripts(
        run_scene, loopback, tmp_path, monkeypatch):
    from helpers import make_scene
    from loopback import Reply
    from test_scene_faults import CANARY, remote_cast, turn

    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    for slug, name in NAMES.items():
        folder = tmp_path / "characters" / slug
        folder.mkdir(parents=True)
        (folder / "profile.md").write_text(f"---\nname: {json.dumps(name, ensure_ascii=False)}\n---\n# {slug}\n\n"
                                           f"{slug} is a character who speaks tersely.\n")
    order = list(NAMES.values())
    lines = {name: f'[TO: {order[(i + 1) % len(order)]}, TONE: earnest] "Over to you."' for i, name in enumerate(order)}

    def answer(recorded):
        system = json.dumps(recorded.body.get("system"), ensure_ascii=False)
        who = next(name for name in order if json.dumps(f"You are {name}.", ensure_ascii=False)[1:-1] in system)
        return Reply(text=turn(lines[who]))

    loopback.default = answer
    scene = make_scene(characters=list(NAMES), cast=remote_cast(loopback, *NAMES), limits={"max_beats": 4})
    run = await run_scene(scene, isolation="a", coordinator="C")
    slugs = list(NAMES)
    speeches = [(r["from"], r["target"], r["tone"]) for r in run.records() if r["type"] == "speak"]
    assert set(speeches) == {(slug, order[(i + 1) % 4], "earnest") for i, slug in enumerate(slugs)}
    said = {slug: sum(1 for s in speeches if s[0] == slug) for slug in slugs}
    addressed = metrics_of(run.dir, audit=False).addressed
    assert addressed == {slug: {slugs[(i + 1) % 4]: said[slug]} for i, slug in enumerate(slugs)}


@pytest.mark.parametrize("target, expected", [("Ann", "ann"), ("Ann Lee", "ann-lee"), ("Anna", "anna"),
                                              ("ann-lee", "ann-lee"), ("Lee", None)])
async def test_in_sequential_turns_the_member_addressed_by_name_speaks_next_not_one_sharing_a_first_name(
        run_scene, loopback, tmp_path, monkeypatch, target, expected):
    """Cast in the order Ann Lee, Grace, Anna, Ann: Grace's `[TO: Ann]` hands the turn to Ann, though Ann
    Lee comes first and shares her first name; a name that is no one's (`Lee`) passes the turn on in
    cast order."""
    from helpers import make_scene
    from loopback import Reply
    from test_scene_faults import CANARY, remote_cast, turn

    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    names = {"ann-lee": "Ann Lee", "grace": "Grace", "anna": "Anna", "ann": "Ann"}
    for slug, name in names.items():
        (tmp_path / "characters" / slug).mkdir(parents=True)
        (tmp_path / "characters" / slug / "profile.md").write_text(f"# {name}\n\n{name} keeps the minutes.\n")

    def answer(recorded):
        system = json.dumps(recorded.body.get("system"), ensure_ascii=False)
        speaking = "You are Grace." in system
        return Reply(text=turn(f'[TO: {target}, TONE: calm] "Your turn."' if speaking else '[TONE: calm] "Noted."'))

    loopback.default = answer
    scene = make_scene(characters=list(names), cast=remote_cast(loopback, *names), turns="sequential",
                       initial_speaker="grace", limits={"max_beats": 2})
    run = await run_scene(scene, isolation="a", coordinator="C")
    order = [r["from"] for r in run.records() if r["type"] == "speak"]
    assert order == ["grace", expected or "anna"]


DECOMPOSED = unicodedata.normalize("NFD", "José García")
FOLDED_CAST = {key: name for slug, name in {"jose": DECOMPOSED, "li": "李明", "ken": "Ｋｅｎ Ｓａｔｏ",
                                             "layla": "ليلى"}.items() for key in (slug, name)}


@pytest.mark.parametrize("header, target, tone", [
    (f"[TO: {unicodedata.normalize('NFC', 'José García')}, TONE: warm]", DECOMPOSED, "warm"),  # composed, name decomposed
    ("[TO: 李明，TONE: 平静]", "李明", "平静"),            # a full-width comma, as a reply in Chinese writes it
    ("[TO：李明]", "李明", None),                           # a full-width colon
    ("[TO: Ken Sato, TONE: dry]", "Ｋｅｎ Ｓａｔｏ", "dry"),  # a name in full-width letters, typed plain
    ("[TO: ليلى، TONE: calm]", "ليلى", "calm"),             # the Arabic comma after a right-to-left name
    ("[TO: 李明、TONE: 穏やか]", "李明", "穏やか"),          # the ideographic comma, as Japanese writes it
])
def test_a_name_is_addressed_in_any_unicode_form_of_it(header, target, tone):
    speech = parse_speech(f'{header} "Hello."', FOLDED_CAST)
    assert (speech.target, speech.tone, speech.content) == (target, tone, "Hello.")


@pytest.mark.parametrize("to, target", [(unicodedata.normalize("NFC", "José García"), DECOMPOSED),
                                        ("Ken Sato", "Ｋｅｎ Ｓａｔｏ"), ("ＬＩ", "李明")])
def test_a_json_to_naming_a_member_in_another_unicode_form_is_well_formed(to, target):
    """Under `protocol: json` a `to` naming no one makes the turn malformed (corrected, then silent):
    a name composed where the cast's is decomposed, or typed plain for full-width letters, names the member."""
    from promptdesk.core.protocol.structured import parse_json_turn
    reply = json.dumps({"thinking": "t", "action": "speak", "to": to, "tone": None, "stage_direction": None,
                        "words": "Hello."}, ensure_ascii=False)
    turn = parse_json_turn(reply, FOLDED_CAST)
    assert turn.well_formed and turn.speech.target == target


TITLED = {"eva-brandt": "Eva Brandt", "grace": "Grace", "dr-ann-lee": "Dr. Ann Lee", "prof-eva-brandt": "Prof. Eva Brandt",
          "robert-hales": "Robert Hales", "sir-robert-hale": "Sir Robert Hale"}


def test_a_short_name_is_read_after_the_title_and_one_two_members_share_names_neither():
    """A focus group casts titled and untitled people alike: `Eva` is Eva Brandt's given name and Prof.
    Eva Brandt's too, so it names no one (it named Eva Brandt: the title was taken for the professor's
    first name); `Prof. Brandt` names the professor; a title alone (`Dr.`) is no one's name."""
    from types import SimpleNamespace

    from promptdesk.core.engine.turn import addressable

    stage = SimpleNamespace(actors={slug: SimpleNamespace(slug=slug, name=name) for slug, name in TITLED.items()})
    cast = addressable(stage)  # type: ignore[arg-type]
    read = {said: parse_speech(f'[TO: {said}, TONE: calm] "Hello."', cast).target
            for said in ("Eva", "Robert", "Prof. Brandt", "Ann", "Dr.", "Sir", "Sir Robert", "Grace", "eva-brandt")}
    assert read == {"Eva": "Eva", "Robert": "Robert", "Prof. Brandt": "Prof. Eva Brandt", "Ann": "Dr. Ann Lee",
                    "Dr.": "Dr.", "Sir": "Sir", "Sir Robert": "Sir Robert Hale", "Grace": "Grace",
                    "eva-brandt": "Eva Brandt"}


@pytest.mark.parametrize("target, expected", [("Eva", "dr-ann-lee"), ("Prof. Brandt", "prof-eva-brandt"),
                                              ("Robert", "dr-ann-lee"), ("Sir Robert Hale", "sir-robert-hale")])
async def test_in_sequential_turns_a_short_name_two_titled_members_share_passes_the_turn_on(
        run_scene, loopback, tmp_path, monkeypatch, target, expected):
    """Cast in the order Eva Brandt, Grace, Dr. Ann Lee, Prof. Eva Brandt, ...: Grace's `[TO: Eva]` could
    be either Eva, so the turn goes on in cast order (it went to Eva Brandt); `[TO: Prof. Brandt]` is the
    professor (it was no one)."""
    from helpers import make_scene
    from loopback import Reply
    from test_scene_faults import CANARY, remote_cast, turn

    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    for slug, name in TITLED.items():
        (tmp_path / "characters" / slug).mkdir(parents=True)
        (tmp_path / "characters" / slug / "profile.md").write_text(f"# {name}\n\n{name} sits on the panel.\n")

    def answer(recorded):
        speaking = "You are Grace." in json.dumps(recorded.body.get("system"), ensure_ascii=False)
        return Reply(text=turn(f'[TO: {target}, TONE: calm] "Your turn."' if speaking else '[TONE: calm] "Noted."'))

    loopback.default = answer
    scene = make_scene(characters=list(TITLED), cast=remote_cast(loopback, *TITLED), turns="sequential",
                       initial_speaker="grace", limits={"max_beats": 2})
    run = await run_scene(scene, isolation="a", coordinator="C")
    assert [r["from"] for r in run.records() if r["type"] == "speak"] == ["grace", expected]
