"""Derive the ``household-travel`` domain from ``household`` (issue 20).

``household`` stays unit-cost: the paper's experiments and LAPKT, which cannot plan with costs, use it.
``household-travel`` is the same domain in which moving costs the distance between the rooms. Its files
are written by this script from household's, never edited by hand, and a test fails when they drift:
after changing ``kg_memory/domains/household``, run ``python tools/household_travel.py``.
"""

from __future__ import annotations

from pathlib import Path

DOMAINS = Path(__file__).resolve().parents[1] / "kg_memory" / "domains"
NAME = "household-travel"
HEADER = (
    "; GENERATED from ../household by tools/household_travel.py: edit household, then run that script.\n"
    "; The household in which moving costs the distance between the rooms (IPC :action-costs); every\n"
    "; other action costs nothing, so the cheapest plan is the one that walks least.\n"
)
# (what household says, what household-travel says instead): each must occur exactly once
PDDL_EDITS = (
    ("(define (domain household)", f"(define (domain {NAME})"),
    (":existential-preconditions)", ":existential-preconditions :action-costs)"),
    (
        "(filled ?d - dish ?l - liquid))",
        "(filled ?d - dish ?l - liquid))\n  (:functions (distance ?from - room ?to - room) (total-cost) - number)",
    ),
    (
        ":effect (and (not (robot_at ?a ?from)) (robot_at ?a ?to)))",
        ":effect (and (not (robot_at ?a ?from)) (robot_at ?a ?to) (increase (total-cost) (distance ?from ?to))))",
    ),
)
FILLED = 'filled = "{0} is filled with {1}"'
LANGUAGE_EDITS = ((FILLED, FILLED + '\ndistance = "the walk from {0} to {1}, in metres"'),)


def derive(household: Path = DOMAINS / "household") -> dict[str, str]:
    """The files of ``household-travel`` (name -> text), from the household folder."""

    def edited(name: str, edits: tuple[tuple[str, str], ...]) -> str:
        text = (household / name).read_text(encoding="utf-8")
        for old, new in edits:
            if text.count(old) != 1:
                raise ValueError(f"{household / name} no longer says {old!r} once: update {__file__}")
            text = text.replace(old, new)
        return text

    comment = "".join("#" + line[1:] for line in HEADER.splitlines(keepends=True))
    return {
        "domain.pddl": HEADER + edited("domain.pddl", PDDL_EDITS),
        "rules.toml": comment + edited("rules.toml", ()),
        "language.toml": comment + edited("language.toml", LANGUAGE_EDITS),
    }


def main() -> None:
    folder = DOMAINS / NAME
    folder.mkdir(exist_ok=True)
    for name, text in derive().items():
        (folder / name).write_text(text, encoding="utf-8")
        print(f"wrote {folder / name}")


if __name__ == "__main__":
    main()
