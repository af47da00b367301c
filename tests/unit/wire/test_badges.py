"""Status badges without IO: which badge each build status shows, and the SVG it is drawn as."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

import pytest

from chalicelib.core.status import Status
from chalicelib.domain.projects.badges import (
    GREEN,
    GREY,
    RED,
    YELLOW,
    Badge,
    BadgeTexts,
    badge_for_status,
    new_badge_id,
)
from chalicelib.errors import Invalid
from chalicelib.wire.badges import MAX_BADGE_TEXT, badge_svg, parse_badge_query, text_width

SVG = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize(
    ("status", "message", "color"),
    [
        (None, "no builds", GREY),
        (Status.QUEUED, "queued", GREY),
        (Status.STARTING, "starting", YELLOW),
        (Status.RUNNING, "running", YELLOW),
        (Status.CANCELLING, "cancelling", YELLOW),
        (Status.SUCCESS, "passing", GREEN),
        (Status.FAILED, "failing", RED),
        (Status.CANCELLED, "cancelled", GREY),
        ("paused", "paused", GREY),  # a status from a later version is shown as it is
    ],
)
def test_every_build_status_has_its_badge(status: str | None, message: str, color: str) -> None:
    assert badge_for_status(status) == Badge(message, color)


def test_chosen_texts_replace_passing_failing_and_the_pending_statuses_but_not_cancelled() -> None:
    texts = BadgeTexts(passing="ok", failing="broken", pending="working")
    assert badge_for_status(Status.SUCCESS, texts).message == "ok"
    assert badge_for_status(Status.FAILED, texts).message == "broken"
    for status in (Status.QUEUED, Status.STARTING, Status.RUNNING, Status.CANCELLING):
        assert badge_for_status(status, texts).message == "working"
    assert badge_for_status(Status.CANCELLED, texts).message == "cancelled"
    assert badge_for_status(None, texts).message == "no builds"


def test_badge_ids_are_128_random_bits_in_hex() -> None:
    ids = {new_badge_id() for _ in range(100)}
    assert len(ids) == 100
    assert all(len(badge_id) == 32 and int(badge_id, 16) >= 0 for badge_id in ids)


def test_the_svg_is_well_formed_and_its_halves_fit_their_texts() -> None:
    root = ElementTree.fromstring(badge_svg(Badge("passing", GREEN)))
    rects = root.findall(f"{SVG}g/{SVG}rect")
    label, message = (int(rect.get("width", "0")) for rect in rects[:2])
    assert [rect.get("fill") for rect in rects[:2]] == ["#555", GREEN]
    assert int(root.get("width", "0")) == label + message
    assert root.get("height") == "20"
    assert [text.text for text in root.iter(f"{SVG}text")] == ["build", "build", "passing", "passing"]
    assert root.findtext(f"{SVG}title") == "build: passing"
    assert message > label  # "passing" is longer than "build"


def test_text_width_grows_with_the_text_and_knows_narrow_from_wide_letters() -> None:
    assert text_width("") == 0
    assert text_width("iiii") < text_width("aaaa") < text_width("mmmm")
    assert text_width("no builds") > text_width("passing")
    assert 35 <= text_width("passing") <= 50  # shields measures 43 px in Verdana 11px


def test_retina_doubles_the_size_of_the_same_drawing() -> None:
    plain = ElementTree.fromstring(badge_svg(Badge("failing", RED)))
    retina = ElementTree.fromstring(badge_svg(Badge("failing", RED), retina=True))
    assert int(retina.get("width", "0")) == 2 * int(plain.get("width", "0"))
    assert retina.get("height") == "40"
    assert retina.get("viewBox") == plain.get("viewBox") == f"0 0 {plain.get('width')} 20"


def test_chosen_texts_are_escaped_and_stripped_of_what_xml_cannot_carry() -> None:
    query = parse_badge_query({"passingText": '<b>"ok" & </script>\x00\x07', "svg": "true", "retina": "TRUE"})
    assert query.retina
    svg = badge_svg(badge_for_status(Status.SUCCESS, query.texts))
    root = ElementTree.fromstring(svg)
    assert list(root.iter(f"{SVG}text"))[-1].text == '<b>"ok" & </script>'
    assert "<b>" not in svg and "</script>" not in svg


def test_empty_texts_keep_the_defaults_and_long_ones_are_refused() -> None:
    assert parse_badge_query({"passingText": "  ", "pendingText": ""}).texts == BadgeTexts()
    assert parse_badge_query(None) == parse_badge_query({})
    assert not parse_badge_query({"retina": "yes"}).retina
    with pytest.raises(Invalid, match="failingText"):
        parse_badge_query({"failingText": "x" * (MAX_BADGE_TEXT + 1)})
