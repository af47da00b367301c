"""The status badge as SVG: a shields.io-style flat badge ("build | passing"), and the query that words it.

No font is at hand to measure text, so widths come from a rough table of Verdana 11px advances; each text
also carries ``textLength``, so a renderer with other metrics still fits it into its half.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from xml.sax.saxutils import escape

from chalicelib.domain.projects.badges import Badge, BadgeTexts
from chalicelib.domain.shared.validation import too_long

LABEL = "build"
MAX_BADGE_TEXT = 40  # passingText & co.: a word or two, not a paragraph
_LABEL_COLOR = "#555"
_PADDING = 10  # around each half's text, as shields draws it
_FONT = "Verdana,Geneva,DejaVu Sans,sans-serif"
_NARROW = frozenset("ijlI.,:;!|' ")
_SEMI_NARROW = frozenset('frt()[]{}-/\\"`')
_WIDE = frozenset("mwMW%@")


@dataclass(frozen=True)
class BadgeQuery:
    """What a badge URL's query asks for: the words, and twice the size (``retina``)."""

    texts: BadgeTexts
    retina: bool = False


def parse_badge_query(query: Mapping[str, str] | None) -> BadgeQuery:
    """AppVeyor's badge parameters; ``svg`` is accepted and needs nothing (every badge here is SVG)."""
    query = query or {}
    texts = BadgeTexts(
        passing=_badge_text(query, "passingText") or "passing",
        failing=_badge_text(query, "failingText") or "failing",
        pending=_badge_text(query, "pendingText"),
    )
    return BadgeQuery(texts, retina=query.get("retina", "").lower() == "true")


def _badge_text(query: Mapping[str, str], name: str) -> str | None:
    text = _xml_chars(query.get(name, "")).strip()
    if len(text) > MAX_BADGE_TEXT:
        raise too_long(name, MAX_BADGE_TEXT)
    return text or None


def _xml_chars(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot carry (control characters, lone surrogates)."""
    return "".join(
        char
        for char in text
        if char in "\t\n\r" or (" " <= char <= "\ud7ff") or ("\ue000" <= char <= "\ufffd") or char > "\uffff"
    )


def text_width(text: str) -> int:
    """Roughly how wide ``text`` is in Verdana 11px, in pixels."""
    width = 0.0
    for char in text:
        if char in _NARROW:
            width += 3.5
        elif char in _SEMI_NARROW:
            width += 4.5
        elif char in _WIDE:
            width += 10.0
        elif unicodedata.east_asian_width(char) in ("W", "F"):
            width += 11.0
        elif char.isupper():
            width += 7.8
        else:
            width += 6.8
    return round(width)


def badge_svg(badge: Badge, retina: bool = False) -> str:
    """The badge as an SVG document (twice as big with ``retina``, the same drawing)."""
    left, right = text_width(LABEL) + _PADDING, text_width(badge.message) + _PADDING
    width = left + right
    scale = 2 if retina else 1
    label, message = escape(LABEL), escape(badge.message, {'"': "&quot;"})
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width * scale}" height="{20 * scale}" '
        f'viewBox="0 0 {width} 20" role="img" aria-label="{label}: {message}">'
        f"<title>{label}: {message}</title>"
        '<linearGradient id="s" x2="0" y2="100%">'
        '<stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/>'
        "</linearGradient>"
        f'<clipPath id="r"><rect width="{width}" height="20" rx="3" fill="#fff"/></clipPath>'
        f'<g clip-path="url(#r)"><rect width="{left}" height="20" fill="{_LABEL_COLOR}"/>'
        f'<rect x="{left}" width="{right}" height="20" fill="{badge.color}"/>'
        f'<rect width="{width}" height="20" fill="url(#s)"/></g>'
        f'<g fill="#fff" text-anchor="middle" font-family="{_FONT}" text-rendering="geometricPrecision" font-size="11">'
        f"{_text(label, left / 2, left - _PADDING)}{_text(message, left + right / 2, right - _PADDING)}"
        "</g></svg>"
    )


def _text(escaped: str, middle: float, length: int) -> str:
    """A text with its shadow, centred on ``middle``."""
    attributes = f'x="{middle:g}" textLength="{length}" lengthAdjust="spacingAndGlyphs"'
    return (
        f'<text {attributes} y="15" fill="#010101" fill-opacity=".3">{escaped}</text>'
        f'<text {attributes} y="14">{escaped}</text>'
    )
