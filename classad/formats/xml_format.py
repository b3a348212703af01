"""ClassAds as HTCondor's XML (``condor_q -xml``, ``condor_status -xml``).

::

    <?xml version="1.0"?>
    <!DOCTYPE classads SYSTEM "classads.dtd">
    <classads>
    <c>
        <a n="Owner"><s>alice</s></a>
        <a n="Requirements"><e>TARGET.Cpus &gt;= 1</e></a>
    </c>
    </classads>

Values: ``<i>`` integer, ``<r>`` real (``%1.15E``, ``NaN``, ``INF``), ``<s>``
string (ClassAd escapes inside, then ``& < >`` as entities), ``<b v="t"/>``,
``<un/>``, ``<er/>``, ``<l>`` list, ``<c>`` nested ad, ``<e>`` any other
expression in new syntax, ``<at>``/``<rt>`` times.  This is not general XML:
HTCondor's reader is a small tag scanner, and so is this one (a real XML
parser would reject what HTCondor writes for some names and accept entities
HTCondor does not).  The tag scanner streams, and the ad builder keeps one
frame per open element, so only the current ad is in memory.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Optional, TextIO

from .. import ast
from ..ad import ClassAd
from ..errors import FormatError
from ..printing.printers import container_items, tool_items, unparse_new
from ..unparse import unparse_value
from ..values import ERROR, UNDEFINED, AbsTime, ListValue, RelTime, format_real, string_bytes
from .sources import LineSource
from .xml_builder import AdBuilder, decode_entities

ErrorHandler = Callable[[FormatError], None]

HEADER = '<?xml version="1.0"?>\n<!DOCTYPE classads SYSTEM "classads.dtd">\n<classads>\n'
FOOTER = "</classads>\n"

# ---- writing -------------------------------------------------------------------------------

_C_ESCAPES = {
    7: "\\a",
    8: "\\b",
    12: "\\f",
    10: "\\n",
    13: "\\r",
    9: "\\t",
    11: "\\v",
    0x5C: "\\\\",
    0x26: "&amp;",
    0x3C: "&lt;",
    0x3E: "&gt;",
}


def xml_escape(text: str) -> str:
    """``& < >`` as entities (all HTCondor escapes)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def string_body(s: str, quote: str = "") -> str:
    """The inside of an XML string: C escapes, octal for other bytes, entities for ``& < >``."""
    if s.isascii() and s.isprintable() and "\\" not in s and not (quote and quote in s):
        return xml_escape(s)
    out = []
    for b in string_bytes(s):
        esc = _C_ESCAPES.get(b)
        if esc is not None:
            out.append(esc)
        elif quote and b == ord(quote):
            out.append("\\" + quote)
        elif 0x20 <= b < 0x7F:
            out.append(chr(b))
        else:
            out.append("\\%03o" % b)
    return "".join(out)


def _real(x: float) -> str:
    if x == 0.0:
        return "0.0"  # HTCondor prints -0.0 as 0.0 here
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "INF" if x > 0 else "-INF"
    return format_real(x)


class _Writer:
    """HTCondor's XML printer with its line layout (``compact spacing`` off)."""

    def ad(self, items: list, indent: int) -> str:
        pad = " " * (indent + 4)
        out = ["<c>\n"]
        for name, node in items:
            out.append(f'{pad}<a n="{string_body(name, chr(34))}">{self.node(node, indent + 4)}</a>\n')
        out.append(" " * indent + "</c>")
        if indent == 0:
            out.append("\n")
        return "".join(out)

    def node(self, n: ast.Node, indent: int) -> str:
        if type(n) is ast.Literal:
            return self.value(n.value, indent)
        if type(n) is ast.Record:
            return self.ad(container_items(n.attrs), indent)
        if type(n) is ast.ListExpr:
            return "<l>" + "".join(self.node(i, indent) for i in n.items) + "</l>"
        return "<e>" + xml_escape(unparse_new(n)) + "</e>"

    def value(self, v: Any, indent: int) -> str:
        t = type(v)
        if t is str:
            return "<s>" + string_body(v) + "</s>"
        if t is bool:
            return '<b v="t"/>' if v else '<b v="f"/>'
        if t is int:
            return f"<i>{v}</i>"
        if t is float:
            return "<r>" + _real(v) + "</r>"
        if v is UNDEFINED:
            return "<un/>"
        if v is ERROR:
            return "<er/>"
        if t is AbsTime:
            return "<at>" + unparse_value(v)[len('absTime("') : -2] + "</at>"
        if t is RelTime:
            # HTCondor 25 stores a relative-time literal as its seconds (a real).
            return "<r>" + _real(float(v.secs)) + "</r>"
        if t is ListValue:
            if v.nodes is not None:
                return "<l>" + "".join(self.node(i, indent) for i in v.nodes) + "</l>"
            return "<l>" + "".join(self.value(i, indent) for i in v._values) + "</l>"
        if isinstance(v, ClassAd):
            return self.ad(container_items(v.node_items()), indent)
        return "<e>" + xml_escape(unparse_value(v)) + "</e>"


def write_ad(ad: ClassAd, items: Optional[list] = None) -> str:
    """One ad as HTCondor prints it in XML (``<c>`` ... ``</c>``), without the file header."""
    return _Writer().ad(container_items(ad.node_items()) if items is None else items, 0)


def write_ads(ads: Iterable[ClassAd], out: TextIO) -> int:
    """A whole XML file: header, the ads (attributes in tool order), footer.  Returns the count."""
    out.write(HEADER)
    count = 0
    for ad in ads:
        out.write(write_ad(ad, tool_items(ad.node_items())))
        count += 1
    out.write(FOOTER)
    return count


# ---- the tag scanner -----------------------------------------------------------------------


class Token(NamedTuple):
    """A tag (``kind`` start, end or empty) or a run of text, with its file position."""

    kind: str
    name: str
    attrs: dict
    text: str
    line: int
    column: int


_TAG_ATTR = re.compile(r"""([^\s=]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')""", re.S)


def _tag(body: str, line: int, column: int) -> Token:
    body = body.strip()
    if body.startswith("/"):
        kind, body = "end", body[1:].lstrip()
    elif body.endswith("/") and not body.startswith("?"):
        kind, body = "empty", body[:-1].rstrip()
    else:
        kind = "start"
    parts = body.split(None, 1)
    name = parts[0] if parts else ""
    attrs = {}
    if len(parts) > 1:
        for m in _TAG_ATTR.finditer(parts[1]):
            raw = m.group(2) if m.group(2) is not None else m.group(3)
            attrs[m.group(1)] = decode_entities(raw)
    return Token(kind, name, attrs, "", line, column)


# An attribute with one scalar value, written as HTCondor writes it: one token of kind
# "attr" instead of five (its name and the value's text as written, entities and all; the
# value's tag in ``attrs["tag"]``).  See AdBuilder.feed for what it stands for.
_SIMPLE_ATTR = re.compile(r'<a n="([^"\\&<>\n]*)"><(i|r|s|e)>([^<\n]*)</\2></a>')
_VALUE_TAGS = {tag: {"tag": tag} for tag in ("i", "r", "s", "e")}


def scan(src: LineSource) -> Iterator[Token]:
    """The tags and text runs of ``src`` in order; a tag may span lines."""
    buf = ""
    line, col = 1, 1  # position of buf[0]

    def advance(text: str) -> None:
        nonlocal line, col
        newlines = text.count("\n")
        if newlines:
            line += newlines
            col = len(text) - text.rfind("\n")
        else:
            col += len(text)

    simple = _SIMPLE_ATTR.match
    for chunk in src:
        buf += chunk
        pos = 0
        while pos < len(buf):
            if buf[pos] == "<":
                m = simple(buf, pos)
                if m is not None:
                    name, tag, text = m.groups()
                    yield Token("attr", name, _VALUE_TAGS[tag], text, line, col)
                    col += m.end() - pos  # the pattern holds no newline
                    pos = m.end()
                    continue
                if buf.startswith("<!--", pos):
                    end = buf.find("-->", pos + 4)
                    if end < 0:
                        break
                    advance(buf[pos : end + 3])
                    pos = end + 3
                    continue
                end = buf.find(">", pos + 1)
                if end < 0:
                    break
                yield _tag(buf[pos + 1 : end], line, col)
                advance(buf[pos : end + 1])
                pos = end + 1
            else:
                end = buf.find("<", pos)
                if end < 0:
                    break  # the text may go on in the next line
                yield Token("text", "", {}, decode_entities(buf[pos:end]), line, col)
                advance(buf[pos:end])
                pos = end
        buf = buf[pos:]
    if buf.strip():
        if buf.lstrip().startswith("<"):
            yield Token("text", "", {}, "<", line, col)  # an unclosed tag: let the builder object
        else:
            yield Token("text", "", {}, decode_entities(buf), line, col)


def iter_ads(src: LineSource, handle: ErrorHandler) -> Iterator[ClassAd]:
    """Ads from HTCondor XML; a broken ad goes to ``handle`` and is skipped."""
    builder = AdBuilder(src.name, handle)
    for token in scan(src):
        ad = builder.feed(token)
        if ad is not None:
            src.last_end = (src.lineno + 1, 0)
            yield ad
    builder.finish(src.lineno)


__all__ = [
    "write_ad",
    "write_ads",
    "iter_ads",
    "scan",
    "Token",
    "HEADER",
    "FOOTER",
    "string_body",
    "xml_escape",
    "decode_entities",
]
