"""The product's use cases: what people say (Alg. 3) and what the robot senses, into verified memory
updates; planning from memory (Alg. 4); installing domains and importing PDDL problems. Each takes a
memory and, where it needs one, a language model, and returns a result value."""

from l3mp.pipelines.context import ModelRetrieval, Retrieved
from l3mp.pipelines.conversation import Exchange, Reply, ask_parsed
from l3mp.pipelines.domains import DomainClash, ImportFailed, ImportReport, import_problem, install_domain
from l3mp.pipelines.errors import AnswerProblem, PipelineError
from l3mp.pipelines.nl_update import NLUpdateConfig, NLUpdater, NLUpdateResult
from l3mp.pipelines.plans import PlanConfig, PlanReport, TaskPlanner
from l3mp.pipelines.sensor_update import SensorResult, SensorUpdater

__all__ = [
    "AnswerProblem",
    "DomainClash",
    "Exchange",
    "ImportFailed",
    "ImportReport",
    "ModelRetrieval",
    "NLUpdateConfig",
    "NLUpdateResult",
    "NLUpdater",
    "PipelineError",
    "PlanConfig",
    "PlanReport",
    "Reply",
    "Retrieved",
    "SensorResult",
    "SensorUpdater",
    "TaskPlanner",
    "ask_parsed",
    "import_problem",
    "install_domain",
]
