"""The card a Microsoft Teams channel shows for a build: no IO."""

from __future__ import annotations

from chalicelib.notify.notifiers.teams import MAX_TEXT_CHARS, card


def test_a_passed_build_is_green_and_a_failed_one_red_with_a_button_to_the_build() -> None:
    passed = card("Build 1.0.3 passed", "main", True, "https://ci.example.com/build/1.0.3")["attachments"][0]
    failed = card("Build 1.0.4 failed", "main", False, "https://ci.example.com/build/1.0.4")["attachments"][0]

    assert (passed["content"]["body"][0]["color"], failed["content"]["body"][0]["color"]) == ("Good", "Attention")
    assert passed["content"]["actions"][0]["url"] == "https://ci.example.com/build/1.0.3"


def test_a_link_that_is_a_path_alone_gets_no_button_and_long_text_is_cut() -> None:
    content = card("Build 1.0.3 passed", "x" * (MAX_TEXT_CHARS + 10), True, "/api/projects/a/b")["attachments"][0][
        "content"
    ]

    assert "actions" not in content
    assert len(content["body"][1]["text"]) == MAX_TEXT_CHARS
