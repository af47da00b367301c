"""appveyor.yml's values are counted with every alias (and merge key) expanded, before any is: a file of exactly
MAX_YAML_VALUES of them is read, one more is refused naming the limit."""

from __future__ import annotations

import pytest

from chalicelib.domain.configuration.yamlconfig.syntax import MAX_YAML_VALUES, load
from chalicelib.errors import Invalid

LISTED = 999  # scalars of the anchored list: with the list itself, each alias to it stands for 1,000 values


def aliased(values: int) -> str:
    """A document of exactly ``values`` values once expanded: a mapping (1) of two keys (2), an anchored list (1 +
    LISTED) and a list (1) of aliases to it (1,000 each) and of single scalars for the rest."""
    fixed = 1 + 2 + (1 + LISTED) + 1
    aliases, rest = divmod(values - fixed, LISTED + 1)
    anchored = "[" + ", ".join(["x"] * LISTED) + "]"
    listed = ["*a"] * aliases + ["y"] * rest
    return f"a: &a {anchored}\nb: [{', '.join(listed)}]\n"


def test_a_document_of_exactly_the_values_limit_once_expanded_is_read() -> None:
    document = load(aliased(MAX_YAML_VALUES))

    assert document["b"][0] == ["x"] * LISTED and document["b"][-1] == "y"


def test_one_value_more_is_refused_naming_the_limit() -> None:
    with pytest.raises(Invalid) as refused:
        load(aliased(MAX_YAML_VALUES + 1))

    assert f"more than {MAX_YAML_VALUES} values once its aliases (*name) and merge keys (<<)" in refused.value.message


def test_merge_keys_count_every_mapping_they_merge() -> None:
    doubled = [f"m{level}: &m{level} {{<<: [*m{level - 1}, *m{level - 1}]}}" for level in range(1, 20)]

    with pytest.raises(Invalid) as refused:
        load("\n".join(["m0: &m0 {a: 1, b: 2}", *doubled]))

    assert str(MAX_YAML_VALUES) in refused.value.message
