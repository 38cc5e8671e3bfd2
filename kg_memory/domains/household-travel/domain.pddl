; GENERATED from ../household by tools/travel_domains.py: edit household, then run that script.
; The household in which moving costs the distance between the rooms (IPC :action-costs); every
; other action costs nothing, so the cheapest plan is the one that walks least.
; The household of L3M+P's text simulation (Sec. V.A): rooms, furniture and receptacles,
; items, appliances, people and one robot. Closed world: "closed" is (not (open ?c)),
; "clean" is (not (dirty ?i)), "dry" is (not (wet ?c)), "empty" is no (filled ?c ?l).
(define (domain household-travel)
  (:requirements :strips :typing :negative-preconditions :conditional-effects
                 :universal-preconditions :existential-preconditions :action-costs)
  (:types
    room receptacle item appliance agent liquid - object
    surface container sink basket toilet - receptacle
    washer dryer - container
    book pen food dish clothes remote phone - item
    perishable nonperishable - food
    cup - dish
    light tv faucet - appliance
    robot person - agent)
  (:constants
    robot_1 - robot
    water milk juice coffee - liquid)
  (:predicates
    (connected ?a - room ?b - room)
    (in_room ?r - receptacle ?rm - room)
    (appliance_in ?x - appliance ?rm - room)
    (faucet_at ?f - faucet ?s - sink)
    (robot_at ?a - robot ?rm - room)
    (person_in ?p - person ?rm - room)
    (on ?i - item ?r - receptacle)
    (inside ?i - item ?c - container)
    (held ?i - item ?a - robot)
    (hand_empty ?a - robot)
    (in_hand ?i - item ?p - person)
    (switched_on ?x - appliance)
    (open ?c - container)
    (dirty ?i - item)
    (wet ?c - clothes)
    (ringing ?ph - phone)
    (filled ?d - dish ?l - liquid))
  (:functions (distance ?from - room ?to - room) (total-cost) - number)

  (:action move
    :parameters (?a - robot ?from - room ?to - room)
    :precondition (and (robot_at ?a ?from) (connected ?from ?to))
    :effect (and (not (robot_at ?a ?from)) (robot_at ?a ?to) (increase (total-cost) (distance ?from ?to))))

  (:action pick
    :parameters (?a - robot ?i - item ?r - receptacle ?rm - room)
    :precondition (and (robot_at ?a ?rm) (in_room ?r ?rm) (on ?i ?r) (hand_empty ?a))
    :effect (and (not (on ?i ?r)) (not (hand_empty ?a)) (held ?i ?a)))

  (:action take_out
    :parameters (?a - robot ?i - item ?c - container ?rm - room)
    :precondition (and (robot_at ?a ?rm) (in_room ?c ?rm) (inside ?i ?c) (open ?c) (hand_empty ?a))
    :effect (and (not (inside ?i ?c)) (not (hand_empty ?a)) (held ?i ?a)))

  (:action place
    :parameters (?a - robot ?i - item ?r - receptacle ?rm - room)
    :precondition (and (robot_at ?a ?rm) (in_room ?r ?rm) (held ?i ?a))
    :effect (and (on ?i ?r) (hand_empty ?a) (not (held ?i ?a))))

  (:action put_in
    :parameters (?a - robot ?i - item ?c - container ?rm - room)
    :precondition (and (robot_at ?a ?rm) (in_room ?c ?rm) (open ?c) (held ?i ?a))
    :effect (and (inside ?i ?c) (hand_empty ?a) (not (held ?i ?a))))

  (:action open_container
    :parameters (?a - robot ?c - container ?rm - room)
    :precondition (and (robot_at ?a ?rm) (in_room ?c ?rm) (not (open ?c)))
    :effect (open ?c))

  (:action close_container
    :parameters (?a - robot ?c - container ?rm - room)
    :precondition (and (robot_at ?a ?rm) (in_room ?c ?rm) (open ?c))
    :effect (not (open ?c)))

  (:action switch_on
    :parameters (?a - robot ?x - appliance ?rm - room)
    :precondition (and (robot_at ?a ?rm) (appliance_in ?x ?rm) (not (switched_on ?x)))
    :effect (switched_on ?x))

  (:action switch_off
    :parameters (?a - robot ?x - appliance ?rm - room)
    :precondition (and (robot_at ?a ?rm) (appliance_in ?x ?rm) (switched_on ?x))
    :effect (not (switched_on ?x)))

  (:action wash
    :parameters (?a - robot ?d - dish ?s - sink ?f - faucet ?rm - room)
    :precondition (and (robot_at ?a ?rm) (in_room ?s ?rm) (faucet_at ?f ?s) (switched_on ?f)
                       (held ?d ?a) (dirty ?d))
    :effect (and (not (dirty ?d))
                 (forall (?l - liquid) (when (filled ?d ?l) (not (filled ?d ?l))))))

  (:action run_washer
    :parameters (?a - robot ?w - washer ?rm - room)
    :precondition (and (robot_at ?a ?rm) (in_room ?w ?rm) (not (open ?w)))
    :effect (forall (?c - clothes) (when (inside ?c ?w) (and (not (dirty ?c)) (wet ?c)))))

  (:action run_dryer
    :parameters (?a - robot ?d - dryer ?rm - room)
    :precondition (and (robot_at ?a ?rm) (in_room ?d ?rm) (not (open ?d)))
    :effect (forall (?c - clothes) (when (inside ?c ?d) (not (wet ?c)))))

  (:action give
    :parameters (?a - robot ?i - item ?p - person ?rm - room)
    :precondition (and (robot_at ?a ?rm) (person_in ?p ?rm) (held ?i ?a))
    :effect (and (in_hand ?i ?p) (hand_empty ?a) (not (held ?i ?a))))

  (:action fill
    :parameters (?a - robot ?c - cup ?s - sink ?f - faucet ?rm - room)
    :precondition (and (robot_at ?a ?rm) (in_room ?s ?rm) (faucet_at ?f ?s) (switched_on ?f) (held ?c ?a)
                       (not (dirty ?c)) (forall (?l - liquid) (not (filled ?c ?l))))
    :effect (filled ?c water))

  (:action pour_out
    :parameters (?a - robot ?c - cup ?s - sink ?rm - room)
    :precondition (and (robot_at ?a ?rm) (in_room ?s ?rm) (held ?c ?a)
                       (exists (?l - liquid) (filled ?c ?l)))
    :effect (and (dirty ?c) (forall (?l - liquid) (when (filled ?c ?l) (not (filled ?c ?l))))))

  (:action answer_phone
    :parameters (?a - robot ?ph - phone)
    :precondition (and (held ?ph ?a) (ringing ?ph))
    :effect (not (ringing ?ph))))
