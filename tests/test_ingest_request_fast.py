"""The request log's fast lane reads exactly what the general reader reads.

``request_fast.py`` cuts JSON FETCH lines with string functions instead of
``from_json``; it is only an optimisation. Every fetch line of a varied
corpus (simulated clusters of the JSON eras, the benchmark's busy load with
consumer traffic and many topics per fetch, and hand-made lines at the edges
of the format: 2.8's names, v15's replicaState, diverging epochs, errors, a
null client id, escapes, garbled entries, consumers' answers in another order
than asked) goes through ``ingest`` with the lane and without it: events,
quarantine and accounting must be identical, and the lane must really have
taken the lines it is meant for.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.spark

TOPIC_ID = "5LHkG7R4S0aKxLbBzyP8wA"
OTHER_ID = "Zk1xw8QpR5yJcT0oN3bGfA"


def line(ts: str, version: int, request: dict[str, Any], response: Any, client: Any) -> str:
    body = {
        "isForwarded": False,
        "requestHeader": {
            "requestApiKey": 1,
            "requestApiVersion": version,
            "correlationId": 7,
            "clientId": client,
            "requestApiKeyName": "FETCH",
        },
        "request": request,
        "response": response,
        "connection": "10.0.0.1:9092-10.0.0.2:51514-3",
        "totalTimeMs": 0.5,
        "requestQueueTimeMs": 0.1,
        "localTimeMs": 0.1,
        "remoteTimeMs": 0.1,
        "throttleTimeMs": 0,
        "responseQueueTimeMs": 0.1,
        "sendTimeMs": 0.1,
        "securityProtocol": "PLAINTEXT",
        "principal": "User:ANONYMOUS",
        "listener": "PLAINTEXT",
        "clientInformation": {"softwareName": "unknown", "softwareVersion": "unknown"},
    }
    text = json.dumps(body, separators=(",", ":"))
    return f"[{ts}] DEBUG Completed request:{text} (kafka.request.logger)"


def request(replica: int | None, topics: list[tuple[str, list[dict[str, Any]]]], key: str,
            v15: bool = False) -> dict[str, Any]:  # fmt: skip
    out: dict[str, Any] = {}
    if v15:
        if replica is not None:
            out["replicaState"] = {"replicaId": replica, "replicaEpoch": 12}
    else:
        out["replicaId"] = replica
    out |= {
        "maxWaitMs": 500,
        "minBytes": 1,
        "maxBytes": 10485760,
        "isolationLevel": 0,
        "sessionId": 1,
        "sessionEpoch": 3,
        "topics": [{key: t, "partitions": ps} for t, ps in topics],
        "forgottenTopicsData": [{key: OTHER_ID, "partitions": [4, 5]}],
        "rackId": "",
    }
    return out


def fetch_entry(p: int, offset: Any, epoch: Any = 3, lfe: Any = 3) -> dict[str, Any]:
    return {
        "partition": p,
        "currentLeaderEpoch": epoch,
        "fetchOffset": offset,
        "lastFetchedEpoch": lfe,
        "logStartOffset": 0,
        "partitionMaxBytes": 1048576,
    }


def answer(p: int, hwm: Any, error: int = 0, diverging: tuple[int, int] | None = None,
           kafka28: bool = False) -> dict[str, Any]:  # fmt: skip
    out: dict[str, Any] = {
        ("partition" if kafka28 else "partitionIndex"): p,
        "errorCode": error,
        "highWatermark": hwm,
        "lastStableOffset": hwm,
        "logStartOffset": 0,
    }
    if diverging is not None:
        out["divergingEpoch"] = {"epoch": diverging[0], "endOffset": diverging[1]}
    out |= {"abortedTransactions": None, "preferredReadReplica": -1}
    out["recordSetSizeInBytes" if kafka28 else "recordsSizeInBytes"] = 512
    return out


def response(topics: list[tuple[str, list[dict[str, Any]]]], key: str,
             kafka28: bool = False) -> dict[str, Any]:  # fmt: skip
    parts = "partitionResponses" if kafka28 else "partitions"
    return {
        "throttleTimeMs": 0,
        "errorCode": 0,
        "sessionId": 1,
        "responses": [{key: t, parts: ps} for t, ps in topics],
    }


def edge_lines() -> list[str]:
    ts = "2024-05-01 10:00:0{},000"
    two = [(TOPIC_ID, [fetch_entry(0, 100), fetch_entry(1, 50)]), (OTHER_ID, [fetch_entry(2, 7)])]
    two_a = [
        (TOPIC_ID, [answer(0, 90), answer(1, 50, diverging=(2, 40))]),
        (OTHER_ID, [answer(2, 7)]),
    ]
    out = [
        # v13, two topics, a diverging epoch
        line(ts.format(1), 13, request(2, two, "topicId"), response(two_a, "topicId"),
             "broker-2-fetcher-0"),
        # 2.8 (v12): topic names, partitionResponses / partition / recordSetSizeInBytes
        line(ts.format(2), 12, request(3, [("orders", [fetch_entry(0, 5)])], "topic"),
             response([("orders", [answer(0, 5, kafka28=True)])], "topic", kafka28=True),
             "broker-3-fetcher-0"),
        # v15: the follower's id inside replicaState; a consumer's has none
        line(ts.format(3), 15, request(2, two, "topicId", v15=True), response(two_a, "topicId"),
             "broker-2-fetcher-0"),
        line(ts.format(3), 15, request(None, two, "topicId", v15=True),
             response(two_a, "topicId"), "consumer-1"),
        # a consumer (replica -1): ignored by rule by both
        line(ts.format(4), 13, request(-1, two, "topicId"), response(two_a, "topicId"),
             "consumer-2"),
        # an error answer with hwm -1, a null client id
        line(ts.format(5), 13, request(2, [(TOPIC_ID, [fetch_entry(0, 10)])], "topicId"),
             response([(TOPIC_ID, [answer(0, -1, error=74)])], "topicId"), None),
        # a client id with an escape: the general reader's
        line(ts.format(6), 13, request(2, [(TOPIC_ID, [fetch_entry(0, 11)])], "topicId"),
             response([(TOPIC_ID, [answer(0, 11)])], "topicId"), 'we"ird\\id'),
        # values no reader can take: a string offset, an epoch out of int range
        line(ts.format(7), 13, request(2, [(TOPIC_ID, [fetch_entry(0, "x12")])], "topicId"),
             response([(TOPIC_ID, [answer(0, 12)])], "topicId"), "broker-2-fetcher-0"),
        line(ts.format(8), 13, request(2, [(TOPIC_ID, [fetch_entry(0, 13, epoch=2**40)])],
             "topicId"), response([(TOPIC_ID, [answer(0, 13)])], "topicId"),
             "broker-2-fetcher-0"),
        # no entries at all (an idle incremental fetch)
        line(ts.format(9), 13, request(2, [], "topicId"), response([], "topicId"),
             "broker-2-fetcher-0"),
    ]  # fmt: skip
    good = out[0]
    out += [
        # a garbled entry marker (two entries merged), a cut line, a lost key
        good.replace('{"partition":1,', '{"partitio":1,'),
        good[: len(good) // 2],
        good.replace('"highWatermark":90,', ""),
        # a topic whose only answer lost its entry marker: nothing for the lane to cut
        good.replace('{"partitionIndex":2,', '{"index":2,'),
    ]
    return out + consumer_lines()


def consumer_lines() -> list[str]:
    """Consumers' fetches (formats-addendum.md 11.1): each answer paired with
    the request entry of its partition."""
    ts = "2024-05-01 10:00:1{},000"
    asked = [
        (TOPIC_ID, [fetch_entry(0, 100, lfe=-1), fetch_entry(1, 50, lfe=-1)]),
        (OTHER_ID, [fetch_entry(2, 7, lfe=-1)]),
    ]
    # answered in another order than asked, one partition never asked
    shuffled = [
        (OTHER_ID, [answer(2, 9)]),
        (TOPIC_ID, [answer(1, 60), answer(0, -1, error=6), answer(5, 3)]),
    ]
    out = [
        line(ts.format(0), 13, request(-1, asked, "topicId"), response(shuffled, "topicId"),
             "consumer-3"),
        # 2.8 names, replica -1
        line(ts.format(1), 12, request(-1, [("orders", [fetch_entry(0, 5, lfe=-1)])], "topic"),
             response([("orders", [answer(0, 8, kafka28=True)])], "topic", kafka28=True),
             "consumer-4"),
        # v17: no replica key
        line(ts.format(2), 17, request(None, asked, "topicId", v15=True),
             response(shuffled, "topicId"), "consumer-5"),
        # a debug consumer (-2): the general reader's, ignored by rule
        line(ts.format(3), 13, request(-2, asked, "topicId"), response(shuffled, "topicId"),
             "debug-1"),
    ]  # fmt: skip
    good = out[0]
    out += [
        # the position an answer is paired with cannot be read, or is there twice
        good.replace('"fetchOffset":50,', '"fetchOffset":"50",'),
        good.replace('"fetchOffset":50,', '"fetchOffset":50,"fetchOffset":51,'),
        good.replace('"currentLeaderEpoch":3,"fetchOffset":50',
                     f'"currentLeaderEpoch":{2**40},"fetchOffset":50'),
        # an answer's HWM is no number, or is lost
        good.replace('"highWatermark":60,', '"highWatermark":6o,'),
        good.replace('"highWatermark":60,', ""),
    ]  # fmt: skip
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import sys

    import simulator

    root = tmp_path_factory.mktemp("fast")
    edge = root / "broker-1" / "kafka-request.log"
    edge.parent.mkdir(parents=True)
    edge.write_text("\n".join(edge_lines()) + "\n")
    for name, knobs in (("random", {"era": "kraft"}), ("random", {"era": "zk-epoch"})):
        simulator.simulate(name, root / f"sim-{knobs['era']}", seed=3, **knobs)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from load import generate  # type: ignore[import-not-found]

    generate(root / "busy", 1.5, partitions=60, brokers=4)
    return root


def _read(spark: Any, root: Path) -> dict[str, Any]:
    from pipeline.ingest import ingest

    r = ingest(spark, [str(root)])
    out = {
        "events": sorted((tuple(sorted(e.asDict().items())) for e in r.events.collect()), key=repr),
        "quarantine": sorted((tuple(q.asDict().items()) for q in r.quarantine.collect()), key=repr),
        "files": sorted((tuple(f.asDict().items()) for f in r.file_stats.collect()), key=repr),
    }
    r.unpersist()
    return out


def test_the_lane_reads_what_the_general_reader_reads(
    spark: Any, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipeline.ingest import request_fast

    with_lane = _read(spark, corpus)
    monkeypatch.setattr(request_fast, "ENABLED", False)
    without = _read(spark, corpus)
    assert with_lane["files"] == without["files"]
    assert with_lane["quarantine"] == without["quarantine"]
    assert len(with_lane["events"]) == len(without["events"]) > 5000
    assert with_lane["events"] == without["events"]
    consumers = [dict(e) for e in with_lane["events"] if dict(e)["kind"] == "consumer_fetch"]
    assert len(consumers) > 100  # the busy load's consumers, and the edge lines'
    first = edge_lines().index(consumer_lines()[0]) + 1
    paired = [
        (e["partition"], e["fetch_offset"], e["hwm"])
        for e in consumers
        if e["source_file"].endswith(f"/{corpus.name}/broker-1/kafka-request.log")
        and e["line_no"] == first
    ]
    # answered in another order than asked; partition 5 was never asked
    assert sorted(paired, key=repr) == sorted(
        [(2, 7, 9), (1, 50, 60), (0, 100, -1), (5, None, 3)], key=repr
    )  # fmt: skip


def test_the_lane_takes_the_lines_it_is_for(spark: Any, tmp_path: Path) -> None:
    """Which edge lines the lane reads (the rest go to the general reader)."""
    from pyspark.sql import functions as F

    from pipeline.ingest import request_fast

    lines = edge_lines()
    df = spark.createDataFrame([(v,) for v in lines], "value string")
    got = [r[0] for r in df.select(request_fast.lane(F.col("value"))).collect()]
    fetch, consumer = request_fast.FETCH, request_fast.CONSUMER_FETCH
    assert got == [
        fetch,  # v13, two topics, diverging
        fetch,  # 2.8 names
        fetch,  # v15 follower
        consumer,  # v15 consumer
        consumer,  # consumer
        fetch,  # error answer, null client id
        None,  # escaped client id
        fetch,  # string offset: taken, then rejected entry-wise
        fetch,  # epoch out of range: taken, then rejected entry-wise
        fetch,  # idle fetch
        fetch,  # garbled marker: taken, then rejected entry-wise (a key twice)
        None,  # cut line
        fetch,  # lost highWatermark key: taken, then rejected entry-wise
        fetch,  # lost entry marker: taken, then rejected (an unread partition list)
        consumer,  # answers in another order
        consumer,  # 2.8 names
        consumer,  # v17, no replica key
        None,  # debug consumer
        *[consumer] * 5,  # taken, then rejected entry-wise
    ]
