"""Card images are read from their metadata, never their pixels: a PNG's text chunks are walked
(a card declaring 60,000 x 60,000 pixels, or with broken pixel data, reads at once, and a
compression bomb in a text chunk is refused), a WebP card is read from its EXIF UserComment or XMP,
and every other image type is refused as what it is."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path

import pytest
from PIL import Image

from promptdesk.core.cli.main import main
from helpers import CHARACTERS
from in_child import in_child
from test_import import b64, png, v2


def chunk(name: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + name + body + struct.pack(">I", zlib.crc32(name + body))


def raw_png(width: int, height: int, idat: bytes, after: bytes = b"", before: bytes = b"") -> bytes:
    """A PNG written chunk by chunk: 8-bit grey, the given pixel data, text chunks before or after it
    (SillyTavern writes its `chara` chunk after the pixels, just before IEND)."""
    header = chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
    return b"\x89PNG\r\n\x1a\n" + header + before + chunk(b"IDAT", idat) + after + chunk(b"IEND", b"")


def text_chunk(key: str, value: str) -> bytes:
    return chunk(b"tEXt", key.encode("latin-1") + b"\x00" + value.encode("latin-1"))


def import_code(path: Path, to: Path) -> int:
    return main(["import", str(path), "--to", str(to)])


def test_a_card_declaring_sixty_thousand_pixels_square_imports_without_decoding_them(tmp_path):
    """Pillow refuses such an image as a decompression bomb (a raw traceback before); the card only
    needs its text chunk."""
    card = tmp_path / "huge.png"
    card.write_bytes(raw_png(60_000, 60_000, zlib.compress(b"\x00" * 1000), after=text_chunk("chara", b64(v2()))))
    outcome = in_child(lambda: import_code(card, tmp_path / "c"), seconds=10, memory_mb=200)
    assert outcome.value == "0", outcome
    assert "guardian of the glade" in (tmp_path / "c" / "seraphina" / "profile.md").read_text()


def test_a_large_card_is_read_in_little_memory(tmp_path):
    """8,000 x 8,000 pixels (64 MB decoded) in a small file: reading its card takes a few MB at most."""
    squeeze = zlib.compressobj(9)
    row = b"\x00" * 8_001
    idat = b"".join(squeeze.compress(row) for _ in range(8_000)) + squeeze.flush()
    card = tmp_path / "big.png"
    card.write_bytes(raw_png(8_000, 8_000, idat, after=text_chunk("chara", b64(v2()))))
    outcome = in_child(lambda: import_code(card, tmp_path / "c"), seconds=10, memory_mb=40)
    assert outcome.value == "0", outcome


def test_a_card_whose_pixel_data_is_broken_still_imports(tmp_path):
    """The pixels are never decoded, so damage there does not matter."""
    card = tmp_path / "broken.png"
    card.write_bytes(raw_png(64, 64, b"not zlib at all", after=text_chunk("chara", b64(v2()))))
    assert import_code(card, tmp_path / "c") == 0


def test_a_card_in_a_compressed_itxt_chunk_imports(tmp_path):
    from PIL.PngImagePlugin import PngInfo
    info = PngInfo()
    info.add_itxt("chara", b64(v2(name="Zipped")), zip=True)
    Image.new("L", (2, 2)).save(tmp_path / "z.png", "PNG", pnginfo=info)
    assert import_code(tmp_path / "z.png", tmp_path / "c") == 0
    assert (tmp_path / "c" / "zipped" / "profile.md").exists()


def test_a_compression_bomb_in_a_text_chunk_is_refused(tmp_path, capsys):
    bomb = chunk(b"zTXt", b"chara\x00\x00" + zlib.compress(b"A" * 50_000_000, 9))
    card = tmp_path / "bomb.png"
    card.write_bytes(raw_png(2, 2, zlib.compress(b"\x00" * 6), before=bomb))
    assert import_code(card, tmp_path / "c") == 2
    assert "compression bomb" in capsys.readouterr().err


def test_a_png_without_a_card_names_a_few_of_its_chunks_only(tmp_path, capsys):
    many = b"".join(text_chunk(f"k{i:03}", "x") for i in range(40))
    (tmp_path / "art.png").write_bytes(raw_png(2, 2, zlib.compress(b"\x00" * 6), before=many))
    assert import_code(tmp_path / "art.png", tmp_path / "c") == 2
    err = capsys.readouterr().err
    assert "no character card" in err and "k000" in err and "and 30 more" in err and "k039" not in err


def test_a_png_text_chunk_with_a_keyword_of_megabytes_is_named_cut_not_echoed_whole(tmp_path, capsys):
    """A text chunk with no keyword separator is all keyword: the refusal names its first 79 characters
    (PNG's longest keyword) and its length, not 3 MB of it on one line of stderr."""
    (tmp_path / "art.png").write_bytes(raw_png(2, 2, zlib.compress(b"\x00" * 6),
                                               before=chunk(b"tEXt", b"c" * 3_000_000) + text_chunk("Title", "x")))
    assert import_code(tmp_path / "art.png", tmp_path / "c") == 2
    err = capsys.readouterr().err
    assert "no character card" in err and len(err) < 1_000, len(err)
    assert "c" * 79 + "… (3,000,000 characters)" in err and "Title" in err


def exif_with_comment(comment: bytes, header: bytes = b"ASCII\x00\x00\x00") -> Image.Exif:
    exif = Image.Exif()
    exif.get_ifd(0x8769)[0x9286] = header + comment
    return exif


def webp(path: Path, **metadata) -> Path:
    """A real 2x2 WebP written by Pillow, with the given EXIF/XMP."""
    Image.new("RGB", (2, 2), (30, 30, 200)).save(path, "WEBP", **metadata)
    return path


CARD_JSON = json.dumps(v2(name="Webby")).encode()


@pytest.mark.parametrize("metadata", [
    {"exif": exif_with_comment(CARD_JSON)},
    {"exif": exif_with_comment(base64.b64encode(CARD_JSON))},
    {"exif": exif_with_comment(",".join(str(b) for b in CARD_JSON).encode())},
    {"exif": exif_with_comment(CARD_JSON.decode().encode("utf-16-le"), b"UNICODE\x00")},
    {"xmp": f'<x:xmpmeta><rdf:Description xmlns:tav="t" tav:chara="{b64(v2(name="Webby"))}"/></x:xmpmeta>'.encode()},
    {"xmp": f"<x:xmpmeta><rdf:Description><tav:ccv3>{b64(v2(name='Webby'))}</tav:ccv3></rdf:Description></x:xmpmeta>".encode()},
], ids=["exif-json", "exif-base64", "exif-byte-list", "exif-unicode", "xmp-attribute", "xmp-element"])
def test_a_webp_card_imports(tmp_path, capsys, metadata):
    card = webp(tmp_path / "webby.webp", **metadata)
    assert import_code(card, tmp_path / "c") == 0, capsys.readouterr().err
    assert "guardian of the glade" in (tmp_path / "c" / "webby" / "profile.md").read_text()


def test_a_webp_card_cast_directly_plays(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cards").mkdir()
    webp(tmp_path / "cards" / "webby.webp", exif=exif_with_comment(CARD_JSON))
    (tmp_path / "s.yaml").write_text("name: s\nprompt: A scene.\ncharacters: [cards/webby.webp, alice]\n")
    run = tmp_path / "run"
    assert main(["--batch", "s.yaml", "--isolation", "a", "--coordinator", "C", "--max-beats", "2", "--seed", "1",
                 "--characters-dir", str(CHARACTERS), "--journals", "none", "--out", str(run), "--quiet"]) == 0
    assert "Webby" in (run / "notes.md").read_text()


def test_a_webp_without_a_card_and_a_cut_webp_are_refused(tmp_path, capsys):
    plain = webp(tmp_path / "plain.webp")
    assert import_code(plain, tmp_path / "c") == 2
    assert "this WebP holds no character card" in capsys.readouterr().err
    (tmp_path / "cut.webp").write_bytes(plain.read_bytes()[:30])
    assert import_code(tmp_path / "cut.webp", tmp_path / "c") == 2
    assert "not a readable WebP" in capsys.readouterr().err


@pytest.mark.parametrize("suffix, fmt, name", [(".jpg", "JPEG", "JPEG"), (".gif", "GIF", "GIF"), (".bmp", "BMP", "BMP"),
                                               (".tiff", "TIFF", "TIFF")])
def test_every_other_image_type_is_refused_as_what_it_is(tmp_path, capsys, suffix, fmt, name):
    image = tmp_path / f"card{suffix}"
    Image.new("RGB", (2, 2)).save(image, fmt)
    assert import_code(image, tmp_path / "c") == 2
    assert f"a {name} image; a character card is a PNG or WebP image or a JSON file" in capsys.readouterr().err


def test_another_image_type_cast_directly_says_what_it_is_not_the_slug_rule(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Image.new("RGB", (2, 2)).save(tmp_path / "sera.jpg", "JPEG")
    (tmp_path / "s.yaml").write_text("name: s\nprompt: A scene.\ncharacters: [sera.jpg, alice]\n")
    assert main(["--batch", "s.yaml", "--isolation", "a", "--coordinator", "C", "--characters-dir", str(CHARACTERS)]) == 2
    err = capsys.readouterr().err
    assert "Character 'sera' (a card)" in err and "a JPEG image" in err and "slug" not in err


def test_a_png_card_written_by_pillow_still_imports(tmp_path):
    assert import_code(png(tmp_path / "p.png", chara=b64(v2(name="Pilly"))), tmp_path / "c") == 0


@pytest.mark.parametrize("encode", [
    lambda raw: base64.encodebytes(raw).decode(),                       # wrapped at 76 columns (Python's encodebytes)
    lambda raw: base64.b64encode(raw + b" ").decode().rstrip("="),      # padding left off
    lambda raw: base64.urlsafe_b64encode(raw).decode(),                 # the URL-safe alphabet
], ids=["wrapped", "unpadded", "url-safe"])
def test_a_chara_chunk_in_base64_as_other_tools_write_it_imports(tmp_path, capsys, encode):
    """SillyTavern decodes a card's base64 as Node does (line breaks, missing padding and the URL-safe
    alphabet all read), so cards written that way are in circulation."""
    raw = json.dumps(v2(name="Wrapped", description="Keeps the ledger. " * 20 + "Café??>>?"), ensure_ascii=False).encode()
    assert {"+", "/"} & set(base64.b64encode(raw).decode())  # so the URL-safe form differs
    card = tmp_path / "w.png"
    card.write_bytes(raw_png(2, 2, zlib.compress(b"\x00" * 6), after=text_chunk("chara", encode(raw))))
    assert import_code(card, tmp_path / "c") == 0, capsys.readouterr().err
    assert "Café?" in (tmp_path / "c" / "wrapped" / "profile.md").read_text()


def test_a_chunk_keyword_in_other_capitals_is_read_as_sillytavern_reads_it(tmp_path, capsys):
    card = tmp_path / "k.png"
    card.write_bytes(raw_png(2, 2, zlib.compress(b"\x00" * 6), after=text_chunk("Chara", b64(v2(name="Capital")))))
    assert import_code(card, tmp_path / "c") == 0, capsys.readouterr().err
    assert (tmp_path / "c" / "capital" / "profile.md").is_file()


def test_of_two_chara_chunks_the_first_is_read_and_the_import_says_so(tmp_path, capsys):
    """SillyTavern reads the first `chara` chunk; reading the last would import a different character
    from the one the card shows there. The second is not read silently: the import says it was there."""
    two = text_chunk("chara", b64(v2(name="First Card"))) + text_chunk("chara", b64(v2(name="Second Card")))
    card = tmp_path / "two.png"
    card.write_bytes(raw_png(2, 2, zlib.compress(b"\x00" * 6), after=two))
    assert import_code(card, tmp_path / "c") == 0
    err = capsys.readouterr().err
    assert (tmp_path / "c" / "first-card").is_dir() and not (tmp_path / "c" / "second-card").exists()
    assert "2 `chara` chunks" in err and "the first" in err, err


def test_an_animated_png_card_imports(tmp_path):
    """An APNG (animation chunks `acTL`, `fcTL`, `fdAT` among the text chunks) is a PNG card as well."""
    from PIL.PngImagePlugin import PngInfo
    info = PngInfo()
    info.add_text("chara", b64(v2(name="Animated Ann")))
    frames = [Image.new("RGB", (4, 4), (60 * i, 0, 0)) for i in range(3)]
    frames[0].save(tmp_path / "a.png", save_all=True, append_images=frames[1:], duration=100, pnginfo=info)
    assert b"fdAT" in (tmp_path / "a.png").read_bytes()
    assert import_code(tmp_path / "a.png", tmp_path / "c") == 0
    assert (tmp_path / "c" / "animated-ann" / "profile.md").is_file()


def charx(path: Path, card: dict | None, **extra: bytes) -> Path:
    """A CharX file (CCv3): a zip holding `card.json` at its root, and assets beside it."""
    import zipfile
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        if card is not None:
            archive.writestr("card.json", json.dumps(card))
        for name, data in extra.items():
            archive.writestr(name.replace("__", "/"), data)
    return path


def test_a_charx_card_imports_and_is_cast_directly(tmp_path, monkeypatch, capsys):
    card = {"spec": "chara_card_v3", "spec_version": "3.0",
            "data": {**v2(name="Zipped Zed")["data"], "assets": [{"type": "icon", "uri": "embeded://assets/icon/images/main.png",
                                                               "name": "main", "ext": "png"}]}}
    path = charx(tmp_path / "zed.charx", card, assets__icon__images__main_png=b"\x89PNG\r\n\x1a\n")
    assert import_code(path, tmp_path / "c") == 0, capsys.readouterr().err
    assert "card-v3 from zed.charx" in (tmp_path / "c" / "zipped-zed" / "profile.md").read_text()
    assert "assets" in capsys.readouterr().err  # named as dropped
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text("name: s\nprompt: A scene.\ncharacters: [zed.charx, alice]\n")
    assert main(["--batch", "s.yaml", "--isolation", "a", "--coordinator", "C", "--max-beats", "1", "--seed", "1",
                 "--characters-dir", str(CHARACTERS), "--journals", "none", "--out", str(tmp_path / "run"), "--quiet"]) == 0
    assert "Zipped Zed" in (tmp_path / "run" / "notes.md").read_text()


def test_a_zip_that_is_not_a_charx_and_a_zip_bomb_are_refused_naming_why(tmp_path, capsys):
    assert import_code(charx(tmp_path / "other.charx", None, readme_txt=b"hello"), tmp_path / "c") == 2
    assert "no `card.json` at its root" in capsys.readouterr().err
    bomb = charx(tmp_path / "bomb.charx", None)
    import zipfile
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("card.json", b" " * 50_000_000)
    assert import_code(bomb, tmp_path / "c") == 2
    assert "card.json" in capsys.readouterr().err and not (tmp_path / "c").exists()
