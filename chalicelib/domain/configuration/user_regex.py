"""A user's ``/regex/`` (branch filters, skip_commits and only_commits, deploy ``on:`` conditions), run on RE2.

Python's own engine backtracks: ``/^(a+)+$/`` against forty ``a``s and a ``!`` never finishes, and one such
filter would stall every webhook of the project. RE2 matches in time linear in the text, and refuses the syntax it
cannot run that way (lookaround, backreferences), so a pattern it refuses is refused when it is saved.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from chalicelib.errors import Invalid


def is_pattern(rule: str) -> bool:
    """Whether a filter value is written ``/regex/`` (anything else is plain text)."""
    return len(rule) > 1 and rule.startswith("/") and rule.endswith("/")


@lru_cache(maxsize=256)
def compile_pattern(rule: str) -> Any:
    """The RE2 expression of a ``/regex/`` rule; Invalid naming the rule when RE2 cannot run it."""
    import re2  # loads only where a user's pattern is matched: cold start

    options = re2.Options()
    options.log_errors = False  # the refusal is reported to the user, not written to the service's log
    try:
        return re2.compile(rule[1:-1], options=options)
    except re2.error as error:
        reason = error.args[0].decode(errors="replace") if error.args and isinstance(error.args[0], bytes) else error
        raise Invalid(
            f"The regular expression {rule} is not supported: {reason}. Patterns run on RE2, which has no "
            "lookaround or backreferences."
        ) from error


def check_pattern(rule: str, path: str) -> str:
    """The rule as given; Invalid naming ``path`` when it is a ``/regex/`` RE2 refuses."""
    if is_pattern(rule):
        try:
            compile_pattern(rule)
        except Invalid as error:
            raise Invalid(f"{path}: {error.message}") from error
    return rule
