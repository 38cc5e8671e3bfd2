; A small home for examples, tests and benchmarks of the world-state memory.
(define (domain example_home)
  (:requirements :strips :typing :negative-preconditions :conditional-effects :universal-preconditions)
  (:types
    room furniture item appliance agent - object
    sink - furniture
    dish - item
    light - appliance
    robot person - agent)
  (:constants robot_1 - robot)
  (:predicates
    (connected ?a - room ?b - room)
    (in_room ?f - furniture ?r - room)
    (light_in ?l - light ?r - room)
    (robot_at ?a - robot ?r - room)
    (person_in ?p - person ?r - room)
    (on ?i - item ?f - furniture)
    (held ?i - item ?a - robot)
    (in_hand ?i - item ?p - person)
    (hand_empty ?a - robot)
    (light_on ?l - light)
    (dirty ?d - dish))

  (:action move
    :parameters (?a - robot ?from - room ?to - room)
    :precondition (and (robot_at ?a ?from) (connected ?from ?to))
    :effect (and (not (robot_at ?a ?from)) (robot_at ?a ?to)))

  (:action pick
    :parameters (?a - robot ?i - item ?f - furniture ?r - room)
    :precondition (and (robot_at ?a ?r) (in_room ?f ?r) (on ?i ?f) (hand_empty ?a))
    :effect (and (not (on ?i ?f)) (not (hand_empty ?a)) (held ?i ?a)))

  (:action place
    :parameters (?a - robot ?i - item ?f - furniture ?r - room)
    :precondition (and (robot_at ?a ?r) (in_room ?f ?r) (held ?i ?a))
    :effect (and (on ?i ?f) (hand_empty ?a) (not (held ?i ?a))))

  (:action give
    :parameters (?a - robot ?i - item ?p - person ?r - room)
    :precondition (and (robot_at ?a ?r) (person_in ?p ?r) (held ?i ?a))
    :effect (and (in_hand ?i ?p) (hand_empty ?a) (not (held ?i ?a))))

  (:action switch_on
    :parameters (?a - robot ?l - light ?r - room)
    :precondition (and (robot_at ?a ?r) (light_in ?l ?r) (not (light_on ?l)))
    :effect (light_on ?l))

  (:action switch_off_all
    :parameters (?a - robot ?r - room)
    :precondition (robot_at ?a ?r)
    :effect (forall (?l - light) (when (light_in ?l ?r) (not (light_on ?l)))))

  (:action wash
    :parameters (?a - robot ?d - dish ?s - sink ?r - room)
    :precondition (and (robot_at ?a ?r) (in_room ?s ?r) (held ?d ?a) (dirty ?d))
    :effect (not (dirty ?d))))
