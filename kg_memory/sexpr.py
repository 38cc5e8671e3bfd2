"""S-expressions, as PDDL writes them: the one tokeniser and reader of the project.

Domains, problems and the goals a model writes are all tokenised here; what a form means is
up to its reader (unified-planning for domains and problems, the planning layer for goals).
Tokens are lower-cased, as PDDL names are case-insensitive, and ``;`` comments are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TypeAlias

from kg_memory.errors import KgMemoryError

SExpr: TypeAlias = "str | list[SExpr]"

_TOKEN = re.compile(r"[()]|[^\s()]+")
_COMMENT = re.compile(r";[^\n]*")
_CLIP = 80


class UnbalancedParentheses(KgMemoryError):
    """Text whose parentheses do not pair up. ``text`` is the input; ``position`` the offset in it
    of the ``)`` that closes nothing, or of the outermost ``(`` never closed; ``unclosed`` counts
    the ``(`` never closed (0 for a stray ``)``) and ``before`` holds the top-level forms read
    before a stray ``)``. ``problem`` says which, in words."""

    def __init__(self, text: str, position: int, *, unclosed: int = 0, before: tuple[SExpr, ...] = ()) -> None:
        self.text = text
        self.position = position
        self.unclosed = unclosed
        self.before = before
        self.problem = (
            f"unbalanced parentheses: {unclosed} '(' never closed"
            if unclosed
            else "unbalanced parentheses: a ')' closes nothing"
        )
        super().__init__(f"{self.problem}, at offset {position} of {clip(text)!r}")


def without_comments(text: str) -> str:
    """``text`` with its comments blanked out: the same length, so offsets still point into it."""
    return _COMMENT.sub(lambda comment: " " * len(comment.group()), text)


def tokens(text: str) -> list[str]:
    """The tokens of ``text``: parentheses and lower-cased words, comments dropped."""
    return [token for _, token in _located(text)]


def read_forms(text: str) -> list[SExpr]:
    """Every top-level form of ``text``, in order; raises :class:`UnbalancedParentheses`."""
    stack: list[list[SExpr]] = [[]]
    opened: list[int] = []  # where each list still open began
    for position, token in _located(text):
        if token == "(":
            stack.append([])
            opened.append(position)
        elif token != ")":
            stack[-1].append(token)
        elif len(stack) == 1:
            raise UnbalancedParentheses(text, position, before=tuple(stack[0]))
        else:
            closed = stack.pop()
            opened.pop()
            stack[-1].append(closed)
    if opened:
        raise UnbalancedParentheses(text, opened[0], unclosed=len(opened))
    return stack[0]


def nesting(text: str) -> int:
    """The deepest run of open parentheses in ``text``; a stray ``)`` does not count below zero.
    Counted before anything recursive (reading, writing, quoting in errors) walks the text."""
    depth = deepest = 0
    for token in tokens(text):
        if token == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif token == ")":
            depth = max(depth - 1, 0)
    return deepest


def write(form: SExpr) -> str:
    """``form`` as PDDL text, one space between tokens."""
    return form if isinstance(form, str) else f"({' '.join(write(f) for f in form)})"


def clip(text: str) -> str:
    """``text`` on one line and short enough to quote in an error message."""
    flat = " ".join(text.split())
    return flat if len(flat) <= _CLIP else flat[: _CLIP - 3] + "..."


def _located(text: str) -> Iterator[tuple[int, str]]:
    for match in _TOKEN.finditer(without_comments(text)):
        yield match.start(), match.group().lower()
