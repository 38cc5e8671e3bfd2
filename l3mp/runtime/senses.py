"""What the robot perceives and hears: the environment's observations as sensor updates, and people's
reports read through the language model (Alg. 3) as NL updates."""

from __future__ import annotations

from kg_memory.memory import WorldMemory
from kg_memory.model import Delta, Issue, IssueCode, UpdateSource
from l3mp.llm.base import LanguageModel
from l3mp.pipelines import NLUpdateConfig, NLUpdater, SensorUpdater
from l3mp.runtime.environment import Environment
from l3mp.runtime.records import UpdateRecord


class Senses:
    def __init__(
        self,
        memory: WorldMemory,
        env: Environment,
        model: LanguageModel | None,
        *,
        update: NLUpdateConfig,
        max_reports: int,
    ) -> None:
        self.memory = memory
        self.env = env
        self.sensor = SensorUpdater(memory)
        self.nl = NLUpdater(memory, model, update) if model is not None else None
        self.max_reports = max_reports

    def perceive(self) -> tuple[UpdateRecord, Delta]:
        """Look: the sensor update, and what it changed."""
        result = self.sensor.apply(self.env.observe())
        return UpdateRecord.of(result.update), result.delta

    def read_reports(self) -> tuple[tuple[str, ...], list[UpdateRecord]]:
        """What people said since the last read (at most ``max_reports``), each read into an update;
        without a model each is recorded as rejected, so nothing said is lost silently."""
        texts: list[str] = []
        records: list[UpdateRecord] = []
        while len(texts) < self.max_reports and (text := self.env.next_report()) is not None:
            texts.append(text)
            if self.nl is not None:
                records.append(UpdateRecord.of(self.nl.update(text).update))
            else:
                issue = Issue(IssueCode.INVALID_INPUT, None, "the runtime has no language model to read reports")
                records.append(UpdateRecord.of(self.memory.reject(source=UpdateSource.NL, input=text, issues=[issue])))
        return tuple(texts), records
