"""PyYAML's loader and dumper as appveyor.yml needs them (see syntax.py), apart so PyYAML loads only when used."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from chalicelib.domain.configuration.yamlconfig.scalars import Flow, Plain, Scalar


class Loader(yaml.SafeLoader):
    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        mapping = super().construct_mapping(node, deep=deep)
        return {key.text if isinstance(key, Scalar) else key: value for key, value in mapping.items()}


def _keeping_text(construct: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def construct_scalar(loader: Any, node: Any) -> Any:
        try:
            return Scalar(node.value, construct(loader, node))
        except ValueError:  # a timestamp-like text that is no date: AppVeyor would see a string too
            return node.value

    return construct_scalar


_TYPED_TAGS = {"bool", "int", "float", "timestamp"}
for _tag in _TYPED_TAGS:
    _name = f"tag:yaml.org,2002:{_tag}"
    Loader.add_constructor(_name, _keeping_text(yaml.SafeLoader.yaml_constructors[_name]))
# A lone "=" resolves to YAML 1.1's "value" tag, which no safe constructor knows; it is text like any other.
Loader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: node.value)


class Dumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> Any:
        return super().increase_indent(flow, False)  # lists indented under their key, as AppVeyor's docs write them

    def ignore_aliases(self, data: Any) -> bool:
        return True


_UNICODE_BREAKS = set("\x85\u2028\u2029")  # a line break to YAML: only escaped (double quotes) do they survive


def _literal(text: str) -> bool:
    # Several trailing line breaks would need "keep" chomping (|+), which ends the YAML document early.
    return "\n" in text and text.strip("\n") != "" and not text.endswith("\n\n")


def _represent_str(dumper: Any, text: str) -> Any:
    style = '"' if _UNICODE_BREAKS & set(text) else "|" if _literal(text) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(text), style=style)


def _represent_plain(dumper: Any, text: Plain) -> Any:
    tag = dumper.resolve(yaml.ScalarNode, str(text), (True, False))
    if "\n" not in text and tag.rsplit(":", 1)[-1] in _TYPED_TAGS:
        return dumper.represent_scalar(tag, str(text))
    return _represent_str(dumper, text)


Dumper.add_representer(str, _represent_str)
Dumper.add_representer(Plain, _represent_plain)
Dumper.add_representer(
    Flow, lambda dumper, data: dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)
)
Dumper.add_representer(type(None), lambda dumper, _: dumper.represent_scalar("tag:yaml.org,2002:null", ""))


def load_within(text: str, max_values: int) -> tuple[Any, bool]:
    """The YAML document in ``text``, or (None, True) when it holds more than ``max_values`` values (lists, mappings,
    their keys and scalars) once its aliases and merge keys are expanded: counted on the parsed nodes, before any
    is expanded, so a few lines that alias each other cost no more than the count."""
    loader = Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, False
        if _expanded_size(node, max_values) > max_values:
            return None, True
        return loader.construct_document(node), False
    finally:
        loader.dispose()


def _expanded_size(node: yaml.Node, limit: int) -> int:
    """How many nodes ``node`` stands for with each alias counted as often as it is used, counting no further than
    ``limit + 1``."""
    count = 0
    waiting = [node]
    while waiting and count <= limit:
        current = waiting.pop()
        count += 1
        if isinstance(current, yaml.SequenceNode):
            waiting.extend(current.value)
        elif isinstance(current, yaml.MappingNode):
            waiting.extend(part for pair in current.value for part in pair)
    return count
