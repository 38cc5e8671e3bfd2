"""English reports of household events: several paraphrases per event kind and level of detail.

The updater under test must read varied language, so every kind has at least three ``exact`` templates
(the report pins down the whole change, given the state before it and the closed world). ``vague`` ones
blur a detail: "someone" for the person, the room for the receptacle, "a mug" for the blue mug.
``partial`` ones leave out part of the change (where a carried item went, that a cup is now dirty).
Kinds without a sensible vague or partial wording simply have none.

Templates are clauses: they start lower-case unless a name leads, carry no final full stop, and are
filled by ``str.format_map`` with values that already include their articles ("the blue mug",
"the main kitchen"); :mod:`sim.events` capitalises and joins them.

Placeholders: ``actor`` and ``other`` (a person's name, or "someone"), ``item``, ``item_kind``
("a mug"), ``source``/``target`` (receptacle labels), ``source_prep`` ("off", "out of"), ``prep``
("on", "in"), ``room``/``source_room``/``target_room``, ``appliance`` (its noun) and ``appliance_label``,
``container`` and ``container_label``, ``liquid``, ``where`` ("on the desk"), ``clothes`` and
``first_clothes``, ``things`` and ``first_thing``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

Templates = Mapping[str, tuple[str, ...]]

_PHRASES: dict[str, dict[str, tuple[str, ...]]] = {
    # -- room: appliances and containers -------------------------------------------------------------
    "light_switched_on": {
        "exact": (
            "{actor} turned on {appliance} in {room}",
            "{actor} switched {appliance_label} on",
            "{appliance} in {room} is on now",
            "{actor} flicked on {appliance_label}",
        ),
        "vague": ("someone turned a light on in {room}", "a light came on in {room}"),
    },
    "light_switched_off": {
        "exact": (
            "{actor} turned off {appliance} in {room}",
            "{actor} switched {appliance_label} off",
            "{appliance} in {room} is off now",
            "{actor} flicked off {appliance_label}",
        ),
        "vague": ("someone turned a light off in {room}", "a light went off in {room}"),
    },
    "tv_switched_on": {
        "exact": (
            "{actor} turned on {appliance} in {room}",
            "{actor} switched {appliance_label} on",
            "{appliance_label} is on now",
        ),
        "vague": ("someone is watching TV", "a TV got switched on"),
    },
    "tv_switched_off": {
        "exact": (
            "{actor} turned off {appliance} in {room}",
            "{actor} switched {appliance_label} off",
            "{appliance_label} is off now",
        ),
        "vague": ("someone turned a TV off", "a TV got switched off"),
    },
    "faucet_turned_on": {
        "exact": (
            "{actor} turned on {appliance} in {room}",
            "{actor} left {appliance_label} running",
            "the water is running from {appliance_label}",
        ),
        "vague": ("someone left a tap running", "I can hear running water"),
    },
    "faucet_turned_off": {
        "exact": (
            "{actor} turned off {appliance} in {room}",
            "{actor} shut off {appliance_label}",
            "{appliance_label} is off now",
        ),
        "vague": ("someone turned off a tap", "the water stopped running somewhere"),
    },
    "container_opened": {
        "exact": (
            "{actor} opened {container} in {room}",
            "{actor} left {container_label} open",
            "{container_label} is open now",
        ),
        "vague": ("someone left {container} open", "something was left open in {room}"),
    },
    "container_closed": {
        "exact": (
            "{actor} closed {container} in {room}",
            "{actor} shut {container_label}",
            "{container_label} is closed now",
        ),
        "vague": ("someone closed {container}", "someone shut something in {room}"),
    },
    "room_switched_off": {
        "exact": (
            "{actor} turned off {things} in {room}",
            "{actor} switched off everything in {room}: {things}",
            "{things} in {room} are all off now",
        ),
        "vague": ("someone turned some things off in {room}", "it went dark in {room}"),
        "partial": ("{actor} turned off {first_thing} in {room}", "{first_thing} in {room} is off"),
    },
    # -- item: things people use and move ------------------------------------------------------------
    "item_moved": {
        "exact": (
            "{actor} moved {item} from {source} to {target}",
            "{actor} put {item} {prep} {target}",
            "{item} is {prep} {target} now",
            "{actor} took {item} {source_prep} {source} and put it {prep} {target}",
        ),
        "vague": ("someone left {item_kind} in {target_room}", "{item} ended up somewhere in {target_room}"),
        "partial": ("{actor} took {item} {source_prep} {source}", "{item} is not {where} anymore"),
    },
    "dish_used": {
        "exact": (
            "{actor} used {item} and left it dirty",
            "{item} is dirty now",
            "{actor} ate from {item}, so it needs washing",
        ),
        "vague": ("someone dirtied {item_kind} in {room}", "there's a dirty dish in {room}"),
    },
    "cup_drunk": {
        "exact": (
            "{actor} drank the {liquid} in {item} and left it dirty",
            "{item} is empty and dirty: {actor} finished the {liquid}",
            "{actor} finished the {liquid} from {item}, which needs washing now",
        ),
        "vague": ("someone drank from {item_kind} in {room}", "somebody finished a drink in {room}"),
        "partial": ("{actor} finished the {liquid} in {item}", "{item} is empty now"),
    },
    "dish_washed": {
        "exact": ("{actor} washed {item}", "{item} is clean now", "{actor} cleaned {item} in {room}"),
        "vague": ("someone washed {item_kind}", "a dish got washed in {room}"),
    },
    "cup_filled": {
        "exact": (
            "{actor} poured {liquid} into {item}",
            "{actor} filled {item} with {liquid}",
            "{item} has {liquid} in it now",
        ),
        "vague": ("someone poured a drink into {item}", "{item} has something in it now"),
    },
    "phone_rings": {
        "exact": ("{item} is ringing", "{item} {where} started ringing", "I can hear {item} ringing {where}"),
        "vague": ("a phone is ringing in {room}", "there's a phone ringing somewhere in {room}"),
    },
    "phone_answered": {
        "exact": (
            "{actor} answered {item}",
            "{item} stopped ringing; {actor} took the call",
            "{actor} took the call on {item}",
        ),
        "vague": ("someone answered the phone in {room}", "a phone stopped ringing in {room}"),
    },
    "clothes_to_washer": {
        "exact": ("{actor} put {item} in {target}", "{actor} loaded {item} into {target}", "{item} went into {target}"),
        "vague": ("someone put {item} in the wash", "{item_kind} went into a washer"),
    },
    "clothes_washed": {
        "exact": (
            "{actor} ran {container_label} with {clothes} inside",
            "{actor} washed {clothes} in {container_label}",
            "{actor} washed a load in {container_label}: {clothes}",
        ),
        "vague": ("someone ran the washer in {room}", "the washer in {room} just finished"),
        "partial": ("{actor} washed {first_clothes}", "{first_clothes} got washed"),
    },
    "clothes_to_dryer": {
        "exact": (
            "{actor} moved {item} from {source} to {target}",
            "{actor} put {item} in {target} to dry",
            "{item} went from {source} into {target}",
        ),
        "vague": ("someone moved {item} to a dryer", "{item_kind} went into a dryer"),
        "partial": ("{actor} took {item} out of {source}",),
    },
    "clothes_dried": {
        "exact": (
            "{actor} ran {container_label}, drying {clothes}",
            "{clothes} dried in {container_label}",
            "{actor} dried {clothes} in {container_label}",
        ),
        "vague": ("someone ran the dryer in {room}", "the dryer in {room} finished"),
        "partial": ("{actor} dried {first_clothes}", "{first_clothes} is dry now"),
    },
    "clothes_put_away": {
        "exact": (
            "{actor} put {item} away in {target}",
            "{actor} hung {item} in {target}",
            "{item} is back in {target}",
        ),
        "vague": ("someone put {item} away in {target_room}", "{item} was put away"),
    },
    "clothes_to_basket": {
        "exact": (
            "{actor} dropped {item} in {target} to be washed",
            "{actor} put {item} in {target} because it is dirty",
            "{item} is dirty, so {actor} threw it in {target}",
        ),
        "vague": ("someone threw {item} in a laundry basket", "{item_kind} went in the laundry in {target_room}"),
        "partial": ("{actor} put {item} in {target}",),
    },
    # -- person: people walk, pick up, put down and hand over ----------------------------------------
    "person_moves": {
        "exact": (
            "{actor} went from {source_room} to {target_room}",
            "{actor} walked into {target_room}",
            "{actor} is in {target_room} now",
            "{actor} moved over to {target_room}",
        ),
        "vague": ("someone came into {target_room} from {source_room}",),
        "partial": ("{actor} left {source_room}",),
    },
    "person_carries_item": {
        "exact": (
            "{actor} took {item} {source_prep} {source} to {target_room}",
            "{actor} carried {item} from {source} into {target_room}",
            "{actor} picked up {item} from {source} and went to {target_room}",
        ),
        "vague": ("{actor} took {item_kind} to {target_room}", "someone carried {item} off to {target_room}"),
        "partial": ("{actor} went to {target_room}", "{actor} picked up {item}"),
    },
    "person_picks_up": {
        "exact": (
            "{actor} picked up {item} from {source}",
            "{actor} grabbed {item} {source_prep} {source}",
            "{actor} is holding {item} now",
        ),
        "vague": ("someone in {room} picked up {item}", "{actor} picked something up in {room}"),
    },
    "person_puts_down": {
        "exact": (
            "{actor} put {item} {prep} {target}",
            "{actor} set {item} down {prep} {target}",
            "{actor} left {item} {prep} {target}",
        ),
        "vague": ("{actor} put {item} down somewhere in {room}", "someone put {item_kind} down in {room}"),
        "partial": ("{actor} is not holding {item} anymore",),
    },
    "person_hands_over": {
        "exact": (
            "{actor} gave {item} to {other}",
            "{actor} handed {item} to {other}",
            "{other} took {item} from {actor}",
        ),
        "vague": ("{actor} passed {item} to someone", "someone handed {other} {item_kind}"),
    },
}

# Two events in one sentence; ``first`` and ``second`` are clauses.
COMPOUND: tuple[str, ...] = (
    "{first}, and {second}",
    "{first}; meanwhile, {second}",
    "{first}, and then {second}",
    "{first} while {second}",
)

PHRASES: Mapping[str, Templates] = MappingProxyType({k: MappingProxyType(v) for k, v in _PHRASES.items()})
