"""The one s-expression reader: tokens, forms, and errors that point into the text they read."""

from __future__ import annotations

import pytest

from kg_memory import KgMemoryError, L3mpError
from kg_memory.sexpr import UnbalancedParentheses, clip, read_forms, tokens, without_comments, write


def test_tokens_are_lower_cased_and_comments_dropped() -> None:
    assert tokens("(On Mug_1 ; the MUG\n TABLE_1)") == ["(", "on", "mug_1", "table_1", ")"]
    assert tokens("?x -type ; (not a form\n") == ["?x", "-type"]


def test_comments_are_blanked_so_offsets_still_point_into_the_text() -> None:
    text = "(a ; b)\n c)"
    assert without_comments(text) == "(a     \n c)" and len(without_comments(text)) == len(text)


def test_forms_nest_and_every_top_level_form_is_read() -> None:
    assert read_forms("(define (domain d) (:types a b - c))") == [
        ["define", ["domain", "d"], [":types", "a", "b", "-", "c"]]
    ]
    assert read_forms("(a) b (c (d))") == [["a"], "b", ["c", ["d"]]]
    assert read_forms("  ; nothing\n") == []


def test_a_close_that_closes_nothing_says_where_and_what_came_before() -> None:
    text = "(on mug_1 table_1) x)"
    with pytest.raises(UnbalancedParentheses) as raised:
        read_forms(text)
    error = raised.value
    assert error.text == text and error.position == text.rindex(")")
    assert error.before == (["on", "mug_1", "table_1"], "x") and error.unclosed == 0
    assert error.problem == "unbalanced parentheses: a ')' closes nothing"
    assert str(error).startswith(error.problem) and f"offset {error.position}" in str(error)


def test_unclosed_parentheses_are_counted_from_the_outermost() -> None:
    text = "; a comment (\n(define (domain d"
    with pytest.raises(UnbalancedParentheses) as raised:
        read_forms(text)
    error = raised.value
    assert error.unclosed == 2 and error.position == text.index("(define") and error.before == ()
    assert error.problem == "unbalanced parentheses: 2 '(' never closed"


def test_reader_errors_are_the_memorys_errors() -> None:
    with pytest.raises(UnbalancedParentheses) as raised:
        read_forms(")")
    assert isinstance(raised.value, KgMemoryError) and isinstance(raised.value, L3mpError)


def test_forms_write_back_as_pddl_and_clip_for_messages() -> None:
    form = read_forms("(and  (on a b)\n (not (dirty c)))")[0]
    assert write(form) == "(and (on a b) (not (dirty c)))"
    assert write("x") == "x"
    assert clip("a \n  b") == "a b"
    long = "x" * 100
    assert clip(long) == "x" * 77 + "..." and len(clip(long)) == 80
