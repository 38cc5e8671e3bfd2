; GENERATED from ../thor by tools/travel_domains.py: edit thor, then run that script.
; AI2-THOR in which going to an object costs the distance from where the agent stands, between the
; two objects' positions as THOR reports them (IPC :action-costs); every other action costs nothing.
; AI2-THOR (iTHOR, ai2thor 5.0.0) as PDDL: one type per THOR object type (125, from the object
; types table of Kajiih/rl_ai2thor, MIT), capabilities and "what fits in what" as static facts that
; perception writes, and the state THOR reports as dynamic facts. Perception reads every dynamic fact
; from THOR's metadata; none is tracked by us. Closed world: "closed" is (not (is_open ?o)), "off" is
; (not (is_on ?o)), "clean" is (not (is_dirty ?o)).
(define (domain thor-travel)
  (:requirements :strips :typing :negative-preconditions :universal-preconditions
                 :disjunctive-preconditions :equality :action-costs)
  (:types
    thing agent - object
    alarmclock aluminumfoil apple applesliced armchair baseballbat basketball bathtub
    bathtubbasin bed blinds book boots bottle bowl box bread breadsliced cd cabinet candle
    cellphone chair cloth coffeemachine coffeetable countertop creditcard cup curtains desk
    desklamp desktop diningtable dishsponge dogbed drawer dresser dumbbell egg eggcracked
    faucet floor floorlamp footstool fork fridge garbagebag garbagecan handtowel
    handtowelholder houseplant kettle keychain ladle laptop laundryhamper lettuce lettucesliced
    lightswitch microwave mirror mug newspaper ottoman painting pan papertowelroll pen pencil
    peppershaker pillow plate plunger poster pot potato potatosliced remotecontrol roomdecor
    safe saltshaker scrubbrush shelf shelvingunit showercurtain showerdoor showerglass
    showerhead sidetable sink sinkbasin soapbar soapbottle sofa spatula spoon spraybottle
    statue stool stoveburner stoveknob tvstand tabletopdecor targetcircle teddybear television
    tennisracket tissuebox toaster toilet toiletpaper toiletpaperhanger tomato tomatosliced
    towel towelholder vacuumcleaner vase watch wateringcan window winebottle cutter - thing
    knife butterknife - cutter)
  (:constants robot_1 - agent)
  (:predicates
    ; static: what an object can do (THOR's actionable properties), and what fits in what
    (pickupable ?o - thing)
    (receptacle ?o - thing)
    (openable ?o - thing)
    (toggleable ?o - thing)
    (sliceable ?o - thing)
    (dirtyable ?o - thing)
    (fillable ?o - thing)
    (cookable ?o - thing)
    (breakable ?o - thing)
    (fits ?o - thing ?r - thing)
    ; dynamic: THOR's state of each object and of the agent
    (in_receptacle ?o - thing ?r - thing)
    (holding ?a - agent ?o - thing)
    (hand_empty ?a - agent)
    (near ?a - agent ?o - thing)
    (at ?a - agent ?o - thing)
    (is_open ?o - thing)
    (is_on ?o - thing)
    (is_dirty ?o - thing)
    (filled ?o - thing)
    (is_sliced ?o - thing)
    (is_cooked ?o - thing)
    (is_broken ?o - thing)
    (is_hot ?o - thing)
    (is_cold ?o - thing))
  (:functions (distance ?from - thing ?to - thing) (total-cost) - number)

  ; GetInteractablePoses then TeleportFull: the agent stands at the object, which is then in reach;
  ; what else is, THOR reports.
  (:action go_to
    :parameters (?a - agent ?from - thing ?to - thing)
    :precondition (and (at ?a ?from) (not (= ?from ?to)))
    :effect (and (not (at ?a ?from)) (at ?a ?to) (near ?a ?to) (increase (total-cost) (distance ?from ?to))))

  (:action pick_up
    :parameters (?a - agent ?o - thing)
    :precondition (and (at ?a ?o) (pickupable ?o) (hand_empty ?a))
    :effect (and (holding ?a ?o) (not (hand_empty ?a))
                 (forall (?r - thing) (not (in_receptacle ?o ?r)))))

  (:action put
    :parameters (?a - agent ?o - thing ?r - thing)
    :precondition (and (holding ?a ?o) (at ?a ?r) (receptacle ?r) (fits ?o ?r)
                       (or (not (openable ?r)) (is_open ?r)))
    :effect (and (in_receptacle ?o ?r) (hand_empty ?a) (not (holding ?a ?o))))

  ; THOR decides where a dropped object lands: perception says so afterwards.
  (:action drop
    :parameters (?a - agent ?o - thing)
    :precondition (holding ?a ?o)
    :effect (and (hand_empty ?a) (not (holding ?a ?o))))

  (:action open
    :parameters (?a - agent ?o - thing)
    :precondition (and (at ?a ?o) (openable ?o) (not (is_open ?o)))
    :effect (is_open ?o))

  (:action close
    :parameters (?a - agent ?o - thing)
    :precondition (and (at ?a ?o) (openable ?o) (is_open ?o))
    :effect (not (is_open ?o)))

  (:action toggle_on
    :parameters (?a - agent ?o - thing)
    :precondition (and (at ?a ?o) (toggleable ?o) (not (is_on ?o)))
    :effect (is_on ?o))

  (:action toggle_off
    :parameters (?a - agent ?o - thing)
    :precondition (and (at ?a ?o) (toggleable ?o) (is_on ?o))
    :effect (not (is_on ?o)))

  (:action clean
    :parameters (?a - agent ?o - thing)
    :precondition (and (at ?a ?o) (dirtyable ?o) (is_dirty ?o))
    :effect (not (is_dirty ?o)))

  (:action fill
    :parameters (?a - agent ?o - thing)
    :precondition (and (at ?a ?o) (fillable ?o) (not (filled ?o)))
    :effect (filled ?o))

  (:action empty
    :parameters (?a - agent ?o - thing)
    :precondition (and (at ?a ?o) (fillable ?o) (filled ?o))
    :effect (not (filled ?o)))

  (:action slice
    :parameters (?a - agent ?o - thing ?k - cutter)
    :precondition (and (at ?a ?o) (sliceable ?o) (not (is_sliced ?o)) (holding ?a ?k))
    :effect (is_sliced ?o)))
