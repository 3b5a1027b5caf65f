"""Benchmark load: the artefacts of a busy, healthy KRaft cluster, at any size.

The simulator (``simulator/``) tells stories with a handful of partitions and
writes their truth; a benchmark needs the other shape, the one that makes a
production request log large:

* many partitions (``--partitions``, default 1000, replication factor 3,
  spread over ``--brokers`` brokers), all led from epoch 0 with a full ISR;
* producers appending to random partitions every tick, ``acks=all`` for
  most of them (answered, and so logged, only once the high watermark has
  passed the batch, as Kafka does) and ``acks=1`` for the rest;
* every follower fetching from every leader every tick over an incremental
  fetch session (KIP-227): a request lists only the partitions whose
  position moved, so offsets move on almost every logged fetch, and an idle
  session sends empty fetches (the repeats Spark should drop before Python);
* consumers fetching the partitions they own from their leaders (replica id
  -1, the high watermark the leader exposed in every answer) and now and
  then asking ListOffsets for the latest offset;
* the controller's metadata dump (brokers, topics, partitions, the
  ``min.insync.replicas`` config) and a little INFO noise in each server.log.

Every line has the exact shape of kafka-formats.md section 1 (Fetch v13,
Produce v9, ListOffsets v7, JSON request log of 3.x) and section 2 (the
metadata dump). The cluster is healthy, so a correct pipeline finds nothing
and judges every partition from the evidence; what the benchmark measures is
the cost of reading it. Output is streamed (bounded memory) and deterministic
for a seed.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import random
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TextIO

BASE = datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC)
EPOCH_MS = int(BASE.timestamp() * 1000)
TICK_MS = 50
SUFFIX = " (kafka.request.logger)\n"
TIMINGS = (
    ',"totalTimeMs":0.412,"requestQueueTimeMs":0.021,"localTimeMs":0.311,"remoteTimeMs":0.0,'
    '"throttleTimeMs":0,"responseQueueTimeMs":0.03,"sendTimeMs":0.05,'
    '"securityProtocol":"PLAINTEXT","principal":"User:ANONYMOUS","listener":"PLAINTEXT",'
    '"clientInformation":{"softwareName":"apache-kafka-java","softwareVersion":"3.6.1"}}'
)


def topic_id(name: str) -> str:
    """A deterministic 22-character base64url uuid."""
    raw = zlib.crc32(name.encode()).to_bytes(4, "big") * 4
    return base64.urlsafe_b64encode(raw).decode()[:22]


class Stamp:
    """``yyyy-MM-dd HH:mm:ss,SSS`` of a millisecond, cached per second."""

    def __init__(self) -> None:
        self.second = -1
        self.prefix = ""

    def __call__(self, ms: int) -> str:
        second, milli = divmod(ms, 1000)
        if second != self.second:
            self.second = second
            self.prefix = (BASE + timedelta(seconds=second)).strftime("%Y-%m-%d %H:%M:%S")
        return f"{self.prefix},{milli:03d}"


@dataclass
class Partition:
    topic: str
    tid: str
    index: int
    replicas: tuple[int, ...]
    leo: int = 0
    #: the followers' log ends as the leader knows them (their last fetch offsets)
    follower_leo: dict[int, int] = field(default_factory=dict)
    #: what each follower holds now (it fetched up to the leader's end)
    follower_has: dict[int, int] = field(default_factory=dict)
    hwm: int = 0
    #: acks=all produces waiting for the high watermark: (base, end, client, correlation)
    waiting: list[tuple[int, int, str]] = field(default_factory=list)

    @property
    def leader(self) -> int:
        return self.replicas[0]


class RequestLog:
    def __init__(self, path: Path, broker: int) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fh: TextIO = path.open("w", encoding="utf-8", buffering=1 << 20)
        self.broker = broker
        self.stamp = Stamp()
        self.correlation = 0
        self.bytes = 0

    def write(self, ms: int, key: int, name: str, version: int, client: str, body: str) -> None:
        self.correlation += 1
        line = (
            f"[{self.stamp(ms)}] DEBUG Completed request:"
            f'{{"isForwarded":false,"requestHeader":{{"requestApiKey":{key},'
            f'"requestApiVersion":{version},"correlationId":{self.correlation},'
            f'"clientId":"{client}","requestApiKeyName":"{name}"}},{body}'
            f',"connection":"10.0.0.{self.broker}:9092-10.0.9.9:5{self.correlation % 10000:04d}-1"'
            f"{TIMINGS}{SUFFIX}"
        )
        self.fh.write(line)
        self.bytes += len(line)


def _fetch_topics(entries: dict[str, list[str]], key: str) -> str:
    return ",".join(
        f'{{"topicId":"{tid}","{key}":[{",".join(ps)}]}}' for tid, ps in entries.items()
    )


def fetch_body(replica: int, session: int, epoch: int, asked: dict[str, list[str]],
               answered: dict[str, list[str]]) -> str:  # fmt: skip
    return (
        f'"request":{{"replicaId":{replica},"maxWaitMs":500,"minBytes":1,"maxBytes":10485760,'
        f'"isolationLevel":{0 if replica >= 0 else 1},"sessionId":{session},'
        f'"sessionEpoch":{epoch},"topics":[{_fetch_topics(asked, "partitions")}],'
        f'"forgottenTopicsData":[],"rackId":""}},'
        f'"response":{{"throttleTimeMs":0,"errorCode":0,"sessionId":{session},'
        f'"responses":[{_fetch_topics(answered, "partitions")}]}}'
    )


def asked_entry(p: Partition, offset: int, follower: bool) -> str:
    return (
        f'{{"partition":{p.index},"currentLeaderEpoch":0,"fetchOffset":{offset},'
        f'"lastFetchedEpoch":{0 if follower else -1},"logStartOffset":{0 if follower else -1},'
        f'"partitionMaxBytes":1048576}}'
    )


def answered_entry(p: Partition, size: int) -> str:
    return (
        f'{{"partitionIndex":{p.index},"errorCode":0,"highWatermark":{p.hwm},'
        f'"lastStableOffset":{p.hwm},"logStartOffset":0,"abortedTransactions":null,'
        f'"preferredReadReplica":-1,"recordsSizeInBytes":{size}}}'
    )


def produce_body(p: Partition, acks: int, base: int, records: int) -> str:
    return (
        f'"request":{{"transactionalId":null,"acks":{acks},"timeoutMs":30000,'
        f'"topicData":[{{"name":"{p.topic}","partitionData":[{{"index":{p.index},'
        f'"recordsSizeInBytes":{61 + 80 * records}}}]}}]}},'
        f'"response":{{"responses":[{{"name":"{p.topic}","partitionResponses":[{{'
        f'"index":{p.index},"errorCode":0,"baseOffset":{base},"logAppendTimeMs":-1,'
        f'"logStartOffset":0,"recordErrors":[],"errorMessage":null}}]}}],"throttleTimeMs":0}}'
    )


def list_offsets_body(p: Partition) -> str:
    return (
        f'"request":{{"replicaId":-1,"isolationLevel":0,"topics":[{{"name":"{p.topic}",'
        f'"partitions":[{{"partitionIndex":{p.index},"currentLeaderEpoch":0,"timestamp":-1}}]}}]}},'
        f'"response":{{"throttleTimeMs":0,"topics":[{{"name":"{p.topic}","partitions":[{{'
        f'"partitionIndex":{p.index},"errorCode":0,"timestamp":-1,"offset":{p.hwm},'
        f'"leaderEpoch":0}}]}}]}}'
    )


def metadata_dump(path: Path, brokers: int, partitions: list[Partition], topics: list[str]) -> int:
    """The controller's ``__cluster_metadata`` dump: registrations, topics,
    partitions and the min ISR config, one record per batch."""
    path.parent.mkdir(parents=True, exist_ok=True)

    def record(kind: str, version: int, data: dict[str, object]) -> str:
        return json.dumps({"type": kind, "version": version, "data": data}, separators=(",", ":"))

    records: list[str] = []
    for b in range(1, brokers + 1):
        records.append(
            record(
                "REGISTER_BROKER_RECORD",
                2,
                {
                    "brokerId": b,
                    "isMigratingZkBroker": False,
                    "incarnationId": topic_id(f"broker-{b}"),
                    "brokerEpoch": 10 + b,
                    "endPoints": [{"name": "PLAINTEXT", "host": f"broker-{b}", "port": 9092,
                                   "securityProtocol": 0}],
                    "features": [{"name": "metadata.version", "minSupportedVersion": 1,
                                  "maxSupportedVersion": 14}],
                    "rack": None,
                    "fenced": True,
                    "inControlledShutdown": False,
                },
            )
        )  # fmt: skip
        records.append(
            record(
                "BROKER_REGISTRATION_CHANGE_RECORD",
                0,
                {"brokerId": b, "brokerEpoch": 10 + b, "fenced": -1},
            )
        )
    for t in topics:
        records.append(record("TOPIC_RECORD", 0, {"name": t, "topicId": topic_id(t)}))
        records.append(
            record(
                "CONFIG_RECORD",
                0,
                {"resourceType": 2, "resourceName": t, "name": "min.insync.replicas", "value": "2"},
            )
        )
    for p in partitions:
        records.append(
            record(
                "PARTITION_RECORD",
                0,
                {
                    "partitionId": p.index,
                    "topicId": p.tid,
                    "replicas": list(p.replicas),
                    "isr": list(p.replicas),
                    "removingReplicas": [],
                    "addingReplicas": [],
                    "leader": p.leader,
                    "leaderEpoch": 0,
                    "partitionEpoch": 0,
                },
            )
        )
    size = 0
    with path.open("w", encoding="utf-8") as fh:
        fh.write(
            "Dumping /var/lib/kafka/metadata/__cluster_metadata-0/00000000000000000000.log\n"
            "Log starting offset: 0\n"
        )
        position = 0
        for offset, payload in enumerate(records):
            ts = EPOCH_MS - 60_000 + offset
            length = 70 + len(payload) // 2
            fh.write(
                f"baseOffset: {offset} lastOffset: {offset} count: 1 baseSequence: -1 "
                "lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 1 "
                "isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty "
                f"position: {position} CreateTime: {ts} size: {length} magic: 2 "
                f"compresscodec: none crc: {zlib.crc32(payload.encode())} isvalid: true\n"
                f"| offset: {offset} CreateTime: {ts} keySize: -1 valueSize: {length - 70} "
                f"sequence: -1 headerKeys: [] payload: {payload}\n"
            )
            position += length
        size = fh.tell()
    return size


def generate(
    out: Path,
    size_mb: float,
    seed: int = 42,
    brokers: int = 6,
    partitions: int = 1000,
    topics: int = 20,
    produce_per_tick: int = 60,
    consumers_per_tick: int = 12,
    gzip_logs: bool = False,
) -> dict[str, int]:
    """Write the cluster's artefacts under ``out`` until the request logs hold
    ``size_mb`` megabytes; returns counts of what was written."""
    rng = random.Random(seed)
    names = [f"events-{t:02d}" for t in range(topics)]
    parts: list[Partition] = []
    for i in range(partitions):
        topic = names[i % topics]
        index = i // topics
        first = i % brokers
        replicas = tuple(((first + k) % brokers) + 1 for k in range(min(3, brokers)))
        p = Partition(topic, topic_id(topic), index, replicas)
        p.follower_leo = {r: 0 for r in replicas[1:]}
        p.follower_has = {r: 0 for r in replicas[1:]}
        parts.append(p)
    metadata_dump(out / "controller-3000" / "metadata-00000000000000000000.log.txt",
                  brokers, parts, names)  # fmt: skip
    led: dict[int, list[Partition]] = {b: [] for b in range(1, brokers + 1)}
    followed: dict[tuple[int, int], list[Partition]] = {}
    for p in parts:
        led[p.leader].append(p)
        for f in p.replicas[1:]:
            followed.setdefault((f, p.leader), []).append(p)
    name = "kafka-request.log.gz" if gzip_logs else "kafka-request.log"
    logs: dict[int, RequestLog] = {}
    for b in range(1, brokers + 1):
        path = out / f"broker-{b}" / name
        logs[b] = RequestLog(path, b)
        if gzip_logs:
            logs[b].fh.close()
            logs[b].fh = gzip.open(path, "wt", encoding="utf-8", compresslevel=6)  # noqa: SIM115
        server = out / f"broker-{b}" / "server.log"
        server.write_text(
            "".join(
                f"[2024-05-01 09:59:{s:02d},000] INFO [KafkaServer id={b}] started "
                "(kafka.server.KafkaServer)\n"
                for s in range(3)
            )
        )
    # consumers: each owns a slice of the partitions and keeps its position
    positions = {id(p): 0 for p in parts}
    sessions = {pair: 1000 + i for i, pair in enumerate(sorted(followed))}
    session_epochs = dict.fromkeys(followed, 0)
    target = int(size_mb * 1e6)
    counts = {"ticks": 0, "fetch_lines": 0, "produce_lines": 0, "consumer_lines": 0}
    ms = 0
    while sum(log.bytes for log in logs.values()) < target:
        ms += TICK_MS
        counts["ticks"] += 1
        # producers append; acks=1 answers at once, acks=all when committed
        for p in rng.sample(parts, min(produce_per_tick, len(parts))):
            records = rng.randint(1, 40)
            base = p.leo
            p.leo += records
            if rng.random() < 0.8:
                p.waiting.append((base, p.leo, f"producer-{rng.randint(1, 50)}"))
            else:
                logs[p.leader].write(ms, 0, "PRODUCE", 9, f"producer-{rng.randint(1, 50)}",
                                     produce_body(p, 1, base, records))  # fmt: skip
                counts["produce_lines"] += 1
        # followers fetch from every leader over their incremental session
        for (follower, leader), mine in followed.items():
            moved = [p for p in mine if p.follower_has[follower] != p.follower_leo[follower]
                     or p.leo > p.follower_has[follower]]  # fmt: skip
            asked: dict[str, list[str]] = {}
            answered: dict[str, list[str]] = {}
            epoch = session_epochs[(follower, leader)]
            session_epochs[(follower, leader)] = epoch + 1
            for p in moved:
                offset = p.follower_has[follower]
                p.follower_leo[follower] = offset
                # the leader's HWM: the least log end of the ISR it knows
                p.hwm = max(p.hwm, min([p.leo, *p.follower_leo.values()]))
                size = 61 + 80 * (p.leo - offset) if p.leo > offset else 0
                asked.setdefault(p.tid, []).append(asked_entry(p, offset, True))
                answered.setdefault(p.tid, []).append(answered_entry(p, size))
                p.follower_has[follower] = p.leo
            logs[leader].write(
                ms + 1, 1, "FETCH", 13, f"broker-{follower}-fetcher-0",
                fetch_body(follower, sessions[(follower, leader)], epoch, asked, answered),
            )  # fmt: skip
            counts["fetch_lines"] += 1
        # acks=all answers whose batch the high watermark has passed
        for p in parts:
            while p.waiting and p.waiting[0][1] <= p.hwm:
                base, end, client = p.waiting.pop(0)
                logs[p.leader].write(ms + 2, 0, "PRODUCE", 9, client,
                                     produce_body(p, -1, base, end - base))  # fmt: skip
                counts["produce_lines"] += 1
        # consumers read up to the high watermark the leader exposes
        for p in rng.sample(parts, min(consumers_per_tick, len(parts))):
            group = f"consumer-app-{p.index % 7}"
            if rng.random() < 0.05:
                logs[p.leader].write(ms + 3, 2, "LIST_OFFSETS", 7, group, list_offsets_body(p))
            else:
                offset = positions[id(p)]
                size = 61 + 80 * (p.hwm - offset) if p.hwm > offset else 0
                body = fetch_body(-1, 0, 0, {p.tid: [asked_entry(p, offset, False)]},
                                  {p.tid: [answered_entry(p, size)]})  # fmt: skip
                logs[p.leader].write(ms + 3, 1, "FETCH", 13, group, body)
                positions[id(p)] = p.hwm
            counts["consumer_lines"] += 1
    for log in logs.values():
        log.fh.close()
    counts["request_log_bytes"] = sum(log.bytes for log in logs.values())
    return counts


def files(out: Path) -> Iterator[Path]:
    return (p for p in out.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--size-mb", type=float, default=64.0)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--brokers", type=int, default=6)
    parser.add_argument("--gzip", action="store_true", help="gzip the request logs")
    args = parser.parse_args()
    counts = generate(args.out, args.size_mb, args.seed, args.brokers, args.partitions,
                      gzip_logs=args.gzip)  # fmt: skip
    print(counts)


if __name__ == "__main__":
    main()
