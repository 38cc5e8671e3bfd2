"""Goals as a language model writes them, read into a :mod:`kg_memory.formula` tree.

The text goes through :mod:`kg_memory.sexpr` (unified-planning's parser is slow and not
thread-safe, and a goal is a few dozen tokens) after the cleanup models need: a Markdown code
fence and a ``(:goal ...)`` wrapper are taken off. Nothing here looks at a domain; that is
:mod:`planning.goal_checker`'s part.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from kg_memory.domain import ROOT_TYPE
from kg_memory.formula import And, Atom, Equals, Formula, Not, Or, Parameter, Quantified, Truth
from kg_memory.sexpr import SExpr, UnbalancedParentheses, clip, nesting, read_forms, without_comments, write
from planning.errors import PlanningError

MAX_GOAL_DEPTH = 64
"""How many formulas a goal may nest inside one another. Real goals nest a handful; the bound keeps
every recursive walk of an accepted goal (printing, checking, planning) far from Python's recursion
limit. An ``imply`` counts twice: it is read as ``(or (not a) b)``."""
_TOO_DEEP = f"the goal is nested too deeply: at most {MAX_GOAL_DEPTH} formulas may nest inside one another"

_FENCE_OPEN = re.compile(r"^```[A-Za-z0-9_+-]*")
# Other PDDL heads a model may reach for; naming them beats "unknown predicate 'when'".
_UNSUPPORTED = frozenset({"when", "either", "preference", "<", ">", "<=", ">=", "increase", "decrease"})


class GoalSyntaxError(PlanningError):
    """A goal text that does not read as a formula: ``problem`` says where, ``text`` is the input."""

    def __init__(self, text: str, problem: str) -> None:
        self.text = text
        self.problem = problem
        super().__init__(f"goal {clip(text)!r}: {problem}")


def parse_goal(text: str) -> Formula:
    """The formula ``text`` writes, without looking at any domain; raises :class:`GoalSyntaxError`.

    PDDL syntax, case-insensitive: atoms, ``=``, ``not``, ``and``, ``or``, ``imply`` (read as
    ``(or (not a) b)``), ``forall`` and ``exists`` over typed variable lists (untyped ones are
    ``object``), optionally wrapped in ``(:goal ...)`` or a Markdown code fence; formulas nest at
    most :data:`MAX_GOAL_DEPTH` deep.
    """
    form = _read(text)
    if isinstance(form, list) and form[:1] == [":goal"]:
        if len(form) == 1:
            raise GoalSyntaxError(text, "empty goal")
        if len(form) > 2:
            raise GoalSyntaxError(text, f"(:goal ...) holds one formula; join several with (and ...) in {_show(form)}")
        form = form[1]
    return _Reader(text).formula(form)


def _show(form: SExpr) -> str:
    return form if isinstance(form, str) else clip(write(form))


def _unfence(text: str) -> str:
    """The text inside a Markdown code fence (models add them unasked), without comments."""
    body = text.strip()
    if body.startswith("```"):
        body = _FENCE_OPEN.sub("", body, count=1)
        body = body.removesuffix("```")
    return without_comments(body).strip()


def _read(text: str) -> SExpr:
    """The one s-expression of ``text``; anything before or after it is an error."""
    body = _unfence(text)
    if not body:
        raise GoalSyntaxError(text, "empty goal")
    if not body.startswith("("):
        raise GoalSyntaxError(
            text, f"expected a formula in parentheses, got {clip(body)!r}; answer with the PDDL goal only"
        )
    # Before anything recursive (reading, quoting in errors) sees it; +1 for a (:goal ...) wrapper.
    if nesting(body) > MAX_GOAL_DEPTH + 1:
        raise GoalSyntaxError(text, _TOO_DEEP)
    try:
        forms = read_forms(body)
    except UnbalancedParentheses as exc:
        raise GoalSyntaxError(text, _unbalanced(exc, body)) from exc
    if len(forms) > 1:
        rest = " ".join(_show(f) for f in forms[1:])
        raise GoalSyntaxError(
            text, f"unexpected text after the goal: {clip(rest)}; write one formula (join conditions with (and ...))"
        )
    return forms[0]


def _unbalanced(error: UnbalancedParentheses, body: str) -> str:
    """The problem in words a model can act on: what was read before a stray ``)``, or the goal
    that leaves a ``(`` open."""
    if error.unclosed:
        return f"unbalanced parentheses: {error.unclosed} '(' never closed in {clip(body)}"
    read = " ".join(_show(f) for f in error.before)
    return f"unbalanced parentheses: an extra ')' after {clip(read)}"


@dataclass(frozen=True, slots=True)
class _Reader:
    """S-expressions to formulas; ``text`` is only there to put into errors."""

    text: str

    def fail(self, problem: str) -> GoalSyntaxError:
        return GoalSyntaxError(self.text, problem)

    def formula(self, form: SExpr, depth: int = 1) -> Formula:
        """The formula ``form`` writes, ``depth`` formulas deep in the goal (the goal itself is 1)."""
        if depth > MAX_GOAL_DEPTH:
            raise self.fail(_TOO_DEEP)
        if isinstance(form, str):
            raise self.fail(f"expected a formula in parentheses, got {form}")
        if not form:
            raise self.fail("expected a formula, got ()")
        head = form[0]
        if not isinstance(head, str):
            raise self.fail(f"expected a predicate or connective, got {_show(head)} at the start of {_show(form)}")
        connective = _CONNECTIVES.get(head)
        if connective is not None:
            return connective(self, form, depth)
        if head in _UNSUPPORTED:
            raise self.fail(f"{head} is not supported in goals, in {_show(form)}")
        if head.startswith(("?", ":", "-")):
            raise self.fail(f"expected a formula, got {_show(form)}: it starts with {head}, not a predicate")
        return Atom(head, tuple(self.term(arg, form) for arg in form[1:]))

    def term(self, form: SExpr, where: list[SExpr]) -> str:
        if not isinstance(form, str):
            raise self.fail(f"expected an entity or ?variable, got {_show(form)} in {_show(where)}")
        if form == "?":
            raise self.fail(f"expected a variable name after '?' in {_show(where)}")
        return form

    def args(self, form: list[SExpr], count: int) -> list[SExpr]:
        if len(form) - 1 != count:
            head = form[0]
            raise self.fail(f"{head} takes {count} argument{'s' * (count != 1)}, got {len(form) - 1} in {_show(form)}")
        return form[1:]

    def junction(self, form: list[SExpr], depth: int) -> Formula:
        universal = form[0] == "and"
        if len(form) == 1:
            return Truth(universal)  # (and) is true, (or) false, as Truth prints them
        parts = tuple(self.formula(f, depth + 1) for f in form[1:])
        return And(parts) if universal else Or(parts)

    def negation(self, form: list[SExpr], depth: int) -> Formula:
        return Not(self.formula(self.args(form, 1)[0], depth + 1))

    def implication(self, form: list[SExpr], depth: int) -> Formula:
        premise, conclusion = self.args(form, 2)
        return Or((Not(self.formula(premise, depth + 2)), self.formula(conclusion, depth + 1)))

    def equality(self, form: list[SExpr], _depth: int) -> Formula:
        left, right = self.args(form, 2)
        return Equals(self.term(left, form), self.term(right, form))

    def quantified(self, form: list[SExpr], depth: int) -> Formula:
        declared, body = self.args(form, 2)
        if isinstance(declared, str):
            raise self.fail(f"{form[0]} needs a variable list like (?x - type), got {declared} in {_show(form)}")
        return Quantified(form[0] == "forall", self.variables(declared, form), self.formula(body, depth + 1))

    def variables(self, declared: list[SExpr], where: list[SExpr]) -> tuple[Parameter, ...]:
        """A PDDL typed list, ``?x ?y - t ?z``: each run of variables takes the type after its
        ``-``; a run without one is ``object``."""
        found: list[Parameter] = []
        pending: list[str] = []
        tokens = iter(declared)
        for token in tokens:
            if token == "-":
                type_ = next(tokens, None)
                if not pending or not isinstance(type_, str) or type_.startswith("?"):
                    raise self.fail(f"expected ?variables - type in {_show(where)}")
                found += (Parameter(v, type_) for v in pending)
                pending = []
            elif isinstance(token, str) and token.startswith("?") and len(token) > 1:
                pending.append(token[1:])
            else:
                raise self.fail(f"expected a variable like ?x, got {_show(token)} in {_show(where)}")
        found += (Parameter(v, ROOT_TYPE) for v in pending)
        if not found:
            raise self.fail(f"{where[0]} declares no variables in {_show(where)}")
        return tuple(found)


_CONNECTIVES: dict[str, Callable[[_Reader, list[SExpr], int], Formula]] = {
    "and": _Reader.junction,
    "or": _Reader.junction,
    "not": _Reader.negation,
    "imply": _Reader.implication,
    "=": _Reader.equality,
    "forall": _Reader.quantified,
    "exists": _Reader.quantified,
}
