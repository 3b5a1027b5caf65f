"""Raw binary metadata-log segments, snapshots and data segments (issue 4, kinds 3 and 4).

Every byte string here is built by the small encoder below, written from the
wire format (record batch v2, DefaultRecord, the metadata serde frame and the
flexible-version message encoding), not from the decoder's code. Its CRC-32C
is the bitwise definition, not the decoder's table.
"""

from __future__ import annotations

import base64
import datetime as dt
import gzip
import json
import struct
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from pipeline.ingest import kafka_binary as kb
from tests.ingest_helpers import accounting

# --- an independent encoder ---------------------------------------------------------


def crc32c_bitwise(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        if n < 0x80:
            out.append(n)
            return bytes(out)
        out.append((n & 0x7F) | 0x80)
        n >>= 7


def varint(n: int) -> bytes:  # zigzag, 32 or 64 bit alike for small values
    return uvarint((n << 1) ^ (n >> 63))


def compact_bytes(b: bytes | None) -> bytes:
    return uvarint(0) if b is None else uvarint(len(b) + 1) + b


def cstr(s: str | None) -> bytes:
    return compact_bytes(None if s is None else s.encode())


def ints(xs: list[int] | None) -> bytes:
    if xs is None:
        return uvarint(0)
    return uvarint(len(xs) + 1) + b"".join(struct.pack(">i", x) for x in xs)


def tags(fields: dict[int, bytes]) -> bytes:
    out = uvarint(len(fields))
    for tag in sorted(fields):
        out += uvarint(tag) + uvarint(len(fields[tag])) + fields[tag]
    return out


TOPIC_UUID = uuid.UUID("e4b1e41b-b47e-4b46-8ac4-b2c1b3f23fc0")
TOPIC_ID = base64.urlsafe_b64encode(TOPIC_UUID.bytes).rstrip(b"=").decode()  # as Kafka prints it


def frame(api_key: int, version: int, body: bytes) -> bytes:
    return uvarint(1) + uvarint(api_key) + uvarint(version) + body


def topic_record(name: str) -> bytes:
    return frame(2, 0, cstr(name) + TOPIC_UUID.bytes + tags({}))


def partition_record(
    version: int = 0,
    state: int = 0,
    elr: list[int] | None = None,
    last_known_elr: list[int] | None = None,
) -> bytes:
    body = struct.pack(">i", 0) + TOPIC_UUID.bytes + ints([1, 2, 3]) + ints([1, 2])
    body += ints([]) + ints([]) + struct.pack(">iii", 1, 4, 9)
    if version >= 1:
        body += uvarint(4) + b"\x11" * 48  # directories: 3 uuids
    t: dict[int, bytes] = {}
    if state:
        t[0] = struct.pack(">b", state)
    if elr is not None:
        t[1] = ints(elr)
    if last_known_elr is not None:
        t[2] = ints(last_known_elr)
    return frame(3, version, body + tags(t))


def partition_change(version: int = 0, **f: Any) -> bytes:
    """Tagged fields only when given (absent = unchanged)."""
    t: dict[int, bytes] = {}
    for name, tag in (("isr", 0), ("replicas", 2), ("removing", 3), ("adding", 4)):
        if name in f:
            t[tag] = ints(f[name])
    if "leader" in f:
        t[1] = struct.pack(">i", f["leader"])
    if "state" in f:
        t[5] = struct.pack(">b", f["state"])
    if "elr" in f:
        t[6] = ints(f["elr"])
    if "last_known_elr" in f:
        t[7] = ints(f["last_known_elr"])
    if "directories" in f:
        t[8] = uvarint(2) + b"\x22" * 16
    return frame(5, version, struct.pack(">i", f.get("partition", 0)) + TOPIC_UUID.bytes + tags(t))


def register_broker(broker: int, epoch: int, fenced: bool, version: int = 1) -> bytes:
    body = struct.pack(">i", broker)
    if version >= 2:
        body += b"\x00"
    body += uuid.uuid4().bytes + struct.pack(">q", epoch)
    endpoint = cstr("PLAINTEXT") + cstr("host-1") + struct.pack(">Hh", 9092, 0) + tags({})
    feature = cstr("metadata.version") + struct.pack(">hh", 1, 20) + tags({})
    body += uvarint(2) + endpoint + uvarint(2) + feature + cstr(None)
    body += b"\x01" if fenced else b"\x00"
    if version >= 1:
        body += b"\x00"
    return frame(0, version, body + tags({}))


def fence(api_key: int, broker: int, epoch: int) -> bytes:
    return frame(api_key, 0, struct.pack(">iq", broker, epoch) + tags({}))


def registration_change(broker: int, epoch: int, fenced: int = 0, shutdown: int = 0) -> bytes:
    t = {}
    if fenced:
        t[0] = struct.pack(">b", fenced)
    if shutdown:
        t[1] = struct.pack(">b", shutdown)
    return frame(17, 1, struct.pack(">iq", broker, epoch) + tags(t))


def config_record(resource_type: int, resource: str, name: str, value: str | None) -> bytes:
    return frame(4, 0, struct.pack(">b", resource_type) + cstr(resource) + cstr(name)
                 + cstr(value) + tags({}))  # fmt: skip


def remove_topic() -> bytes:
    return frame(9, 0, TOPIC_UUID.bytes + tags({}))


def record(
    offset_delta: int,
    value: bytes | None,
    ts_delta: int = 0,
    key: bytes | None = None,
    headers: tuple[tuple[bytes, bytes], ...] = (),
) -> bytes:
    body = b"\x00" + varint(ts_delta) + varint(offset_delta)
    body += varint(-1) if key is None else varint(len(key)) + key
    body += varint(-1) if value is None else varint(len(value)) + value
    body += varint(len(headers))
    for k, v in headers:
        body += varint(len(k)) + k + varint(len(v)) + v
    return varint(len(body)) + body


BASE_TS = 1714550000000


def batch(
    base_offset: int,
    values: list[bytes | None],
    epoch: int = 1,
    control: bool = False,
    codec: int = 0,
    base_ts: int = BASE_TS,
    bad_crc: bool = False,
    producer: tuple[int, int, int] = (-1, -1, -1),
) -> bytes:
    """A magic v2 batch of records at consecutive offsets, ts base_ts + i."""
    recs = b"".join(record(i, v, ts_delta=i) for i, v in enumerate(values))
    if codec == 1:
        recs = gzip.compress(recs)
    elif codec:
        recs = b"\x28\xb5\x2f\xfd" + recs  # the codec's bytes are never looked at
    attributes = codec | (0x20 if control else 0)
    n = len(values)
    pid, pepoch, seq = producer
    after_crc = struct.pack(">hiqqqhii", attributes, n - 1, base_ts, base_ts + n - 1,
                            pid, pepoch, seq, n) + recs  # fmt: skip
    crc = crc32c_bitwise(after_crc) ^ (1 if bad_crc else 0)
    length = 4 + 1 + 4 + len(after_crc)
    return struct.pack(">qiib", base_offset, length, epoch, 2) + struct.pack(">I", crc) + after_crc


def control_batch(base_offset: int) -> bytes:
    key = struct.pack(">hh", 0, 3)  # SnapshotHeader
    rec = b"\x00" + varint(0) + varint(0) + varint(len(key)) + key + varint(3) + b"\x00\x00\x00"
    rec += varint(0)
    recs = varint(len(rec)) + rec
    after_crc = struct.pack(">hiqqqhii", 0x20, 0, BASE_TS, BASE_TS, -1, -1, -1, 1) + recs
    length = 9 + len(after_crc)
    crc = crc32c_bitwise(after_crc)
    return struct.pack(">qiib", base_offset, length, 1, 2) + struct.pack(">I", crc) + after_crc


def legacy_message(offset: int, magic: int = 1) -> bytes:
    body = struct.pack(">bb", magic, 0) + (struct.pack(">q", BASE_TS) if magic else b"")
    body += struct.pack(">i", -1) + struct.pack(">i", 3) + b"abc"
    msg = struct.pack(">I", 0) + body  # crc not checked for ignored entries
    return struct.pack(">qi", offset, len(msg)) + msg


def units(data: bytes, snapshot_end: int | None = None) -> list[kb.Unit]:
    return list(kb.decode_metadata(kb.BytesSource(data), snapshot_end))


def events(data: bytes, snapshot_end: int | None = None) -> list[dict[str, Any]]:
    return [e for u in units(data, snapshot_end) for e in u.events]


# --- primitives ---------------------------------------------------------------------


def test_crc32c_known_vector() -> None:
    assert kb.crc32c(b"123456789") == 0xE3069283
    assert crc32c_bitwise(b"123456789") == 0xE3069283
    assert kb.crc32c(b"") == 0


@pytest.mark.parametrize("n", [0, 1, -1, 63, -64, 64, 300, -300, 2**31 - 1, -(2**31)])
def test_varint_zigzag(n: int) -> None:
    r = kb.Reader(varint(n) + b"\xff")
    assert r.varint("x") == n
    assert r.remaining() == 1


def test_varint_too_long_and_past_end() -> None:
    with pytest.raises(kb.DecodeError, match="longer than 5 bytes"):
        kb.Reader(b"\x80" * 6).uvarint("x")
    with pytest.raises(kb.DecodeError, match="runs past the end"):
        kb.Reader(b"\x80").uvarint("x")
    assert kb.Reader(uvarint(2**40)).varlong("x") == 2**39


def test_batch_header_fields() -> None:
    data = batch(42, [topic_record("orders"), remove_topic()], epoch=7, producer=(5, 2, 10))
    (u,) = units(data)
    h = kb.parse_header(data, 0)
    assert (h.base_offset, h.last_offset, h.partition_leader_epoch, h.magic) == (42, 43, 7, 2)
    assert (h.record_count, h.producer_id, h.producer_epoch, h.base_sequence) == (2, 5, 2, 10)
    assert (h.base_timestamp, h.max_timestamp, h.size) == (BASE_TS, BASE_TS + 1, len(data))
    assert h.crc == crc32c_bitwise(data[21:])
    assert u.text == (
        f"baseOffset: 42 lastOffset: 43 count: 2 baseSequence: 10 lastSequence: 11 "
        f"producerId: 5 producerEpoch: 2 partitionLeaderEpoch: 7 isTransactional: false "
        f"isControl: false deleteHorizonMs: OptionalLong.empty position: 0 "
        f"CreateTime: {BASE_TS + 1} size: {len(data)} magic: 2 compresscodec: none "
        f"crc: {h.crc} isvalid: true"
    )
    # the RemoveTopicRecord is a type we do not read: one event, at offset 42
    assert [(e["kind"], e["metadata_offset"], e["time_ms"]) for e in u.events] == [
        ("topic_record", 42, BASE_TS)
    ]


# --- record types ------------------------------------------------------------------


def test_topic_and_partition_records() -> None:
    data = batch(0, [topic_record("orders"), partition_record()])
    topic, part = events(data)
    assert topic == {"kind": "topic_record", "topic": "orders", "topic_id": TOPIC_ID,
                     "metadata_offset": 0, "time_ms": BASE_TS}  # fmt: skip
    assert part == {
        "kind": "partition_record", "partition": 0, "topic_id": TOPIC_ID, "replicas": [1, 2, 3],
        "isr": [1, 2], "removing_replicas": [], "adding_replicas": [], "leader": 1,
        "leader_epoch": 4, "partition_epoch": 9, "leader_recovery_state": 0, "elr": None,
        "last_known_elr": None, "metadata_offset": 1, "time_ms": BASE_TS + 1,
    }  # fmt: skip


def test_partition_record_v2_elr_tags_and_v1_directories() -> None:
    v2 = events(batch(0, [partition_record(2, state=1, elr=[3], last_known_elr=[])]))[0]
    assert (v2["leader_recovery_state"], v2["elr"], v2["last_known_elr"]) == (1, [3], [])
    v1 = events(batch(0, [partition_record(1)]))[0]
    assert (v1["partition_epoch"], v1["elr"], v1["leader_recovery_state"]) == (9, None, 0)


def test_partition_change_absent_means_unchanged() -> None:
    bare, with_leader, no_leader, full = events(batch(0, [
        partition_change(),
        partition_change(leader=3),
        partition_change(leader=-1, isr=[]),
        partition_change(2, partition=4, isr=[1, 3], leader=3, replicas=[1, 2, 3], removing=[2],
                         adding=[], state=1, elr=[2], last_known_elr=[], directories=True),
    ]))  # fmt: skip
    keys = ("leader", "isr", "replicas", "removing_replicas", "adding_replicas",
            "leader_recovery_state", "elr", "last_known_elr")  # fmt: skip
    assert [bare[k] for k in keys] == [-2, None, None, None, None, -1, None, None]
    assert [with_leader[k] for k in keys] == [3, None, None, None, None, -1, None, None]
    assert [no_leader[k] for k in keys] == [-1, [], None, None, None, -1, None, None]
    assert [full[k] for k in keys] == [3, [1, 3], [1, 2, 3], [2], [], 1, [2], []]
    assert (full["partition"], full["topic_id"], full["metadata_offset"]) == (4, TOPIC_ID, 3)


def test_partition_change_v0_skips_elr_tags_as_kafka_does() -> None:
    (e,) = events(batch(0, [partition_change(0, elr=[1], leader=2)]))
    assert (e["leader"], e["elr"]) == (2, None)


def test_broker_records() -> None:
    evs = events(batch(0, [
        register_broker(1, 100, fenced=True),
        register_broker(2, 101, fenced=False, version=3),
        fence(7, 1, 100),
        fence(8, 1, 100),
        registration_change(2, 101, fenced=-1),
        registration_change(2, 101, shutdown=1),
    ]))  # fmt: skip
    got = [(e["kind"], e["replica"], e["broker_epoch"], e["fenced"],
            e.get("in_controlled_shutdown")) for e in evs]  # fmt: skip
    assert got == [
        ("register_broker", 1, 100, 1, None),
        ("register_broker", 2, 101, 0, None),
        ("fence_broker", 1, 100, 1, None),
        ("unfence_broker", 1, 100, -1, None),
        ("broker_registration_change", 2, 101, -1, 0),
        ("broker_registration_change", 2, 101, 0, 1),
    ]


def test_config_record_min_isr() -> None:
    evs = events(batch(0, [
        config_record(2, "orders", "min.insync.replicas", "2"),
        config_record(4, "3", "min.insync.replicas", " 1 "),
        config_record(4, "", "min.insync.replicas", "2"),
        config_record(2, "orders", "min.insync.replicas", None),
        config_record(2, "orders", "retention.ms", "1000"),  # another config: ignored
        config_record(16, "x", "min.insync.replicas", "2"),  # CLIENT_METRICS: ignored
    ]))  # fmt: skip
    got = [(e["kind"], e.get("topic"), e.get("replica"), e["min_isr"], e["metadata_offset"])
           for e in evs]  # fmt: skip
    assert got == [
        ("min_isr_config", "orders", None, 2, 0),
        ("min_isr_config", None, 3, 1, 1),
        ("min_isr_config", None, None, 2, 2),
        ("min_isr_config", "orders", None, None, 3),
    ]
    (bad,) = units(batch(0, [config_record(2, "orders", "min.insync.replicas", "two")]))
    assert bad.reason == (
        "undecodable metadata batch: record at offset 0: min.insync.replicas value 'two' is not "
        "an int"
    )
    assert bad.events == []


# --- batches ignored or quarantined ------------------------------------------------


def test_control_batch_ignored_and_snapshot_offsets() -> None:
    data = control_batch(0) + batch(0, [topic_record("orders"), partition_record()])
    ctl, recs = units(data, snapshot_end=120)
    assert (ctl.ordinal, ctl.events, ctl.reason) == (1, [], None)
    assert "isControl: true" in ctl.text and "isvalid: true" in ctl.text
    assert recs.ordinal == 2
    assert [(e["kind"], e["metadata_offset"]) for e in recs.events] == [
        ("topic_record", 119), ("partition_record", 119)
    ]  # fmt: skip


def test_torn_tail_and_bad_crc_are_quarantined() -> None:
    good = batch(0, [topic_record("orders")])
    bad = batch(1, [partition_record()], bad_crc=True)
    after = batch(2, [partition_change(leader=2)])
    torn = batch(3, [partition_change(leader=3)])[:-5]
    u1, u2, u3, u4 = units(good + bad + after + torn)
    assert (u1.reason, len(u1.events)) == (None, 1)
    h = kb.parse_header(bad, 0)
    assert u2.reason == f"batch CRC mismatch: stored {h.crc}, computed {h.crc ^ 1}"
    assert u2.events == [] and u2.text.endswith("isvalid: false")
    assert (u3.reason, u3.events[0]["leader"]) == (None, 2)  # a bad CRC does not stop the file
    position = len(good + bad + after)
    need = len(torn) + 5
    assert u4.reason == f"torn batch: needs {need} bytes, {need - 5} left in the file"
    assert u4.text.startswith(f"Found {need - 5} invalid bytes at the end of the file "
                              f"(position {position}): torn batch")  # fmt: skip


@pytest.mark.parametrize(
    ("tail", "reason"),
    [
        (b"\x00" * 10, "torn batch header (10 bytes)"),
        (struct.pack(">qiib", 0, 10, 0, 2) + bytes(44), "batchLength 10 is below the header size"),
        (b"\x00" * 16 + b"\x07" + b"\x00" * 44, "unknown magic 7"),
    ],
)  # fmt: skip
def test_untrusted_header_ends_the_file(tail: bytes, reason: str) -> None:
    u1, u2 = units(batch(0, [topic_record("orders")]) + tail)
    assert (u1.reason, u2.reason, u2.ordinal) == (None, reason, 2)


def test_batch_over_the_limit_is_quarantined() -> None:
    header = struct.pack(">qiib", 0, kb.METADATA_BATCH_LIMIT, 1, 2) + b"\x00" * 44
    (u,) = units(header)
    assert u.reason == f"batchLength {kb.METADATA_BATCH_LIMIT} above the limit of " \
        f"{kb.METADATA_BATCH_LIMIT} bytes"  # fmt: skip


def test_gzip_batch_decoded_and_zstd_quarantined() -> None:
    gz = batch(0, [topic_record("orders"), partition_change(leader=2)], codec=1)
    zs = batch(2, [partition_change(leader=3)], codec=4)
    u1, u2 = units(gz + zs)
    assert [e["kind"] for e in u1.events] == ["topic_record", "partition_change"]
    assert "compresscodec: gzip" in u1.text
    assert (u2.reason, u2.events) == ("compression codec zstd not supported", [])


def test_undecodable_records_are_quarantined() -> None:
    cases = {
        "unknown PARTITION_RECORD version 3": frame(3, 3, b""),
        "metadata record with frame version 0 (the 2.8 KRaft preview)": b"\x00\x03\x00",
        "2 bytes of garbage after TOPIC_RECORD": topic_record("orders") + b"\x00\x00",
        "PartitionRecord.isr: needs 8 bytes, 0 left": frame(
            3, 0, struct.pack(">i", 0) + TOPIC_UUID.bytes + ints([1]) + uvarint(3)
        ),
    }
    for reason, value in cases.items():
        (u,) = units(batch(5, [topic_record("orders"), value]))
        assert u.reason == f"undecodable metadata batch: record at offset 6: {reason}"
    (u,) = units(batch(5, [None]))
    assert u.reason == "undecodable metadata batch: record at offset 5 has no value"


def test_record_length_mismatch() -> None:
    data = bytearray(batch(0, [topic_record("orders")]))
    data[61] += 2  # the record's varint length (zigzag: +1)
    data[17:21] = struct.pack(">I", crc32c_bitwise(bytes(data[21:])))
    (u,) = units(bytes(data))
    assert u.reason is not None and u.reason.startswith("undecodable metadata batch: record 0:")


def test_fuzzed_bytes_never_raise() -> None:
    import random

    rng = random.Random(4)
    base = batch(0, [topic_record("orders"), partition_change(2, leader=1, elr=[2])])
    for _ in range(2000):
        data = bytearray(base)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        data = data[: rng.randint(0, len(data))] if rng.random() < 0.2 else data
        for u in units(bytes(data)):
            assert (u.reason is None) or not u.events


# --- data segments -----------------------------------------------------------------


def test_data_segment_headers_and_legacy_entries() -> None:
    data = legacy_message(0, 0) + legacy_message(1, 1) + batch(2, [b"a", b"b", b"c"], epoch=5)
    data += batch(5, [b"d"], epoch=6, bad_crc=True)
    got = list(kb.decode_data(kb.BytesSource(data), "orders", 0))
    assert [(u.ordinal, u.reason, u.events) for u in got[:2]] == [(1, None, []), (2, None, [])]
    assert got[0].text.startswith("offset: 0 position: 0 size: 29 magic: 0")
    assert got[2].events == [{"kind": "segment_batch", "topic": "orders", "partition": 0,
                              "base_offset": 2, "last_offset": 4, "leader_epoch": 5,
                              "time_ms": BASE_TS + 2}]  # fmt: skip
    assert got[2].text.endswith("isvalid: not checked")
    assert got[3].events[0]["leader_epoch"] == 6  # headers only: the CRC is not read
    checked = list(kb.decode_data(kb.BytesSource(data), "orders", 0, verify_crc=True))
    assert checked[2].text.endswith("isvalid: true")
    assert checked[3].reason is not None and checked[3].reason.startswith("batch CRC mismatch")
    no_folder = list(kb.decode_data(kb.BytesSource(batch(0, [b"x"])), None, None))
    assert no_folder[0].reason == "segment path names no <topic>-<partition> folder"


def test_names_and_sniffing() -> None:
    assert kb.classify("/d/__cluster_metadata-0/00000000000000000000.log") == (
        kb.METADATA_SEGMENT, None)  # fmt: skip
    assert kb.classify("/d/__cluster_metadata-0/00000000000000000120-0000000003.checkpoint") == (
        kb.METADATA_SEGMENT, 120)  # fmt: skip
    assert kb.classify("/d/orders-0/00000000000000000100.log") == (kb.DATA_SEGMENT, None)
    assert kb.classify("/d/orders-0/00000000000000000100.index") is None
    assert kb.classify("/d/orders-0/leader-epoch-checkpoint") is None
    assert kb.partition_of("/d/my-topic-12/00000000000000000000.log") == ("my-topic", 12)
    assert kb.looks_binary(batch(0, [b"x"])) and kb.looks_binary(b"")
    assert not kb.looks_binary(b"Dumping /d/__cluster_metadata-0/00000000000000000000.log\n")


@pytest.mark.slow
def test_decode_speed_of_a_100_mb_data_segment(tmp_path: Path) -> None:
    """Headers only (the default) and with every CRC checked; MB/s printed."""
    one = batch(0, [b"v" * 1000] * 16)  # ~16 KiB batches, as a busy producer writes
    count = (100 << 20) // len(one)
    path = tmp_path / "00000000000000000000.log"
    with open(path, "wb") as f:
        for i in range(count):
            b = bytearray(one)
            b[0:8] = struct.pack(">q", i * 16)
            f.write(b)
    size = path.stat().st_size
    with open(path, "rb") as f:
        start = time.perf_counter()
        got = list(kb.decode_data(kb.FileSource(f, size), "orders", 0))
        headers = time.perf_counter() - start
    assert len(got) == count and got[-1].events[0]["base_offset"] == (count - 1) * 16
    with open(path, "rb") as f:
        src = kb.FileSource(f, size)
        start = time.perf_counter()
        checked = list(kb.decode_data(src, "orders", 0, verify_crc=True))
        crc = time.perf_counter() - start
    assert all(u.reason is None for u in checked)
    mb = size / 1e6
    print(f"\n100 MB data segment: headers only {mb / headers:.0f} MB/s "
          f"({count} batches in {headers:.2f} s); with CRC-32C {mb / crc:.1f} MB/s")  # fmt: skip


# --- through Spark ------------------------------------------------------------------


#: (binary value, the JSON payload kafka-dump-log prints for it), per record.
def _pr_json(
    version: int, state: int = 0, elr: list[int] | None = None, lke: list[int] | None = None
) -> str:
    d: dict[str, Any] = {"partitionId": 0, "topicId": TOPIC_ID, "replicas": [1, 2, 3],
                         "isr": [1, 2], "removingReplicas": [], "addingReplicas": [],
                         "leader": 1}  # fmt: skip
    if state:
        d["leaderRecoveryState"] = state
    d |= {"leaderEpoch": 4, "partitionEpoch": 9}
    if version >= 1:
        d["directories"] = ["ERERERERERERERERERERER"] * 3
    if elr is not None:
        d["eligibleLeaderReplicas"] = elr
    if lke is not None:
        d["lastKnownElr"] = lke
    return json.dumps({"type": "PARTITION_RECORD", "version": version, "data": d},
                      separators=(",", ":"))  # fmt: skip


def _envelope(rtype: str, version: int, data: dict[str, Any]) -> str:
    return json.dumps({"type": rtype, "version": version, "data": data}, separators=(",", ":"))


def _equivalent_records() -> list[tuple[bytes, str]]:
    pc = "PARTITION_CHANGE_RECORD"
    base = {"partitionId": 0, "topicId": TOPIC_ID}
    records = [
        (topic_record("orders"),
         _envelope("TOPIC_RECORD", 0, {"name": "orders", "topicId": TOPIC_ID})),
        (partition_record(), _pr_json(0)),
        (partition_record(2, state=1, elr=[3], last_known_elr=[]), _pr_json(2, 1, [3], [])),
        (partition_change(), _envelope(pc, 0, base)),
        (partition_change(leader=-1, isr=[]), _envelope(pc, 0, base | {"isr": [], "leader": -1})),
        (partition_change(2, isr=[1, 3], leader=3, replicas=[1, 2, 3], removing=[2], adding=[],
                          state=1, elr=[2], last_known_elr=[]),
         _envelope(pc, 2, base | {"isr": [1, 3], "leader": 3, "replicas": [1, 2, 3],
                                  "removingReplicas": [2], "addingReplicas": [],
                                  "leaderRecoveryState": 1, "eligibleLeaderReplicas": [2],
                                  "lastKnownElr": []})),
        (register_broker(1, 100, fenced=False),
         _envelope("REGISTER_BROKER_RECORD", 1, {"brokerId": 1, "incarnationId": "x",
                                                 "brokerEpoch": 100, "endPoints": [],
                                                 "features": [], "rack": None, "fenced": False,
                                                 "inControlledShutdown": False})),
        (fence(7, 1, 100), _envelope("FENCE_BROKER_RECORD", 0, {"id": 1, "epoch": 100})),
        (fence(8, 1, 100), _envelope("UNFENCE_BROKER_RECORD", 0, {"id": 1, "epoch": 100})),
        (registration_change(2, 101, fenced=-1),
         _envelope("BROKER_REGISTRATION_CHANGE_RECORD", 1,
                   {"brokerId": 2, "brokerEpoch": 101, "fenced": -1})),
        (registration_change(2, 101, shutdown=1),
         _envelope("BROKER_REGISTRATION_CHANGE_RECORD", 1,
                   {"brokerId": 2, "brokerEpoch": 101, "inControlledShutdown": 1})),
        (remove_topic(), _envelope("REMOVE_TOPIC_RECORD", 0, {"topicId": TOPIC_ID})),
    ]  # fmt: skip
    from pipeline.ingest import metadata_dump

    if "CONFIG_RECORD" in getattr(metadata_dump, "KNOWN_VERSIONS", {}):
        for rtype, name, value in ((2, "orders", "2"), (4, "3", "1"), (4, "", "2")):
            data = {"resourceType": rtype, "resourceName": name, "name": "min.insync.replicas",
                    "value": value}  # fmt: skip
            records.append((config_record(rtype, name, "min.insync.replicas", value),
                            _envelope("CONFIG_RECORD", 0, data)))  # fmt: skip
    return records


def _dump_lines(records: list[tuple[bytes, str]], first_offset: int, batch_size: int) -> list[str]:
    """The kafka-dump-log --cluster-metadata-decoder lines (3.3+) of the batches
    :func:`batch` builds from the same records (kafka-formats.md 2.1)."""
    out = []
    for start in range(0, len(records), batch_size):
        chunk = records[start : start + batch_size]
        base = first_offset + start
        out.append(
            f"baseOffset: {base} lastOffset: {base + len(chunk) - 1} count: {len(chunk)} "
            "baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
            "partitionLeaderEpoch: 1 isTransactional: false isControl: false deleteHorizonMs: "
            f"OptionalLong.empty position: 0 CreateTime: {BASE_TS + len(chunk) - 1} size: 1 "
            "magic: 2 compresscodec: none crc: 1 isvalid: true"
        )
        for i, (value, payload) in enumerate(chunk):
            out.append(
                f"| offset: {base + i} CreateTime: {BASE_TS + i} keySize: -1 "
                f"valueSize: {len(value)} sequence: -1 headerKeys: [] payload: {payload}"
            )
    return out


def _segment(records: list[tuple[bytes, str]], first_offset: int, batch_size: int) -> bytes:
    return b"".join(
        batch(first_offset + s, [v for v, _ in records[s : s + batch_size]])
        for s in range(0, len(records), batch_size)
    )


@pytest.fixture(scope="module")
def ingested(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from pipeline.ingest import ingest

    root = tmp_path_factory.mktemp("binary")
    # A broker's data dir, given as a folder: __cluster_metadata-0/ is read.
    md = root / "data" / "broker-1" / "__cluster_metadata-0"
    md.mkdir(parents=True)
    (md / "00000000000000000000.log").write_bytes(
        control_batch(0)
        + batch(1, [topic_record("orders"), partition_record(), remove_topic()])
        + batch(4, [partition_change(leader=2)], bad_crc=True)
        + batch(5, [partition_change(isr=[1])], codec=3)
        + batch(6, [partition_change(leader=3, isr=[3])])
        + batch(7, [partition_change(leader=1)])[:30]
    )
    (md / "00000000000000000120-0000000003.checkpoint").write_bytes(
        control_batch(0) + batch(0, [topic_record("orders"), partition_record(2, elr=[2])])
    )
    (md / "leader-epoch-checkpoint").write_text("0\n1\n3 0\n")
    data = root / "data" / "broker-1" / "orders-0"
    data.mkdir()
    (data / "00000000000000000000.log").write_bytes(
        legacy_message(0) + batch(1, [b"a", b"b"], epoch=3) + batch(3, [b"c"], epoch=4)
    )
    (data / "00000000000000000004.log").write_bytes(b"")  # the empty active segment
    # A saved dump named like a segment is text: the text path reads it.
    saved = root / "data" / "broker-2" / "__cluster_metadata-0"
    saved.mkdir(parents=True)
    (saved / "00000000000000000000.log").write_text(
        "Dumping /var/lib/kafka/__cluster_metadata-0/00000000000000000000.log\n"
        "Log starting offset: 0\n"
        + "\n".join(_dump_lines([(topic_record("orders"), _envelope("TOPIC_RECORD", 0, {
            "name": "orders", "topicId": TOPIC_ID}))], 0, 1)) + "\n"
    )  # fmt: skip
    # Equivalence: the same records, as a binary segment and as a text dump.
    records = _equivalent_records()
    eq = root / "eq"
    (eq / "bin" / "__cluster_metadata-0").mkdir(parents=True)
    (eq / "bin" / "__cluster_metadata-0" / "00000000000000000010.log").write_bytes(
        _segment(records, 10, 4)
    )
    (eq / "bin" / "00000000000000000200-0000000004.checkpoint").write_bytes(
        control_batch(0) + _segment(records, 0, 5)
    )
    (eq / "text").mkdir()
    (eq / "text" / "segment.txt").write_text(
        "Dumping /d/__cluster_metadata-0/00000000000000000010.log\nLog starting offset: 10\n"
        + "\n".join(_dump_lines(records, 10, 4))
        + "\n"
    )
    (eq / "text" / "snapshot.txt").write_text(
        "Dumping /d/__cluster_metadata-0/00000000000000000200-0000000004.checkpoint\n"
        "Snapshot end offset: 200, epoch: 4\n" + "\n".join(_dump_lines(records, 0, 5)) + "\n"
    )
    r = ingest(spark, [str(root / "data"), str(eq)], persist=True)
    try:
        return {
            "events": [e.asDict() for e in r.events.collect()],
            "quarantine": sorted(
                (Path(q.source_file).name, q.line_no, q.reason, q.text[:40])
                for q in r.quarantine.collect()
            ),
            "file_stats": {
                s.path.split(str(root) + "/", 1)[-1]: s.asDict() for s in r.file_stats.collect()
            },
            "lines": {
                (x.source_file.split(str(root) + "/", 1)[-1], x.line_no): x.value
                for x in r.lines.collect()
            },
            "root": root,
            "records": len(records),
        }
    finally:
        r.unpersist()


def _name(e: dict[str, Any]) -> str:
    return e["source_file"].split("/data/", 1)[-1].split("/eq/", 1)[-1]


@pytest.mark.spark
def test_accounting_per_file(ingested: dict[str, Any]) -> None:
    got = accounting(ingested["file_stats"])
    n = ingested["records"]
    b4, b5 = -(-n // 4), -(-n // 5)  # batches of 4 and of 5 records
    md = "data/broker-1/__cluster_metadata-0/"
    assert got == {
        md + "00000000000000000000.log": ("metadata_segment", 1, 6, 2, 1, 3),
        md + "00000000000000000120-0000000003.checkpoint": ("metadata_segment", 1, 2, 1, 1, 0),
        md + "leader-epoch-checkpoint": ("checkpoint", 1, 3, 1, 2, 0),
        "data/broker-1/orders-0/00000000000000000000.log": ("data_segment", 1, 3, 2, 1, 0),
        "data/broker-1/orders-0/00000000000000000004.log": ("data_segment", 1, 0, 0, 0, 0),
        "data/broker-2/__cluster_metadata-0/00000000000000000000.log":
            ("metadata_dump", 2, 4, 1, 3, 0),
        "eq/bin/__cluster_metadata-0/00000000000000000010.log":
            ("metadata_segment", None, b4, b4, 0, 0),
        "eq/bin/00000000000000000200-0000000004.checkpoint":
            ("metadata_segment", None, 1 + b5, b5, 1, 0),
        # header lines + batch lines are ignored, and the RemoveTopicRecord line
        "eq/text/segment.txt": ("metadata_dump", None, 2 + b4 + n, n - 1, 2 + b4 + 1, 0),
        "eq/text/snapshot.txt": ("metadata_dump", None, 2 + b5 + n, n - 1, 2 + b5 + 1, 0),
    }  # fmt: skip


@pytest.mark.spark
def test_events_of_a_data_dir(ingested: dict[str, Any]) -> None:
    evs = sorted((e for e in ingested["events"] if "/data/broker-1/" in e["source_file"]),
                 key=lambda e: (e["source_file"], e["seq"]))  # fmt: skip
    got = [
        (_name(e).split("/", 1)[1], e["line_no"], e["seq"], e["kind"], e["topic"], e["topic_id"],
         e["partition"], e["observer"], e["metadata_offset"], e["leader"], e["isr"], e["elr"],
         e["leader_epoch"], e["replica"], e["base_offset"], e["last_offset"], e["event_time"])
        for e in evs
    ]  # fmt: skip
    md = "__cluster_metadata-0/"
    log, snap = md + "00000000000000000000.log", md + "00000000000000000120-0000000003.checkpoint"
    seg = "orders-0/00000000000000000000.log"
    t = dt.datetime(2024, 5, 1, 7, 53, 20)
    ms = dt.timedelta(milliseconds=1)
    tid = TOPIC_ID
    assert got == [
        (log, 2, 200000, "topic_record", "orders", tid, None, 1, 1, None, None, None, None,
         None, None, None, t),
        (log, 2, 200001, "partition_record", "orders", tid, 0, 1, 2, 1, [1, 2], None, 4, None,
         None, None, t + ms),
        (log, 5, 500000, "partition_change", "orders", tid, 0, 1, 6, 3, [3], None, None, None,
         None, None, t),
        (snap, 2, 200000, "topic_record", "orders", tid, None, 1, 119, None, None, None, None,
         None, None, None, t),
        (snap, 2, 200001, "partition_record", "orders", tid, 0, 1, 119, 1, [1, 2], [2], 4, None,
         None, None, t + ms),
        (md + "leader-epoch-checkpoint", 3, 300000, "epoch_checkpoint", "__cluster_metadata",
         None, 0, 1, None, None, None, None, 3, 1, 0, None, None),
        (seg, 2, 200000, "segment_batch", "orders", tid, 0, 1, None, None, None, None, 3, 1, 1,
         2, t + ms),
        (seg, 3, 300000, "segment_batch", "orders", tid, 0, 1, None, None, None, None, 4, 1, 3,
         3, t),
    ]  # fmt: skip


@pytest.mark.spark
def test_quarantine_and_raw_lines(ingested: dict[str, Any]) -> None:
    log = "00000000000000000000.log"
    q = [x for x in ingested["quarantine"] if x[0] == log]
    torn_at = len(control_batch(0) + batch(1, [topic_record("orders"), partition_record(),
                                                remove_topic()])
                  + batch(4, [partition_change(leader=2)]) + batch(5, [partition_change(isr=[1])],
                                                                   codec=3)
                  + batch(6, [partition_change(leader=3, isr=[3])]))  # fmt: skip
    bad = batch(4, [partition_change(leader=2)], bad_crc=True)
    crc = kb.parse_header(bad, 0).crc
    assert q == [
        (log, 3, f"batch CRC mismatch: stored {crc}, computed {crc ^ 1}",
         "baseOffset: 4 lastOffset: 4 count: 1 bas"),
        (log, 4, "compression codec lz4 not supported", "baseOffset: 5 lastOffset: 5 count: 1 bas"),
        (log, 6, "torn batch header (30 of 61 bytes)", "Found 30 invalid bytes at the end of the"),
    ]  # fmt: skip
    lines = ingested["lines"]
    path = "data/broker-1/__cluster_metadata-0/" + log
    assert lines[(path, 1)].startswith("baseOffset: 0 lastOffset: 0 count: 1 ")
    assert "isControl: true" in lines[(path, 1)]
    assert lines[(path, 6)] == (f"Found 30 invalid bytes at the end of the file (position "
                               f"{torn_at}): torn batch header (30 of 61 bytes)")  # fmt: skip
    assert lines[("data/broker-1/orders-0/" + log, 1)] == (
        "offset: 0 position: 0 size: 37 magic: 1 (pre-0.11 message set: no leader epoch)"
    )
    # the saved dump named like a segment keeps its own text lines
    assert lines[("data/broker-2/__cluster_metadata-0/" + log, 2)] == "Log starting offset: 0"
    assert len([k for k in lines if k[0] == path]) == 6


@pytest.mark.spark
def test_binary_events_equal_the_text_dump_events(ingested: dict[str, Any]) -> None:
    skip = {"source_file", "line_no", "seq"}

    def of(suffix: str) -> list[dict[str, Any]]:
        rows = sorted((e for e in ingested["events"] if e["source_file"].endswith(suffix)),
                      key=lambda e: e["seq"])  # fmt: skip
        return [{k: v for k, v in e.items() if k not in skip} for e in rows]

    binary_log, text_log = (
        of("/eq/bin/__cluster_metadata-0/00000000000000000010.log"),
        of("/eq/text/segment.txt"),
    )
    assert len(binary_log) == ingested["records"] - 1  # all but the RemoveTopicRecord
    assert binary_log == text_log
    # offset 21 is the RemoveTopicRecord (index 11 of the records)
    offsets = [o for o in range(10, 10 + ingested["records"]) if o != 21]
    assert [e["metadata_offset"] for e in binary_log] == offsets
    binary_snap, text_snap = (
        of("/eq/bin/00000000000000000200-0000000004.checkpoint"),
        of("/eq/text/snapshot.txt"),
    )
    assert binary_snap == text_snap
    assert {e["metadata_offset"] for e in binary_snap} == {199}


# --- listing --------------------------------------------------------------------------


def _tree(root: Path) -> None:
    (root / "b" / "__cluster_metadata-0").mkdir(parents=True)
    (root / "b" / "__cluster_metadata-0" / "quorum-state").write_text("{}\n")
    (root / "b" / "a[1]{x}.txt").write_text("x\n")
    (root / "b" / "_SUCCESS").write_text("")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref\n")
    outside = root.parent / (root.name + "-outside.txt")
    outside.write_text("secret\n")
    (root / "b" / "link.txt").symlink_to(outside)
    (root / "b" / "inside.txt").symlink_to(root / "b" / "a[1]{x}.txt")


def test_list_files_local(tmp_path: Path) -> None:
    from pipeline.ingest import lines

    root = tmp_path / "t"
    _tree(root)
    got = lines.list_files(None, [str(root)])  # type: ignore[arg-type]  (local: no Spark)
    assert got == [
        f"file:{root}/b/a[1]{{x}}.txt",
        f"file:{root}/b/inside.txt",
        f"file:{root}/b/__cluster_metadata-0/quorum-state",
    ]
    escaped = lines.escape_glob(str(root / "b" / "a[1]{x}.txt"))
    assert lines.list_files(None, [escaped]) == [f"file:{root}/b/a[1]{{x}}.txt"]  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="input path does not exist"):
        lines.list_files(None, [str(root / "nope")])  # type: ignore[arg-type]


@pytest.mark.spark
def test_list_files_through_hadoop_and_read(spark: Any, tmp_path: Path) -> None:
    from pipeline.ingest import lines

    root = tmp_path / "t"
    _tree(root)
    listed = lines._list_hadoop(spark, f"file://{root}")
    assert listed is not None
    assert sorted(Path(lines.local_file(p) or "").name for p in listed) == sorted(
        ["a[1]{x}.txt", "inside.txt", "link.txt", "quorum-state"]
    )  # Hadoop follows links; local listing (the usual case) does not leave the tree
    raw, files = lines.read_lines(spark, [str(root)])
    names = sorted(Path(f).name for f in files)
    assert names == ["a%5B1%5D%7Bx%7D.txt", "inside.txt", "quorum-state"]
    assert sorted(r.value for r in raw.collect()) == ["x", "x", "{}"]
