"""Every reader of a file a person brings, fed random and adversarial bytes: it returns, or refuses
with its own documented error (exit 2 at the command line), never a traceback, within a bounded
time and memory. Readers: scene YAML, sweep plan, character front matter, card JSON/PNG/WebP and
TinyPerson JSON, `private.json`, `events.jsonl`."""

from __future__ import annotations

import base64
import json
import shutil
import struct
import time
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptdesk.core.casting.scene_file import load_scene, read_yaml
from promptdesk.core.characters.importers.model import ImportProblem
from promptdesk.core.characters.importers.read import read_source
from promptdesk.core.characters.loading import load_character
from promptdesk.core.cli.main import main
from promptdesk.core.errors import CharacterLoadError, InvalidConfig, NotARun
from promptdesk.core.record.private import read_private
from promptdesk.core.record.recorder import read_events

SECONDS = 2.0
"""The most one read may take (generous: the machine is shared; a real read takes milliseconds)."""
MEGABYTES = 64
"""The most Python memory one read may allocate at its peak (inputs here are at most a few KB,
so a reader that expands them, as an alias bomb would, goes far past this)."""
FUZZ = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

YAML_TOKENS = ["[", "]", "{", "}", ": ", ", ", "- ", "\n", "  ", "&a ", "*a", "&b ", "*b", "<<: ", "!!python/object ",
               "|\n", ">\n", "'", '"', "#", "name", "characters", "limits", "cast", "ann", "ben", "1", "~", "---\n",
               "\x1b[2J", "\t", "\\u0000", "%YAML 1.1\n", "? ", "2020-02-30", "!!float ", "!!int 0x", "!!binary ",
               "!!timestamp ", "!!set ", "!!omap ", "1e999"]
JSON_TOKENS = ["[", "]", "{", "}", ":", ",", '"name"', '"spec"', '"chara_card_v2"', '"data"', '"persona"',
               '"TinyPerson"', '"type"', '"x"', "1", "-1e999", "null", "true", '"\\ud800"', '"\\u001b[2J"', " ", "\n"]


def deep(opening: str, closing: str, depth: int) -> str:
    return opening * depth + closing * depth


def alias_bomb(levels: int, fan: int) -> str:
    lines = ["name: s", "characters: [ann, ben]", f"l0: &l0 [{','.join(['lol'] * fan)}]"]
    lines += [f"l{i}: &l{i} [{','.join([f'*l{i - 1}'] * fan)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def yaml_texts() -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(max_size=400),
        st.lists(st.sampled_from(YAML_TOKENS), max_size=120).map("".join),
        st.builds(alias_bomb, st.integers(2, 14), st.integers(2, 12)),
        st.builds(lambda d, k: f"name: s\ncharacters: [ann]\n{k}: " + deep("[", "]", d), st.integers(30, 3000),
                  st.sampled_from(["limits", "cast", "events", "x"])),
        st.builds(lambda d: "name: s\ncharacters: [ann]\nlimits: " + "{a: " * d + "1" + "}" * d, st.integers(30, 2000)),
    )


def json_texts() -> st.SearchStrategy[str]:
    card = json.dumps({"spec": "chara_card_v2", "data": {"name": "Sera", "description": "Heals."}})
    return st.one_of(
        st.text(max_size=400),
        st.lists(st.sampled_from(JSON_TOKENS), max_size=150).map("".join),
        st.builds(lambda d, o: '{"name": "x", "personality": "y", "data": ' + deep(*o, d) + "}",
                  st.integers(30, 120_000), st.sampled_from([("[", "]"), ('{"a":', "}")])),
        st.builds(lambda cut: card[:cut], st.integers(0, len(card))),
        st.builds(lambda at, b: card[:at] + b + card[at:], st.integers(0, len(card)), st.sampled_from(JSON_TOKENS)),
    )


def chunk(name: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + name + body + b"\0\0\0\0"


def png_bytes() -> st.SearchStrategy[bytes]:
    names = st.sampled_from([b"IHDR", b"IDAT", b"tEXt", b"zTXt", b"iTXt", b"IEND", b"xxxx"])
    bodies = st.one_of(st.binary(max_size=200), st.builds(lambda t: b"chara\0" + base64.b64encode(t.encode()),
                                                          json_texts()),
                       st.builds(lambda n: b"chara\0\0" + zlib.compress(b"{" * n), st.integers(0, 3_000_000)))
    chunks = st.lists(st.builds(chunk, names, bodies), max_size=6).map(b"".join)
    lying = st.builds(lambda n, rest: struct.pack(">I", n) + b"tEXt" + rest, st.integers(0, 2**32 - 1), st.binary(max_size=50))
    return st.builds(lambda body, tail: b"\x89PNG\r\n\x1a\n" + body + tail, chunks, st.one_of(st.just(b""), lying))


def webp_bytes() -> st.SearchStrategy[bytes]:
    def riff(chunks: bytes) -> bytes:
        return b"RIFF" + struct.pack("<I", len(chunks) + 4) + b"WEBP" + chunks

    exif = st.builds(lambda order, body: b"Exif\0\0" + order + body, st.sampled_from([b"II*\0", b"MM\0*"]), st.binary(max_size=120))
    body = st.one_of(st.binary(max_size=200), exif, st.builds(lambda t: f'<x chara="{t}"/>'.encode(), st.text(max_size=80)))
    name = st.sampled_from([b"EXIF", b"XMP ", b"VP8 ", b"VP8X", b"ALPH"])
    sized = st.builds(lambda n, b: n + struct.pack("<I", len(b)) + b, name, body)
    lying = st.builds(lambda n, b: n + struct.pack("<I", 2**31) + b, name, body)
    return st.lists(st.one_of(sized, lying), max_size=5).map(b"".join).map(riff)


def other_bytes() -> st.SearchStrategy[bytes]:
    magic = st.sampled_from([b"", b"\xff\xd8\xff", b"GIF89a", b"BM", b"II*\0", b"\0\0\0\x1cftypavif", b"<svg", b"\xef\xbb\xbf"])
    return st.builds(lambda m, rest: m + rest, magic, st.binary(max_size=300))


def bounded(read: Callable[[], object], allowed: tuple[type[BaseException], ...]) -> None:
    """`read()` returns, or raises one of `allowed`, within `SECONDS` and `MEGABYTES`."""
    tracemalloc.start()
    started = time.perf_counter()
    try:
        read()
    except allowed:
        pass
    finally:
        took = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert took < SECONDS, f"took {took:.2f} s"
    assert peak < MEGABYTES * 1_048_576, f"peaked at {peak / 1_048_576:.0f} MB"


@pytest.fixture(scope="module")
def place(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def as_bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


@FUZZ
@given(st.one_of(yaml_texts().map(as_bytes), st.binary(max_size=400)))
def test_scene_files(place, data):
    (place / "scene.yaml").write_bytes(data)
    bounded(lambda: load_scene(place / "scene.yaml"), (InvalidConfig,))


@FUZZ
@given(st.one_of(yaml_texts().map(as_bytes), st.binary(max_size=400)))
def test_sweep_plans(place, data):
    (place / "sweep.yaml").write_bytes(data)
    bounded(lambda: read_yaml(place / "sweep.yaml", "Sweep plan"), (InvalidConfig,))


@FUZZ
@given(st.one_of(yaml_texts().map(lambda t: as_bytes(f"---\n{t}\n---\nBody.\n")), st.binary(max_size=400),
                 st.text(max_size=300).map(as_bytes)))
def test_character_files(place, data):
    folder = place / "characters"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    (folder / "ann.md").write_bytes(data)
    (folder / "other.md").write_bytes(data)
    bounded(lambda: load_character("ann", [folder]), (CharacterLoadError,))


@FUZZ
@given(st.one_of(json_texts().map(as_bytes), png_bytes(), webp_bytes(), other_bytes()))
def test_cards_and_personas(place, data):
    (place / "card").write_bytes(data)
    bounded(lambda: read_source(place / "card"), (ImportProblem,))


@settings(parent=FUZZ, max_examples=15, suppress_health_check=[*FUZZ.suppress_health_check,
                                                               HealthCheck.function_scoped_fixture])
@given(data=st.one_of(json_texts().map(as_bytes), png_bytes(), webp_bytes()))
def test_the_import_command_exits_0_or_2(place, capsys, data):
    (place / "card.json").write_bytes(data)
    shutil.rmtree(place / "imported", ignore_errors=True)
    codes: list[int] = []
    bounded(lambda: codes.append(main(["import", str(place / "card.json"), "--to", str(place / "imported")])), ())
    assert codes in ([0], [2])
    assert "Traceback" not in capsys.readouterr().err


def run_folder(place: Path) -> Path:
    run = place / "run"
    run.mkdir(exist_ok=True)
    (run / "events.jsonl").touch()
    return run


@FUZZ
@given(st.one_of(json_texts().map(as_bytes), st.binary(max_size=400),
                 st.builds(lambda cast: json.dumps({"version": 1, "cast": cast}).encode(),
                           st.recursive(st.none() | st.integers() | st.text(max_size=5),
                                        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                                        max_leaves=10))))
def test_private_records(place, data):
    run = run_folder(place)
    (run / "private.json").write_bytes(data)
    bounded(lambda: read_private(run), (NotARun,))


@FUZZ
@given(st.lists(st.one_of(json_texts().map(as_bytes), st.binary(max_size=200),
                          st.just(b'{"t": 1, "from": "coordinator", "type": "note", "text": "hi"}')), max_size=8))
def test_event_logs(place, lines):
    run = run_folder(place)
    (run / "events.jsonl").write_bytes(b"\n".join(lines))
    bounded(lambda: read_events(run, warn=lambda _message: None), ())
