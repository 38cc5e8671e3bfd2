"""Derive the travel domains from the unit-cost ones: ``household-travel`` and ``thor-travel``.

``household`` and ``thor`` stay unit-cost: the paper's experiments and LAPKT, which cannot plan with
costs, use them. Each ``*-travel`` domain is the same domain in which moving costs the distance walked
(IPC ``:action-costs``). Their files are written by this script from the originals, never edited by
hand, and a test fails when they drift: after changing ``kg_memory/domains/household`` or ``thor``, run
``python tools/travel_domains.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

DOMAINS = Path(__file__).resolve().parents[1] / "kg_memory" / "domains"

Edits = tuple[tuple[str, str], ...]  # (what the original says, what the travel domain says instead)


@dataclass(frozen=True)
class Travel:
    """How one travel domain differs from its original: each edit's old text must occur exactly once."""

    original: str
    summary: str  # what the header says after "GENERATED from ..."
    edits: dict[str, Edits]  # file name -> edits; files not named are copied as they are
    everywhere: dict[str, Edits] = field(default_factory=dict)  # then these, wherever they occur (once at least)

    @property
    def name(self) -> str:
        return f"{self.original}-travel"


HOUSEHOLD = Travel(
    "household",
    "The household in which moving costs the distance between the rooms (IPC :action-costs); every\n"
    "other action costs nothing, so the cheapest plan is the one that walks least.",
    {
        "domain.pddl": (
            ("(define (domain household)", "(define (domain household-travel)"),
            (":existential-preconditions)", ":existential-preconditions :action-costs)"),
            (
                "(filled ?d - dish ?l - liquid))",
                "(filled ?d - dish ?l - liquid))\n"
                "  (:functions (distance ?from - room ?to - room) (total-cost) - number)",
            ),
            (
                ":effect (and (not (robot_at ?a ?from)) (robot_at ?a ?to)))",
                ":effect (and (not (robot_at ?a ?from)) (robot_at ?a ?to) "
                "(increase (total-cost) (distance ?from ?to))))",
            ),
        ),
        "language.toml": (
            (
                'filled = "{0} is filled with {1}"',
                'filled = "{0} is filled with {1}"\ndistance = "the walk from {0} to {1}, in metres"',
            ),
        ),
    },
)

# THOR's go_to gains a "from": where the agent stands (``at``: the object it last went to, or the one
# nearest it), so that going costs the distance between the two objects' positions. The agent acts on
# what it stands at, as in ALFWorld's alfred.pddl (atLocation): with costs, a planner would otherwise
# keep using a stale ``near`` to save the walk back. Perception still reports ``near``.
THOR_GO_TO = """  (:action go_to
    :parameters (?a - agent ?o - thing)
    :effect (near ?a ?o))"""
THOR_TRAVEL_GO_TO = """  (:action go_to
    :parameters (?a - agent ?from - thing ?to - thing)
    :precondition (and (at ?a ?from) (not (= ?from ?to)))
    :effect (and (not (at ?a ?from)) (at ?a ?to) (near ?a ?to) (increase (total-cost) (distance ?from ?to))))"""
# No conditional effects, so that optimal planning can use LM-cut (it reads none): deleting what does
# not hold changes nothing.
THOR_PICK_UP = "(forall (?r - thing) (when (in_receptacle ?o ?r) (not (in_receptacle ?o ?r))))"
THOR_TRAVEL_PICK_UP = "(forall (?r - thing) (not (in_receptacle ?o ?r)))"
THOR = Travel(
    "thor",
    "AI2-THOR in which going to an object costs the distance from where the agent stands, between the\n"
    "two objects' positions as THOR reports them (IPC :action-costs); every other action costs nothing.",
    {
        "domain.pddl": (
            ("(define (domain thor)", "(define (domain thor-travel)"),
            (":disjunctive-preconditions)", ":disjunctive-preconditions :equality :action-costs)"),
            (":conditional-effects ", ""),
            ("(near ?a - agent ?o - thing)", "(near ?a - agent ?o - thing)\n    (at ?a - agent ?o - thing)"),
            (
                "(is_cold ?o - thing))",
                "(is_cold ?o - thing))\n  (:functions (distance ?from - thing ?to - thing) (total-cost) - number)",
            ),
            (
                "; GetInteractablePoses then TeleportFull: the object is then in reach; THOR reports what else is.",
                "; GetInteractablePoses then TeleportFull: the agent stands at the object, which is then in reach;\n"
                "  ; what else is, THOR reports.",
            ),
            (THOR_GO_TO, THOR_TRAVEL_GO_TO),
            (THOR_PICK_UP, THOR_TRAVEL_PICK_UP),
        ),
        "language.toml": (
            (
                'near = "{0} is near {1}"',
                'near = "{0} is near {1}"\nat = "{0} stands at {1}"\ndistance = "the walk from {0} to {1}, in metres"',
            ),
            ('go_to = "{0} goes to {1}"', 'go_to = "{0} goes from {1} to {2}"'),
        ),
        "rules.toml": (
            (
                '[[functional]]\nfacts = ["(holding ?a ?o)"]',
                '[[functional]]\nfacts = ["(at ?a ?o)"]\nkey = ["?a"]\n'
                'message = "{a} stands at one place at a time, but after this update {facts}; remove one"\n\n'
                '[[functional]]\nfacts = ["(holding ?a ?o)"]',
            ),
        ),
    },
    everywhere={"domain.pddl": (("(near ?a ?o)", "(at ?a ?o)"), ("(near ?a ?r)", "(at ?a ?r)"))},
)
TRAVELS = (HOUSEHOLD, THOR)


def derive(travel: Travel, domains: Path = DOMAINS) -> dict[str, str]:
    """The files of ``travel``'s domain (name -> text), from its original's folder."""
    original = domains / travel.original
    lines = (
        f"GENERATED from ../{travel.original} by tools/travel_domains.py: "
        f"edit {travel.original}, then run that script.",
        *travel.summary.splitlines(),
    )
    files: dict[str, str] = {}
    for path in sorted(original.iterdir()):
        text = path.read_text(encoding="utf-8")
        for old, new in travel.edits.get(path.name, ()):
            if text.count(old) != 1:
                raise ValueError(f"{path} no longer says {old!r} once: update {__file__}")
            text = text.replace(old, new)
        for old, new in travel.everywhere.get(path.name, ()):
            if old not in text:
                raise ValueError(f"{path} no longer says {old!r}: update {__file__}")
            text = text.replace(old, new)
        mark = ";" if path.suffix == ".pddl" else "#"
        files[path.name] = "".join(f"{mark} {line}\n" for line in lines) + text
    return files


def main() -> None:
    for travel in TRAVELS:
        folder = DOMAINS / travel.name
        folder.mkdir(exist_ok=True)
        for name, text in derive(travel).items():
            (folder / name).write_text(text, encoding="utf-8")
            print(f"wrote {folder / name}")


if __name__ == "__main__":
    main()
