"""The suggestion gate (`audit_coordinator.vet`) reads a short clause of the coordinator notes in every
script as it reads one in English: a clause written without spaces (Chinese, Japanese) is as many
words as it has characters, and a clause ends at its script's own stop (the Devanagari danda `।`, the
Arabic semicolon `؛` and question mark `؟`), so "Alice is pregnant." said in any of them is withheld
when copied into a suggested world event, and words every actor was shown are not."""

from __future__ import annotations

import pytest

from promptdesk.core.record.audit import audit_run
from promptdesk.core.record.audit_words import short_clauses
from loopback import loopback  # noqa: F401  (fixture)
from test_scene_faults import keys  # noqa: F401  (fixture)
from test_suggestion_leaks import actor_requests, batch, copying_judge, records, scene_file, take_with_a_note_to_bob


@pytest.mark.parametrize(("notes", "copied", "secret"), [
    ("保持节奏。爱丽丝怀孕了。房间里还没有人知道这件事，场景结束前不能揭示。", "一名护士探头喊道：爱丽丝怀孕了！", "怀孕"),
    ("テンポよく進める。店主は病気だ。誰も知らないし、最後まで明かしてはいけない。", "電話が鳴る：店主は病気だ。", "病気"),
    ("गति तेज़ रखें। एलिस गर्भवती है। कमरे में अभी कोई नहीं जानता और अंत से पहले यह बात सामने नहीं आनी चाहिए।",
     "एक नर्स पुकारती है: एलिस गर्भवती है", "गर्भवती"),
    ("حافظوا على الإيقاع؛ أليس حامل بتوأم؛ لا أحد في الغرفة يعرف ذلك حتى الآن ولا يجب كشفه قبل النهاية.",
     "ممرضة تنادي: أليس حامل بتوأم!", "بتوأم"),
    ("حافظوا على الإيقاع؛ أليس حامل بتوأم؛ لا أحد في الغرفة يعرف ذلك حتى الآن ولا يجب كشفه قبل النهاية.",
     "ممرضة تنادي: أليـــس حامـــل بتـــوأم!", "بتـــوأم"),           # Arabic stretched with tatweel
    ("Держите темп! Алиса ждёт близнецов? Никто в комнате пока не знает этого и не должен узнать до конца.",
     "Медсестра кричит: Алиса ждёт близнецов", "близнецов"),
    ("분위기를 유지하세요. 민준은 해고되었다. 아무도 그 사실을 아직 모르고 있고 끝까지 밝혀서는 안 된다.",
     "전화가 울린다: 민준은 해고되었다!", "해고되었다"),             # Korean: two words say what three say in English
], ids=["chinese", "japanese", "hindi", "arabic", "arabic-tatweel", "russian", "korean"])
def test_a_short_clause_of_the_notes_in_any_script_is_withheld(tmp_path, loopback, capsys, notes, copied, secret):
    loopback.default = copying_judge(copied)
    out = tmp_path / "run"
    assert batch(scene_file(tmp_path, loopback, coordinator_notes=notes), out, "A") == 0
    events = records(out)
    decision = next(e for e in events if e["type"] == "decision" and e.get("decision") == "suggest_event")
    assert decision["withheld"] == "it carries words of the coordinator notes"
    assert not [e for e in events if e["type"] == "event"], "never delivered"
    assert secret not in actor_requests(out)
    assert audit_run(out).clean


@pytest.mark.parametrize(("setting", "copied"), [
    ("东京的一家小咖啡馆，外面下着雨。", "窗边的客人说：外面下着雨。"),   # the clause is the scene's own words
    ("東京の小さな喫茶店。", "印刷機が紙を詰まらせる。"),                # nothing of the notes
    ("店主の田中太郎が窓を拭いている。", "ドアのベルが鳴る：田中太郎は店主。"),  # its kanji all shown, in another order
], ids=["public", "unrelated", "public-reordered"])
def test_a_suggestion_in_words_every_actor_was_shown_is_delivered(tmp_path, loopback, capsys, setting, copied):
    notes = "外面下着雨。爱丽丝怀孕了。田中太郎は店主。房间里还没有人知道这件事，场景结束前不能揭示。"
    loopback.default = copying_judge(copied)
    out = tmp_path / "run"
    assert batch(scene_file(tmp_path, loopback, coordinator_notes=notes, setting=setting), out, "A") == 0
    delivered = [e["text"] for e in records(out) if e["type"] == "event"]
    assert delivered == [f"A memo slides under the door: {copied}"]
    assert audit_run(out).clean


@pytest.mark.parametrize(("text", "clause"), [
    ("राम बहुत बीमार है। किसी को नहीं पता।", "रम बहत बमर ह"),  # the danda ends a clause (marks are not compared)
    ("هل تعلم؟ المال سرقه أخي؛ لا أحد يعرف", "المال سرقه اخي"),
    ("保持节奏。爱丽丝怀孕了。", "爱 丽 丝 怀 孕 了"),
], ids=["hindi", "arabic", "chinese"])
def test_clauses_end_at_each_scripts_own_stop(text, clause):
    assert clause in short_clauses(text, 3)


@pytest.mark.parametrize("note", ["동생은 살아있다", "你妹妹还活着"], ids=["korean", "chinese"])
def test_a_short_note_to_one_actor_in_another_script_is_withheld_from_the_others(tmp_path, loopback, capsys, note):
    """A role A judge reads every note the operator gave; a note to Bob alone in two Korean words ("your
    sister is alive", three in English) or seven Chinese characters must not reach Alice and Charlie."""
    import json

    from loopback import Reply
    from promptdesk.core.cli.main import main

    def judge(recorded):
        body = json.dumps(recorded.body, ensure_ascii=False)
        if "the scene has ended" in body:
            return Reply(text='{"goal_achieved": null, "reason": "cannot tell"}')
        if note in body:
            return Reply(text=json.dumps({"decision": "suggest_event", "text": f"A voicemail plays aloud: {note}"},
                                         ensure_ascii=False))
        return Reply(text='{"decision": "continue"}')

    loopback.default = judge
    take, _ = take_with_a_note_to_bob(tmp_path, loopback, note)
    assert note not in actor_requests(take, ("alice", "charlie"))


def test_a_forced_suggestion_is_reported_with_its_words_as_written(tmp_path, loopback, capsys):
    """The audit names a suggested world event that carried the notes with the words the event wrote:
    `店主は病気だ`, not the form the words are compared in (`店主は病気た`, its kana voicing dropped)."""
    from test_suggestion_leaks import planted
    notes = "テンポよく進める。店主は病気だが、来月に手術を受ける予定で、店の将来をとても心配している。"
    out, at = planted(tmp_path, loopback, text="ラジオのニュース：店主は病気だが、来月に手術を受ける予定で。")
    private = out / "private.json"
    import json
    record = json.loads(private.read_text())
    record["coordinator_notes"] = notes
    private.write_text(json.dumps(record, ensure_ascii=False))
    leaks = [leak for leak in audit_run(out).leaks if leak.source == "events.jsonl"]
    assert leaks and all("店主は病気だが" in leak.describe() for leak in leaks), [leak.describe() for leak in leaks]
