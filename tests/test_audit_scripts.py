"""The audit reads every script as it reads English: a leak of a clause of a Japanese or Chinese
perspective (written without spaces between words), of an Arabic one without its vowel marks, or of a
French note with its accents dropped or decomposed, is named; an honest run in those languages audits
clean. The runs are real scenes on the offline improviser, with a cast and a scene of their own."""

from __future__ import annotations

import asyncio
import shutil
import unicodedata
from pathlib import Path

import pytest

from promptdesk.core.casting.build import RunOptions, build_session
from promptdesk.core.clock import VirtualClock
from promptdesk.core.record.audit import audit_run
from promptdesk.core.record.audit_material import grams, words
from promptdesk.core.record.prompt_log import read_prompts
from helpers import make_scene
from test_audit import tamper

PROFILES = {
    "hanako": "# 山田花子\n\n## Personality\n- 几帳面で静か\n\n## Background\n- 町内会の書記を十年務めている\n",
    "layla": "# ليلى\n\n## Personality\n- صريحة وحازمة\n\n## Background\n- صيدلانية في الحي منذ عشر سنوات\n",
    "ann": "# Ann\n\n## Personality\n- Sharp and impatient\n\n## Background\n- Runs the allotment committee\n",
}
PERSPECTIVES = {
    "hanako": "実は駐車場の計画に賛成している。去年の春に市役所の友人から土地の話を聞いた。誰にも言っていない。",
    "layla": "أنتِ تَعرِفينَ أنَّ ابنَ مارك يَعمَلُ في البَلَديَّةِ مُنذُ سَنَتَين ولم تُخبِري أحَداً بذلك",
    "ann": "你其实已经在请愿书上签了名字，但是委员会里没有人知道这件事情。",
}
NOTES = ("Le secrétaire a déjà reçu l'avis défavorable de la préfecture hier matin. "
         "Observer si quelqu'un évoque le parking.")


def strip_marks(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.category(c).startswith("M"))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("scripts")
    for slug, profile in PROFILES.items():
        (root / "characters" / slug).mkdir(parents=True)
        (root / "characters" / slug / "profile.md").write_text(profile, encoding="utf-8")
    scene = make_scene(characters=list(PROFILES), setting="公民館、火曜日の夜", prompt="町内会が駐車場計画について話し合う。",
                       perspectives=PERSPECTIVES, coordinator_notes=NOTES, limits={"max_beats": 5})
    options = RunOptions(isolation="b", coordinator="C", characters_dirs=[root / "characters"], cwd=root,
                         out=root / "run", clock=VirtualClock(), write_character_journals=False, seed=1,
                         journals="none")
    asyncio.run(build_session(scene, options).run())
    return root / "run"


@pytest.fixture
def run(recorded, tmp_path) -> Path:
    return Path(shutil.copytree(recorded, tmp_path / "run"))


def first_turn(run_dir: Path, recipient: str) -> int:
    return min(r.beat for r in read_prompts(run_dir) if r.to == recipient and r.purpose == "turn" and r.beat)


PLANTS = [
    # (planted text, recipient, owner, kind)
    ("去年の春に市役所の友人から土地の話を聞いた", "ann", "hanako", "perspective"),
    ("听说你其实已经在请愿书上签了名字", "layla", "ann", "perspective"),
    (strip_marks(PERSPECTIVES["layla"]).split(" ولم")[0], "hanako", "layla", "perspective"),
    (strip_marks(NOTES.split(". ")[0]), "ann", "coordinator", "coordinator_notes"),
    (unicodedata.normalize("NFD", NOTES.split(". ")[0]), "layla", "coordinator", "coordinator_notes"),
    ("ＬＥ ＳＥＣＲＥＴＡＩＲＥ A DÉJÀ REÇU L'AVIS DÉFAVORABLE", "hanako", "coordinator",
     "coordinator_notes"),
]


def test_the_honest_run_is_clean(recorded):
    report = audit_run(recorded)
    assert report.clean and report.requests >= 10, report.summary()


@pytest.mark.parametrize("text,recipient,owner,kind", PLANTS,
                         ids=["japanese-clause", "chinese-clause", "arabic-unvowelled", "french-unaccented",
                              "french-decomposed", "french-fullwidth"])
def test_a_planted_leak_in_any_script_is_named(run, text, recipient, owner, kind):
    tamper(run, recipient, first_turn(run, recipient), text)
    report = audit_run(run)
    found = {(leak.recipient, leak.owner, leak.kind) for leak in report.leaks}
    assert (recipient, owner, kind) in found, report.summary()
    assert found <= {(recipient, owner, kind), (recipient, owner, "thinking")}, report.summary()  # its thought quotes it


def test_a_leak_in_a_script_without_spaces_is_shown_as_written(run):
    planted = "去年の春に市役所の友人から土地の話を聞いた"
    tamper(run, "ann", first_turn(run, "ann"), planted)
    shown = audit_run(run).leaks[0].describe()
    excerpt = shown.split('"…')[1].split('…"')[0]
    assert len(excerpt) >= 8 and excerpt in planted, shown


def test_words_of_a_script_without_spaces_are_its_characters_and_marks_never_count():
    assert words("駐車場に賛成") == ["駐", "車", "場", "に", "賛", "成"]
    assert words("มีรถ") == ["ม", "ร", "ถ"]  # Thai: each letter, its vowel mark dropped
    assert words("Ｃafé au lait") == words("cafe\u0301 AU LAIT") == ["cafe", "au", "lait"]
    assert words("مُحَمَّد وصل") == words("محمد وصل") == ["محمد", "وصل"]
    assert words("Kim Ji-woo 김지우") == ["kim", "ji", "woo", "김지우"]  # Korean keeps its spaces: words
    assert grams("駐車場") == {"駐 車 場"}


@pytest.mark.parametrize(("planted", "recipient", "shown"), [
    (PERSPECTIVES["layla"].split(" ولم")[0], "hanako", "تَعرِفينَ"),          # its vowel marks
    (NOTES.split(". ")[0], "ann", "secrétaire a déjà reçu"),                     # its accents
    ("ＬＥ ＳＥＣＲＥＴＡＩＲＥ A DÉJÀ REÇU L'AVIS DÉFAVORABLE", "hanako", "ＳＥＣＲＥＴＡＩＲＥ A DÉJÀ"),
], ids=["arabic-vowelled", "french-accented", "french-fullwidth"])
def test_a_leak_is_shown_as_the_request_wrote_it(run, planted, recipient, shown):
    """Words are compared without their marks, case or compatibility forms, but a person reads the leak
    as it was sent: `تَعرِفينَ`, not `تعرفين`; `déjà reçu`, not `deja recu` (nor `店主は病気た` for `店主は病気だ`)."""
    tamper(run, recipient, first_turn(run, recipient), planted)
    described = [leak.describe() for leak in audit_run(run).leaks]
    assert described and all(shown in line for line in described if "thinking" not in line), described


def test_written_keeps_kana_voicing_and_vowel_signs():
    from promptdesk.core.record.audit_words import json_words, written
    fragment = '"content": "店主は病気だ。\\nमैं आज बहुत थका"'
    tokens, ends = json_words(fragment)
    assert tokens[1:7] == ["店", "主", "は", "病", "気", "た"]
    assert written(fragment, ends, 1, 7) == "店主は病気だ"
    assert written(fragment, ends, 7, 10) == "मैं आज बहुत"
