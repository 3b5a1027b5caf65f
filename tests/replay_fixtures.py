"""Builders for replay tests: a partition's story told in KRaft terms.

A ``Story`` hands out events with increasing metadata offsets and per-broker
line numbers, so that each test reads like the incident it describes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from replay.types import (
    NO_LEADER_CHANGE,
    RECOVERY_NO_CHANGE,
    BrokerFencing,
    Event,
    FetchAnswer,
    FollowerFetch,
    Origin,
    PartitionChangeRecord,
    PartitionKey,
    PartitionRecord,
    ProduceAck,
    Source,
)

KEY = PartitionKey(
    cluster="default", topic="orders", topic_id="5LHkG7R4S0aKxLbBzyP8wA", partition=0
)
T0 = datetime(2024, 5, 1, 10, 0, 0)
METADATA_FILE = "controller/metadata.txt"


def request_log(broker: int) -> str:
    return f"broker-{broker}/kafka-request.log"


@dataclass
class Story:
    events: list[Event] = field(default_factory=list)
    clock: float = 0.0
    metadata_offset: int = 0
    lines: dict[str, int] = field(default_factory=dict)

    def tick(self, seconds: float = 1.0) -> Story:
        self.clock += seconds
        return self

    def _origin(self, file: str, observer: int | None, metadata: bool) -> Origin:
        line = self.lines.get(file, 0) + 1
        self.lines[file] = line
        offset = None
        if metadata:
            offset = self.metadata_offset
            self.metadata_offset += 1
        return Origin(
            source=Source(file, line),
            time=T0 + timedelta(seconds=self.clock),
            observer=observer,
            metadata_offset=offset,
            seq=line * 10,
        )

    def _add(self, event: Event) -> Event:
        self.events.append(event)
        self.clock += 0.001
        return event

    # metadata

    def create(self, replicas: tuple[int, ...], leader: int) -> Event:
        return self._add(
            PartitionRecord(
                origin=self._origin(METADATA_FILE, None, True),
                replicas=replicas,
                isr=replicas,
                leader=leader,
                leader_epoch=0,
                partition_epoch=0,
            )
        )

    def change(
        self,
        *,
        leader: int = NO_LEADER_CHANGE,
        isr: tuple[int, ...] | None = None,
        recovery: int = RECOVERY_NO_CHANGE,
    ) -> Event:
        return self._add(
            PartitionChangeRecord(
                origin=self._origin(METADATA_FILE, None, True),
                leader=leader,
                isr=isr,
                leader_recovery_state=recovery,
            )
        )

    def fence(self, broker: int) -> Event:
        return self._add(
            BrokerFencing(
                origin=self._origin(METADATA_FILE, None, True),
                broker=broker,
                broker_epoch=None,
                fenced=1,
            )
        )

    # request-log observations at the leader

    def fetch(
        self,
        leader: int,
        follower: int,
        offset: int,
        *,
        epoch: int,
        last_fetched: int,
        hwm: int | None = None,
        diverging: tuple[int, int] | None = None,
    ) -> None:
        """One logged follower fetch: the request and (if given) its answer."""
        origin = self._origin(request_log(leader), leader, False)
        self._add(FollowerFetch(origin, follower, offset, last_fetched, epoch))
        if hwm is not None or diverging is not None:
            answer_origin = Origin(origin.source, origin.time, leader, None, origin.seq + 1)
            self._add(
                FetchAnswer(
                    answer_origin,
                    follower,
                    hwm,
                    0,
                    diverging[0] if diverging else None,
                    diverging[1] if diverging else None,
                )
            )

    def produce(self, leader: int, base_offset: int, *, acks: int, client: str = "app") -> None:
        self._add(
            ProduceAck(
                self._origin(request_log(leader), leader, False), acks, base_offset, 0, client
            )
        )
