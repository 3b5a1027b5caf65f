"""One incident folder holding every kind of artefact epochtrail reads, through
``run_job`` (what ``epochtrail run`` calls): every file is recognised as its
kind, every kind yields events, and read = parsed + ignored + quarantined
holds for every file in the run manifest.

The lines and bytes come from the per-kind parser tests, which build them
exactly as the Kafka version named beside each one prints them.
"""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from pipeline.cli import validation_lines
from pipeline.run import RunOptions, run_job
from tests import test_ingest_binary as binary
from tests import test_ingest_broker_log as broker_log
from tests import test_ingest_broker_log_layouts as layouts
from tests import test_ingest_checkpoint as checkpoint
from tests import test_ingest_metadata as metadata
from tests import test_ingest_request_log as request_log
from tests import test_ingest_request_log_text as request_log_text
from tests import test_ingest_views as views
from tests import test_ingest_znode as znode

pytestmark = pytest.mark.spark

#: relative path -> the kind the manifest must give it
EXPECTED_KINDS = {
    "broker-1/kafka-request.log": "request_log",
    "broker-2/kafka-request.log.2020-11-02-10": "request_log",
    "broker-1/state-change.log": "broker_log",
    "broker-1/server.log": "broker_log",
    "broker-2/server.json.log": "broker_log",
    "controller/metadata.txt": "metadata_dump",
    "broker-3/segment-dump.txt": "segment_dump",
    "broker-3/data/__cluster_metadata-0/00000000000000000000.log": "metadata_segment",
    "broker-3/data/orders-0/00000000000000000000.log": "data_segment",
    "broker-1/data/orders-0/leader-epoch-checkpoint": "checkpoint",
    "broker-1/data/replication-offset-checkpoint": "checkpoint",
    "zk/shell.txt": "znode_dump",
    "ticket/kafka-topics-describe.txt": "point_in_time_view",
    "ticket/offsets.txt": "point_in_time_view",
    "bundle.tar.gz": "bundle",
    "bundle.tar.gz!/broker-4/state-change.log": "broker_log",
}


def _tree(root: Path) -> None:
    def write(rel: str, data: str | bytes) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8")

    write(
        "broker-1/kafka-request.log",
        "\n".join([request_log.IDLE_FOLLOWER_FETCH, request_log.PRODUCE_ACKS_ALL]) + "\n",
    )
    write(
        "broker-2/kafka-request.log.2020-11-02-10",
        "\n".join([request_log_text.FETCH_V12, *request_log_text.CONTROLLER]) + "\n",
    )
    write("broker-1/state-change.log", "\n".join(broker_log.STATE_CHANGE) + "\n")
    write("broker-1/server.log", "\n".join(broker_log.SERVER_LOG) + "\n")
    write("broker-2/server.json.log", "\n".join(layouts.JSON_LOG) + "\n")
    write("controller/metadata.txt", "\n".join(metadata.SEGMENT) + "\n")
    write("broker-3/segment-dump.txt", "\n".join(metadata.DATA_DUMP) + "\n")
    write(
        "broker-3/data/__cluster_metadata-0/00000000000000000000.log",
        binary.batch(0, [binary.topic_record("orders"), binary.partition_record()])
        + binary.batch(2, [binary.partition_change(isr=[1, 2])]),
    )
    write(
        "broker-3/data/orders-0/00000000000000000000.log",
        binary.batch(0, [b"a", b"b"], epoch=0) + binary.batch(2, [b"c"], epoch=1),
    )
    for rel in (
        "broker-1/data/orders-0/leader-epoch-checkpoint",
        "broker-1/data/replication-offset-checkpoint",
    ):
        write(rel, checkpoint.FILES[rel])
    write("zk/shell.txt", "\n".join(znode.SHELL) + "\n")
    write("ticket/kafka-topics-describe.txt", "\n".join(views.DESCRIBE_OLD) + "\n")
    write("ticket/offsets.txt", "\n".join(views.OFFSETS) + "\n")
    member = ("\n".join(broker_log.STATE_CHANGE[:2]) + "\n").encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("broker-4/state-change.log")
        info.size = len(member)
        tar.addfile(info, io.BytesIO(member))
    write("bundle.tar.gz", buffer.getvalue())


def test_every_kind_through_run(spark: Any, tmp_path: Path) -> None:  # noqa: ARG001
    root = tmp_path / "incident"
    _tree(root)
    out = tmp_path / "out"
    summary = run_job(RunOptions(paths=[str(root)], out=str(out)))
    manifest: dict[str, Any] = json.loads((out / "run_manifest.json").read_text())
    # The validation suites run on every kind's events and tables. This folder
    # mixes the fixtures of separate tests, and two of them tell orders-0's
    # lineage differently (epoch 4 at metadata offset 1, epoch 1 at offset 7).
    # The suite says exactly that.
    assert validation_lines(manifest["validation"]) == [
        "gold.epoch_lineage: leader_epoch_non_decreasing_by_metadata_offset(leader_epoch, "
        "previous_leader_epoch_by_metadata_offset) failed: 1 unexpected, e.g. [[1, 4]]"
    ]
    assert {s["table"] for s in manifest["validation"]["suites"]} >= {
        "partition_events",
        "anomalies",
        "isr_timeline",
        "partition_health_daily",
    }

    files = {f["path"].split("/incident/", 1)[1]: f for f in manifest["files"]}
    assert {rel: files[rel]["kind"] for rel in EXPECTED_KINDS} == EXPECTED_KINDS
    for rel, f in files.items():
        accounted = f["lines_parsed"] + f["lines_ignored"] + f["lines_quarantined"]
        assert f["lines_read"] == accounted, rel
    # every kind of file yields events, exactly these many (a bundle's lines
    # are its members, each counted under its own kind)
    parsed_by_kind: dict[str, int] = {}
    for rel, kind in EXPECTED_KINDS.items():
        parsed_by_kind[kind] = parsed_by_kind.get(kind, 0) + files[rel]["lines_parsed"]
    assert parsed_by_kind == {
        "broker_log": 33,
        "bundle": 0,
        "checkpoint": 3,
        "data_segment": 2,
        "metadata_dump": 13,
        "metadata_segment": 2,
        "point_in_time_view": 8,
        "request_log": 3,
        "segment_dump": 1,
        "znode_dump": 2,
    }
    assert manifest["lines_read"] == (
        manifest["lines_parsed"] + manifest["lines_ignored"] + manifest["quarantined_lines"]
    )
    # the folder's artefacts come from several stories: one partition's
    # evidence shows a finding, five have gaps, one is whole and clean
    assert summary.verdicts == {"valid": 1, "invalid": 1, "unknown": 5}
    assert summary.exit_code == 1
