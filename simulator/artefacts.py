"""Streamed writers for the artefacts a 3.6 KRaft cluster leaves behind.

* ``broker-N/kafka-request.log``: ``kafka.request.logger`` DEBUG lines, KIP-673
  JSON (kafka-formats.md 1.2, 1.5, 1.6). Only requests the broker *received*.
* zk-hw (0.10.1): the same file as TRACE text lines (``TextRequestLog``).
* ``controller/metadata.log.txt``: ``kafka-dump-log --cluster-metadata-decoder``
  of ``__cluster_metadata-0`` (kafka-formats.md 2.1-2.4).

Every line is written as it happens; nothing is kept in memory beyond the
open file handles. JSON keys follow the message schemas' field order.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any, TextIO

from simulator.sinks import DEFAULT_OUTPUT, EPOCH_MS, Log4j, Output

NONE = 0
OFFSET_OUT_OF_RANGE = 1
NOT_LEADER_OR_FOLLOWER = 6
REQUEST_TIMED_OUT = 7
NOT_ENOUGH_REPLICAS = 19
NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
FENCED_LEADER_EPOCH = 74
UNKNOWN_LEADER_EPOCH = 75

REQUEST_LOGGER = "kafka.request.logger"
RECORD_BYTES = 100  # bytes per record in a batch, for recordsSizeInBytes
BATCH_OVERHEAD = 61


def dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def batch_bytes(records: int) -> int:
    return BATCH_OVERHEAD + RECORD_BYTES * records if records > 0 else 0


def ip(broker: int) -> str:
    return f"10.0.0.{broker}"


class RequestLog:
    """One broker's ``kafka-request.log``, appended line by line."""

    def __init__(
        self, path: Path, broker: int, kafka28: bool = False, output: Output = DEFAULT_OUTPUT
    ) -> None:
        self.broker = broker
        # zk-epoch: Kafka 2.8 on ZooKeeper, Fetch v12 (topic names) with the
        # 2.8 JSON names partitionResponses / partition / recordSetSizeInBytes
        self.kafka28 = kafka28
        self._log = Log4j(path, "request", output)
        self._correlation: dict[str, int] = {}

    @property
    def lines(self) -> int:
        return self._log.lines

    def close(self) -> None:
        self._log.close()

    def _write(
        self,
        ms: int,
        api_key: int,
        name: str,
        version: int,
        client: str,
        request: object,
        response: object,
        connection: str,
        total_ms: float,
        remote_ms: float,
        software: tuple[str, str],
    ) -> None:
        corr = self._correlation.get(client, 0) + 1
        self._correlation[client] = corr
        body: dict[str, Any] = {
            "isForwarded": False,
            "requestHeader": {
                "requestApiKey": api_key,
                "requestApiVersion": version,
                "correlationId": corr,
                "clientId": client,
                "requestApiKeyName": name,
            },
            "request": request,
            "response": response,
            "connection": connection,
            "totalTimeMs": total_ms,
            "requestQueueTimeMs": 0.021,
            "localTimeMs": 0.311,
            "remoteTimeMs": remote_ms,
            "throttleTimeMs": 0,
            "responseQueueTimeMs": 0.03,
            "sendTimeMs": 0.05,
            "securityProtocol": "PLAINTEXT",
            "principal": "User:ANONYMOUS",
            "listener": "PLAINTEXT",
            "clientInformation": {"softwareName": software[0], "softwareVersion": software[1]},
        }
        self._log.write(ms, "DEBUG", f"Completed request:{dumps(body)}", REQUEST_LOGGER)

    @property
    def _topic_key(self) -> str:
        return "topic" if self.kafka28 else "topicId"

    def fetch(
        self,
        ms: int,
        follower: int,
        session_id: int,
        parts: list[tuple[str, int, int, int, int]],
        answers: list[tuple[str, int, int, int, tuple[int, int] | None, int]],
        wait_ms: float,
    ) -> None:
        """A follower's Fetch v13 (full request, sessionEpoch 0); v12 in 2.8.

        parts: (topic id (2.8: topic name), partition, current leader epoch, fetch offset, last
        fetched epoch). answers: (topic id, partition, error code, high
        watermark, diverging (epoch, end offset) or None, records bytes)."""
        topics: dict[str, list[dict[str, Any]]] = {}
        for topic_id, p, cle, offset, lfe in parts:
            topics.setdefault(topic_id, []).append(
                {
                    "partition": p,
                    "currentLeaderEpoch": cle,
                    "fetchOffset": offset,
                    "lastFetchedEpoch": lfe,
                    "logStartOffset": 0,
                    "partitionMaxBytes": 1048576,
                }
            )
        request = {
            "replicaId": follower,
            "maxWaitMs": 500,
            "minBytes": 1,
            "maxBytes": 10485760,
            "isolationLevel": 0,
            "sessionId": 0,
            "sessionEpoch": 0,
            "topics": [{self._topic_key: k, "partitions": v} for k, v in topics.items()],
            "forgottenTopicsData": [],
            "rackId": "",
        }
        out: dict[str, list[dict[str, Any]]] = {}
        for topic_id, p, error, hwm, diverging, size in answers:
            part: dict[str, Any] = {
                ("partition" if self.kafka28 else "partitionIndex"): p,
                "errorCode": error,
                "highWatermark": hwm,
                "lastStableOffset": hwm,
                "logStartOffset": 0 if error == NONE else -1,
            }
            if diverging is not None:
                part["divergingEpoch"] = {"epoch": diverging[0], "endOffset": diverging[1]}
            part["abortedTransactions"] = None
            part["preferredReadReplica"] = -1
            part["recordSetSizeInBytes" if self.kafka28 else "recordsSizeInBytes"] = size
            out.setdefault(topic_id, []).append(part)
        parts_key = "partitionResponses" if self.kafka28 else "partitions"
        response = {
            "throttleTimeMs": 0,
            "errorCode": 0,
            "sessionId": session_id,
            "responses": [{self._topic_key: k, parts_key: v} for k, v in out.items()],
        }
        connection = f"{ip(self.broker)}:9092-{ip(follower)}:{51000 + follower}-{follower}"
        self._write(
            ms,
            1,
            "FETCH",
            12 if self.kafka28 else 13,
            f"broker-{follower}-fetcher-0",
            request,
            response,
            connection,
            round(wait_ms + 0.412, 3),
            round(wait_ms, 3),
            ("unknown", "unknown"),
        )

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
        """A producer's Produce v9; ``error`` None means acks=0 (no response)."""
        request = {
            "transactionalId": None,
            "acks": acks,
            "timeoutMs": 30000,
            "topicData": [
                {
                    "name": topic,
                    "partitionData": [{"index": p, "recordsSizeInBytes": batch_bytes(records)}],
                }
            ],
        }
        response: object
        if error is None:
            response = ""
        else:
            response = {
                "responses": [
                    {
                        "name": topic,
                        "partitionResponses": [
                            {
                                "index": p,
                                "errorCode": error,
                                "baseOffset": base if error == NONE else -1,
                                "logAppendTimeMs": -1,
                                "logStartOffset": 0 if error == NONE else -1,
                                "recordErrors": [],
                                "errorMessage": None,
                            }
                        ],
                    }
                ],
                "throttleTimeMs": 0,
            }
        host = f"10.0.1.{client}"
        connection = f"{ip(self.broker)}:9092-{host}:{40000 + client}-{client}"
        self._write(
            ms,
            0,
            "PRODUCE",
            9,
            f"producer-{client}",
            request,
            response,
            connection,
            round(waited_ms + 0.412, 3),
            float(waited_ms),
            ("apache-kafka-java", "3.6.1"),
        )

    # -- consumers (formats-addendum.md 11) ----------------------------------------
    def consumer_fetch(
        self,
        ms: int,
        consumer: int,
        topic_ref: str,
        p: int,
        cle: int,
        offset: int,
        error: int,
        hwm: int,
        records: int,
        wait_ms: float,
        version: int,
    ) -> None:
        """A consumer's sessionless Fetch (sessionEpoch -1, FINAL_EPOCH) at
        ``version`` (12 on 2.8, 15 on 3.6, 17 on 4.0): ``replicaId`` -1 up to v14,
        no replica key from v15 (the tagged ``replicaState`` is left at its
        default); ``lastFetchedEpoch`` -1 and ``logStartOffset`` -1 (a consumer's,
        kafka-formats.md 1.6). ``topic_ref``: the name (v12) or the topic id."""
        request: dict[str, Any] = {}
        if version < 15:
            request["replicaId"] = -1
        request.update(
            {
                "maxWaitMs": 500,
                "minBytes": 1,
                "maxBytes": 52428800,
                "isolationLevel": 0,
                "sessionId": 0,
                "sessionEpoch": -1,
                "topics": [
                    {
                        self._topic_key: topic_ref,
                        "partitions": [
                            {
                                "partition": p,
                                "currentLeaderEpoch": cle,
                                "fetchOffset": offset,
                                "lastFetchedEpoch": -1,
                                "logStartOffset": -1,
                                "partitionMaxBytes": 1048576,
                            }
                        ],
                    }
                ],
                "forgottenTopicsData": [],
                "rackId": "",
            }
        )
        part: dict[str, Any] = {
            ("partition" if self.kafka28 else "partitionIndex"): p,
            "errorCode": error,
            "highWatermark": hwm,
            "lastStableOffset": hwm,
            "logStartOffset": 0 if error == NONE else -1,
            "abortedTransactions": None,
            "preferredReadReplica": -1,
            ("recordSetSizeInBytes" if self.kafka28 else "recordsSizeInBytes"): batch_bytes(
                records
            ),
        }
        response = {
            "throttleTimeMs": 0,
            "errorCode": 0,
            "sessionId": 0,
            "responses": [
                {
                    self._topic_key: topic_ref,
                    ("partitionResponses" if self.kafka28 else "partitions"): [part],
                }
            ],
        }
        self._write(
            ms,
            1,
            "FETCH",
            version,
            consumer_client_id(consumer),
            request,
            response,
            f"{ip(self.broker)}:9092-10.0.2.{consumer}:{42000 + consumer}-{100 + consumer}",
            round(wait_ms + 0.412, 3),
            round(wait_ms, 3),
            ("apache-kafka-java", "3.6.1"),
        )

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
        version: int,
    ) -> None:
        """ListOffsets LATEST (timestamp -1) at ``version`` (6 on 2.8, 8 on 3.6, 10
        on 4.0, whose request ends with ``timeoutMs``): a consumer's (replicaId -1,
        isolationLevel 0) is answered with the HWM (addendum 11.1)."""
        request: dict[str, Any] = {
            "replicaId": replica,
            "isolationLevel": 0,
            "topics": [
                {
                    "name": topic,
                    "partitions": [
                        {"partitionIndex": p, "currentLeaderEpoch": cle, "timestamp": -1}
                    ],
                }
            ],
        }
        if version >= 10:
            request["timeoutMs"] = 0
        response = {
            "throttleTimeMs": 0,
            "topics": [
                {
                    "name": topic,
                    "partitions": [
                        {
                            "partitionIndex": p,
                            "errorCode": error,
                            "timestamp": -1,
                            "offset": offset if error == NONE else -1,
                            "leaderEpoch": epoch if error == NONE else -1,
                        }
                    ],
                }
            ],
        }
        self._write(
            ms,
            2,
            "LIST_OFFSETS",
            version,
            consumer_client_id(consumer),
            request,
            response,
            f"{ip(self.broker)}:9092-10.0.2.{consumer}:{42000 + consumer}-{100 + consumer}",
            0.453,
            0.0,
            ("apache-kafka-java", "3.6.1"),
        )

    def offsets_for_leader_epoch(
        self,
        ms: int,
        replica: int,
        consumer: int,
        entries: list[tuple[str, int, int, int, int, int, int]],
    ) -> None:
        """OffsetsForLeaderEpoch v4 (kafka-formats.md 1.7); a consumer's carries
        replicaId -1 (``forConsumer``). ``entries``: (topic, partition, current
        leader epoch, leader epoch asked, error, epoch answered, end offset)."""
        asked: dict[str, list[dict[str, Any]]] = {}
        told: dict[str, list[dict[str, Any]]] = {}
        for topic, p, cle, epoch, error, answered, end in entries:
            asked.setdefault(topic, []).append(
                {"partition": p, "currentLeaderEpoch": cle, "leaderEpoch": epoch}
            )
            told.setdefault(topic, []).append(
                {"errorCode": error, "partition": p, "leaderEpoch": answered, "endOffset": end}
            )
        request = {
            "replicaId": replica,
            "topics": [{"topic": t, "partitions": ps} for t, ps in asked.items()],
        }
        response = {
            "throttleTimeMs": 0,
            "topics": [{"topic": t, "partitions": ps} for t, ps in told.items()],
        }
        self._write(
            ms,
            23,
            "OFFSET_FOR_LEADER_EPOCH",
            4,
            consumer_client_id(consumer),
            request,
            response,
            f"{ip(self.broker)}:9092-10.0.2.{consumer}:{42000 + consumer}-{100 + consumer}",
            0.431,
            0.0,
            ("apache-kafka-java", "3.6.1"),
        )


def consumer_client_id(consumer: int) -> str:
    """A 2.4+ Java consumer's default client id, ``consumer-<group>-<n>`` (KAFKA-9033)."""
    return f"consumer-audit-{consumer}"


class TextRequestLog:
    """zk-hw: one 0.10.1 broker's ``kafka-request.log`` with the request
    logger at TRACE, appended line by line.

    Sources, all at the tag ``0.10.1.1`` of apache/kafka (the same texts at
    0.10.0.0-0.10.1.1; 0.10.2 logs ``Completed request`` through ``trace``
    only, with every body as a protocol ``Struct``):

    * ``core/src/main/scala/kafka/network/RequestChannel.scala``
      ``updateRequestMetrics``: with the logger at TRACE,
      ``requestLogger.trace("Completed request:%s from connection
      %s;totalTime:%d,requestQueueTime:%d,localTime:%d,remoteTime:%d,
      responseQueueTime:%d,sendTime:%d,securityProtocol:%s,principal:%s")``
      with ``requestDesc(true)``; times are whole milliseconds; no response
      is printed. ``requestDesc`` is ``requestObj.describe(details)`` for the
      requests still read server-side (FETCH, ControlledShutdown), else
      ``header.toString + " -- " + body.toString``. Written once the
      response is sent, and for acks=0 produces too (``NoOpAction`` in
      ``SocketServer.scala`` calls ``updateRequestMetrics``).
    * ``core/src/main/scala/kafka/api/FetchRequest.scala`` ``describe``:
      ``Name: FetchRequest; Version: V; CorrelationId: C; ClientId: X;
      ReplicaId: R; MaxWait: W ms; MinBytes: B bytes; MaxBytes:M bytes``
      (no space after ``MaxBytes:``), then with details ``; RequestInfo: ``
      and ``requestInfo.mkString(",")`` of ``(TopicAndPartition,
      PartitionFetchInfo)`` pairs: ``([topic,p],PartitionFetchInfo(offset,
      fetchSize))`` (``TopicAndPartition.toString`` is ``[%s,%d]``, a case
      class prints ``Name(a,b)``, a Tuple2 ``(a,b)``).
    * the follower's side, ``ReplicaFetcherThread.scala`` /
      ``ReplicaFetcherManager.scala``: client id (= thread name)
      ``ReplicaFetcherThread-<fetcherId>-<leaderId>``, Fetch version 3 from
      inter.broker.protocol.version 0.10.1-IV1, maxWait
      ``replica.fetch.wait.max.ms`` 500, minBytes 1, maxBytes
      ``replica.fetch.response.max.bytes`` 10485760, per-partition fetchSize
      ``replica.fetch.max.bytes`` 1048576 (``KafkaConfig.scala`` defaults).
      The fetch offset is the follower's log end offset.
    * Produce (read client-side): ``RequestHeader`` and ``ProduceRequest``
      print their ``Struct`` (``AbstractRequestResponse.toString``;
      ``protocol/types/Struct.java``: ``{name=value,...}``, arrays
      ``[a,b]``). ``Protocol.java``: header fields ``api_key, api_version,
      correlation_id, client_id``; Produce v2 ``acks, timeout,
      topic_data=[{topic, data=[{partition, record_set}]}]``; ``record_set``
      is the ``ByteBuffer`` slice ``Type.BYTES.read`` returns, printed
      ``java.nio.HeapByteBuffer[pos=0 lim=N cap=N]`` (the last field of the
      request, so capacity = size). No offsets, no error code.
    * ``SocketServer.scala`` ``ConnectionId.toString``:
      ``localHost:localPort-remoteHost:remotePort``; ``KafkaPrincipal``:
      ``User:ANONYMOUS``; ``config/log4j.properties``: ``[%d] %p %m (%c)%n``.
    """

    def __init__(self, path: Path, broker: int, output: Output = DEFAULT_OUTPUT) -> None:
        self.broker = broker
        self.kafka28 = False
        self._log = Log4j(path, "request", output)
        self._correlation: dict[str, int] = {}

    @property
    def lines(self) -> int:
        return self._log.lines

    def close(self) -> None:
        self._log.close()

    def _next(self, client: str) -> int:
        corr = self._correlation.get(client, -1) + 1
        self._correlation[client] = corr
        return corr

    def _write(
        self, ms: int, desc: str, connection: str, remote_ms: int, local_ms: int = 0
    ) -> None:
        total = remote_ms + local_ms
        self._log.write(
            ms,
            "TRACE",
            f"Completed request:{desc} from connection "
            f"{connection};totalTime:{total},requestQueueTime:0,localTime:{local_ms},"
            f"remoteTime:{remote_ms},responseQueueTime:0,sendTime:0,"
            "securityProtocol:PLAINTEXT,principal:User:ANONYMOUS",
            REQUEST_LOGGER,
        )

    def fetch(
        self,
        ms: int,
        follower: int,
        session_id: int,
        parts: list[tuple[str, int, int, int, int]],
        answers: list[tuple[str, int, int, int, tuple[int, int] | None, int]],
        wait_ms: float,
    ) -> None:
        """A follower's Fetch v3; ``parts``: (topic, partition, -, fetch offset, -).
        ``session_id`` is unused (no fetch sessions before 1.1)."""
        client = f"ReplicaFetcherThread-0-{self.broker}"
        # one fetcher thread per follower: its own correlation ids
        correlation = self._next(f"{client}/{follower}")
        info = ",".join(
            f"([{topic},{p}],PartitionFetchInfo({offset},1048576))"
            for topic, p, _cle, offset, _lfe in parts
        )
        desc = (
            f"Name: FetchRequest; Version: 3; CorrelationId: {correlation}; "
            f"ClientId: {client}; ReplicaId: {follower}; MaxWait: 500 ms; "
            f"MinBytes: 1 bytes; MaxBytes:10485760 bytes; RequestInfo: {info}"
        )
        connection = f"{ip(self.broker)}:9092-{ip(follower)}:{51000 + follower}"
        self._write(ms, desc, connection, int(wait_ms))

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
        """A producer's Produce v2 (0.10.1 Java producer): acks and sizes only."""
        client_id = f"producer-{client}"
        size = RECORD_BYTES * records
        header = (
            f"{{api_key=0,api_version=2,correlation_id={self._next(client_id)},"
            f"client_id={client_id}}}"
        )
        body = (
            f"{{acks={acks},timeout=30000,topic_data=[{{topic={topic},data=[{{partition={p},"
            f"record_set=java.nio.HeapByteBuffer[pos=0 lim={size} cap={size}]}}]}}]}}"
        )
        connection = f"{ip(self.broker)}:9092-10.0.1.{client}:{40000 + client}"
        self._write(ms, f"{header} -- {body}", connection, int(waited_ms), 1)

    # -- consumers and ListOffsets (formats-addendum.md 11.1: no response before 1.0) --
    def consumer_fetch(
        self, ms: int, consumer: int, topic: str, p: int, offset: int, waited_ms: int = 0
    ) -> None:
        """A 0.10.1 consumer's Fetch v3: the Scala ``describe`` with ReplicaId -1
        (``fetch.max.bytes`` 52428800, ``max.partition.fetch.bytes`` 1048576);
        ``waited_ms``: the long poll (``fetch.max.wait.ms``) an empty answer waited."""
        client = f"consumer-{consumer}"
        desc = (
            f"Name: FetchRequest; Version: 3; CorrelationId: {self._next(client)}; "
            f"ClientId: {client}; ReplicaId: -1; MaxWait: 500 ms; MinBytes: 1 bytes; "
            f"MaxBytes:52428800 bytes; RequestInfo: ([{topic},{p}],PartitionFetchInfo({offset},"
            "1048576))"
        )
        connection = f"{ip(self.broker)}:9092-10.0.2.{consumer}:{42000 + consumer}"
        self._write(ms, desc, connection, waited_ms)

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
        """ListOffsets v1, read client-side: ``header -- body`` structs, no answer
        (``Protocol.java`` @0.10.1.1 ``LIST_OFFSET_REQUEST_V1``). A follower asks
        from its fetcher thread's client (``earliestOrLatestOffset``)."""
        if replica >= 0:
            client = f"ReplicaFetcherThread-0-{self.broker}"
            correlation = self._next(f"{client}/{replica}")
            connection = f"{ip(self.broker)}:9092-{ip(replica)}:{51000 + replica}"
        else:
            client = f"consumer-{consumer}"
            correlation = self._next(client)
            connection = f"{ip(self.broker)}:9092-10.0.2.{consumer}:{42000 + consumer}"
        header = f"{{api_key=2,api_version=1,correlation_id={correlation},client_id={client}}}"
        body = (
            f"{{replica_id={replica},topics=[{{topic={topic},partitions=[{{partition={p},"
            "timestamp=-1}]}]}"
        )
        self._write(ms, f"{header} -- {body}", connection, 0)


class NullDump:
    """ZK eras: no ``__cluster_metadata`` log. Counts records so that broker
    epochs (a KRaft registration's offset) stay distinct and increasing, like
    the czxid of a ZK broker registration."""

    def __init__(self) -> None:
        self.offset = 0

    def close(self) -> None:
        pass

    def batch(self, ms: int, records: list[dict[str, Any]]) -> None:
        self.offset += len(records)


class MetadataDump:
    """``kafka-dump-log --cluster-metadata-decoder`` of ``__cluster_metadata-0``."""

    PATH = "/var/lib/kafka/metadata/__cluster_metadata-0/00000000000000000000.log"

    def __init__(self, path: Path, quorum_epoch: int = 1) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: TextIO = path.open("w", encoding="utf-8", buffering=1 << 16)
        self._fh.write(f"Dumping {self.PATH}\nLog starting offset: 0\n")
        self.offset = 0
        self.position = 0
        self.quorum_epoch = quorum_epoch

    def close(self) -> None:
        self._fh.close()

    def batch(self, ms: int, records: list[dict[str, Any]]) -> None:
        if not records:
            return
        ts = EPOCH_MS + ms
        payloads = [dumps(r) for r in records]
        sizes = [len(p) // 2 for p in payloads]
        size = 61 + sum(s + 10 for s in sizes)
        last = self.offset + len(records) - 1
        crc = zlib.crc32("".join(payloads).encode()) & 0xFFFFFFFF
        lines = [
            f"baseOffset: {self.offset} lastOffset: {last} count: {len(records)} "
            "baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
            f"partitionLeaderEpoch: {self.quorum_epoch} isTransactional: false isControl: false "
            f"deleteHorizonMs: OptionalLong.empty position: {self.position} CreateTime: {ts} "
            f"size: {size} magic: 2 compresscodec: none crc: {crc} isvalid: true"
        ]
        for payload, value_size in zip(payloads, sizes, strict=True):
            lines.append(
                f"| offset: {self.offset} CreateTime: {ts} keySize: -1 valueSize: {value_size} "
                f"sequence: -1 headerKeys: [] payload: {payload}"
            )
            self.offset += 1
        self._fh.write("\n".join(lines) + "\n")
        self.position += size


# ---- metadata records (kafka-formats.md 2.4), keys in schema order ----------


def _rec(kind: str, version: int, data: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind, "version": version, "data": data}


def incarnation(broker: int, generation: int) -> str:
    """A deterministic 22-character base64url uuid."""
    import base64

    raw = zlib.crc32(f"{broker}:{generation}".encode()).to_bytes(4, "big") * 4
    return base64.urlsafe_b64encode(raw).decode()[:22]


def log_dir_id(broker: int) -> str:
    """A broker's (single) log directory uuid, deterministic."""
    import base64

    raw = zlib.crc32(f"dir:{broker}".encode()).to_bytes(4, "big") * 4
    return base64.urlsafe_b64encode(raw).decode()[:22]


def register_broker(broker: int, epoch: int, generation: int, elr: bool = False) -> dict[str, Any]:
    """v2 at MV 3.6; v3 (logDirs, tagged) from MV 3.7-IV2, so in the kraft-elr era."""
    features = [
        {
            "name": "metadata.version",
            "minSupportedVersion": 1,
            "maxSupportedVersion": 25 if elr else 14,
        }
    ]
    if elr:
        features.append(
            {
                "name": "eligible.leader.replicas.version",
                "minSupportedVersion": 0,
                "maxSupportedVersion": 1,
            }
        )
    data: dict[str, Any] = {
        "brokerId": broker,
        "isMigratingZkBroker": False,
        "incarnationId": incarnation(broker, generation),
        "brokerEpoch": epoch,
        "endPoints": [
            {"name": "PLAINTEXT", "host": f"broker-{broker}", "port": 9092, "securityProtocol": 0}
        ],
        "features": features,
        "rack": None,
        "fenced": True,
        "inControlledShutdown": False,
    }
    if elr:
        data["logDirs"] = [log_dir_id(broker)]
    return _rec("REGISTER_BROKER_RECORD", 3 if elr else 2, data)


def broker_change(
    broker: int, epoch: int, fenced: int = 0, shutdown: bool = False
) -> dict[str, Any]:
    data: dict[str, Any] = {"brokerId": broker, "brokerEpoch": epoch}
    if fenced:
        data["fenced"] = fenced
    if shutdown:
        data["inControlledShutdown"] = 1
    return _rec("BROKER_REGISTRATION_CHANGE_RECORD", 1 if shutdown else 0, data)


def topic_record(name: str, topic_id: str) -> dict[str, Any]:
    return _rec("TOPIC_RECORD", 0, {"name": name, "topicId": topic_id})


def config_record(topic: str, name: str, value: str) -> dict[str, Any]:
    return _rec(
        "CONFIG_RECORD",
        0,
        {"resourceType": 2, "resourceName": topic, "name": name, "value": value},
    )


def partition_record(
    topic_id: str, p: int, replicas: list[int], isr: list[int], leader: int, elr: bool = False
) -> dict[str, Any]:
    """v0 at MV 3.6; v2 (directories, ELR tagged fields) in the kraft-elr era.

    ``eligibleLeaderReplicas`` / ``lastKnownElr`` are tagged and written only
    when non-empty, so a new partition carries neither."""
    data: dict[str, Any] = {
        "partitionId": p,
        "topicId": topic_id,
        "replicas": list(replicas),
        "isr": list(isr),
        "removingReplicas": [],
        "addingReplicas": [],
        "leader": leader,
        "leaderEpoch": 0,
        "partitionEpoch": 0,
    }
    if elr:
        data["directories"] = [log_dir_id(r) for r in replicas]
    return _rec("PARTITION_RECORD", 2 if elr else 0, data)


def partition_change(
    topic_id: str,
    p: int,
    isr: list[int] | None = None,
    leader: int = -2,
    recovery: int = -1,
    elr: list[int] | None = None,
    lkelr: list[int] | None = None,
    version: int = 0,
) -> dict[str, Any]:
    """Every field after topicId is tagged: written only when it changes."""
    data: dict[str, Any] = {"partitionId": p, "topicId": topic_id}
    if isr is not None:
        data["isr"] = list(isr)
    if leader != -2:
        data["leader"] = leader
    if recovery != -1:
        data["leaderRecoveryState"] = recovery
    if elr is not None:
        data["eligibleLeaderReplicas"] = list(elr)
    if lkelr is not None:
        data["lastKnownElr"] = list(lkelr)
    return _rec("PARTITION_CHANGE_RECORD", version, data)
