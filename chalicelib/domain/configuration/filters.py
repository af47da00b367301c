"""Which webhook events start a build: the configuration's branch, tag and commit filters, as a pure function.

They apply to builds a repository's webhook starts, never to builds started through the API (AppVeyor's rule).
A filter value written ``/regex/`` is a regular expression searched for, on RE2 (domain/configuration/user_regex.py);
plain text is compared without case (the message contains it; the author's name or e-mail is it). File patterns are
globs: ``*`` within a folder, ``**`` across folders, and a pattern ending in ``/`` takes everything under that
folder; they run on RE2 too, since ``**/**/**/...`` would backtrack for ever on a deep path.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from chalicelib.core.configuration import Configuration
from chalicelib.domain.configuration.user_regex import compile_pattern, is_pattern

SKIP_DIRECTIVES = ("[skip ci]", "[ci skip]", "[skip appveyor]")


@dataclass(frozen=True)
class PushedCommit:
    """What a webhook asks to build, as the filters see it."""

    branch: str  # the branch pushed to, the tag's name, or a pull request's target branch
    title: str  # the first line of the head commit's message
    author_name: str = ""
    author_email: str = ""
    author_login: str = ""  # the provider's user name, when the payload gives it
    is_tag: bool = False
    pull_request_id: int | None = None
    files: tuple[str, ...] | None = None  # files the push changed, when the payload lists them
    branch_has_pull_request: bool = False  # an open pull request comes from this branch


def skip_reason(configuration: Configuration, pushed: PushedCommit) -> str | None:
    """Why this commit starts no build, or None when it does."""
    for check in (_tags, _branches, _directive, _skip_commits, _only_commits, _branch_with_pull_request):
        reason = check(configuration, pushed)
        if reason:
            return reason
    return None


def _tags(cfg: Configuration, pushed: PushedCommit) -> str | None:
    if pushed.is_tag and cfg.get("skipTags"):
        return f"Skipped: tag '{pushed.branch}' and skip_tags is set."
    if not pushed.is_tag and cfg.get("skipNonTags"):
        return "Skipped: not a tag, and skip_non_tags is set."
    return None


def _branches(cfg: Configuration, pushed: PushedCommit) -> str | None:
    only, excluded = _values(cfg.get("includeBranches")), _values(cfg.get("excludeBranches"))
    if only and not any(branch_matches(rule, pushed.branch) for rule in only):
        return f"Skipped: branch '{pushed.branch}' is not in branches.only."
    if any(branch_matches(rule, pushed.branch) for rule in excluded):
        return f"Skipped: branch '{pushed.branch}' is excluded by branches.except."
    return None


def _directive(cfg: Configuration, pushed: PushedCommit) -> str | None:
    title = pushed.title.lower()
    for directive in SKIP_DIRECTIVES:
        if directive in title:
            return f"Skipped: {directive} in the commit title."
    return None


def _skip_commits(cfg: Configuration, pushed: PushedCommit) -> str | None:
    message, author, files = (
        cfg.get("skipCommitsMessage"),
        cfg.get("skipCommitsAuthor"),
        _values(cfg.get("skipCommitsFiles")),
    )
    if message and _text_matches(message, pushed.title):
        return "Skipped: the commit title matches skip_commits.message."
    if author and _author_matches(author, pushed):
        return "Skipped: the commit's author matches skip_commits.author."
    if files and pushed.files and all(_file_matches(files, name) for name in pushed.files):
        return "Skipped: every changed file matches skip_commits.files."
    return None


def _only_commits(cfg: Configuration, pushed: PushedCommit) -> str | None:
    message, author, files = (
        cfg.get("onlyCommitsMessage"),
        cfg.get("onlyCommitsAuthor"),
        _values(cfg.get("onlyCommitsFiles")),
    )
    if message and not _text_matches(message, pushed.title):
        return "Skipped: the commit title does not match only_commits.message."
    if author and not _author_matches(author, pushed):
        return "Skipped: the commit's author does not match only_commits.author."
    if files and pushed.files is not None and not any(_file_matches(files, name) for name in pushed.files):
        return "Skipped: no changed file matches only_commits.files."
    return None


def _branch_with_pull_request(cfg: Configuration, pushed: PushedCommit) -> str | None:
    if cfg.get("skipBranchWithPullRequests") and pushed.pull_request_id is None and pushed.branch_has_pull_request:
        return f"Skipped: branch '{pushed.branch}' has an open pull request, and skip_branch_with_pr is set."
    return None


def _values(entries: Any) -> list[str]:
    """The texts of a ``[{"value": ...}]`` list of the configuration."""
    return [entry["value"] for entry in entries or [] if isinstance(entry, dict) and entry.get("value")]


def _regex(rule: str) -> Any:
    """The RE2 expression of a ``/regex/`` rule, None for plain text; Invalid when RE2 refuses the expression."""
    return compile_pattern(rule) if is_pattern(rule) else None


def branch_matches(rule: str, branch: str) -> bool:
    """Whether a ``branches`` entry names the branch: ``/regex/`` searched for, plain text compared exactly."""
    pattern = _regex(rule)
    return bool(pattern.search(branch)) if pattern else rule == branch


def _text_matches(rule: str, text: str) -> bool:
    pattern = _regex(rule)
    return bool(pattern.search(text)) if pattern else rule.lower() in text.lower()


def _author_matches(rule: str, pushed: PushedCommit) -> bool:
    names = [name for name in (pushed.author_name, pushed.author_email, pushed.author_login) if name]
    pattern = _regex(rule)
    if pattern:
        return any(pattern.search(name) for name in names)
    return any(rule.lower() == name.lower() for name in names)


def _file_matches(patterns: list[str], name: str) -> bool:
    return any(_glob(pattern).fullmatch(name.lstrip("/")) for pattern in patterns)


@lru_cache(maxsize=256)
def _glob(pattern: str) -> Any:
    """A file pattern as an expression: ``**`` any folders, ``*`` and ``?`` within one, ``dir/`` all under dir."""
    import re2  # loads only where a file filter is matched: cold start

    pattern = pattern.strip().lstrip("/")
    if pattern.endswith("/"):
        pattern += "**"
    parts, index = [], 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            parts.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            parts.append(".*")
            index += 2
        elif pattern[index] == "*":
            parts.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            parts.append("[^/]")
            index += 1
        else:
            parts.append(re2.escape(pattern[index]))
            index += 1
    return re2.compile("".join(parts))
