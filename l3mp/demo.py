"""The main job for now: a small home in the embedded store, a few verified updates
(one rejected), a revert, then the state and the history."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from kg_memory import Delta, Entity, Fact, State, Update, UpdateSource, UpdateStatus, WorldMemory
from kg_memory.store import GraphStore

MEMORY = "demo_home"

_SURVEY = (
    [
        Entity("kitchen", "room"),
        Entity("living_room", "room", "living room"),
        Entity("kitchen_table", "furniture", "kitchen table"),
        Entity("sofa", "furniture"),
        Entity("kitchen_sink", "sink", "kitchen sink"),
        Entity("mug_1", "dish", "blue mug"),
        Entity("book_1", "item", "cookbook"),
        Entity("ceiling_light", "light", "kitchen ceiling light"),
        Entity("alex", "person", "Alex"),
    ],
    [
        "(connected kitchen living_room)",
        "(connected living_room kitchen)",
        "(in_room kitchen_table kitchen)",
        "(in_room kitchen_sink kitchen)",
        "(in_room sofa living_room)",
        "(light_in ceiling_light kitchen)",
        "(robot_at robot_1 living_room)",
        "(hand_empty robot_1)",
        "(on mug_1 kitchen_table)",
        "(on book_1 sofa)",
        "(person_in alex living_room)",
    ],
)


def _steps() -> list[tuple[str, UpdateSource, str, Delta]]:
    facts = Fact.parse
    return [
        (
            "Alex turned on the kitchen light",
            UpdateSource.API,
            "Alex turned on the kitchen light.",
            Delta(add={facts("(light_on ceiling_light)")}),
        ),
        (
            "The robot moves to the kitchen",
            UpdateSource.EXECUTION,
            "(move robot_1 living_room kitchen)",
            Delta(remove={facts("(robot_at robot_1 living_room)")}, add={facts("(robot_at robot_1 kitchen)")}),
        ),
        (
            "The robot picks up the blue mug",
            UpdateSource.EXECUTION,
            "(pick robot_1 mug_1 kitchen_table kitchen)",
            Delta(
                remove={facts("(on mug_1 kitchen_table)"), facts("(hand_empty robot_1)")},
                add={facts("(held mug_1 robot_1)")},
            ),
        ),
        (
            "A bad report: the mug is on the sofa (but the robot holds it)",
            UpdateSource.API,
            "I put the blue mug on the sofa.",
            Delta(add={facts("(on mug_1 sofa)"), facts("(dirty mug_1)")}),
        ),
        (
            "Someone turned the light off again",
            UpdateSource.API,
            "Alex switched the kitchen light off.",
            Delta(remove={facts("(light_on ceiling_light)")}),
        ),
    ]


def run_demo(store: GraphStore, console: Console | None = None) -> WorldMemory:
    console = console or Console()
    if MEMORY in {m.name for m in store.list_memories()}:
        store.delete_memory(MEMORY)
    memory = WorldMemory.create(store, MEMORY, "example_home")
    console.rule(f"[bold]memory {MEMORY!r} on the {store.backend} store, domain example_home")
    entities, facts = _SURVEY
    _show_update(
        console,
        "Perception surveys the home",
        memory.add_entities(entities, facts=[Fact.parse(f) for f in facts], input="initial survey"),
    )
    for title, source, text, delta in _steps():
        _show_update(console, title, memory.apply(delta, source=source, input=text))
    latest = [u for u in memory.history() if u.status is UpdateStatus.APPLIED][-1]
    _show_update(console, f"Undo {latest.input!r} (a compensating update)", memory.revert(latest.id))
    _show_state(console, memory, memory.state(), "Current state")
    _show_history(console, memory.history())
    _show_state(console, memory, memory.state_at(1), "State at version 1, rebuilt from the history")
    return memory


def _show_update(console: Console, title: str, update: Update) -> None:
    colour = {"applied": "green", "rejected": "red", "noop": "yellow"}[update.status.value]
    console.print(f"[bold]{title}[/] → [{colour}]{update.status.value}[/] (version {update.version})")
    for issue in update.issues:
        console.print(f"   [red]{issue.code.value}[/]: {issue.message}")


def _show_state(console: Console, memory: WorldMemory, state: State, title: str) -> None:
    table = Table(title=f"{title} — version {state.version}, {len(state.facts)} facts")
    table.add_column("fact")
    table.add_column("in English")
    labels = {name: entity.label for name, entity in state.entities.items()}
    for fact in sorted(state.facts, key=str):
        table.add_row(fact.display(), memory.domain.language.fact(fact, labels))
    console.print(table)


def _show_history(console: Console, history: list[Update]) -> None:
    table = Table(title="History")
    for column in ("seq", "source", "status", "version", "input", "change"):
        table.add_column(column)
    for update in history:
        change = f"-{len(update.delta.remove)} +{len(update.delta.add)}"
        if update.delta.new_entities:
            change += f", {len(update.delta.new_entities)} new entities"
        table.add_row(
            str(update.seq), update.source.value, update.status.value, str(update.version), update.input, change
        )
    console.print(table)
