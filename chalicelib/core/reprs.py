"""The repr the service's frozen dataclasses share.

``@dataclass`` compiles a ``__repr__`` for every class when its module is imported: for a class of many fields,
that is a good part of what the class costs a function's cold start. Classes that take ``repr=False`` and derive
from ``FieldsRepr`` get the same text, ``Name(field=value, ...)``, computed when it is asked for.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, cast


class FieldsRepr:
    """Shows a dataclass as ``@dataclass`` would: its qualified name and each field shown in repr, in order."""

    __slots__ = ()

    def __repr__(self) -> str:
        shown = [f"{field.name}={getattr(self, field.name)!r}" for field in fields(cast(Any, self)) if field.repr]
        return f"{type(self).__qualname__}({', '.join(shown)})"
