"""``--redact``: client ids and principals in the gold tables' log lines and
acknowledged produces become pseudonyms (the same id, the same pseudonym);
everything else in the line is kept as it was."""

from __future__ import annotations

import hashlib

import pytest

from pipeline.publish import redact, redact_quarantine
from schemas.tables import ANOMALIES, QUARANTINE

pytestmark = pytest.mark.spark

JSON_LINE = (
    '[2024-05-01 10:00:00,123] DEBUG Completed request:{"requestHeader":{"requestApiKey":0,'
    '"clientId":"producer-1","requestApiKeyName":"PRODUCE"},"connection":"10.0.0.1:9092",'
    '"principal":"User:alice","listener":"PLAINTEXT"} (kafka.request.logger)'
)
TEXT_LINE = (
    "[2024-05-01 10:00:00,123] DEBUG Completed request:RequestHeader(apiKey=PRODUCE, "
    "apiVersion=8, clientId=producer-1, correlationId=7) -- {acks=-1},response:{} from "
    "connection 10.0.0.1:9092;totalTime:1.2,securityProtocol:PLAINTEXT,principal:User:alice,"
    "listener:PLAINTEXT (kafka.request.logger)"
)
SCALA_LINE = "Name: FetchRequest; Version: 2; CorrelationId: 5; ClientId: fetcher-0; ReplicaId: 2"


def h(value: str) -> str:
    return "h:" + hashlib.sha256(value.encode()).hexdigest()[:16]


def test_client_ids_and_principals_become_pseudonyms(spark) -> None:  # type: ignore[no-untyped-def]
    row = {
        "anomaly_id": "a1",
        "kind": "committed_data_loss",
        "severity": "critical",
        "confidence": "confirmed",
        "cluster": "c1",
        "profile": "kraft",
        "explanation": "-",
        "evidence": [
            ("broker-1/kafka-request.log", 1, JSON_LINE),
            ("broker-2/kafka-request.log", 9, TEXT_LINE),
            ("broker-3/kafka-request.log", 4, SCALA_LINE),
            ("broker-3/state-change.log", 5, None),
        ],
        "acked_produces": [("producer-1", 120, "broker-1/kafka-request.log", 1)],
        "date": "2024-05-01",
    }
    anomalies = spark.createDataFrame([tuple(row.get(f.name) for f in ANOMALIES.fields)], ANOMALIES)

    [out] = redact(anomalies).collect()

    texts = [e["text"] for e in out["evidence"]]
    assert texts[0] == JSON_LINE.replace('"producer-1"', f'"{h("producer-1")}"').replace(
        '"User:alice"', f'"{h("User:alice")}"'
    )
    text = TEXT_LINE.replace("clientId=producer-1", f"clientId={h('producer-1')}")
    assert texts[1] == text.replace("principal:User:alice", f"principal:{h('User:alice')}")
    assert texts[2] == SCALA_LINE.replace("ClientId: fetcher-0", f"ClientId: {h('fetcher-0')}")
    assert texts[3] is None
    assert [(e["source_file"], e["line_no"]) for e in out["evidence"]] == [
        ("broker-1/kafka-request.log", 1),
        ("broker-2/kafka-request.log", 9),
        ("broker-3/kafka-request.log", 4),
        ("broker-3/state-change.log", 5),
    ]
    [ack] = out["acked_produces"]
    assert (ack["client_id"], ack["base_offset"]) == (h("producer-1"), 120)
    assert "producer-1" not in str(out.asDict()) and "alice" not in str(out.asDict())


def test_quarantined_lines_are_redacted_too(spark) -> None:  # type: ignore[no-untyped-def]
    quarantine = spark.createDataFrame(
        [("c1", "broker-1/kafka-request.log", 26, "cut mid-JSON", JSON_LINE[:150], True, "d")],
        QUARANTINE,
    )

    [out] = redact_quarantine(quarantine).collect()

    assert out["text"] == JSON_LINE[:150].replace('"producer-1"', f'"{h("producer-1")}"')
    assert out["reason"] == "cut mid-JSON"
