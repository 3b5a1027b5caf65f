"""``kafka-request.log`` of Kafka 1.0-2.7: ``Completed request:`` text lines.

kafka-formats.md 1.2 and formats-addendum.md 11.1; read at 1.1.1 and 2.4.1:

* ``core/src/main/scala/kafka/network/RequestChannel.scala``
  ``updateRequestMetrics``: at DEBUG, ``Completed request:{header} --
  {request},response:{response} from connection {id};totalTime:{t},
  requestQueueTime:..,localTime:..,remoteTime:..,throttleTime:..,
  responseQueueTime:..,sendTime:..,securityProtocol:..,principal:..,
  listener:..`` (``clientInformation`` from 2.5). Times are ``Double``s in
  milliseconds with microsecond precision. A request with no response (acks=0)
  prints an empty response.
* ``RequestHeader.toString``: ``RequestHeader(apiKey=FETCH, apiVersion=7,
  clientId=x, correlationId=7)``; the request is ``AbstractRequest.toString
  (details)`` = ``toStruct().toString()``, except Produce, which prints
  ``{acks=..,timeout=..,numPartitions=..}`` unless the logger is at TRACE; the
  response is ``AbstractResponse.toString(version)`` =
  ``toStruct(version).toString()`` (``KafkaApis.sendResponse``).
* ``Struct.toString``: ``{name=value,...}`` in schema order, arrays ``[a,b]``,
  null ``null``, no spaces. Schemas from ``clients/.../requests/{Fetch,Produce,
  ListOffset,OffsetsForLeaderEpoch}{Request,Response}.java`` (1.1.1: Fetch v7,
  Produce v5, ListOffsets v1 (follower) / v2 (client), OffsetsForLeaderEpoch
  v0; 2.4.1: Fetch v11, Produce v8, ListOffsets v5, OffsetsForLeaderEpoch v3).
  1.1's Fetch v7 request names the forgotten topics ``forgetten_topics_data``
  (sic) and the fetch-session epoch ``epoch``.
* A Fetch answer's ``record_set`` prints the records object: an empty read is
  ``MemoryRecords.EMPTY`` (1.1 ``[]``; 2.4 ``MemoryRecords(size=0, buffer=
  java.nio.HeapByteBuffer[pos=0 lim=0 cap=0])``), a read from the segment a
  ``FileRecords`` slice (1.1 has no ``toString``: ``org.apache.kafka.common.
  record.FileRecords@<hash>``; 2.4 ``FileRecords(size=N, file=..., start=S,
  end=E)``).
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import TypeAlias

from simulator.artefacts import NONE, RECORD_BYTES, REQUEST_LOGGER, batch_bytes, ip
from simulator.logs import DATA_DIR
from simulator.sinks import DEFAULT_OUTPUT, Log4j, Output
from simulator.versions import Version

Value: TypeAlias = "int | str | None | list[Value] | Struct"


class Struct:
    """An ordered ``Struct`` as ``Struct.toString`` prints it."""

    def __init__(self, *fields: tuple[str, Value]) -> None:
        self.fields = fields

    def __str__(self) -> str:
        return "{" + ",".join(f"{name}={render(value)}" for name, value in self.fields) + "}"


def render(value: Value) -> str:
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ",".join(render(v) for v in value) + "]"
    return str(value)


def ms_double(value: float) -> str:
    """A Scala ``Double`` with microsecond precision (``nanosToMs``)."""
    return repr(round(value, 3) + 0.0)


ERROR_NAMES = {
    NONE: "NONE",
    1: "OFFSET_OUT_OF_RANGE",
    6: "NOT_LEADER_FOR_PARTITION",
    74: "FENCED_LEADER_EPOCH",
    75: "UNKNOWN_LEADER_EPOCH",
}


class StructRequestLog:
    """One 1.1 or 2.4 broker's ``kafka-request.log`` (DEBUG)."""

    def __init__(
        self, path: Path, broker: int, version: Version, output: Output = DEFAULT_OUTPUT
    ) -> None:
        self.broker = broker
        self.version = version
        self.kafka28 = False
        self._log = Log4j(path, "request", output)
        self._correlation: dict[str, int] = {}

    @property
    def lines(self) -> int:
        return self._log.lines

    def close(self) -> None:
        self._log.close()

    @property
    def _v24(self) -> bool:
        return self.version.at_least("2.4")

    def _write(
        self,
        ms: int,
        api: str,
        api_version: int,
        client: str,
        request: str,
        response: str,
        connection: str,
        remote_ms: float,
    ) -> None:
        corr = self._correlation.get(client, -1) + 1
        self._correlation[client] = corr
        header = (
            f"RequestHeader(apiKey={api}, apiVersion={api_version}, clientId={client}, "
            f"correlationId={corr})"
        )
        total = remote_ms + 0.412
        self._log.write(
            ms,
            "DEBUG",
            f"Completed request:{header} -- {request},response:{response} from connection "
            f"{connection};totalTime:{ms_double(total)},requestQueueTime:0.021,localTime:0.311,"
            f"remoteTime:{ms_double(remote_ms)},throttleTime:0.0,responseQueueTime:0.03,"
            "sendTime:0.05,securityProtocol:PLAINTEXT,principal:User:ANONYMOUS,"
            "listener:PLAINTEXT",
            REQUEST_LOGGER,
        )

    # -- record sets ---------------------------------------------------------------
    def _records(self, topic: str, p: int, offset: int, size: int, leo_read: bool) -> str:
        """``leo_read``: the read started at the log end (``MemoryRecords.EMPTY``)."""
        if size == 0 and leo_read:
            if self._v24:
                return "MemoryRecords(size=0, buffer=java.nio.HeapByteBuffer[pos=0 lim=0 cap=0])"
            return "[]"
        start = offset * RECORD_BYTES
        if self._v24:
            return (
                f"FileRecords(size={size}, file={DATA_DIR}/{topic}-{p}/00000000000000000000.log, "
                f"start={start}, end={start + size})"
            )
        # Object.toString: the class name and an identity hash code in hex
        code = zlib.crc32(f"{self.broker}/{topic}-{p}/{start}".encode()) & 0x7FFFFFFF
        return f"org.apache.kafka.common.record.FileRecords@{code:x}"

    def _empty(self) -> str:
        return self._records("", 0, 0, 0, True)

    # -- Fetch ---------------------------------------------------------------------------
    def _fetch(
        self,
        ms: int,
        replica: int,
        client: str,
        connection: str,
        session_id: int,
        session_epoch: int,
        parts: list[tuple[str, int, int, int, int]],
        answers: list[tuple[str, int, int, int, int, int]],
        wait_ms: float,
        log_start: int,
    ) -> None:
        """``parts``: (topic, partition, current leader epoch, fetch offset, -);
        ``answers``: (topic, partition, error, HWM, records bytes, log end of the
        answering replica)."""
        topics: dict[str, list[Struct]] = {}
        for topic, p, cle, offset, _lfe in parts:
            if self._v24:  # FETCH_REQUEST_PARTITION_V9
                fields: list[tuple[str, Value]] = [
                    ("partition", p),
                    ("current_leader_epoch", cle),
                    ("fetch_offset", offset),
                    ("log_start_offset", log_start),
                    ("partition_max_bytes", 1048576),
                ]
            else:  # FETCH_REQUEST_PARTITION_V5
                fields = [
                    ("partition", p),
                    ("fetch_offset", offset),
                    ("log_start_offset", log_start),
                    ("max_bytes", 1048576),
                ]
            topics.setdefault(topic, []).append(Struct(*fields))
        topic_structs: list[Value] = [
            Struct(("topic", t), ("partitions", list(ps))) for t, ps in topics.items()
        ]
        head: list[tuple[str, Value]] = [
            ("replica_id", replica),
            ("max_wait_time", 500),
            ("min_bytes", 1),
            ("max_bytes", 52428800 if replica < 0 else 10485760),
            ("isolation_level", 0),
            ("session_id", session_id),
            ("session_epoch" if self._v24 else "epoch", session_epoch),
            ("topics", topic_structs),
            ("forgotten_topics_data" if self._v24 else "forgetten_topics_data", []),
        ]
        if self._v24:
            head.append(("rack_id", ""))
        request = Struct(*head)
        offsets = {(t, p): o for t, p, _c, o, _l in parts}
        out: dict[str, list[Struct]] = {}
        for topic, p, error, hwm, size, leo in answers:
            offset = offsets[(topic, p)]
            header: list[tuple[str, Value]] = [
                ("partition", p),
                ("error_code", error),
                ("high_watermark", hwm),
                ("last_stable_offset", hwm),
                ("log_start_offset", 0 if error == NONE else -1),
                ("aborted_transactions", None),
            ]
            if self._v24:
                header.append(("preferred_read_replica", -1))
            records = (
                self._records(topic, p, offset, size, offset >= leo)
                if error == NONE
                else self._empty()
            )
            out.setdefault(topic, []).append(
                Struct(("partition_header", Struct(*header)), ("record_set", records))
            )
        response = Struct(
            ("throttle_time_ms", 0),
            ("error_code", 0),
            ("session_id", session_id),
            (
                "responses",
                [Struct(("topic", t), ("partition_responses", list(ps))) for t, ps in out.items()],
            ),
        )
        self._write(
            ms,
            "FETCH",
            self.version.fetch_version,
            client,
            str(request),
            str(response),
            connection,
            wait_ms,
        )

    def fetch(
        self,
        ms: int,
        follower: int,
        session_id: int,
        parts: list[tuple[str, int, int, int, int]],
        answers: list[tuple[str, int, int, int, tuple[int, int] | None, int]],
        wait_ms: float,
        leos: dict[tuple[str, int], int] | None = None,
    ) -> None:
        """A follower's Fetch (the ``RequestLog.fetch`` signature); ``leos``: the
        leader's log end per partition when it answered."""
        ends = leos or {}
        self._fetch(
            ms,
            follower,
            f"broker-{follower}-fetcher-0",
            f"{ip(self.broker)}:9092-{ip(follower)}:{51000 + follower}-{follower}",
            session_id,
            0,
            parts,
            [(t, p, e, h, s, ends.get((t, p), -1)) for t, p, e, h, _d, s in answers],
            wait_ms,
            0,
        )

    def consumer_fetch(
        self,
        ms: int,
        consumer: int,
        topic: str,
        p: int,
        cle: int,
        offset: int,
        error: int,
        hwm: int,
        records: int,
        leo: int,
        wait_ms: float,
    ) -> None:
        """A consumer's sessionless Fetch (replica_id -1, epoch -1: FINAL_EPOCH)."""
        self._fetch(
            ms,
            -1,
            consumer_client(self.version, consumer),
            consumer_connection(self.broker, consumer),
            0,
            -1,
            [(topic, p, cle, offset, -1)],
            [(topic, p, error, hwm, batch_bytes(records), leo)],
            wait_ms,
            -1,
        )

    # -- Produce -------------------------------------------------------------------------
    def produce(
        self,
        ms: int,
        client: int,
        topic: str,
        p: int,
        acks: int,
        records: int,
        error: int | None,
        base: int,
        waited_ms: int,
    ) -> None:
        """``ProduceRequest.toString(false)`` at DEBUG; acks=0: no response."""
        request = f"{{acks={acks},timeout=30000,numPartitions=1}}"
        response = ""
        if error is not None:
            part: list[tuple[str, Value]] = [
                ("partition", p),
                ("error_code", error),
                ("base_offset", base if error == NONE else -1),
                ("log_append_time", -1),
                ("log_start_offset", 0 if error == NONE else -1),
            ]
            if self._v24:
                part += [("record_errors", []), ("error_message", None)]
            response = str(
                Struct(
                    (
                        "responses",
                        [
                            Struct(
                                ("topic", topic),
                                ("partition_responses", [Struct(*part)]),
                            )
                        ],
                    ),
                    ("throttle_time_ms", 0),
                )
            )
        self._write(
            ms,
            "PRODUCE",
            self.version.produce_version,
            f"producer-{client}",
            request,
            response,
            f"{ip(self.broker)}:9092-10.0.1.{client}:{40000 + client}-{client}",
            float(waited_ms),
        )

    # -- ListOffsets ---------------------------------------------------------------------
    def list_offsets(
        self,
        ms: int,
        replica: int,
        consumer: int,
        topic: str,
        p: int,
        cle: int,
        error: int,
        offset: int,
        epoch: int,
    ) -> None:
        """LATEST (timestamp -1): a consumer's (``replica`` -1) gets the HWM, a
        follower's its leader's log end (addendum 11.1). 1.1's fetcher asks with
        v1 (``ReplicaFetcherThread.earliestOrLatestOffset``)."""
        if replica >= 0:
            version = self.version.list_offsets_version if self._v24 else 1
            client = f"broker-{replica}-fetcher-0"
            connection = f"{ip(self.broker)}:9092-{ip(replica)}:{51000 + replica}-{replica}"
        else:
            version = self.version.list_offsets_version
            client = consumer_client(self.version, consumer)
            connection = consumer_connection(self.broker, consumer)
        part: list[tuple[str, Value]] = [("partition", p)]
        if version >= 4:
            part.append(("current_leader_epoch", cle))
        part.append(("timestamp", -1))
        head: list[tuple[str, Value]] = [("replica_id", replica)]
        if version >= 2:
            head.append(("isolation_level", 0))
        head.append(("topics", [Struct(("topic", topic), ("partitions", [Struct(*part)]))]))
        answer: list[tuple[str, Value]] = [
            ("partition", p),
            ("error_code", error),
            ("timestamp", -1),
            ("offset", offset if error == NONE else -1),
        ]
        if version >= 4:
            answer.append(("leader_epoch", epoch if error == NONE else -1))
        body: list[tuple[str, Value]] = []
        if version >= 2:
            body.append(("throttle_time_ms", 0))
        body.append(
            ("responses", [Struct(("topic", topic), ("partition_responses", [Struct(*answer)]))])
        )
        self._write(
            ms,
            "LIST_OFFSETS",
            version,
            client,
            str(Struct(*head)),
            str(Struct(*body)),
            connection,
            0.0,
        )

    # -- OffsetsForLeaderEpoch -------------------------------------------------------------
    def offsets_for_leader_epoch(
        self,
        ms: int,
        replica: int,
        consumer: int,
        entries: list[tuple[str, int, int, int, int, int, int]],
    ) -> None:
        """``entries``: (topic, partition, current leader epoch, leader epoch asked,
        error, epoch answered, end offset). v0 (1.1): no current epoch, no epoch in
        the answer, no replica id; v3 (2.4): all of them."""
        version = self.version.epoch_request_version
        if replica >= 0:
            client = f"broker-{replica}-fetcher-0"
            connection = f"{ip(self.broker)}:9092-{ip(replica)}:{51000 + replica}-{replica}"
        else:
            client = consumer_client(self.version, consumer)
            connection = consumer_connection(self.broker, consumer)
        asked: dict[str, list[Value]] = {}
        told: dict[str, list[Value]] = {}
        for topic, p, cle, epoch, error, answered, end in entries:
            ask: list[tuple[str, Value]] = [("partition", p)]
            if version >= 2:
                ask.append(("current_leader_epoch", cle))
            ask.append(("leader_epoch", epoch))
            asked.setdefault(topic, []).append(Struct(*ask))
            tell: list[tuple[str, Value]] = [("error_code", error), ("partition", p)]
            if version >= 1:
                tell.append(("leader_epoch", answered))
            tell.append(("end_offset", end))
            told.setdefault(topic, []).append(Struct(*tell))
        head: list[tuple[str, Value]] = []
        if version >= 3:
            head.append(("replica_id", replica))
        head.append(
            ("topics", [Struct(("topic", t), ("partitions", ps)) for t, ps in asked.items()])
        )
        body: list[tuple[str, Value]] = []
        if version >= 2:
            body.append(("throttle_time_ms", 0))
        body.append(
            ("topics", [Struct(("topic", t), ("partitions", ps)) for t, ps in told.items()])
        )
        self._write(
            ms,
            "OFFSET_FOR_LEADER_EPOCH",
            version,
            client,
            str(Struct(*head)),
            str(Struct(*body)),
            connection,
            0.0,
        )


def consumer_client(version: Version, consumer: int) -> str:
    """A Java consumer's default client id: ``consumer-<n>`` up to 2.3,
    ``consumer-<group>-<n>`` from 2.4 (KAFKA-9033)."""
    if version.before("2.4"):
        return f"consumer-{consumer}"
    return f"consumer-audit-{consumer}"


def consumer_connection(broker: int, consumer: int) -> str:
    return f"{ip(broker)}:9092-10.0.2.{consumer}:{42000 + consumer}-{100 + consumer}"
