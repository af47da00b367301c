"""appveyor.yml through PyYAML: typed scalars keep how they were written, and aliases cannot blow a few lines up.
No IO."""

from __future__ import annotations

import yaml

from chalicelib.domain.configuration.yamlconfig.scalars import Flow, Plain, Scalar
from chalicelib.domain.configuration.yamlconfig.yamlio import Dumper, load_within


def test_a_version_number_and_a_yes_keep_the_text_they_were_written_as() -> None:
    document, too_big = load_within("python: 3.10\nfast_finish: yes\nname: app\n", 100)

    assert too_big is False
    assert document == {"python": Scalar("3.10", 3.1), "fast_finish": Scalar("yes", True), "name": "app"}


def test_aliases_are_counted_as_often_as_they_are_used_and_too_many_values_load_nothing() -> None:
    text = "a: &a [x, x, x, x]\nb: [*a, *a, *a, *a]\n"

    assert load_within(text, 10) == (None, True)
    assert load_within(text, 100)[0] == {"a": ["x"] * 4, "b": [["x"] * 4] * 4}
    assert load_within("", 10) == (None, False)


def test_plain_text_is_written_unquoted_text_that_yaml_would_type_is_quoted_and_a_flow_list_inline() -> None:
    written = yaml.dump({Plain("v"): Plain("true"), "q": "true", "f": Flow(["DAL", "BL"])}, Dumper=Dumper)

    assert written == "f: [DAL, BL]\nq: 'true'\nv: true\n"
