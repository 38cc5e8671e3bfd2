"""``l3mp plan``'s exit codes: one per plan outcome, kept stable, and listed in its help."""

from __future__ import annotations

import pytest

from l3mp.cli import main
from l3mp.cli.plan import EXIT_CODES
from l3mp.outcomes import PlanOutcome


def test_every_outcome_has_its_exit_code() -> None:
    assert set(EXIT_CODES) == set(PlanOutcome)
    assert EXIT_CODES[PlanOutcome.SOLVED] == 0
    assert 1 not in EXIT_CODES.values()  # 1 is an error's, as for every command
    not_solved = (PlanOutcome.UNSOLVABLE, PlanOutcome.TIMEOUT, PlanOutcome.ERROR)
    assert all(EXIT_CODES[o] == 2 for o in (*not_solved, PlanOutcome.INVALID_REQUEST, PlanOutcome.INVALID_GOAL))
    assert EXIT_CODES[PlanOutcome.NEEDS_INFORMATION] == 3
    assert EXIT_CODES[PlanOutcome.IMPOSSIBLE] == 4
    assert EXIT_CODES[PlanOutcome.NEEDS_EXPLORATION] == 5


def test_the_help_lists_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--help"]) == 0
    help_text = capsys.readouterr().out
    lines = help_text[help_text.index("Exit codes:") :].splitlines()
    for outcome, code in EXIT_CODES.items():
        assert any(line.split()[:1] == [str(code)] and outcome.value in line for line in lines), outcome
    assert any(line.split() == ["1", "an", "error"] for line in lines)
