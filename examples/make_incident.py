"""Write the bundled incident ``examples/unclean-election/``.

Every line follows kafka-formats.md to the letter (request log JSON of a 3.6
broker, section 1.2/1.5/1.6; ``kafka-dump-log --cluster-metadata-decoder``
output, sections 2.1-2.4). The story, on a three-broker KRaft cluster
(min.insync.replicas=1):

orders-0 (replicas 1,2,3; leader 1):
  10:00  followers 2 and 3 replicate offsets [0, 100); HWM 100.
  10:01  the ISR shrinks to [1]; the leader alone takes acks=all writes up to
         offset 150 (HWM 150); follower 2 is at 120 when it stops fetching.
  10:02  broker 1 is fenced: no leader (epoch 1).
  10:05  an operator runs an unclean election: broker 2 leads epoch 2 from its
         log end, 120 (RECOVERING). Committed offsets [120, 150) are gone.
  10:10  broker 1 returns, is told its log diverges at 120, truncates to 120.
orders-1 (replicas 1,3,2; leader 1): broker 1 writes acks=1 records [60, 70)
  above the HWM 60 and is fenced; broker 3 is elected cleanly from the ISR;
  broker 1 returns and truncates [60, 70): uncommitted, so no finding.
payments-0 (replicas 2,3; leader 2): nothing happens; valid.

The last line of broker 1's request log is cut off mid-JSON (the file was
copied while being written): it must be quarantined, never dropped.

Run: python examples/make_incident.py  (deterministic; rewrites the folder).
"""

from __future__ import annotations

import gzip
import json
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).parent / "unclean-election"
START = datetime(2024, 5, 1, 10, 0, 0)
ORDERS = "5LHkG7R4S0aKxLbBzyP8wA"
PAYMENTS = "q2xVh0rGT3WnYk8bCzE1mA"
IPS = {1: "10.0.0.1", 2: "10.0.0.2", 3: "10.0.0.3"}


def dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S,") + f"{t.microsecond // 1000:03d}"


class RequestLog:
    """One broker's kafka-request.log: requests it received."""

    def __init__(self, broker: int) -> None:
        self.broker = broker
        self.lines: list[str] = []
        self.correlation = 1000

    def _line(
        self,
        t: datetime,
        api_key: int,
        name: str,
        version: int,
        client: str,
        request: object,
        response: object,
        remote: int,
    ) -> None:
        self.correlation += 1
        body = {
            "isForwarded": False,
            "requestHeader": {
                "requestApiKey": api_key,
                "requestApiVersion": version,
                "correlationId": self.correlation,
                "clientId": client,
                "requestApiKeyName": name,
            },
            "request": request,
            "response": response,
            "connection": f"{IPS[self.broker]}:9092-{IPS.get(remote, '10.0.9.9')}:"
            f"{51000 + remote}-{remote}",
            "totalTimeMs": 0.412,
            "requestQueueTimeMs": 0.021,
            "localTimeMs": 0.311,
            "remoteTimeMs": 0.0,
            "throttleTimeMs": 0,
            "responseQueueTimeMs": 0.03,
            "sendTimeMs": 0.05,
            "securityProtocol": "PLAINTEXT",
            "principal": "User:ANONYMOUS",
            "listener": "PLAINTEXT",
            "clientInformation": {"softwareName": "apache-kafka-java", "softwareVersion": "3.6.1"},
        }
        self.lines.append(
            f"[{stamp(t)}] DEBUG Completed request:{dumps(body)} (kafka.request.logger)"
        )

    def fetch(
        self,
        t: datetime,
        follower: int,
        parts: list[tuple[str, int, int, int, int]],
        answers: list[tuple[str, int, int, dict[str, int] | None, int]],
        session_epoch: int = 1,
    ) -> None:
        """parts: (topic id, partition, current leader epoch, fetch offset,
        last fetched epoch); answers: (topic id, partition, hwm, diverging
        epoch or None, records size)."""
        by_topic: dict[str, list[dict[str, object]]] = {}
        for topic_id, p, cle, offset, lfe in parts:
            by_topic.setdefault(topic_id, []).append(
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
            "sessionId": 700 + follower,
            "sessionEpoch": session_epoch,
            "topics": [{"topicId": k, "partitions": v} for k, v in by_topic.items()],
            "forgottenTopicsData": [],
            "rackId": "",
        }
        resp_topics: dict[str, list[dict[str, object]]] = {}
        for topic_id, p, hwm, diverging, size in answers:
            partition: dict[str, object] = {
                "partitionIndex": p,
                "errorCode": 0,
                "highWatermark": hwm,
                "lastStableOffset": hwm,
                "logStartOffset": 0,
            }
            if diverging is not None:
                partition["divergingEpoch"] = diverging
            partition.update(
                {
                    "abortedTransactions": None,
                    "preferredReadReplica": -1,
                    "recordsSizeInBytes": size,
                }
            )
            resp_topics.setdefault(topic_id, []).append(partition)
        response = {
            "throttleTimeMs": 0,
            "errorCode": 0,
            "sessionId": 700 + follower,
            "responses": [{"topicId": k, "partitions": v} for k, v in resp_topics.items()],
        }
        self._line(t, 1, "FETCH", 13, f"broker-{follower}-fetcher-0", request, response, follower)

    def consumer_fetch(self, t: datetime, topic_id: str, p: int, offset: int, hwm: int) -> None:
        request = {
            "replicaId": -1,
            "maxWaitMs": 500,
            "minBytes": 1,
            "maxBytes": 52428800,
            "isolationLevel": 1,
            "sessionId": 0,
            "sessionEpoch": -1,
            "topics": [
                {
                    "topicId": topic_id,
                    "partitions": [
                        {
                            "partition": p,
                            "currentLeaderEpoch": 0,
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
        response = {
            "throttleTimeMs": 0,
            "errorCode": 0,
            "sessionId": 0,
            "responses": [
                {
                    "topicId": topic_id,
                    "partitions": [
                        {
                            "partitionIndex": p,
                            "errorCode": 0,
                            "highWatermark": hwm,
                            "lastStableOffset": hwm,
                            "logStartOffset": 0,
                            "abortedTransactions": [],
                            "preferredReadReplica": -1,
                            "recordsSizeInBytes": 0,
                        }
                    ],
                }
            ],
        }
        self._line(t, 1, "FETCH", 13, "consumer-audit-1", request, response, 9)

    def produce(
        self,
        t: datetime,
        topic: str,
        p: int,
        acks: int,
        base: int,
        client: str = "checkout-service",
        error: int = 0,
    ) -> None:
        request = {
            "transactionalId": None,
            "acks": acks,
            "timeoutMs": 30000,
            "topicData": [
                {"name": topic, "partitionData": [{"index": p, "recordsSizeInBytes": 1480}]}
            ],
        }
        response = {
            "responses": [
                {
                    "name": topic,
                    "partitionResponses": [
                        {
                            "index": p,
                            "errorCode": error,
                            "baseOffset": base,
                            "logAppendTimeMs": -1,
                            "logStartOffset": 0,
                            "recordErrors": [],
                            "errorMessage": None,
                        }
                    ],
                }
            ],
            "throttleTimeMs": 0,
        }
        self._line(t, 0, "PRODUCE", 9, client, request, response, 9)

    def metadata_request(self, t: datetime) -> None:
        request = {
            "topics": None,
            "allowAutoTopicCreation": True,
            "includeTopicAuthorizedOperations": False,
        }
        response = {
            "throttleTimeMs": 0,
            "brokers": [],
            "clusterId": "MkU3OEVBNTcwNTJENDM2Qk",
            "controllerId": 1,
            "topics": [],
        }
        self._line(t, 3, "METADATA", 12, "checkout-service", request, response, 9)


class MetadataDump:
    """``kafka-dump-log --cluster-metadata-decoder`` of one log segment."""

    def __init__(self) -> None:
        self.lines = [
            "Dumping /var/lib/kafka/metadata/__cluster_metadata-0/00000000000000000000.log",
            "Log starting offset: 0",
        ]
        self.offset = 0
        self.position = 0

    def batch(self, t: datetime, records: list[dict[str, object]]) -> None:
        ms = int((t - datetime(1970, 1, 1)).total_seconds() * 1000)
        last = self.offset + len(records) - 1
        size = 70 + 60 * len(records)
        self.lines.append(
            f"baseOffset: {self.offset} lastOffset: {last} count: {len(records)} "
            "baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
            "partitionLeaderEpoch: 1 isTransactional: false isControl: false "
            f"deleteHorizonMs: OptionalLong.empty position: {self.position} CreateTime: {ms} "
            f"size: {size} magic: 2 compresscodec: none crc: {(ms * 2654435761 + last) % 2**32} "
            "isvalid: true"
        )
        for record in records:
            payload = dumps(record)
            self.lines.append(
                f"| offset: {self.offset} CreateTime: {ms} keySize: -1 "
                f"valueSize: {len(payload) // 2} sequence: -1 headerKeys: [] payload: {payload}"
            )
            self.offset += 1
        self.position += size


def rec(kind: str, version: int, data: dict[str, object]) -> dict[str, object]:
    return {"type": kind, "version": version, "data": data}


def register(broker: int, epoch: int) -> dict[str, object]:
    return rec(
        "REGISTER_BROKER_RECORD",
        2,
        {
            "brokerId": broker,
            "isMigratingZkBroker": False,
            "incarnationId": [
                "b6JQ2pTSTdqkUukpM9LdSg",
                "3fL0cX0tRQ2v8mVq1xY7Ag",
                "Zk1xw8QpR5yJcT0oN3bGfA",
            ][broker - 1],
            "brokerEpoch": epoch,
            "endPoints": [
                {
                    "name": "PLAINTEXT",
                    "host": f"broker-{broker}",
                    "port": 9092,
                    "securityProtocol": 0,
                }
            ],
            "features": [
                {"name": "metadata.version", "minSupportedVersion": 1, "maxSupportedVersion": 14}
            ],
            "rack": None,
            "fenced": True,
            "inControlledShutdown": False,
        },
    )


def fencing(broker: int, epoch: int, fenced: int) -> dict[str, object]:
    return rec(
        "BROKER_REGISTRATION_CHANGE_RECORD",
        0,
        {"brokerId": broker, "brokerEpoch": epoch, "fenced": fenced},
    )


def partition(topic_id: str, p: int, replicas: list[int], leader: int) -> dict[str, object]:
    return rec(
        "PARTITION_RECORD",
        0,
        {
            "partitionId": p,
            "topicId": topic_id,
            "replicas": replicas,
            "isr": replicas,
            "removingReplicas": [],
            "addingReplicas": [],
            "leader": leader,
            "leaderEpoch": 0,
            "partitionEpoch": 0,
        },
    )


def change(topic_id: str, p: int, **fields: object) -> dict[str, object]:
    data: dict[str, object] = {"partitionId": p, "topicId": topic_id}
    for key in ("isr", "leader", "leaderRecoveryState"):  # schema order (2.4)
        if key in fields:
            data[key] = fields[key]
    return rec("PARTITION_CHANGE_RECORD", 0, data)


def at(minutes: float, seconds: float = 0.0) -> datetime:
    return START + timedelta(minutes=minutes, seconds=seconds)


def build() -> dict[str, list[str]]:
    logs = {b: RequestLog(b) for b in (1, 2, 3)}
    md = MetadataDump()
    b1, b2, b3 = logs[1], logs[2], logs[3]

    md.batch(at(-5), [register(1, 10), register(2, 11), register(3, 12)])
    md.batch(at(-5, 1), [fencing(1, 10, -1), fencing(2, 11, -1), fencing(3, 12, -1)])
    md.batch(
        at(-4),
        [
            rec("TOPIC_RECORD", 0, {"name": "orders", "topicId": ORDERS}),
            partition(ORDERS, 0, [1, 2, 3], 1),
            partition(ORDERS, 1, [1, 3, 2], 1),
            rec("TOPIC_RECORD", 0, {"name": "payments", "topicId": PAYMENTS}),
            partition(PAYMENTS, 0, [2, 3], 2),
            rec(
                "CONFIG_RECORD",
                0,
                {
                    "resourceType": 2,
                    "resourceName": "orders",
                    "name": "min.insync.replicas",
                    "value": "1",
                },
            ),
        ],
    )

    # 10:00 steady replication of orders-0/1 on leader 1, payments-0 on leader 2.
    for i, offset in enumerate(range(0, 100, 20)):
        t = at(0, 5 * i)
        b1.produce(t, "orders", 0, -1, offset)
        b1.fetch(
            t + timedelta(milliseconds=20),
            2,
            [(ORDERS, 0, 0, offset + 20, 0), (ORDERS, 1, 0, offset * 3 // 5 + 12, 0)],
            [(ORDERS, 0, offset + 20, None, 0), (ORDERS, 1, offset * 3 // 5 + 12, None, 0)],
            session_epoch=i + 1,
        )
        b1.fetch(
            t + timedelta(milliseconds=25),
            3,
            [(ORDERS, 0, 0, offset + 20, 0), (ORDERS, 1, 0, offset * 3 // 5 + 12, 0)],
            [(ORDERS, 0, offset + 20, None, 0), (ORDERS, 1, offset * 3 // 5 + 12, None, 0)],
            session_epoch=i + 1,
        )
        b2.produce(t, "payments", 0, -1, offset // 2)
        b2.fetch(
            t + timedelta(milliseconds=30),
            3,
            [(PAYMENTS, 0, 0, offset // 2 + 10, 0)],
            [(PAYMENTS, 0, offset // 2 + 10, None, 0)],
            session_epoch=i + 1,
        )
    b1.consumer_fetch(at(0, 30), ORDERS, 0, 40, 100)
    b1.metadata_request(at(0, 31))

    # 10:01 followers of orders-0 fall behind; the ISR shrinks to the leader.
    md.batch(at(1), [change(ORDERS, 0, isr=[1])])
    for i, base in enumerate(range(100, 150, 10)):
        b1.produce(at(1, 5 + i), "orders", 0, -1, base)
    b1.fetch(
        at(1, 6), 2, [(ORDERS, 0, 0, 110, 0)], [(ORDERS, 0, 120, None, 1480)], session_epoch=20
    )
    b1.fetch(at(1, 12), 2, [(ORDERS, 0, 0, 120, 0)], [(ORDERS, 0, 150, None, 0)], session_epoch=21)
    # orders-1: acks=1 writes [60, 70) reach only the leader; its HWM stays 60.
    b1.produce(at(1, 20), "orders", 1, 1, 60, client="clickstream")

    # 10:02 broker 1 is fenced (session timeout).
    md.batch(
        at(2),
        [
            fencing(1, 10, 1),
            change(ORDERS, 0, leader=-1),
            change(ORDERS, 1, isr=[3, 2], leader=3),
        ],
    )
    b3.fetch(at(2, 2), 2, [(ORDERS, 1, 1, 60, 0)], [(ORDERS, 1, 60, None, 0)], session_epoch=1)

    # 10:05 unclean election of broker 2 for orders-0 (kafka-leader-election
    # --election-type unclean).
    md.batch(at(5), [change(ORDERS, 0, isr=[2], leader=2, leaderRecoveryState=1)])
    b2.fetch(
        at(5, 1),
        3,
        [(ORDERS, 0, 2, 100, 0), (PAYMENTS, 0, 0, 60, 0)],
        [(ORDERS, 0, 120, None, 1480), (PAYMENTS, 0, 60, None, 0)],
        session_epoch=30,
    )
    b2.produce(at(5, 2), "orders", 0, -1, 120)
    b2.fetch(
        at(5, 3), 3, [(ORDERS, 0, 2, 120, 0)], [(ORDERS, 0, 130, None, 1480)], session_epoch=31
    )
    b2.fetch(at(5, 4), 3, [(ORDERS, 0, 2, 130, 2)], [(ORDERS, 0, 130, None, 0)], session_epoch=32)
    md.batch(at(5, 5), [change(ORDERS, 0, isr=[2, 3], leaderRecoveryState=0)])

    # 10:10 broker 1 comes back.
    md.batch(at(10), [register(1, 57), fencing(1, 57, -1)])
    b2.fetch(
        at(10, 2),
        1,
        [(ORDERS, 0, 2, 150, 0)],
        [(ORDERS, 0, 130, {"epoch": 0, "endOffset": 120}, 0)],
        session_epoch=1,
    )
    b2.fetch(
        at(10, 3), 1, [(ORDERS, 0, 2, 120, 0)], [(ORDERS, 0, 130, None, 1480)], session_epoch=2
    )
    b2.fetch(at(10, 4), 1, [(ORDERS, 0, 2, 130, 2)], [(ORDERS, 0, 130, None, 0)], session_epoch=3)
    b3.fetch(
        at(10, 2),
        1,
        [(ORDERS, 1, 1, 70, 0)],
        [(ORDERS, 1, 60, {"epoch": 0, "endOffset": 60}, 0)],
        session_epoch=1,
    )
    b3.fetch(at(10, 3), 1, [(ORDERS, 1, 1, 60, 0)], [(ORDERS, 1, 60, None, 0)], session_epoch=2)
    md.batch(at(10, 6), [change(ORDERS, 0, isr=[2, 3, 1]), change(ORDERS, 1, isr=[3, 2, 1])])
    b2.fetch(
        at(10, 8), 3, [(PAYMENTS, 0, 0, 70, 0)], [(PAYMENTS, 0, 70, None, 0)], session_epoch=40
    )

    broker1 = b1.lines + [b1.lines[-1][: len(b1.lines[-1]) // 2]]  # cut while copying
    return {
        "broker-1/kafka-request.log": broker1,
        "broker-2/kafka-request.log": b2.lines,
        "broker-3/kafka-request.log.gz": b3.lines,
        "controller-3000/metadata-00000000000000000000.log.txt": md.lines,
    }


def main() -> None:
    for name, lines in build().items():
        path = ROOT / name
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "\n".join(lines)
        if name.endswith(".gz"):
            path.write_bytes(gzip.compress((text + "\n").encode(), mtime=0))
        else:
            # The cut-off broker-1 file has no final newline, as a copied live log.
            path.write_text(text + ("" if name.startswith("broker-1/") else "\n"))


if __name__ == "__main__":
    main()
