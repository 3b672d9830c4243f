"""The card fields of a WebP's XMP packet, read with a bounded XML parser in one linear pass.

XMP is XML, and untrusted: it is read with `defusedxml`'s SAX parser (expat underneath: linear in the
packet's length whatever its shape; an entity declaration, a DTD fetch or an external reference is
refused rather than expanded). Namespaces are not resolved, so a packet whose writer forgot to declare
a prefix still reads; a field is found by its local name (`tav:chara` and `chara` alike), as an
attribute (`<rdf:Description tav:chara="..."/>`) or as an element's text (`<tav:ccv3>...</tav:ccv3>`,
nested `rdf:Alt`/`rdf:li` included). The first occurrence of each field wins.

The packet is fed to the parser in one piece (fed in slices, expat would scan a long token again at
every slice), and the walk stops at `MAX_ELEMENTS` elements or `MAX_DEPTH` levels: a card's XMP has
a handful, a packet of a million empty elements would cost seconds of callbacks for nothing.
"""

from __future__ import annotations

from xml.sax.handler import ContentHandler


MAX_ELEMENTS = 50_000
"""Elements read before the packet is refused (a photo editor's XMP has hundreds at most)."""
MAX_DEPTH = 100
"""Levels of nesting read before the packet is refused (XMP uses five or six)."""


class XmpProblem(ValueError):
    """The XMP packet is not XML that can be read safely; the message says what is wrong with it."""


def _local(name: str) -> str:
    return name.rpartition(":")[2]


class _Fields(ContentHandler):
    """Collects the wanted fields (attributes or element text) as the parser walks the packet."""

    def __init__(self, wanted: tuple[str, ...]) -> None:
        super().__init__()
        self.wanted = wanted
        self.found: dict[str, str] = {}
        self._open: tuple[str, int] | None = None
        self._depth = 0
        self._elements = 0
        self._parts: list[str] = []

    def startElement(self, name: str, attrs) -> None:  # noqa: N802 - the SAX interface's name
        self._depth += 1
        self._elements += 1
        if self._elements > MAX_ELEMENTS or self._depth > MAX_DEPTH:
            raise XmpProblem(f"its XMP metadata holds more than {MAX_ELEMENTS:,} elements or is nested deeper "
                             f"than {MAX_DEPTH} levels; a card's has a few")
        for attribute in attrs.getNames():
            key = _local(attribute)
            if key in self.wanted and key not in self.found:
                self.found[key] = attrs.getValue(attribute)
        key = _local(name)
        if self._open is None and key in self.wanted and key not in self.found:
            self._open, self._parts = (key, self._depth), []

    def characters(self, content: str) -> None:
        if self._open is not None:
            self._parts.append(content)

    def endElement(self, name: str) -> None:  # noqa: N802 - the SAX interface's name
        if self._open is not None and self._open[1] == self._depth:
            self.found[self._open[0]] = "".join(self._parts)
            self._open, self._parts = None, []
        self._depth -= 1


def xmp_fields(packet: bytes, wanted: tuple[str, ...]) -> dict[str, str]:
    """{field: text} for each `wanted` field found in an XMP packet; `XmpProblem` when the packet is
    not well-formed XML or declares entities or a DTD that fetches anything."""
    from xml.sax import SAXException

    import defusedxml.sax
    from defusedxml import DefusedXmlException

    handler = _Fields(wanted)
    parser = defusedxml.sax.make_parser()
    parser.setContentHandler(handler)
    try:
        parser.feed(packet.rstrip(b"\x00 \t\r\n"))
        parser.close()
    except DefusedXmlException as exc:
        raise XmpProblem(f"its XMP metadata declares what an untrusted file may not ({type(exc).__name__})") from None
    except SAXException as exc:
        raise XmpProblem(f"its XMP metadata is not well-formed XML ({exc})") from None
    return handler.found
