"""SecretMask: no secret value, nor a line of one, nor its base64 form, survives in a log line."""

from __future__ import annotations

import base64

from chalicelib.protocol.logstream import MAX_LINE_BYTES, SecretMask, split_line


def test_secret_is_replaced_wherever_it_occurs() -> None:
    mask = SecretMask(["hunter2"])

    assert mask("password=hunter2 and again hunter2.") == "password=[secure] and again [secure]."


def test_text_without_secrets_is_unchanged() -> None:
    assert SecretMask(["hunter2"])("nothing to hide here") == "nothing to hide here"
    assert SecretMask([])("nothing to hide here") == "nothing to hide here"


def test_longer_secret_is_masked_whole_before_a_shorter_one_inside_it() -> None:
    mask = SecretMask(["token", "token-with-suffix"])

    assert mask("use token-with-suffix or token") == "use [secure] or [secure]"


def test_every_line_of_a_multi_line_secret_is_masked_on_its_own() -> None:
    key = "-----BEGIN KEY-----\nMIIEpAIBAAKCAQEA\r\nqwertyuiopasdf\n-----END KEY-----"
    mask = SecretMask([key])

    assert mask("MIIEpAIBAAKCAQEA") == "[secure]"
    assert mask("  qwertyuiopasdf") == "  [secure]"
    assert mask(key) == "[secure]"


def test_surrounding_whitespace_of_a_secret_does_not_protect_it_from_masking() -> None:
    mask = SecretMask(["  padded-secret \n"])

    assert mask("value: padded-secret") == "value: [secure]"


def test_values_shorter_than_three_characters_are_not_masked() -> None:
    mask = SecretMask(["a", "10", "  x  ", "", "abc"])

    assert mask("a 10 x build abc") == "a 10 x build [secure]"


def test_base64_form_of_a_secret_is_masked() -> None:
    encoded = base64.b64encode(b"s3cr3t-value").decode()

    assert SecretMask(["s3cr3t-value"])(f"Authorization: Basic {encoded}") == "Authorization: Basic [secure]"


def test_base64_form_of_a_short_secret_is_left_alone() -> None:
    encoded = base64.b64encode(b"abcde").decode()

    assert SecretMask(["abcde"])(encoded) == encoded


def test_secret_with_regex_characters_is_matched_literally() -> None:
    mask = SecretMask(["a.b*c(d)"])

    assert mask("aXbbc(d) a.b*c(d)") == "aXbbc(d) [secure]"


def test_non_ascii_secret_and_its_base64_form_are_masked() -> None:
    secret = "pässwörd-密码"
    encoded = base64.b64encode(secret.encode()).decode()

    assert SecretMask([secret])(f"{secret} {encoded}") == "[secure] [secure]"


def test_mask_word_in_a_secret_does_not_mask_twice() -> None:
    assert SecretMask(["secure"])("secure [secure]") == "[secure] [[secure]]"


def test_long_line_is_cut_into_pieces_of_at_most_64_kib() -> None:
    pieces = split_line("x" * (3 * MAX_LINE_BYTES + 10))

    assert [len(piece) for piece in pieces] == [MAX_LINE_BYTES] * 3 + [10]


def test_long_line_is_never_cut_inside_a_character() -> None:
    text = "é" * MAX_LINE_BYTES  # two bytes each

    pieces = split_line(text)

    assert all(len(piece) <= MAX_LINE_BYTES for piece in pieces)
    assert "".join(piece.decode() for piece in pieces) == text


def test_embedded_newlines_make_separate_lines() -> None:
    assert split_line("one\ntwo") == [b"one", b"two"]
    assert split_line("") == [b""]


def test_a_secret_added_later_is_masked_from_then_on_with_the_first_ones() -> None:
    mask = SecretMask(["hunter2"])
    token = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"  # an ID token the job was handed meanwhile
    assert mask(f"token {token}") == f"token {token}"

    mask.add(token)

    assert mask(f"hunter2 then {token}") == "[secure] then [secure]"
    assert mask(base64.b64encode(token.encode()).decode()) == "[secure]"
