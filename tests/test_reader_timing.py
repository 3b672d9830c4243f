"""Every reader of untrusted text finishes in under a second at its size limit, whatever the text's
shape: one long word, one delimiter repeated, brackets nested as deep as the limit allows. A pattern
with nested or adjacent unbounded quantifiers (quadratic or worse in a long word) fails here.

Readers and their limits: card and persona files (`MAX_SOURCE_BYTES`: JSON, a PNG's text chunk, a
WebP's XMP and EXIF), character files with front matter (`CHARACTER_FILE_MAX`), scene files
(`SCENE_MAX_BYTES`), and model output (`REPLY_MAX_CHARS`: the tag protocol, streamed and whole, its
salvage, the JSON protocol, a collaboration envelope, a roundtable answer, a judge's decision).
Time is the process's CPU time, so that a loaded machine does not fail a reader that is fast."""

from __future__ import annotations

import base64
import json
import signal
import struct
import time
import zlib
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptdesk.core.casting.scene_file import SCENE_MAX_BYTES, load_scene
from promptdesk.core.characters.importers.model import MAX_FIELD_CHARS, MAX_SOURCE_BYTES
from promptdesk.core.characters.importers.read import read_source
from promptdesk.core.characters.loading import CHARACTER_FILE_MAX, load_character
from promptdesk.core.engine.coordinator import JudgeCoordinator
from promptdesk.core.formats.collaborate.envelope import parse_envelope
from promptdesk.core.formats.roundtable.answers import parse_answer, parse_question, parse_synthesis
from promptdesk.core.protocol.bounded import REPLY_MAX_CHARS
from promptdesk.core.protocol.lines import inert
from promptdesk.core.protocol.reply import TagSplitter, parse_turn, salvage
from promptdesk.core.protocol.structured import JsonSplitter, parse_json_turn, salvage_json

SECONDS = 1.0
DELIMITERS = ["<", ">", "[", "]", "{", "}", "(", ")", ":", "*", '"', "'", "`", "-", ",", " ", "\n", "\t", "#", "=",
              "|", "\\", "/", ".", "_", "~", "—", "<speech>", "</speech>", "<thinking>", "```", "```yaml\n", "---\n",
              "- ", "a: ", "TO: ", "[TO: ", "TONE:", '{"a":', "*[", "Examples:", "<example>", "DIRECTOR NOTE ",
              "<x:chara>", " chara=", "&amp;", "...\n", "{{", "{{//", "{{char}}", "<char>"]
BRACKETS = [("[", "]"), ("{", "}"), ("(", ")"), ("<", ">"), ("<a>", "</a>"), ('{"a":', "}"), ("- ", "\n"), ("[[", "")]
CAST = {"ann": "Ann", "Ann": "Ann", "bob": "Bob", "Bob": "Bob"}
TIMING = settings(max_examples=8, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def text_of(shape: tuple[str, str, str], size: int) -> str:
    """`size` characters of one shape: a long word, a delimiter repeated (alone or after a letter),
    or brackets nested half the size deep."""
    kind, one, other = shape
    if kind == "word":
        return "a" * size
    if kind == "repeated":
        return (one * (size // len(one) + 1))[:size]
    if kind == "spaced":
        return (("a" + one) * (size // (len(one) + 1) + 1))[:size]
    depth = size // (2 * max(1, len(one) + len(other)))
    return one * depth + other * depth


SHAPES = st.one_of(st.just(("word", "", "")), st.tuples(st.sampled_from(["repeated", "spaced"]), st.sampled_from(DELIMITERS),
                                                       st.just("")),
                   st.builds(lambda pair: ("nested", *pair), st.sampled_from(BRACKETS)))


class Hung(Exception):
    """A read still running after `WALL_SECONDS` (a quadratic reader takes minutes: it is stopped)."""


WALL_SECONDS = 20


def _hung(signum, frame):
    raise Hung


def within_a_second(read: Callable[[], object]) -> None:
    """`read()` returns or raises within `SECONDS` of CPU time (and is stopped after `WALL_SECONDS`)."""
    previous = signal.signal(signal.SIGALRM, _hung)
    signal.alarm(WALL_SECONDS)
    started = time.process_time()
    try:
        read()
    except Hung:
        pytest.fail(f"still reading after {WALL_SECONDS} s")
    except Exception:  # noqa: BLE001 - a refusal is an answer; only the time is judged here
        pass
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    took = time.process_time() - started
    assert took < SECONDS, f"took {took:.2f} s"


def streamed(splitter, text: str) -> None:
    for at in range(0, len(text), 200):
        splitter.feed(text[at:at + 200])
    splitter.flush()


MODEL_READERS: dict[str, Callable[[str], object]] = {
    "tags": lambda t: parse_turn(t, CAST),
    "tags inside a turn": lambda t: parse_turn(f'<thinking>{t}</thinking>\n<speech>[TO: Bob, {t}] "{t}"</speech>', CAST),
    "a speech header": lambda t: parse_turn(f"<thinking>x</thinking><speech>[{t}</speech>", CAST),
    "salvage": lambda t: salvage(t, CAST),
    "tags streamed": lambda t: streamed(TagSplitter(), t),
    "json": lambda t: parse_json_turn(t, CAST),
    "json fields": lambda t: parse_json_turn(json.dumps({"thinking": t, "speech": {"to": t, "tone": t, "words": t}}), CAST),
    "json salvage": salvage_json,
    "json streamed": lambda t: streamed(JsonSplitter(CAST), t),
    "envelope": lambda t: parse_envelope(t, ["ann", "bob"]),
    "fenced envelope": lambda t: parse_envelope(f"```json\n{t}", ["ann", "bob"]),
    "roundtable answer": parse_answer,
    "roundtable question": lambda t: parse_question(f"```yaml\n{t}", "topic", ["ann"]),
    "roundtable synthesis": lambda t: parse_synthesis(t, "topic"),
    "judge decision": JudgeCoordinator.parse,
    "imported text made inert": inert,
}


@TIMING
@given(shape=SHAPES, reader=st.sampled_from(sorted(MODEL_READERS)))
def test_model_output_is_read_in_linear_time_at_its_limit(shape, reader):
    text = text_of(shape, REPLY_MAX_CHARS)
    within_a_second(lambda: MODEL_READERS[reader](text))


def png(keyword: bytes, text: bytes) -> bytes:
    body = keyword + b"\x00" + text
    return (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(body)) + b"tEXt" + body
            + struct.pack(">I", zlib.crc32(b"tEXt" + body)) + struct.pack(">I", 0) + b"IEND" + b"\x00" * 4)


def webp(name: bytes, body: bytes) -> bytes:
    chunk = name + struct.pack("<I", len(body)) + body + b"\x00" * (len(body) & 1)
    return b"RIFF" + struct.pack("<I", len(chunk) + 4) + b"WEBP" + chunk


def exif_comment(text: bytes) -> bytes:
    value = b"ASCII\x00\x00\x00" + text
    ifd = struct.pack("<H", 1) + struct.pack("<HHII", 0x9286, 7, len(value), 26) + struct.pack("<I", 0)
    return b"Exif\x00\x00" + b"II*\x00" + struct.pack("<I", 8) + ifd + value


def card_files(text: str, limit: int) -> dict[str, bytes]:
    """The same text as every kind of card and persona file, each within `limit` bytes."""
    room = limit * 2 // 3
    word = text.encode("utf-8")[: room]
    fields = text[: room // 12]
    card = json.dumps({"spec": "chara_card_v2", "data": {"name": "Ann", "description": fields,
                                                          "personality": fields, "mes_example": fields}})
    persona = json.dumps({"type": "TinyPerson", "persona": {"name": "Ann", "occupation": fields,
                                                           "personality": {"traits": [fields]}}})
    return {"card.json": card.encode()[:limit], "persona.json": persona.encode()[:limit], "raw.json": word,
            "chara.png": png(b"chara", base64.b64encode(word[: room * 3 // 4])), "text.png": png(b"chara", word),
            "xmp.webp": webp(b"XMP ", word), "xmp-chara.webp": webp(b"XMP ", b"<x:chara>" + word),
            "exif.webp": webp(b"EXIF", exif_comment(word)), "card.charx": charx(card.encode()[:limit])}


def charx(card: bytes) -> bytes:
    import io
    import zipfile
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("card.json", card)
    return buffer.getvalue()


@TIMING
@given(shape=SHAPES)
def test_card_and_persona_files_are_read_in_linear_time_at_their_limit(tmp_path_factory, shape):
    folder = tmp_path_factory.mktemp("cards")
    for name, data in card_files(text_of(shape, MAX_SOURCE_BYTES), MAX_SOURCE_BYTES).items():
        assert len(data) <= MAX_SOURCE_BYTES, name
        (folder / name).write_bytes(data)
        within_a_second(lambda: read_source(folder / name))


@TIMING
@given(shape=SHAPES)
def test_character_files_are_read_in_linear_time_at_their_limit(tmp_path_factory, shape):
    folder = tmp_path_factory.mktemp("characters")
    text = text_of(shape, CHARACTER_FILE_MAX // 2 - 100)
    files = {"plain": text, "front": f"---\nname: Ann\ndescription: {text}\n---\n{text}",
             "heading": f"# Ann {text}\n\n## Voice\n{text}"}
    for slug, body in files.items():
        data = body.encode("utf-8")[:CHARACTER_FILE_MAX]
        (folder / f"{slug}.md").write_bytes(data)
        within_a_second(lambda: load_character(slug, [folder]))


@TIMING
@given(shape=SHAPES)
def test_scene_files_are_read_in_linear_time_at_their_limit(tmp_path_factory, shape):
    folder = tmp_path_factory.mktemp("scenes")
    text = text_of(shape, SCENE_MAX_BYTES // 2 - 100)
    for name, body in {"raw": text, "field": f"name: s\ncharacters: [ann]\nprompt: {json.dumps(text)}\n"}.items():
        (folder / f"{name}.yaml").write_bytes(body.encode("utf-8")[:SCENE_MAX_BYTES])
        within_a_second(lambda: load_scene(folder / f"{name}.yaml"))


@pytest.mark.parametrize("shape", [("nested", "[", "]"), ("repeated", "{", ""), ("word", "", "")])
def test_the_slowest_shapes_once_were_quadratic(shape):
    """The shapes that took minutes before (a speech header of nested brackets, a judge's answer of
    open braces, a roundtable answer of open brackets), each at the limit."""
    text = text_of(shape, REPLY_MAX_CHARS)
    for reader in ("a speech header", "judge decision", "roundtable answer"):
        within_a_second(lambda: MODEL_READERS[reader](text))


@pytest.mark.parametrize("unit", ["<", "< a", "<s", "<!", "<a>", "</a>", "<a/>", "`", "~", "<speech>", "<thinking>"])
def test_a_reply_of_tag_openings_is_read_a_run_at_a_time(unit):
    """A reply made of one tag-like piece repeated to the limit: each `<` that cannot open anything was
    read a character at a time (a million `<`: 2-3 s); a run of them is read as one piece of text."""
    text = (unit * (REPLY_MAX_CHARS // len(unit) + 1))[:REPLY_MAX_CHARS]
    for reader in ("tags", "tags streamed"):
        within_a_second(lambda: MODEL_READERS[reader](text))


def test_a_webp_card_in_its_xmp_is_still_found(tmp_path):
    """The XMP is read as XML: an attribute, an element (nested in `rdf:Alt`), an undeclared prefix."""
    card = base64.b64encode(json.dumps({"spec": "chara_card_v2", "data": {"name": "Webby", "description": "x"}}).encode())
    packets = [b'<x:xmpmeta><rdf:Description tav:chara="' + card + b'"/></x:xmpmeta>',
               b"<?xpacket begin='\xef\xbb\xbf'?><x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF><rdf:Description><tav:ccv3>"
               b"<rdf:Alt><rdf:li>" + card + b"</rdf:li></rdf:Alt></tav:ccv3></rdf:Description></rdf:RDF></x:xmpmeta>"
               b"<?xpacket end='w'?>"]
    for number, packet in enumerate(packets):
        (tmp_path / f"{number}.webp").write_bytes(webp(b"XMP ", packet))
        assert read_source(tmp_path / f"{number}.webp").name == "Webby"


def test_an_xmp_that_declares_entities_is_refused_naming_why(tmp_path):
    bomb = b'<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]><x:xmpmeta chara="&b;"/>'
    (tmp_path / "bomb.webp").write_bytes(webp(b"XMP ", bomb))
    with pytest.raises(ValueError, match="XMP metadata declares"):
        read_source(tmp_path / "bomb.webp")


@pytest.mark.parametrize("unit", ["DIRECTOR\u200b", "director" + "\u200b" * 50 + " ", "DIRECTOR " + "\u3000" * 50,
                                  "\uff24\uff29\uff32\uff25\uff23\uff34\uff2f\uff32 NOTE \u200b", "EVENT \u200b",
                                  "\x1b[", "\x1b]", "[", "\u202e", "SYSTEM\uff1a"])
def test_a_routed_line_is_written_in_linear_time_at_the_reply_limit(unit):
    """`one_line` (every speech routed to the other actors) over a reply at its limit made of the
    pieces its lookalike and escape patterns look at."""
    from promptdesk.core.protocol.lines import one_line

    text = (unit * (REPLY_MAX_CHARS // len(unit) + 1))[:REPLY_MAX_CHARS]
    within_a_second(lambda: one_line(text))


@pytest.mark.parametrize("shape", [("repeated", "...\n", ""), ("repeated", "{{//", ""), ("spaced", "{{", ""),
                                   ("repeated", "{{char}}", "")])
def test_document_ends_and_card_macros_are_read_in_linear_time(tmp_path, shape):
    """A front matter of `...` lines that never closes (each `...` may end a YAML document), and a card
    made of macro openings, each at its limit."""
    text = text_of(shape, CHARACTER_FILE_MAX // 2 - 100)
    (tmp_path / "ann.md").write_text(f"---\nname: Ann\ndescription: \"{text}\n---\nYou are Ann.\n")
    within_a_second(lambda: load_character("ann", [tmp_path]))
    fields = text_of(shape, MAX_FIELD_CHARS)
    (tmp_path / "card.json").write_text(json.dumps({"name": "Ann", "description": fields, "personality": fields,
                                                    "mes_example": fields, "first_mes": fields}))
    within_a_second(lambda: read_source(tmp_path / "card.json"))


@pytest.mark.parametrize("text", [
    "Well, " * 40 + "x.",                       # a lead word that also reads as a name: two ways per word
    "Again, " * 40 + "thanks",
    "So, Right, Okay, Now, " * 10 + "and so.",
    "Bye. " * (REPLY_MAX_CHARS // 5) + "Now.",  # every sentence a farewell, business resumed at the very end
    "\u201c" * REPLY_MAX_CHARS,                 # opening quotes that never close
    "\u2018" * REPLY_MAX_CHARS,
    "\u201ca \u2018b " * (REPLY_MAX_CHARS // 6),
    "さようなら、" + " " * REPLY_MAX_CHARS + "x",  # a farewell of another language, then a long run of blanks
    "李明、" + "再见" * (REPLY_MAX_CHARS // 2),
    "再见。" * (REPLY_MAX_CHARS // 3) + "还有",
], ids=["lead words", "lead words before thanks", "mixed lead words", "farewells then business", "open quotes",
        "open single quotes", "open quotes of two kinds", "another language's farewell then blanks",
        "another language's farewell repeated", "another language's farewells then business"])
def test_a_leave_taking_is_read_in_linear_time_at_the_reply_limit(text):
    """Every speech is read for a farewell (role C's natural close, the improviser's exits): lead
    words that are also names, sentences that each take leave and quotes that never close, each at the
    reply limit, or as many lead words as make the old reading take hours."""
    from promptdesk.core.protocol.leave_taking import takes_leave

    within_a_second(lambda: takes_leave(text, None, None))


@pytest.mark.parametrize("direction", ["He " + "finally " * 40 + "x", "Finally " * 40, "He " + "then finally " * 25 + "stays"],
                         ids=["subject and adverbs", "adverbs", "mixed adverbs"])
def test_a_stage_direction_is_read_for_an_exit_in_linear_time(direction):
    """An adverb that is also a `…ly` word (`finally`) repeated: each one could be read two ways."""
    from promptdesk.core.protocol.leave_taking import takes_leave

    within_a_second(lambda: takes_leave("", direction, f"*{direction}*"))
    within_a_second(lambda: takes_leave("", None, ("*" + direction + "* ") * (REPLY_MAX_CHARS // (len(direction) + 3))))


YAML_SHAPES = {
    "many keys": lambda n: "".join(f"k{i}: v\n" for i in range(n // 8)),
    "a long list": lambda n: "- a\n" * (n // 4),
    "a long flow list": lambda n: "[" + "a," * (n // 2 - 2) + "]",
    "many small mappings": lambda n: "".join(f"k{i}:\n  a: 1\n" for i in range(n // 16)),
}


@pytest.mark.parametrize("shape", sorted(YAML_SHAPES))
def test_yaml_files_of_many_values_are_read_within_a_second_at_their_limit(tmp_path, shape):
    """A scene, a strategy, a sweep plan or a plan of takes, a character's front matter and a roundtable
    answer, each as large as its limit allows, made of as many small values as fit: refused (a file a
    person writes holds far fewer) before building them all takes seconds."""
    from promptdesk.core.casting.scene_file import read_yaml
    from promptdesk.core.formats.roundtable.strategies import STRATEGY_MAX_BYTES, read_strategy

    text = YAML_SHAPES[shape](SCENE_MAX_BYTES - 64)
    (tmp_path / "scene.yaml").write_text(text)
    within_a_second(lambda: load_scene(tmp_path / "scene.yaml"))
    within_a_second(lambda: read_yaml(tmp_path / "scene.yaml", "Sweep plan"))
    (tmp_path / "debate.yaml").write_text(YAML_SHAPES[shape](STRATEGY_MAX_BYTES - 64))
    within_a_second(lambda: read_strategy(tmp_path / "debate.yaml"))
    (tmp_path / "ann.md").write_text("---\n" + YAML_SHAPES[shape](CHARACTER_FILE_MAX // 2) + "---\nYou are Ann.\n")
    within_a_second(lambda: load_character("ann", [tmp_path]))
    within_a_second(lambda: parse_answer("```yaml\n" + YAML_SHAPES[shape](REPLY_MAX_CHARS - 64) + "```"))


@pytest.mark.parametrize("blank", [" ", "\t", "\u3000", " \t"])
def test_a_heading_of_blanks_is_read_in_linear_time_at_the_character_file_limit(tmp_path, blank):
    """A profile's `# Name - Role` heading, and its `## Secret` heading (read for the evaluator), each
    followed by a run of blanks that never reaches a dash or a line's end: both expressions backtracked
    through the run (59 s for a heading of 100,000 spaces, 36 s for a secret's)."""
    from promptdesk.core.protocol.evaluation import secret_of

    run = blank * ((CHARACTER_FILE_MAX // 2 - 100) // len(blank.encode("utf-8")))
    (tmp_path / "ann.md").write_text(f"# Ann{run}x\n\nYou are Ann.\n", encoding="utf-8")
    within_a_second(lambda: load_character("ann", [tmp_path]))
    within_a_second(lambda: secret_of(f"# Ann\n\n## Secret{run}:{run}x\n"))
    assert secret_of("# Ann\n\n## Secret :\n\nShe forged it.\n## Voice\nx") == "She forged it."
    (tmp_path / "bo.md").write_text(f"# Bo Ko{run[:30]}-{run[:30]}Ferry Captain\n\nYou are Bo.\n", encoding="utf-8")
    assert load_character("bo", [tmp_path]).name == "Bo Ko"
