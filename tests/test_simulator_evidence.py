"""The simulator's evidence artefacts (issues 12 and 13): exact lines and truth.

Every line form the knobs add is checked as a whole string: the template of
formats-addendum.md (and kafka-formats.md where it continues one) for the
version written, filled with the values of the simulated story. The evidence
scenarios' truth is checked exactly, undecidable notes included.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import simulator
from simulator.api import run
from simulator.cluster import Cluster
from simulator.scenarios import EVIDENCE_NAMED, SEED, _spec, build
from simulator.spec import Action, Evidence, ProducerSpec, Spec, TopicSpec
from simulator.truth import Truth

ORDERS_ID = "5LHkG7R4S0aKxLbBzyP8wA"
LAYOUT = re.compile(r"^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3})\] (\w+) (.*) \(([\w.$]+)\)$")
TAIL_TEXT = (
    "securityProtocol:PLAINTEXT,principal:User:ANONYMOUS,listener:PLAINTEXT (kafka.request.logger)"
)


def log_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def first(path: Path, *parts: str) -> str:
    """The first line of ``path`` holding every one of ``parts``."""
    for line in log_lines(path):
        if all(p in line for p in parts):
            return line
    raise AssertionError(f"no line in {path} with {parts}")


def run_spec(spec: Spec, out: Path) -> tuple[dict[str, Any], Cluster]:
    truth = Truth(spec.name, 0, spec.era, spec.params())
    cluster = Cluster(spec, out, 0, truth, check=True)
    cluster.run()
    return truth.result(), cluster


def halting_spec(version: str) -> Spec:
    """Leader 1 alone in the ISR loses its unflushed tail and is elected again
    (last replica standing); follower 2 holds more than it kept."""
    return _spec(
        "halting",
        "the follower's log end above its leader's after the leader's loss",
        era="zk-epoch",
        brokers=[1, 2],
        topics=[TopicSpec("seed", SEED, [[1, 2]], 1)],
        producers=[ProducerSpec("seed", 0, interval_ms=1000, records=10, acks=1, stop_ms=24000)],
        schedule=[
            Action(5000, "flush", (1,)),  # 1 keeps [0, 50) on disk
            Action(10000, "pause_fetch", (2,)),  # 2 stops at 100; out of the ISR at ~20000
            Action(25000, "crash", (1, True)),  # 1 comes back with 50
            Action(40000, "restart", (1,)),  # ISR [1]: leads epoch 2 again
            Action(41000, "resume_fetch", (2,)),
        ],
        duration_ms=50000,
        evidence=Evidence(version=version, startup_lines=True, describe_at=(30000, 35000, 45000)),
    )


def json_line(stamp: str, body: dict[str, Any]) -> str:
    return (
        f"[{stamp}] DEBUG Completed request:{json.dumps(body, separators=(',', ':'))} "
        "(kafka.request.logger)"
    )


def json_body(
    api_key: int,
    name: str,
    version: int,
    corr: int,
    request: dict[str, Any],
    response: dict[str, Any],
    connection: str,
    total: float,
    remote: float,
) -> dict[str, Any]:
    """KIP-673's top-level keys in order (kafka-formats.md 1.2), a 3.6.1 Java consumer."""
    return {
        "isForwarded": False,
        "requestHeader": {
            "requestApiKey": api_key,
            "requestApiVersion": version,
            "correlationId": corr,
            "clientId": "consumer-audit-1",
            "requestApiKeyName": name,
        },
        "request": request,
        "response": response,
        "connection": connection,
        "totalTimeMs": total,
        "requestQueueTimeMs": 0.021,
        "localTimeMs": 0.311,
        "remoteTimeMs": remote,
        "throttleTimeMs": 0,
        "responseQueueTimeMs": 0.03,
        "sendTimeMs": 0.05,
        "securityProtocol": "PLAINTEXT",
        "principal": "User:ANONYMOUS",
        "listener": "PLAINTEXT",
        "clientInformation": {"softwareName": "apache-kafka-java", "softwareVersion": "3.6.1"},
    }


# -- the listing and the knobs ----------------------------------------------------------


def test_evidence_scenarios_are_listed_only_on_request() -> None:
    names = set(EVIDENCE_NAMED)
    assert names == {
        "elr-unclean-exclusion",
        "kraft-consumer-hwm-lost",
        "kraft-recovery-cut",
        "seed000-hw-truncation-0.10",
        "seed000-divergence-0.10",
        "zk-unclean-describe-only",
        "kraft-unclean-ticket",
    }
    for listed in (
        simulator.list_scenarios(),
        simulator.list_scenarios(all_eras=True, rules=True),
    ):
        assert not names & {n for n, _ in listed}
    every = dict(simulator.list_scenarios(all_eras=True, rules=True, evidence=True))
    assert names <= set(every) and all(every[n] and "\n" not in every[n] for n in names)


def test_knobs_are_off_by_default_and_checked(tmp_path: Path) -> None:
    assert Evidence().params() == {}
    for name in ("kraft-clean", "zk-epoch-clean", "random"):
        assert "evidence" not in build(name).params()
    assert build("kraft-clean", consumers=True).params()["evidence"] == {"consumers": True}
    ibp = {
        v: build("zk-epoch-clean", version=v).params()["inter.broker.protocol.version"]
        for v in ("1.1", "2.4", "2.8")
    }
    assert ibp == {"1.1": "1.1-IV0", "2.4": "2.4-IV1", "2.8": "2.8-IV1"}
    bad: list[dict[str, Any]] = [
        {"version": "1.1"},  # not a KRaft version
        {"excerpts": "bold"},
        {"write": ["request", "nothing"]},
        {"consumer_ms": 0},
        {"era": "zk-hw"},  # still: named scenarios take evidence knobs only
    ]
    for knobs in bad:
        with pytest.raises(ValueError):
            build("kraft-clean", **knobs)
    with pytest.raises(ValueError):
        build("zk-epoch-clean", version="1.1", consumer_from_follower=True)  # KIP-392 is 2.4+
    with pytest.raises(ValueError):
        build("random", era="zk-hw")  # zk-hw at random only with its own templates
    assert build("random", era="zk-hw", version="0.10").evidence.version == "0.10"
    with pytest.raises(ValueError):
        build("random", write=["describe"])  # taking artefacts away is for named scenarios


# -- consumer traffic in the request log (formats-addendum.md 11) ---------------------


def test_consumer_fetch_list_offsets_and_epoch_lines_in_json(tmp_path: Path) -> None:
    simulator.simulate("kraft-consumer-hwm-lost", tmp_path / "k")  # 3.6
    log = tmp_path / "k" / "broker-1" / "kafka-request.log"
    conn = "10.0.0.1:9092-10.0.2.1:42001-101"
    fetch_part = {
        "partition": 0,
        "currentLeaderEpoch": 0,
        "fetchOffset": 0,
        "lastFetchedEpoch": -1,
        "logStartOffset": -1,
        "partitionMaxBytes": 1048576,
    }
    # Fetch v15: no replica key for a consumer; the HWM and log start offset exposed
    request = {
        "maxWaitMs": 500,
        "minBytes": 1,
        "maxBytes": 52428800,
        "isolationLevel": 0,
        "sessionId": 0,
        "sessionEpoch": -1,
        "topics": [{"topicId": ORDERS_ID, "partitions": [fetch_part]}],
        "forgottenTopicsData": [],
        "rackId": "",
    }
    answer = {
        "partitionIndex": 0,
        "errorCode": 0,
        "highWatermark": 10,
        "lastStableOffset": 10,
        "logStartOffset": 0,
        "abortedTransactions": None,
        "preferredReadReplica": -1,
        "recordsSizeInBytes": 1061,
    }
    response = {
        "throttleTimeMs": 0,
        "errorCode": 0,
        "sessionId": 0,
        "responses": [{"topicId": ORDERS_ID, "partitions": [answer]}],
    }
    body = json_body(1, "FETCH", 15, 2, request, response, conn, 0.412, 0.0)
    assert first(log, '"clientId":"consumer-audit-1"', "10:00:01,287") == json_line(
        "2024-05-01 10:00:01,287", body
    )
    # ListOffsets v8, LATEST: the answer is the HWM
    request = {
        "replicaId": -1,
        "isolationLevel": 0,
        "topics": [
            {
                "name": "orders",
                "partitions": [{"partitionIndex": 0, "currentLeaderEpoch": 0, "timestamp": -1}],
            }
        ],
    }
    response = {
        "throttleTimeMs": 0,
        "topics": [
            {
                "name": "orders",
                "partitions": [
                    {
                        "partitionIndex": 0,
                        "errorCode": 0,
                        "timestamp": -1,
                        "offset": 50,
                        "leaderEpoch": 0,
                    }
                ],
            }
        ],
    }
    body = json_body(2, "LIST_OFFSETS", 8, 6, request, response, conn, 0.453, 0.0)
    assert first(log, "LIST_OFFSETS") == json_line("2024-05-01 10:00:05,287", body)
    # after the unclean election the consumer validates its position with the new
    # leader (KIP-320): the end of epoch 0 there is 100, below where it was
    request = {
        "replicaId": -1,
        "topics": [
            {
                "topic": "orders",
                "partitions": [{"partition": 0, "currentLeaderEpoch": 2, "leaderEpoch": 0}],
            }
        ],
    }
    response = {
        "throttleTimeMs": 0,
        "topics": [
            {
                "topic": "orders",
                "partitions": [
                    {"errorCode": 0, "partition": 0, "leaderEpoch": 0, "endOffset": 100}
                ],
            }
        ],
    }
    conn2 = "10.0.0.2:9092-10.0.2.1:42001-101"
    body = json_body(23, "OFFSET_FOR_LEADER_EPOCH", 4, 1, request, response, conn2, 0.431, 0.0)
    log2 = tmp_path / "k" / "broker-2" / "kafka-request.log"
    assert first(log2, "OFFSET_FOR_LEADER_EPOCH") == json_line("2024-05-01 10:00:45,287", body)
    later = first(log2, '"clientId":"consumer-audit-1"', '"FETCH"', "10:00:45,287")
    assert '"fetchOffset":100,' in later  # the position went back to the divergence


def test_consumer_lines_on_2_8_and_4_0(tmp_path: Path) -> None:
    simulator.simulate("zk-epoch-unclean", tmp_path / "z", consumers=True)
    line = first(tmp_path / "z" / "broker-1" / "kafka-request.log", '"clientId":"consumer')
    body = json.loads(line.split("Completed request:", 1)[1].rsplit(" (", 1)[0])
    # Fetch v12 on 2.8: replicaId -1, topic names, the 2.8 answer names
    assert body["requestHeader"]["requestApiVersion"] == 12
    assert list(body["request"])[:2] == ["replicaId", "maxWaitMs"]
    assert body["request"]["replicaId"] == -1
    assert body["request"]["topics"][0]["topic"] == "orders"
    assert list(body["response"]["responses"][0]) == ["topic", "partitionResponses"]
    assert list(body["response"]["responses"][0]["partitionResponses"][0]) == [
        "partition",
        "errorCode",
        "highWatermark",
        "lastStableOffset",
        "logStartOffset",
        "abortedTransactions",
        "preferredReadReplica",
        "recordSetSizeInBytes",
    ]
    simulator.simulate(
        "elr-unclean-exclusion", tmp_path / "e", consumers=True, list_offsets_ms=5000
    )
    log = tmp_path / "e" / "broker-1" / "kafka-request.log"
    assert '"requestApiVersion":17,' in first(log, '"clientId":"consumer', '"FETCH"')
    assert '"replicaId"' not in first(log, '"clientId":"consumer', '"FETCH"')
    listed = first(log, "LIST_OFFSETS")  # v10 ends its request with timeoutMs
    assert '"requestApiVersion":10,' in listed
    assert '"timestamp":-1}]}],"timeoutMs":0},"response":' in listed


def text_line(stamp: str, header: str, request: str, response: str, conn: str, remote: str) -> str:
    total = f"{float(remote) + 0.412:.3f}".rstrip("0")
    total = total + "0" if total.endswith(".") else total
    return (
        f"[{stamp}] DEBUG Completed request:{header} -- {request},response:{response} from "
        f"connection {conn};totalTime:{total},requestQueueTime:0.021,localTime:0.311,"
        f"remoteTime:{remote},throttleTime:0.0,responseQueueTime:0.03,sendTime:0.05,{TAIL_TEXT}"
    )


def test_text_request_lines_of_2_4(tmp_path: Path) -> None:
    out = tmp_path / "z"
    simulator.simulate("zk-epoch-unclean", out, version="2.4", consumers=True, list_offsets_ms=5000)
    b1 = out / "broker-1" / "kafka-request.log"
    b2 = out / "broker-2" / "kafka-request.log"
    conn = "10.0.0.1:9092-10.0.2.1:42001-101"
    # a consumer's Fetch v11 at the HWM below the log end: a zero-byte file slice
    assert first(b1, "clientId=consumer-audit-1", "10:00:00,287") == text_line(
        "2024-05-01 10:00:00,287",
        "RequestHeader(apiKey=FETCH, apiVersion=11, clientId=consumer-audit-1, correlationId=0)",
        "{replica_id=-1,max_wait_time=500,min_bytes=1,max_bytes=52428800,isolation_level=0,"
        "session_id=0,session_epoch=-1,topics=[{topic=orders,partitions=[{partition=0,"
        "current_leader_epoch=0,fetch_offset=0,log_start_offset=-1,partition_max_bytes=1048576}]}],"
        "forgotten_topics_data=[],rack_id=}",
        "{throttle_time_ms=0,error_code=0,session_id=0,responses=[{topic=orders,"
        "partition_responses=[{partition_header={partition=0,error_code=0,high_watermark=0,"
        "last_stable_offset=0,log_start_offset=0,aborted_transactions=null,"
        "preferred_read_replica=-1},record_set=FileRecords(size=0, "
        "file=/var/lib/kafka/data/orders-0/00000000000000000000.log, start=0, end=0)}]}]}",
        conn,
        "499.8",
    )
    assert first(b1, "LIST_OFFSETS") == text_line(
        "2024-05-01 10:00:05,287",
        "RequestHeader(apiKey=LIST_OFFSETS, apiVersion=5, clientId=consumer-audit-1, "
        "correlationId=5)",
        "{replica_id=-1,isolation_level=0,topics=[{topic=orders,partitions=[{partition=0,"
        "current_leader_epoch=0,timestamp=-1}]}]}",
        "{throttle_time_ms=0,responses=[{topic=orders,partition_responses=[{partition=0,"
        "error_code=0,timestamp=-1,offset=50,leader_epoch=0}]}]}",
        conn,
        "0.0",
    )
    conn2 = "10.0.0.2:9092-10.0.2.1:42001-101"
    assert first(b2, "OFFSET_FOR_LEADER_EPOCH", "consumer") == text_line(
        "2024-05-01 10:00:40,287",
        "RequestHeader(apiKey=OFFSET_FOR_LEADER_EPOCH, apiVersion=3, clientId=consumer-audit-1, "
        "correlationId=0)",
        "{replica_id=-1,topics=[{topic=orders,partitions=[{partition=0,current_leader_epoch=1,"
        "leader_epoch=0}]}]}",
        "{throttle_time_ms=0,topics=[{topic=orders,partitions=[{error_code=0,partition=0,"
        "leader_epoch=0,end_offset=100}]}]}",
        conn2,
        "0.0",
    )
    # the old leader asks before it fetches (IBP 2.4: OffsetsForLeaderEpoch v3)
    assert first(b2, "OFFSET_FOR_LEADER_EPOCH", "broker-1-fetcher-0") == text_line(
        "2024-05-01 10:01:00,300",
        "RequestHeader(apiKey=OFFSET_FOR_LEADER_EPOCH, apiVersion=3, clientId=broker-1-fetcher-0, "
        "correlationId=0)",
        "{replica_id=1,topics=[{topic=orders,partitions=[{partition=0,current_leader_epoch=1,"
        "leader_epoch=0}]}]}",
        "{throttle_time_ms=0,topics=[{topic=orders,partitions=[{error_code=0,partition=0,"
        "leader_epoch=0,end_offset=100}]}]}",
        "10.0.0.2:9092-10.0.0.1:51001-1",
        "0.0",
    )
    fetched = first(b2, "clientId=broker-1-fetcher-0", "apiKey=FETCH", "10:01:00,300")
    assert fetched == text_line(
        "2024-05-01 10:01:00,300",
        "RequestHeader(apiKey=FETCH, apiVersion=11, clientId=broker-1-fetcher-0, correlationId=1)",
        "{replica_id=1,max_wait_time=500,min_bytes=1,max_bytes=10485760,isolation_level=0,"
        "session_id=2042,session_epoch=0,topics=[{topic=orders,partitions=[{partition=0,"
        "current_leader_epoch=1,fetch_offset=100,log_start_offset=0,partition_max_bytes=1048576}]}],"
        "forgotten_topics_data=[],rack_id=}",
        "{throttle_time_ms=0,error_code=0,session_id=2042,responses=[{topic=orders,"
        "partition_responses=[{partition_header={partition=0,error_code=0,high_watermark=200,"
        "last_stable_offset=200,log_start_offset=0,aborted_transactions=null,"
        "preferred_read_replica=-1},record_set=FileRecords(size=11061, "
        "file=/var/lib/kafka/data/orders-0/00000000000000000000.log, start=10000, end=21061)}]}]}",
        "10.0.0.2:9092-10.0.0.1:51001-1",
        "0.0",
    )
    assert first(b1, "apiKey=PRODUCE", "10:00:00,900") == text_line(
        "2024-05-01 10:00:00,900",
        "RequestHeader(apiKey=PRODUCE, apiVersion=8, clientId=producer-1, correlationId=0)",
        "{acks=-1,timeout=30000,numPartitions=1}",
        "{responses=[{topic=orders,partition_responses=[{partition=0,error_code=0,base_offset=0,"
        "log_append_time=-1,log_start_offset=0,record_errors=[],error_message=null}]}],"
        "throttle_time_ms=0}",
        "10.0.0.1:9092-10.0.1.1:40001-1",
        "800.0",
    )


def test_text_request_lines_of_1_1(tmp_path: Path) -> None:
    out = tmp_path / "z"
    simulator.simulate("zk-epoch-unclean", out, version="1.1", consumers=True, list_offsets_ms=5000)
    b1 = out / "broker-1" / "kafka-request.log"
    conn = "10.0.0.1:9092-10.0.2.1:42001-101"
    # Fetch v7: "forgetten_topics_data" (sic) and the session "epoch"; FileRecords
    # has no toString in 1.1
    line = first(b1, "clientId=consumer-1,", "10:00:00,287")
    assert re.fullmatch(
        re.escape(
            "[2024-05-01 10:00:00,287] DEBUG Completed request:RequestHeader(apiKey=FETCH, "
            "apiVersion=7, clientId=consumer-1, correlationId=0) -- {replica_id=-1,"
            "max_wait_time=500,min_bytes=1,max_bytes=52428800,isolation_level=0,session_id=0,"
            "epoch=-1,topics=[{topic=orders,partitions=[{partition=0,fetch_offset=0,"
            "log_start_offset=-1,max_bytes=1048576}]}],forgetten_topics_data=[]},response:"
            "{throttle_time_ms=0,error_code=0,session_id=0,responses=[{topic=orders,"
            "partition_responses=[{partition_header={partition=0,error_code=0,high_watermark=0,"
            "last_stable_offset=0,log_start_offset=0,aborted_transactions=null},record_set="
            "org.apache.kafka.common.record.FileRecords@"
        )
        + "[0-9a-f]+"
        + re.escape(f"}}]}}]}} from connection {conn};totalTime:500.212,"),
        line.split("requestQueueTime")[0],
    )
    assert first(b1, "LIST_OFFSETS") == text_line(
        "2024-05-01 10:00:05,287",
        "RequestHeader(apiKey=LIST_OFFSETS, apiVersion=2, clientId=consumer-1, correlationId=5)",
        "{replica_id=-1,isolation_level=0,topics=[{topic=orders,partitions=[{partition=0,"
        "timestamp=-1}]}]}",
        "{throttle_time_ms=0,responses=[{topic=orders,partition_responses=[{partition=0,"
        "error_code=0,timestamp=-1,offset=50}]}]}",
        conn,
        "0.0",
    )
    assert "OFFSET_FOR_LEADER_EPOCH" not in first(b1, "consumer-1")  # no client validation
    b2 = out / "broker-2" / "kafka-request.log"
    assert first(b2, "OFFSET_FOR_LEADER_EPOCH", "broker-3-fetcher-0") == text_line(
        "2024-05-01 10:00:39,900",
        "RequestHeader(apiKey=OFFSET_FOR_LEADER_EPOCH, apiVersion=0, clientId=broker-3-fetcher-0, "
        "correlationId=0)",
        "{topics=[{topic=orders,partitions=[{partition=0,leader_epoch=0}]}]}",
        "{topics=[{topic=orders,partitions=[{error_code=0,partition=0,end_offset=100}]}]}",
        "10.0.0.2:9092-10.0.0.3:51003-3",
        "0.0",
    )


def test_text_request_lines_of_0_10_1_carry_no_answer(tmp_path: Path) -> None:
    out = tmp_path / "h"
    simulator.simulate(
        "seed000-hw-truncation", out, version="0.10", consumers=True, list_offsets_ms=5000
    )
    log = out / "broker-1" / "kafka-request.log"
    tail = "securityProtocol:PLAINTEXT,principal:User:ANONYMOUS (kafka.request.logger)"
    assert first(log, "client_id=consumer-1") == (
        "[2024-05-01 10:00:20,287] TRACE Completed request:{api_key=2,api_version=1,"
        "correlation_id=0,client_id=consumer-1} -- {replica_id=-1,topics=[{topic=seed,"
        "partitions=[{partition=0,timestamp=-1}]}]} from connection 10.0.0.1:9092-10.0.2.1:42001;"
        "totalTime:0,requestQueueTime:0,localTime:0,remoteTime:0,responseQueueTime:0,sendTime:0,"
        + tail
    )
    # an empty answer is sent, and logged, when the long poll expires
    assert first(log, "ClientId: consumer-1", "10:00:20,787") == (
        "[2024-05-01 10:00:20,787] TRACE Completed request:Name: FetchRequest; Version: 3; "
        "CorrelationId: 1; ClientId: consumer-1; ReplicaId: -1; MaxWait: 500 ms; MinBytes: 1 "
        "bytes; MaxBytes:52428800 bytes; RequestInfo: ([seed,0],PartitionFetchInfo(10,1048576)) "
        "from connection 10.0.0.1:9092-10.0.2.1:42001;totalTime:500,requestQueueTime:0,"
        "localTime:0,remoteTime:500,responseQueueTime:0,sendTime:0," + tail
    )


_POSITION = re.compile(r"ClientId: (consumer-\d+); ReplicaId: -1;.*PartitionFetchInfo\((\d+),")


def test_a_0_10_consumers_lines_show_a_mark_only_where_its_position_advanced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """0.10.1 prints a consumer's position, not the answer: the truth's visible
    mark takes a position only where the same consumer's previous line on the
    same broker was lower (the broker led the same epoch at both; checked by
    the simulator's own model, the lines are read here only to compare)."""
    from simulator import consumers

    marks: list[int] = []
    original = consumers.Consumers._logged_010

    def logged(self, server, consumer, offset, incarnation, shown, waited_ms):  # type: ignore[no-untyped-def]
        calls: list[int] = []
        fetch_mark = self.c.truth.fetch_mark
        self.c.truth.fetch_mark = lambda key, mark: calls.append(mark) or fetch_mark(key, mark)
        try:
            original(self, server, consumer, offset, incarnation, shown, waited_ms)
        finally:
            self.c.truth.fetch_mark = fetch_mark
        marks.extend(calls)

    monkeypatch.setattr(consumers.Consumers, "_logged_010", logged)
    out = tmp_path / "h"
    simulator.simulate("seed000-hw-truncation", out, version="0.10", consumers=True)
    advances: list[int] = []
    positions = 0
    for log in sorted(out.glob("broker-*/kafka-request.log")):
        last: dict[str, int] = {}
        for line in log_lines(log):
            m = _POSITION.search(line)
            if m is None:
                continue
            positions += 1
            client, offset = m.group(1), int(m.group(2))
            if client in last and offset > last[client]:
                advances.append(offset)
            last[client] = offset
    # fewer marks than lines, and every mark is an advance the lines show
    assert 0 < len(marks) < positions
    assert set(marks) <= set(advances)


# -- log load and recovery (formats-addendum.md 10) ------------------------------------


def server_messages(path: Path, stamp: str) -> list[tuple[str, str, str]]:
    out = []
    for line in log_lines(path):
        m = LAYOUT.match(line)
        assert m, line
        if m.group(1) == stamp:
            out.append((m.group(2), m.group(3), m.group(4)))
    return out


def test_startup_lines_0_10_clean_and_unclean(tmp_path: Path) -> None:
    out = tmp_path / "h"
    simulator.simulate("seed000-hw-truncation", out, version="0.10", startup_lines=True)
    # A bounces (a clean process restart): nothing about the shutdown (DEBUG)
    assert server_messages(out / "broker-1" / "server.log", "2024-05-01 10:00:10,850")[:3] == [
        ("INFO", "Loading logs.", "kafka.log.LogManager"),
        (
            "INFO",
            "Completed load of log seed-0 with 1 log segments and log end offset 12 in 3 ms",
            "kafka.log.Log",
        ),
        ("INFO", "Logs loading complete in 8 ms.", "kafka.log.LogManager"),
    ]
    # B lost power: segment 0 is recovered
    assert server_messages(out / "broker-2" / "server.log", "2024-05-01 10:00:30,000")[:4] == [
        ("INFO", "Loading logs.", "kafka.log.LogManager"),
        ("INFO", "Recovering unflushed segment 0 in log seed-0.", "kafka.log.Log"),
        (
            "INFO",
            "Completed load of log seed-0 with 1 log segments and log end offset 12 in 12 ms",
            "kafka.log.Log",
        ),
        ("INFO", "Logs loading complete in 17 ms.", "kafka.log.LogManager"),
    ]


def test_startup_lines_1_1_and_2_4(tmp_path: Path) -> None:
    for version in ("1.1", "2.4"):
        out = tmp_path / version
        run_spec(halting_spec(version), out)
        # 1 lost power at 25000 and starts again at 40000
        got = server_messages(out / "broker-1" / "server.log", "2024-05-01 10:00:40,000")
        assert got[:4] == [
            ("INFO", "Loading logs.", "kafka.log.LogManager"),
            (
                "INFO",
                "[Log partition=seed-0, dir=/var/lib/kafka/data] Recovering unflushed segment 0",
                "kafka.log.Log",
            ),
            (
                "INFO",
                "[Log partition=seed-0, dir=/var/lib/kafka/data] Completed load of log with 1 "
                "segments, log start offset 0 and log end offset 50 in 12 ms",
                "kafka.log.Log",
            ),
            ("INFO", "Logs loading complete in 17 ms.", "kafka.log.LogManager"),
        ]
        loaded = (
            "INFO",
            "[Partition seed-0 broker=1] Log loaded for partition seed-0 with initial high "
            "watermark 50",
            "kafka.cluster.Partition",
        )
        assert (loaded in got) == (version == "2.4")  # 2.4+ (10.3)


def test_startup_lines_2_8_3_6_and_4_0(tmp_path: Path) -> None:
    simulator.simulate("zk-epoch-clean", tmp_path / "z", startup_lines=True)
    got = server_messages(tmp_path / "z" / "broker-1" / "server.log", "2024-05-01 10:00:45,000")
    logs = [
        ("orders", 0, 310, 1),
        ("orders", 1, 310, 2),
        ("orders", 2, 310, 3),
        ("payments", 0, 305, 4),
    ]
    assert got[:6] == [
        (
            "INFO",
            "Skipping recovery for all logs in /var/lib/kafka/data since clean shutdown file "
            "was found",
            "kafka.log.LogManager",
        ),
        *[
            (
                "INFO",
                f"Completed load of Log(dir=/var/lib/kafka/data/{t}-{p}, topic={t}, partition={p}, "
                "highWatermark=0, lastStableOffset=0, logStartOffset=0, logEndOffset="
                f"{leo}) with 1 segments in 3ms ({i}/4 loaded in /var/lib/kafka/data)",
                "kafka.log.LogManager",
            )
            for t, p, leo, i in logs
        ],
        ("INFO", "Loaded 4 logs in 17ms.", "kafka.log.LogManager"),
    ]
    assert (
        "INFO",
        "[Partition orders-0 broker=1] Log loaded for partition orders-0 with initial high "
        "watermark 300",  # the HWM checkpointed at the controlled shutdown
        "kafka.cluster.Partition",
    ) in got
    simulator.simulate("kraft-last-replica-standing", tmp_path / "k", startup_lines=True)
    simulator.simulate("elr-5.3.3", tmp_path / "e", startup_lines=True)
    for folder, leo, recovering, logger in (
        ("k", 250, "0/1", "kafka.log.LogLoader"),  # 3.6
        ("e", 5, "0", "org.apache.kafka.storage.internals.log.LogLoader"),  # 4.0, Java
    ):
        stamp = "2024-05-01 10:00:45,000" if folder == "k" else "2024-05-01 10:01:00,000"
        got = server_messages(tmp_path / folder / "broker-1" / "server.log", stamp)
        assert got == [
            (
                "INFO",
                "Recovering 1 logs from /var/lib/kafka/data since no clean shutdown file was found",
                "kafka.log.LogManager",
            ),
            (
                "INFO",
                "[LogLoader partition=orders-0, dir=/var/lib/kafka/data] Recovering unflushed "
                f"segment 0. {recovering} recovered for orders-0.",
                logger,
            ),
            (
                "INFO",
                f"Completed load of Log(dir=/var/lib/kafka/data/orders-0, topicId={ORDERS_ID}, "
                "topic=orders, partition=0, highWatermark=0, lastStableOffset=0, "
                f"logStartOffset=0, logEndOffset={leo}) with 1 segments, local-log-start-offset 0 "
                f"and log-end-offset {leo} in 12ms (1/1 completed in /var/lib/kafka/data)",
                "kafka.log.LogManager",
            ),
            (
                "INFO",
                "Loaded 1 logs in 17ms (unclean log dirs = ArrayBuffer(/var/lib/kafka/data))",
                "kafka.log.LogManager",
            ),
            (
                "INFO",
                "[Partition orders-0 broker=1] Log loaded for partition orders-0 with initial "
                f"high watermark {leo}",
                "kafka.cluster.Partition",
            ),
        ]


# -- pre-2.8 template sets (formats-addendum.md 9) ------------------------------------


def messages_at(path: Path, stamp: str) -> list[str]:
    """``LEVEL message (logger)`` of every line of ``path`` at ``stamp``."""
    out = []
    for line in log_lines(path):
        m = LAYOUT.match(line)
        assert m, line
        if m.group(1) == stamp:
            out.append(f"{m.group(2)} {m.group(3)} ({m.group(4)})")
    return out


def test_0_10_controller_and_broker_lines(tmp_path: Path) -> None:
    out = tmp_path / "h"
    simulator.simulate("seed000-hw-truncation-0.10", out)
    sc = "state.change.logger"
    # 9.7: the controller's election, its broker failure, leader selection and startup
    assert log_lines(out / "controller" / "controller.log") == [
        "[2024-05-01 09:55:01,000] INFO [Controller 1]: Broker 1 starting become controller "
        "state transition (kafka.controller.KafkaController)",
        "[2024-05-01 09:55:01,000] INFO [Controller 1]: Controller 1 incremented epoch to 1 "
        "(kafka.controller.KafkaController)",
        "[2024-05-01 09:55:01,000] INFO [Controller 1]: Broker 1 is ready to serve as the new "
        "controller with epoch 1 (kafka.controller.KafkaController)",
        "[2024-05-01 10:00:19,900] INFO [Controller 1]: Broker failure callback for 2 "
        "(kafka.controller.KafkaController)",
        "[2024-05-01 10:00:19,900] INFO [OfflinePartitionLeaderSelector]: Selected new leader and "
        'ISR {"leader":1,"leader_epoch":1,"isr":[1]} for offline partition [seed,0] '
        "(kafka.controller.OfflinePartitionLeaderSelector)",
        "[2024-05-01 10:00:30,000] INFO [BrokerChangeListener on Controller 1]: Newly added "
        "brokers: 2, deleted brokers: , all live brokers: 1,2 "
        "(kafka.controller.ReplicaStateMachine$BrokerChangeListener)",
        "[2024-05-01 10:00:30,000] INFO [Controller 1]: New broker startup callback for 2 "
        "(kafka.controller.KafkaController)",
    ]
    # 9.2: no prefix, [t,p], LeaderIsrAndControllerEpoch
    assert messages_at(out / "controller" / "state-change.log", "2024-05-01 10:00:19,900") == [
        f"TRACE Controller 1 epoch 1 started leader election for partition [seed,0] ({sc})",
        f"TRACE Controller 1 epoch 1 elected leader 1 for Offline partition [seed,0] ({sc})",
        "TRACE Controller 1 epoch 1 changed partition [seed,0] from OfflinePartition to "
        f"OnlinePartition with leader 1 ({sc})",
        "TRACE Controller 1 epoch 1 sending become-leader LeaderAndIsr request (Leader:1,ISR:1,"
        f"LeaderEpoch:1,ControllerEpoch:1) to broker 1 for partition [seed,0] ({sc})",
    ]
    # 9.3 and 9.5: B comes back as A's follower and truncates to its HW
    state = "PartitionState(controllerEpoch=1, leader=1, leaderEpoch=1, isr=[1], zkVersion=1, "
    assert messages_at(out / "broker-2" / "state-change.log", "2024-05-01 10:00:30,000") == [
        f"TRACE Broker 2 received LeaderAndIsr request {state}replicas=[2, 1]) correlation id 1 "
        f"from controller 1 epoch 1 for partition [seed,0] ({sc})",
        "TRACE Broker 2 handling LeaderAndIsr request correlationId 1 from controller 1 epoch 1 "
        f"starting the become-follower transition for partition [seed,0] ({sc})",
        "TRACE Broker 2 stopped fetchers as part of become-follower request from controller 1 "
        f"epoch 1 with correlation id 1 for partition [seed,0] ({sc})",
        "TRACE Broker 2 truncated logs and checkpointed recovery boundaries for partition "
        "[seed,0] as part of become-follower request with correlation id 1 from controller 1 "
        f"epoch 1 ({sc})",
        "TRACE Broker 2 started fetcher to new leader as part of become-follower request from "
        f"controller 1 epoch 1 with correlation id 1 for partition [seed,0] ({sc})",
        "TRACE Broker 2 completed LeaderAndIsr request correlationId 1 from controller 1 epoch 1 "
        f"for the become-follower transition for partition [seed,0] ({sc})",
    ]
    assert messages_at(out / "broker-2" / "server.log", "2024-05-01 10:00:30,000") == [
        "INFO Truncating log seed-0 to offset 10. (kafka.log.Log)",
        "INFO [ReplicaFetcherManager on broker 2] Added fetcher for partitions "
        "List([seed-0, initOffset 10 to broker BrokerEndPoint(1,broker-1,9092)] ) "
        "(kafka.server.ReplicaFetcherManager)",
    ]
    a = log_lines(out / "broker-1" / "server.log")
    assert a[0] == (  # <= 0.10.2: the election in the broker's server.log
        "[2024-05-01 09:55:01,000] INFO 1 successfully elected as leader "
        "(kafka.server.ZookeeperLeaderElector)"
    )
    assert a[1] == (
        "[2024-05-01 09:56:00,000] INFO Truncating seed-0 to 0 has no effect as the largest "
        "offset in the log is -1. (kafka.log.Log)"
    )
    assert a[-1] == (
        "[2024-05-01 10:00:30,350] INFO Partition [seed,0] on broker 1: Expanding ISR for "
        "partition [seed,0] from 1 to 1,2 (kafka.cluster.Partition)"
    )


def test_1_1_and_2_4_lines_of_the_unclean_story(tmp_path: Path) -> None:
    sc = "state.change.logger"
    for version in ("1.1", "2.4"):
        out = tmp_path / version
        simulator.simulate("zk-epoch-unclean", out, version=version)
        v24 = version == "2.4"
        stamp = "2024-05-01 10:00:39,450"
        state = (
            "LeaderAndIsrPartitionState(topicName='orders', partitionIndex=0, controllerEpoch=2, "
            "leader=2, leaderEpoch=1, isr=[2], zkVersion=2, replicas=[1, 2, 3], "
            "addingReplicas=[], removingReplicas=[], isNew=false)"
            if v24
            else "PartitionState(controllerEpoch=2, leader=2, leaderEpoch=1, isr=2, zkVersion=2, "
            "replicas=1,2,3, isNew=false)"
        )
        assert messages_at(out / "controller" / "state-change.log", stamp) == [
            "TRACE [Controller id=2 epoch=2] Changed partition orders-0 from OfflinePartition to "
            "OnlinePartition with state LeaderAndIsr(leader=2, leaderEpoch=1, isr=List(2), "
            f"zkVersion=2) ({sc})",
            "TRACE [Controller id=2 epoch=2] Sending become-leader LeaderAndIsr request "
            f"{state} to "
            f"broker 2 for partition orders-0 ({sc})",
            "TRACE [Controller id=2 epoch=2] Sending become-follower LeaderAndIsr request "
            f"{state} to broker 3 for partition orders-0 ({sc})",
        ]
        received = f"TRACE [Broker id=2] Received LeaderAndIsr request {state} correlation id 1 "
        received += "from controller 2 epoch 2"
        received += f" ({sc})" if v24 else f" for partition orders-0 ({sc})"
        assert messages_at(out / "broker-2" / "state-change.log", stamp) == [
            received,
            "TRACE [Broker id=2] Handling LeaderAndIsr request correlationId 1 from controller 2 "
            f"epoch 2 starting the become-leader transition for partition orders-0 ({sc})",
            "TRACE [Broker id=2] Stopped fetchers as part of become-leader request from "
            "controller 2 epoch 2 with correlation id 1 for partition orders-0 (last update "
            f"controller epoch 2) ({sc})",
            "TRACE [Broker id=2] Completed LeaderAndIsr request correlationId 1 from controller 2 "
            f"epoch 2 for the become-leader transition for partition orders-0 ({sc})",
        ]
        starts = (
            "orders-0 starts at leader epoch 1 from offset 100 with high watermark 90. Previous "
            "leader epoch was 0."
            if v24
            else "orders-0 starts at Leader Epoch 1 from offset 100. Previous Leader Epoch was: 0"
        )
        assert messages_at(out / "broker-2" / "server.log", stamp) == [
            f"INFO [Partition orders-0 broker=2] {starts} (kafka.cluster.Partition)"
        ]
        endpoint = (
            "BrokerEndPoint(id=2, host=broker-2:9092)"
            if v24
            else ("BrokerEndPoint(2,broker-2,9092)")
        )
        added = (
            f"Added fetcher to broker {endpoint} for partitions Map(orders-0 -> (offset=90, "
            "leaderEpoch=1))"
            if v24
            else "Added fetcher for partitions List([orders-0, initOffset 90 to broker "
            f"{endpoint}] )"
        )
        assert messages_at(out / "broker-3" / "server.log", stamp) == [
            f"INFO [ReplicaFetcherManager on broker 3] {added} (kafka.server.ReplicaFetcherManager)"
        ]
        # the follower's round of OffsetsForLeaderEpoch, then the fetch (9.6)
        log_prefix = "[Log partition=orders-0, dir=/var/lib/kafka/data] "
        truncated = messages_at(out / "broker-3" / "server.log", "2024-05-01 10:00:39,900")
        no_effect = (
            f"INFO {log_prefix}Truncating to 100 has no effect as the largest offset in the "
        )
        no_effect += "log is 99 (kafka.log.Log)"
        if v24:
            assert truncated == [no_effect]
        else:
            assert truncated == [
                "INFO [ReplicaFetcher replicaId=3, leaderId=2, fetcherId=0] Based on follower's "
                "leader epoch, leader replied with an offset 100 >= the follower's log end offset "
                "100 in orders-0. No truncation needed. (kafka.server.ReplicaFetcherThread)",
                no_effect,
            ]
        expanded = messages_at(out / "broker-2" / "server.log", "2024-05-01 10:00:39,900")
        assert expanded[0] == (
            "INFO [Partition orders-0 broker=2] Expanding ISR from 2 to 2,3 "
            "(kafka.cluster.Partition)"
        )
        # ISR updated: TRACE up to 2.3, INFO 2.4-2.7
        assert expanded[1:] == (
            [
                "INFO [Partition orders-0 broker=2] ISR updated to [2,3] and zkVersion updated "
                "to [3] (kafka.cluster.Partition)"
            ]
            if v24
            else []
        )
        shrink = first(out / "broker-1" / "server.log", "Shrinking ISR")
        assert shrink.split("] INFO ", 1)[1] == (
            "[Partition orders-0 broker=1] Shrinking ISR from 1,2,3 to 1. Leader: (highWatermark: "
            "100, endOffset: 200). Out of sync replicas: (brokerId: 2, endOffset: 100) (brokerId: "
            "3, endOffset: 100). (kafka.cluster.Partition)"
            if v24
            else "[Partition orders-0 broker=1] Shrinking ISR from 1,2,3 to 1 "
            "(kafka.cluster.Partition)"
        )
        elected = log_lines(out / "controller" / "controller.log")[:3]
        assert elected == (
            [
                "[2024-05-01 09:55:01,000] INFO [Controller id=1] 1 successfully elected as the "
                "controller. Epoch incremented to 1 and epoch zk version is now 1 "
                "(kafka.controller.KafkaController)",
                "[2024-05-01 09:55:01,000] INFO [Controller id=1] Ready to serve as the new "
                "controller with epoch 1 (kafka.controller.KafkaController)",
                "[2024-05-01 10:00:39,450] INFO [Controller id=2] 2 successfully elected as the "
                "controller. Epoch incremented to 2 and epoch zk version is now 2 "
                "(kafka.controller.KafkaController)",
            ]
            if v24
            else [
                "[2024-05-01 09:55:01,000] INFO [Controller id=1] 1 successfully elected as the "
                "controller (kafka.controller.KafkaController)",
                "[2024-05-01 09:55:01,000] INFO [Controller id=1] Epoch incremented to 1 "
                "(kafka.controller.KafkaController)",
                "[2024-05-01 09:55:01,000] INFO [Controller id=1] Ready to serve as the new "
                "controller with epoch 1 (kafka.controller.KafkaController)",
            ]
        )


def test_a_follower_above_its_leader_per_version(tmp_path: Path) -> None:
    """The leader lost its tail and leads again: 1.1 keeps fetching from its own
    end (the same leader: no OffsetsForLeaderEpoch), is answered
    OFFSET_OUT_OF_RANGE, learns the leader's end (ListOffsets v1) and, the topic
    forbidding unclean election, stops the broker (9.6); 2.4 asks at the new
    epoch and truncates."""
    fetcher = "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] "
    truth11, cluster11 = run_spec(halting_spec("1.1"), tmp_path / "11")
    assert messages_at(tmp_path / "11" / "broker-2" / "server.log", "2024-05-01 10:00:41,350") == [
        f"ERROR {fetcher}Exiting because log truncation is not allowed for partition seed-0, "
        "current leader's latest offset 50 is less than replica's latest offset 100 "
        "(kafka.server.ReplicaFetcherThread)"
    ]
    listed = first(tmp_path / "11" / "broker-1" / "kafka-request.log", "LIST_OFFSETS")
    assert listed.split("Completed request:", 1)[1].split(" from connection")[0] == (
        "RequestHeader(apiKey=LIST_OFFSETS, apiVersion=1, clientId=broker-2-fetcher-0, "
        "correlationId=21) -- {replica_id=2,topics=[{topic=seed,partitions=[{partition=0,"
        "timestamp=-1}]}]},response:{responses=[{topic=seed,partition_responses=[{partition=0,"
        "error_code=0,timestamp=-1,offset=50}]}]}"
    )
    # stopped at 41350 and started again at the end of the schedule: a clean
    # shutdown, then the follower transition with its OffsetsForLeaderEpoch
    assert messages_at(tmp_path / "11" / "broker-2" / "server.log", "2024-05-01 10:00:50,350") == [
        "INFO [Log partition=seed-0, dir=/var/lib/kafka/data] Truncating to offset 50 "
        "(kafka.log.Log)"
    ]
    truth24, _ = run_spec(halting_spec("2.4"), tmp_path / "24")
    assert messages_at(tmp_path / "24" / "broker-2" / "server.log", "2024-05-01 10:00:41,350") == [
        "INFO [Log partition=seed-0, dir=/var/lib/kafka/data] Truncating to offset 50 "
        "(kafka.log.Log)"
    ]
    expected = [
        ("committed_data_loss", 2, None, 50, 90, 40, None),
        ("truncation_below_hwm", 2, 2, 50, 90, 40, "global"),
        ("hwm_regression", 2, 1, 50, 90, None, None),
    ]
    for truth in (truth11, truth24):
        assert [
            (
                f["kind"],
                f["leader_epoch"],
                f["replica"],
                f["offset_start"],
                f["offset_end"],
                f["records_lost"],
                f["qualifier"],
            )
            for f in truth["findings"]
        ] == expected
    assert cluster11.violations == [] and cluster11.halted == set()


# -- kafka-topics --describe (formats-addendum.md 12.1) -------------------------------


def test_describe_layouts_per_version(tmp_path: Path) -> None:
    head = "Topic:seed\tPartitionCount:1\tReplicationFactor:2\tConfigs:"
    for version, header, none, isr in (
        # the ZooKeeper path prints the znode's -1; 1.1's follower stopped itself
        ("1.1", head, "-1", "1"),
        # 2.4's truncated and was back in the ISR
        ("2.4", head.replace(":", ": "), "none", "1,2"),
    ):
        run_spec(halting_spec(version), tmp_path / version)
        text = (tmp_path / version / "describe" / "kafka-topics-describe.txt").read_text()
        assert text == (  # 30000: 1 lost power, 35000: its session expired, 45000: back
            f"{header}\n\tTopic: seed\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1\n"
            f"{header}\n\tTopic: seed\tPartition: 0\tLeader: {none}\tReplicas: 1,2\tIsr: 1\n"
            f"{header}\n\tTopic: seed\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: {isr}\n"
        )
    simulator.simulate("kraft-clean-failover", tmp_path / "k", describe_at=[30000])
    assert (tmp_path / "k" / "describe" / "kafka-topics-describe.txt").read_text() == (
        f"Topic: orders\tTopicId: {ORDERS_ID}\tPartitionCount: 1\tReplicationFactor: 3\t"
        "Configs: min.insync.replicas=2\n"
        "\tTopic: orders\tPartition: 0\tLeader: 2\tReplicas: 1,2,3\tIsr: 2,3\n"
    )
    # 60500: every broker lost power, 1 is back (an AdminClient needs a broker)
    simulator.simulate("elr-5.3.3", tmp_path / "e", describe_at=[56000, 60500])
    assert (tmp_path / "e" / "describe" / "kafka-topics-describe.txt").read_text() == (
        f"Topic: orders\tTopicId: {ORDERS_ID}\tPartitionCount: 1\tReplicationFactor: 3\t"
        "Configs: min.insync.replicas=2\n"
        "\tTopic: orders\tPartition: 0\tLeader: none\tReplicas: 1,2,3\tIsr: \tElr: 2,3\t"
        "LastKnownElr: \n"
    )


# -- pasted excerpts (issue 13, part 2) --------------------------------------------------


def test_excerpt_styles_and_excerpts_only(tmp_path: Path) -> None:
    line = (
        "[Broker id=2] Leader orders-0 with topic id Some(5LHkG7R4S0aKxLbBzyP8wA) starts at "
        "leader epoch 2 from offset 100 with partition epoch 3, high watermark 90, ISR [2], "
        "adding replicas [] and removing replicas [] . Previous leader Some(-1) and previous "
        "leader epoch was 1."
    )
    rendered = {
        "indent": f"    {line}",
        "quote": f"> {line}",
        "logger": f"state.change.logger: {line}",
    }
    for style, expected in rendered.items():
        out = tmp_path / style
        simulator.simulate("kraft-unclean-election", out, excerpts=style)
        log = out / "broker-2" / "state-change.log"
        excerpt = out / "broker-2" / "state-change-excerpt.txt"
        assert log.is_file()  # beside the log: the log is unchanged
        full = [ln for ln in log_lines(log) if "leader epoch 2 from offset 100" in ln]
        assert full == [f"[2024-05-01 10:00:45,000] INFO {line} (state.change.logger)"]
        assert expected in log_lines(excerpt)
        assert len(log_lines(excerpt)) == len(log_lines(log))
        # the request log is read by its timestamps: no excerpt of it
        assert (out / "broker-2" / "kafka-request.log").is_file()
        assert not list(out.rglob("kafka-request-excerpt.txt"))
    out = tmp_path / "only"
    simulator.simulate("kraft-unclean-ticket", out)
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == sorted(
        [f"broker-{b}/{n}-excerpt.txt" for b in (1, 2, 3) for n in ("server", "state-change")]
        + ["controller/controller-excerpt.txt", "truth.json"]
    )
    assert f"> {line}" in log_lines(out / "broker-2" / "state-change-excerpt.txt")


# -- the evidence scenarios' truth ---------------------------------------------------------


def F(
    kind: str,
    epoch: int,
    replica: int | None,
    start: int | None,
    end: int | None,
    lost: int | None,
    qualifier: str | None = None,
    topic: str = "orders",
    **extra: Any,
) -> dict[str, Any]:
    return {
        "kind": kind,
        "topic": topic,
        "partition": 0,
        "leader_epoch": epoch,
        "replica": replica,
        "offset_start": start,
        "offset_end": end,
        "records_lost": lost,
        "qualifier": qualifier,
        **extra,
    }


def U(i: int, kind: str, epoch: int, reason: str) -> dict[str, Any]:
    return {
        "finding": i,
        "kind": kind,
        "topic": "orders",
        "partition": 0,
        "leader_epoch": epoch,
        "reasons": [reason],
    }


DESCRIBE = "kafka-topics --describe shows no offset, HWM or log end"
TICKET = (
    "pasted excerpts only: the committed mark before epoch 2 (301) is printed by other brokers' "
    "lines whose time against the election no excerpt gives"
)
EXPECTED: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {
    # seed 002 5.1.2: 3 back from an unclean shutdown with [0, 220) of the 300
    # committed, left in the ELR at its registration (epoch 1, no leader), then
    # elected from it: the loss is the clean-by-definition ELR election's
    "elr-unclean-exclusion": (
        [
            F("isr_rule_violation", 1, 3, 220, 300, None, severity="warning"),
            F("committed_data_loss", 2, None, 220, 300, 80),
            F("hwm_regression", 2, 3, 220, 300, None),
            F("truncation_below_hwm", 2, 1, 220, 300, 80, "global"),
        ],
        [],
    ),
    # the HWM 310 was shown to the consumer only (acks=1, followers paused)
    "kraft-consumer-hwm-lost": (
        [
            F("unclean_election", 2, 2, 100, 310, 210),
            F("committed_data_loss", 2, None, 100, 310, 210),
            F("hwm_regression", 2, 2, 110, 310, None),
            F("truncation_below_hwm", 2, 1, 100, 310, 210, "global"),
        ],
        [],
    ),
    "kraft-recovery-cut": ([F("truncation_below_hwm", 0, 3, 200, 300, None, "local")], []),
    # seed000-hw-truncation's truth, template set or not
    "seed000-hw-truncation-0.10": (
        [
            # the fetch at 11 that derives the mark was logged 50 ms before
            # the truncation line, on the leader's clock, and 0.10's line
            # prints no log end to order it by: a reader cannot tell
            F("truncation_below_hwm", 0, 1, 10, 11, None, "local", "seed", visible_absent=True),
            # 0.10 prints no start offset: that epoch 1 began at 10, below the
            # mark 11, and so rewrote [10, 11), is in no artefact
            F("committed_data_loss", 1, None, 10, 11, 1, topic="seed", visible_absent=True),
            F(
                "truncation_below_hwm",
                1,
                2,
                10,
                11,
                1,
                "global",
                topic="seed",
                visible_offset_start=10,
                visible_offset_end=11,
                visible_records_lost=None,
                visible_qualifier="unknown",
            ),
            F("hwm_regression", 1, 1, 10, 11, None, topic="seed", visible_absent=True),
        ],
        [
            {
                **U(
                    0,
                    "truncation_below_hwm",
                    0,
                    "truncation of replica 1 [10, 12): the fetch lines that derive the mark 11 "
                    "were logged within the clock-skew allowance (2000 ms) before it, on the "
                    "leader's clock, and may, by the clocks, have followed it; before them the "
                    "mark is 8",
                ),
                "topic": "seed",
            },
            {
                **U(
                    1,
                    "committed_data_loss",
                    1,
                    "leader 1 of epoch 1 printed no start offset (0.10 has no such line): X=10 "
                    "is in no artefact",
                ),
                "topic": "seed",
            },
            {
                **U(
                    2,
                    "truncation_below_hwm",
                    1,
                    "truncation of replica 2 [10, 12): the start offset of epoch 1 (written "
                    "after the replica's records) is in no artefact, so whether that epoch "
                    "rewrote them is not in evidence",
                ),
                "topic": "seed",
            },
            {
                **U(
                    3,
                    "hwm_regression",
                    1,
                    "leader 1 of epoch 1 printed no start offset (0.10 has no such line): that "
                    "it began below H is in no artefact",
                ),
                "topic": "seed",
            },
        ],
    ),
    "seed000-divergence-0.10": ([], []),
    "zk-unclean-describe-only": (
        [
            F(
                "unclean_election",
                1,
                2,
                100,
                301,
                201,
                visible_offset_start=None,
                visible_offset_end=None,
                visible_records_lost=None,
                visible_qualifier=None,
                visible_leader_epoch=None,
            ),
            F("committed_data_loss", 1, None, 100, 301, 201, visible_absent=True),
            F("hwm_regression", 1, 2, 100, 301, None, visible_absent=True),
            F("truncation_below_hwm", 1, 1, 100, 301, 201, "global", visible_absent=True),
        ],
        [
            U(
                0,
                "unclean_election",
                1,
                "leader 2 (snapshot at 40000 ms) is outside the last ISR seen before it, [1] "
                "(snapshot at 35000 ms); kafka-topics --describe shows no leader epoch and no "
                "offset: the epoch, the offsets at risk and the records lost are not in evidence",
            ),
            U(1, "committed_data_loss", 1, DESCRIBE),
            U(2, "hwm_regression", 1, DESCRIBE),
            U(3, "truncation_below_hwm", 1, DESCRIBE),
        ],
    ),
    # the truncating replica's own lines state its truncation whole
    "kraft-unclean-ticket": (
        [
            F("unclean_election", 2, 2, 100, 301, 201),
            F("committed_data_loss", 2, None, 100, 301, 201),
            F("hwm_regression", 2, 2, 100, 301, None, visible_absent=True),
            F("truncation_below_hwm", 2, 1, 100, 301, 201, "global"),
        ],
        [
            U(0, "unclean_election", 2, TICKET),
            U(1, "committed_data_loss", 2, TICKET),
            U(
                2,
                "hwm_regression",
                2,
                "no request log: no fetch answer shows the HWM a leader exposed",
            ),
        ],
    ),
}


@pytest.mark.parametrize("scenario", sorted(EVIDENCE_NAMED))
def test_evidence_scenario_truth(tmp_path: Path, scenario: str) -> None:
    truth, cluster = run(scenario, tmp_path, check=True)
    assert cluster.violations == []
    findings, undecidable = EXPECTED[scenario]
    assert truth["findings"] == findings
    assert truth.get("undecidable", []) == undecidable
    assert "disputed" not in truth
    bad = {f"{f['topic']}-{f['partition']}" for f in findings}
    assert truth["verdicts"] == {k: "invalid" if k in bad else "valid" for k in truth["verdicts"]}
    assert json.loads((tmp_path / "truth.json").read_text()) == truth


def test_only_the_consumer_showed_the_lost_hwm(tmp_path: Path) -> None:
    """Without consumers nothing exposed the leader's HWM above 100: nothing
    committed was lost (docs/findings.md: the committed mark is the highest
    HWM exposed)."""
    truth = simulator.simulate(
        "kraft-consumer-hwm-lost", tmp_path, consumers=False, list_offsets_ms=0
    )
    assert truth["findings"] == [F("unclean_election", 2, 2, None, None, 0)]


def test_unclean_exclusion_holds_without_the_controller_bug(tmp_path: Path) -> None:
    truth = simulator.simulate(
        "random",
        tmp_path,
        seed=5,
        era="kraft-elr",
        brokers=4,
        fault_rate=4,
        restart_rate=4,
        startup_lines=True,
    )
    assert "isr_rule_violation" not in {f["kind"] for f in truth["findings"]}
    assert truth["params"]["knobs"]["restart_rate"] == 4


def test_unclean_exclusion_without_startup_lines_is_not_in_evidence(tmp_path: Path) -> None:
    truth = simulator.simulate("elr-unclean-exclusion", tmp_path, startup_lines=False)
    assert truth["findings"][0] == F(
        "isr_rule_violation", 1, 3, 220, 300, None, severity="warning", visible_absent=True
    )
    assert truth["undecidable"][0] == U(
        0,
        "isr_rule_violation",
        1,
        "replica 3 came back from an unclean shutdown (elr before catching up), but no artefact "
        "says its shutdown was unclean (no startup lines)",
    )


# -- random clusters ---------------------------------------------------------------------


def test_random_evidence_draws_are_their_own(tmp_path: Path) -> None:
    plain = build("random", seed=4)
    drawn = build("random", seed=4, evidence_rate=1.0, restart_rate=3.0)
    # the cluster the seed gives is the same; the draws add to it
    assert drawn.topics == plain.topics and drawn.producers == plain.producers
    assert [a for a in drawn.schedule if a not in plain.schedule] != []
    assert all(a in drawn.schedule for a in plain.schedule)
    ev = drawn.evidence
    assert (ev.consumers, ev.startup_lines, ev.describe_every_ms) == (True, True, 10000)
    assert ev.excerpts in ("indent", "quote", "logger")
    assert build("random", seed=4, evidence_rate=1.0, restart_rate=3.0) == drawn
    zk = build("random", seed=6, era="zk-epoch", evidence_rate=1.0)
    assert zk.evidence.version in ("1.1", "2.4", "2.8")
    kept = build("random", seed=4, evidence_rate=1.0, consumers=False, excerpts="indent")
    assert (kept.evidence.consumers, kept.evidence.excerpts) == (False, "indent")


@pytest.mark.parametrize(
    ("era", "version"),
    [("kraft", None), ("kraft-elr", None), ("zk-epoch", "1.1"), ("zk-epoch", "2.4"),
     ("zk-epoch", None), ("zk-hw", "0.10")],
)  # fmt: skip
def test_random_clusters_with_every_artefact_keep_the_invariants(
    tmp_path: Path, era: str, version: str | None
) -> None:
    knobs: dict[str, Any] = {"era": era, "evidence_rate": 1.0, "restart_rate": 2.0}
    if version:
        knobs["version"] = version
    for seed in (1, 2):
        truth, cluster = run(
            "random", tmp_path / str(seed), seed=seed, check=True, duration=60, **knobs
        )
        assert cluster.violations == []
        assert truth["params"]["evidence"]["startup_lines"] is True
        assert (tmp_path / str(seed) / "describe" / "kafka-topics-describe.txt").is_file()


def test_consumers_reading_from_a_follower_see_its_hwm(tmp_path: Path) -> None:
    """KIP-392 (2.4+): the answering follower's own HWM (formats-addendum 11)."""
    simulator.simulate(
        "kraft-clean", tmp_path, consumers=True, consumer_from_follower=True, list_offsets_ms=0
    )
    # orders-0 is led by 1; its first in-sync follower is 2
    consumer = '"clientId":"consumer-audit-1"'
    assert consumer not in (tmp_path / "broker-1" / "kafka-request.log").read_text()
    line = first(tmp_path / "broker-2" / "kafka-request.log", consumer, "10:00:10,287")
    body = json.loads(line.split("Completed request:", 1)[1].rsplit(" (", 1)[0])
    answer = body["response"]["responses"][0]["partitions"][0]
    leader_answers = [
        json.loads(ln.split("Completed request:", 1)[1].rsplit(" (", 1)[0])
        for ln in log_lines(tmp_path / "broker-1" / "kafka-request.log")
        if '"clientId":"broker-2-fetcher-0"' in ln and "10:00:09," in ln
    ]
    # the follower's HWM is what its leader last answered it
    shown = [
        p["highWatermark"]
        for b in leader_answers
        for t in b["response"]["responses"]
        if t["topicId"] == ORDERS_ID
        for p in t["partitions"]
        if p["partitionIndex"] == 0
    ]
    assert answer["highWatermark"] == shown[-1]


# -- the remaining pre-2.8 templates, written directly ----------------------------------


def test_every_other_pre_2_8_broker_and_controller_template(tmp_path: Path) -> None:
    """The templates no scenario above reaches, each written once as the model
    writes it for the version (9.2-9.7)."""
    from simulator.oldlogs import OldBrokerLogs, OldControllerLogs, PartitionState
    from simulator.versions import VERSIONS

    state = PartitionState("orders", 0, 3, -1, 7, (1,), 11, (1, 2))
    online = PartitionState("orders", 0, 3, 2, 8, (2,), 12, (1, 2))
    for name in ("0.10", "1.1", "2.4"):
        v = VERSIONS[name]
        folder = tmp_path / name
        logs = OldBrokerLogs(folder / "b", 1, v)
        ctl = OldControllerLogs(folder / "c", v)
        logs.offset_reset(0, "orders-0", 2, 120, 100, 90)
        if name != "2.4":  # 2.0+ always truncates
            logs.truncation_not_allowed(1, "orders-0", 2, 120, 100)
        if name != "0.10":  # OffsetsForLeaderEpoch, 0.11+
            logs.epoch_retry(2, "orders-0", 2, "NOT_LEADER_FOR_PARTITION")
        if name == "2.4":  # KIP-279 and KIP-320 (2.1+)
            logs.epoch_unknown_to_replica(3, "orders-0", 2, 5, 80)
            logs.epoch_below_tracked(4, "orders-0", 2, 1, 60)
            logs.epoch_fenced(5, "orders-0", 2, 6)
        logs.shrink_isr(6, "orders-0", [1, 2], [1], 90, 120, [(2, 100, 0)])
        logs.lai_no_leader(7, state, 4, 9, 3)
        ctl.partition_offline(8, 9, 3, state)
        ctl.unclean_selected(9, online, [2])
        logs.close()
        ctl.close()
        server = [ln.split("] ", 1)[1] for ln in log_lines(folder / "b" / "server.log")]
        if name == "0.10":
            f = "[ReplicaFetcherThread-0-2], "
            expected = [
                f"WARN {f}Replica 1 for partition orders-0 reset its fetch offset from 120 to "
                "current leader 2's latest offset 100 (kafka.server.ReplicaFetcherThread)",
                "INFO Truncating log orders-0 to offset 100. (kafka.log.Log)",
                f"ERROR {f}Current offset 120 for partition [orders,0] out of range; reset offset "
                "to 100 (kafka.server.ReplicaFetcherThread)",
                f"FATAL {f}Exiting because log truncation is not allowed for partition orders-0, "
                "Current leader 2's latest offset 100 is less than replica 1's latest offset 120 "
                "(kafka.server.ReplicaFetcherThread)",
                "INFO Partition [orders,0] on broker 1: Shrinking ISR for partition [orders,0] "
                "from 1,2 to 1 (kafka.cluster.Partition)",
            ]
        else:
            f = "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] "
            expected = [
                f"WARN {f}Reset fetch offset for partition orders-0 from 120 to current leader's "
                "latest offset 100 (kafka.server.ReplicaFetcherThread)",
                "INFO [Log partition=orders-0, dir=/var/lib/kafka/data] Truncating to offset 100 "
                "(kafka.log.Log)",
                f"INFO {f}Current offset 120 for partition orders-0 is out of range, which "
                "typically implies a leader change. Reset fetch offset to 100 "
                "(kafka.server.ReplicaFetcherThread)",
            ]
            if name == "1.1":  # ERROR with the FATAL marker
                expected.append(
                    f"ERROR {f}Exiting because log truncation is not allowed for partition "
                    "orders-0, current leader's latest offset 100 is less than replica's latest "
                    "offset 120 (kafka.server.ReplicaFetcherThread)"
                )
            expected.append(
                f"INFO {f}Retrying leaderEpoch request for partition orders-0 as the leader "
                "reported an error: NOT_LEADER_FOR_PARTITION (kafka.server.ReplicaFetcherThread)"
            )
            if name == "2.4":
                expected += [
                    f"INFO {f}Based on replica's leader epoch, leader replied with epoch 5 "
                    "unknown to the replica for orders-0. Will truncate to 80 and send another "
                    "leader epoch request to the leader. (kafka.server.ReplicaFetcherThread)",
                    f"WARN {f}Based on replica's leader epoch, leader replied with epoch 1 below "
                    "any replica's tracked epochs for orders-0. The leader's offset only 60 will "
                    "be used for truncation. (kafka.server.ReplicaFetcherThread)",
                    f"INFO {f}Partition orders-0 has an older epoch (6) than the current leader. "
                    "Will await the new LeaderAndIsr state before resuming fetching. "
                    "(kafka.server.ReplicaFetcherThread)",
                    "INFO [Partition orders-0 broker=1] Shrinking ISR from 1,2 to 1. Leader: "
                    "(highWatermark: 90, endOffset: 120). Out of sync replicas: (brokerId: 2, "
                    "endOffset: 100). (kafka.cluster.Partition)",
                ]
            else:
                expected.append(
                    "INFO [Partition orders-0 broker=1] Shrinking ISR from 1,2 to 1 "
                    "(kafka.cluster.Partition)"
                )
        assert server == expected
        sc = [ln.split("] ", 1)[1] for ln in log_lines(folder / "b" / "state-change.log")]
        if name == "0.10":
            assert sc[1] == (
                "ERROR Broker 1 received LeaderAndIsrRequest with correlation id 4 from controller "
                "9 epoch 3 for partition [orders,0] but cannot become follower since the new "
                "leader -1 is unavailable. (state.change.logger)"
            )
        else:
            assert sc[1] == (
                "ERROR [Broker id=1] Received LeaderAndIsrRequest with correlation id 4 from "
                "controller 9 epoch 3 for partition orders-0 (last update controller epoch 3) but "
                "cannot become follower since the new leader -1 is unavailable. "
                "(state.change.logger)"
            )
        csc = [ln.split("] ", 1)[1] for ln in log_lines(folder / "c" / "state-change.log")]
        assert csc == [
            "TRACE Controller 9 epoch 3 changed partition [orders,0] state from OnlinePartition to "
            "OfflinePartition (state.change.logger)"
            if name == "0.10"
            else "TRACE [Controller id=9 epoch=3] Changed partition orders-0 state from "
            "OnlinePartition to OfflinePartition (state.change.logger)"
        ]
        cl = [ln.split("] ", 1)[1] for ln in log_lines(folder / "c" / "controller.log")]
        assert cl == (
            [
                "WARN [OfflinePartitionLeaderSelector]: No broker in ISR is alive for [orders,0]. "
                "Elect leader 2 from live brokers 2. There's potential data loss. "
                "(kafka.controller.OfflinePartitionLeaderSelector)"
            ]
            if name == "0.10"
            else []  # 1.1-2.7: no dedicated line (kafka-formats.md 5.6)
        )
