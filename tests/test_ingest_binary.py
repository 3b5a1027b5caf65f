"""Raw binary metadata-log segments, snapshots and data segments (issue 4, kinds 3 and 4;
issue 11 item 6: native CRC-32C, compressed batches).

Every byte string here is built by the small encoder below, written from the
wire format (record batch v2, DefaultRecord, the metadata serde frame and the
flexible-version message encoding), not from the decoder's code. Its CRC-32C
is the bitwise definition, not the decoder's table. Compressed batches are
framed here as Kafka frames each codec (gzip stream; xerial snappy chunks;
LZ4 frame of 64 KiB independent blocks; streaming zstd frame), with the
block compressors of the libraries the decoder reads them with.
"""

from __future__ import annotations

import base64
import datetime as dt
import gzip
import json
import random
import struct
import time
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
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


NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4


def xxh32(data: bytes, seed: int = 0) -> int:
    """xxHash32 from its specification (the LZ4 frame's header checksum)."""
    p1, p2, p3, p4, p5, m = 2654435761, 2246822519, 3266489917, 668265263, 374761393, 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & m

    n, i = len(data), 0
    if n >= 16:
        v = [(seed + p1 + p2) & m, (seed + p2) & m, seed & m, (seed - p1) & m]
        while i + 16 <= n:
            for k in range(4):
                (lane,) = struct.unpack_from("<I", data, i + 4 * k)
                v[k] = rotl((v[k] + lane * p2) & m, 13) * p1 & m
            i += 16
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & m
    else:
        h = (seed + p5) & m
    h = (h + n) & m
    while i + 4 <= n:
        (lane,) = struct.unpack_from("<I", data, i)
        h = rotl((h + lane * p3) & m, 17) * p4 & m
        i += 4
    for b in data[i:]:
        h = rotl((h + b * p5) & m, 11) * p1 & m
    h ^= h >> 15
    h = h * p2 & m
    h ^= h >> 13
    h = h * p3 & m
    return h ^ (h >> 16)


def lz4_frame(data: bytes) -> bytes:
    """Lz4BlockOutputStream's frame: FLG version 1, independent blocks, no
    checksums, no content size; BD 64 KiB; HC from FLG and BD only (v2
    batches; the "broken" HC of magic v0 also hashed the magic); blocks of
    int32 LE length, high bit set when stored uncompressed; end mark 0."""
    flg_bd = bytes([0x60, 0x40])
    out = struct.pack("<I", 0x184D2204) + flg_bd + bytes([(xxh32(flg_bd) >> 8) & 0xFF])
    raw = pa.Codec("lz4_raw")
    for i in range(0, len(data), 64 << 10):
        block = data[i : i + (64 << 10)]
        packed = raw.compress(block, asbytes=True)
        if len(packed) >= len(block):
            out += struct.pack("<I", len(block) | 0x80000000) + block
        else:
            out += struct.pack("<I", len(packed)) + packed
    return out + struct.pack("<I", 0)


XERIAL = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)


def snappy_xerial(data: bytes, chunk: int = 32 << 10) -> bytes:
    """SnappyOutputStream: the 16-byte header, then per 32 KiB of input an
    int32 BE length and one raw snappy block."""
    codec = pa.Codec("snappy")
    out = XERIAL
    for i in range(0, len(data), chunk):
        packed = codec.compress(data[i : i + chunk], asbytes=True)
        out += struct.pack(">i", len(packed)) + packed
    return out


def zstd_stream(data: bytes) -> bytes:
    """One frame written as a stream (zstd-jni's ZstdOutputStream): the frame
    header carries no content size."""
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as z:
        for i in range(0, len(data), 1 << 20):
            z.write(data[i : i + (1 << 20)])
    return sink.getvalue().to_pybytes()  # type: ignore[no-any-return]


def compress(codec: int, data: bytes) -> bytes:
    if codec == GZIP:
        return gzip.compress(data)
    if codec == SNAPPY:
        return snappy_xerial(data)
    if codec == LZ4:
        return lz4_frame(data)
    if codec == ZSTD:
        return zstd_stream(data)
    assert codec == NONE
    return data


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
    codec: int = NONE,
    base_ts: int = BASE_TS,
    bad_crc: bool = False,
    producer: tuple[int, int, int] = (-1, -1, -1),
    records: bytes | None = None,
    payload: bytes | None = None,
) -> bytes:
    """A magic v2 batch of records at consecutive offsets, ts base_ts + i:
    ``values`` as records (or the encoded ``records``), compressed with
    ``codec`` (or ``payload`` as the bytes after the header, as they are)."""
    recs = b"".join(record(i, v, ts_delta=i) for i, v in enumerate(values))
    body = compress(codec, recs if records is None else records) if payload is None else payload
    attributes = codec | (0x20 if control else 0)
    n = len(values)
    pid, pepoch, seq = producer
    after_crc = struct.pack(">hiqqqhii", attributes, n - 1, base_ts, base_ts + n - 1,
                            pid, pepoch, seq, n) + body  # fmt: skip
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
    # the pinned google-crc32c wheel ships its C extension: the native path runs
    assert kb.CRC32C_IMPLEMENTATION == "native"
    assert kb.crc32c(b"123456789") == 0xE3069283
    assert kb.crc32c_pure(b"123456789") == 0xE3069283
    assert crc32c_bitwise(b"123456789") == 0xE3069283
    assert kb.crc32c(b"") == kb.crc32c_pure(b"") == 0


def test_crc32c_native_equals_pure_whole_and_in_pieces() -> None:
    rng = random.Random(11)
    for n in (1, 7, 61, 1000, 4099):
        data = rng.randbytes(n)
        cut = rng.randrange(n)
        expected = crc32c_bitwise(data)
        assert kb.crc32c(data) == kb.crc32c_pure(data) == expected
        assert kb.crc32c(data[cut:], kb.crc32c(data[:cut])) == expected
        assert kb.crc32c_pure(data[cut:], kb.crc32c_pure(data[:cut])) == expected


def test_pure_crc_is_the_fallback_and_still_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the native extension every CRC is still checked, slower."""
    monkeypatch.setattr(kb, "_native_crc32c", None)
    assert kb.crc32c(b"123456789") == 0xE3069283
    good, bad = batch(0, [b"a"], epoch=2), batch(1, [b"b"], epoch=2, bad_crc=True)
    h = kb.parse_header(bad, 0)
    got = list(kb.decode_data(kb.BytesSource(good + bad), "orders", 0))
    assert [(u.reason, len(u.events)) for u in got] == [
        (None, 1), (f"batch CRC mismatch: stored {h.crc}, computed {h.crc ^ 1}", 0)
    ]  # fmt: skip
    (u,) = units(batch(0, [topic_record("orders")], bad_crc=True))
    assert u.reason is not None and u.reason.startswith("batch CRC mismatch")


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


# --- compressed batches ------------------------------------------------------------

CODEC_NAMES = {GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}


def _mixed_records() -> tuple[list[tuple[bytes | None, bytes | None]], bytes]:
    """(key, value) per record and the records encoded: a key and a header, a
    null value, 70 KB of text (past one 64 KiB LZ4 block and two 32 KiB snappy
    chunks) and 70 KB of random bytes (LZ4 stores such a block uncompressed)."""
    rng = random.Random(5)
    kvs: list[tuple[bytes | None, bytes | None]] = [
        (b"k0", b"alpha"),
        (None, None),
        (b"k2", b"orders-0 leader epoch 7 " * 2900),
        (None, rng.randbytes(70_000)),
    ]
    encoded = b"".join(
        record(i, v, ts_delta=i, key=k, headers=((b"h", b"v"),) if i == 0 else ())
        for i, (k, v) in enumerate(kvs)
    )
    return kvs, encoded


@pytest.mark.parametrize("codec", [NONE, GZIP, SNAPPY, LZ4, ZSTD])
def test_compressed_batch_records_decoded(codec: int) -> None:
    kvs, encoded = _mixed_records()
    data = batch(100, [v for _, v in kvs], codec=codec, records=encoded)
    h = kb.parse_header(data, 0)
    assert h.compression == codec
    assert (data[kb.HEADER_SIZE :] == encoded) == (codec == NONE)
    assert list(kb.batch_records(h, data[kb.HEADER_SIZE :])) == [
        kb.Record(100 + i, BASE_TS + i, k, v) for i, (k, v) in enumerate(kvs)
    ]
    # a data segment checks the CRC over the compressed bytes and reads no record
    (u,) = kb.decode_data(kb.BytesSource(data), "orders", 0)
    assert (u.reason, u.events[0]["base_offset"], u.events[0]["last_offset"]) == (None, 100, 103)
    assert u.text.endswith(f"compresscodec: {CODEC_NAMES.get(codec, 'none')} crc: {h.crc} "
                           "isvalid: true")  # fmt: skip


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD])
def test_compressed_metadata_batch_gives_the_uncompressed_events(codec: int) -> None:
    values = [
        topic_record("orders"),
        partition_record(2, elr=[2]),
        remove_topic(),
        partition_change(leader=3, isr=[3]),
        config_record(2, "orders", "min.insync.replicas", "2"),
    ]
    (plain,) = units(batch(7, values))
    (packed,) = units(batch(7, values, codec=codec))
    assert packed.reason is None
    assert packed.events == plain.events
    assert [e["metadata_offset"] for e in packed.events] == [7, 8, 10, 11]
    assert f"compresscodec: {CODEC_NAMES[codec]} " in packed.text


def test_snappy_raw_and_concatenated_xerial_streams() -> None:
    """SnappyInputStream reads a body without the xerial magic as one raw
    block (librdkafka writes those) and skips a header between chunks."""
    kvs, encoded = _mixed_records()
    raw = pa.Codec("snappy").compress(encoded, asbytes=True)
    concatenated = snappy_xerial(encoded[:5000], chunk=1024) + snappy_xerial(encoded[5000:])
    expected = [kb.Record(0 + i, BASE_TS + i, k, v) for i, (k, v) in enumerate(kvs)]
    for payload in (raw, concatenated):
        data = batch(0, [v for _, v in kvs], codec=SNAPPY, payload=payload)
        assert list(kb.batch_records(kb.parse_header(data, 0), data[kb.HEADER_SIZE :])) == expected


def _corrupt_payloads() -> list[tuple[int, bytes, str]]:
    recs = b"".join(record(i, v) for i, v in enumerate([topic_record("orders"),
                                                        partition_change(leader=2)]))  # fmt: skip
    bad_hc = bytearray(lz4_frame(recs))
    bad_hc[6] ^= 0xFF  # the frame descriptor's checksum byte
    return [
        (GZIP, gzip.compress(recs, mtime=0)[:-9], "gzip: truncated stream"),
        (GZIP, gzip.compress(recs, mtime=0) + b"junk!junk!",
         "gzip: Error -3 while decompressing data: incorrect header check"),
        (SNAPPY, snappy_xerial(recs)[:-3], f"snappy: chunk of {len(snappy_xerial(recs)) - 20} "
                                           f"bytes, {len(snappy_xerial(recs)) - 23} left"),
        (SNAPPY, snappy_xerial(recs) + b"\x00\x00", "snappy: 2 bytes after the last chunk"),
        (SNAPPY, pa.Codec("snappy").compress(recs, asbytes=True)[:-2],
         "snappy: Corrupt snappy compressed data."),
        (LZ4, lz4_frame(recs)[:-6], "lz4: Truncated compressed stream"),
        (LZ4, bytes(bad_hc), "lz4: LZ4 decompress failed: ERROR_headerChecksum_invalid"),
        (ZSTD, zstd_stream(recs)[:-3], "zstd: Truncated compressed stream"),
        (ZSTD, b"not zstd at all", "zstd: ZSTD decompress failed: Unknown frame descriptor"),
        (5, recs, "unknown compression codec id 5"),
    ]  # fmt: skip


@pytest.mark.parametrize(("codec", "payload", "reason"), _corrupt_payloads())
def test_corrupt_compressed_batch_is_quarantined(codec: int, payload: bytes, reason: str) -> None:
    data = batch(0, [topic_record("orders"), partition_change(leader=2)], codec=codec,
                 payload=payload)  # fmt: skip
    after = batch(2, [partition_change(leader=3)], codec=codec if codec < 5 else NONE)
    u1, u2 = units(data + after)
    assert (u1.reason, u1.events) == (f"undecodable metadata batch: {reason}", [])
    assert "isvalid: true" in u1.text  # the CRC holds: the bytes were written so
    assert (u2.reason, [e["leader"] for e in u2.events]) == (None, [3])


def _bomb(codec: int, size: int) -> bytes:
    """One well-formed record whose value is ``size`` zero bytes, compressed."""
    return compress(codec, record(0, bytes(size)))


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD])
def test_decompression_bomb_is_quarantined(codec: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kb, "DECOMPRESSED_LIMIT", 1 << 20)
    under = batch(0, [b""], codec=codec, payload=_bomb(codec, (1 << 20) - 16))
    h = kb.parse_header(under, 0)
    ((_, _, _, value),) = kb.batch_records(h, under[kb.HEADER_SIZE :])
    assert value == bytes((1 << 20) - 16)  # just under the limit: read
    payload = _bomb(codec, 4 << 20)
    over = batch(1, [topic_record("orders")], codec=codec, payload=payload)
    assert len(payload) < (1 << 20)  # the bytes in the file are few; inflated they are not
    (u,) = units(over)
    name = CODEC_NAMES[codec]
    assert (u.reason, u.events) == (f"{name} batch inflates past 1048576 bytes (the limit per "
                                    "batch)", [])  # fmt: skip
    if codec == SNAPPY:  # a raw block says its length first: refused before inflating
        raw = pa.Codec("snappy").compress(bytes(4 << 20), asbytes=True)
        (u,) = units(batch(2, [topic_record("orders")], codec=codec, payload=raw))
        assert u.reason == "snappy batch inflates past 1048576 bytes (the limit per batch)"


def test_a_gigabyte_zstd_bomb_stays_within_the_limit() -> None:
    """1 GiB of zeros is ~32 KB of zstd: the default limit stops it, and the
    decoder never holds much more than the limit (tracemalloc sees the
    inflated bytes, which live in one bytearray; pyarrow hands them over 1 MiB
    at a time)."""
    import tracemalloc

    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as z:
        chunk = bytes(1 << 20)
        for _ in range(1024):
            z.write(chunk)
    payload = sink.getvalue().to_pybytes()
    assert len(payload) < 100_000
    data = batch(0, [topic_record("orders")], codec=ZSTD, payload=payload)
    tracemalloc.start()
    try:
        (u,) = units(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert kb.DECOMPRESSED_LIMIT == 64 << 20
    assert u.reason == "zstd batch inflates past 67108864 bytes (the limit per batch)"
    assert peak < kb.DECOMPRESSED_LIMIT + (8 << 20)  # the cap and a piece, not 1 GiB


def test_gzip_concatenated_members_are_one_stream() -> None:
    """GZIPInputStream, Kafka's reader, reads concatenated members on."""
    recs = [topic_record("orders"), partition_change(leader=2)]
    encoded = b"".join(record(i, v, ts_delta=i) for i, v in enumerate(recs))
    payload = gzip.compress(encoded[:10]) + gzip.compress(encoded[10:])
    (u,) = units(batch(0, recs, codec=GZIP, payload=payload))
    assert [e["kind"] for e in u.events] == ["topic_record", "partition_change"]


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
    # every batch's CRC is checked by default
    assert got[2].text.endswith("isvalid: true")
    h = kb.parse_header(batch(5, [b"d"], epoch=6, bad_crc=True), 0)
    assert (got[3].reason, got[3].events) == (
        f"batch CRC mismatch: stored {h.crc}, computed {h.crc ^ 1}",
        [],
    )
    assert got[3].text.endswith(f"crc: {h.crc} isvalid: false")
    unchecked = list(kb.decode_data(kb.BytesSource(data), "orders", 0, verify_crc=False))
    assert unchecked[2].text.endswith("isvalid: not checked")
    assert unchecked[3].events[0]["leader_epoch"] == 6  # headers only: the CRC is not read
    no_folder = list(kb.decode_data(kb.BytesSource(batch(0, [b"x"])), None, None))
    assert no_folder[0].reason == "segment path names no <topic>-<partition> folder"


def test_data_crc_in_pieces_from_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large batch is checked piece by piece (memory stays flat), with the
    same verdicts as whole."""
    kvs, encoded = _mixed_records()
    good = batch(0, [v for _, v in kvs], epoch=3, records=encoded)
    bad = bytearray(batch(4, [v for _, v in kvs], epoch=3, codec=LZ4, records=encoded))
    bad[-1] ^= 0x01  # one bit of the last block
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(good + bytes(bad))
    monkeypatch.setattr(kb, "_CRC_CHUNK", 4093)
    with open(path, "rb") as f:
        got = list(kb.decode_data(kb.FileSource(f, path.stat().st_size), "orders", 0))
    h = kb.parse_header(bytes(bad), 0)
    assert [(u.reason, len(u.events)) for u in got] == [
        (None, 1), (f"batch CRC mismatch: stored {h.crc}, computed "
                    f"{crc32c_bitwise(bytes(bad[21:]))}", 0),
    ]  # fmt: skip


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


def write_data_segment(path: Path, size_mb: int, records: int = 16, value: int = 1000) -> int:
    """A data segment of about ``size_mb`` MB: batches of ``records`` values
    of ``value`` bytes (16 x 1000: ~16 KiB, as a busy producer's batch.size
    writes them), offsets running on. Only the base offset differs between
    batches, and the CRC does not cover it: one CRC serves them all."""
    one = bytearray(batch(0, [b"v" * value] * records, epoch=3))
    count = (size_mb * 1_000_000) // len(one)
    with open(path, "wb") as f:
        for i in range(count):
            one[0:8] = struct.pack(">q", i * records)
            f.write(one)
    return count


@pytest.mark.slow
def test_decode_speed_of_a_300_mb_data_segment(tmp_path: Path) -> None:
    """Headers only, every CRC checked natively (the default), and with the
    pure CRC-32C fallback on the first 30 MB; MB/s printed (CPU seconds of
    this process, so that other load on the machine does not count)."""
    path = tmp_path / "orders-0" / "00000000000000000000.log"
    path.parent.mkdir()
    count = write_data_segment(path, 300)
    size = path.stat().st_size
    batch_size = size // count

    def run(verify: bool, native: bool, upto: int) -> tuple[list[kb.Unit], float]:
        saved = kb._native_crc32c
        if not native:
            kb._native_crc32c = None
        try:
            with open(path, "rb") as f:
                start = time.process_time()
                got = list(kb.decode_data(kb.FileSource(f, upto), "orders", 0, verify))
                return got, time.process_time() - start
        finally:
            kb._native_crc32c = saved

    headers, t_headers = run(False, True, size)
    checked, t_native = run(True, True, size)
    prefix = (30_000_000 // batch_size) * batch_size
    pure, t_pure = run(True, False, prefix)
    assert len(headers) == len(checked) == count
    assert checked[-1].events[0]["base_offset"] == (count - 1) * 16
    assert all(u.reason is None and u.text.endswith("isvalid: true") for u in checked + pure)
    print(f"\n{size / 1e6:.0f} MB data segment, {count} batches of {batch_size} bytes: "
          f"headers only {size / 1e6 / t_headers:.0f} MB/s; CRC-32C native "
          f"{size / 1e6 / t_native:.0f} MB/s; pure {prefix / 1e6 / t_pure:.1f} MB/s")  # fmt: skip


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
        + batch(5, [partition_change(isr=[1])], codec=LZ4)
        + batch(6, [partition_change(leader=3, isr=[3])])
        + batch(7, [partition_change(leader=1)])[:30]
    )
    # A zstd bomb past the default limit, then a snappy batch read as usual.
    (md / "00000000000000000008.log").write_bytes(
        batch(8, [topic_record("orders")], codec=ZSTD, payload=_bomb(ZSTD, 80 << 20))
        + batch(9, [partition_change(leader=1)], codec=SNAPPY)
    )
    (md / "00000000000000000120-0000000003.checkpoint").write_bytes(
        control_batch(0) + batch(0, [topic_record("orders"), partition_record(2, elr=[2])])
    )
    (md / "leader-epoch-checkpoint").write_text("0\n1\n3 0\n")
    data = root / "data" / "broker-1" / "orders-0"
    data.mkdir()
    (data / "00000000000000000000.log").write_bytes(
        legacy_message(0) + batch(1, [b"a", b"b"], epoch=3) + batch(3, [b"c"], epoch=4)
        + batch(4, [b"d"], epoch=4, bad_crc=True) + batch(5, [b"e", b"f"], epoch=5, codec=LZ4)
    )  # fmt: skip
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
        md + "00000000000000000000.log": ("metadata_segment", 1, 6, 3, 1, 2),
        md + "00000000000000000008.log": ("metadata_segment", 1, 2, 1, 0, 1),
        md + "00000000000000000120-0000000003.checkpoint": ("metadata_segment", 1, 2, 1, 1, 0),
        md + "leader-epoch-checkpoint": ("checkpoint", 1, 3, 1, 2, 0),
        "data/broker-1/orders-0/00000000000000000000.log": ("data_segment", 1, 5, 3, 1, 1),
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
        # the lz4 batch, decoded (leader -2: NO_LEADER_CHANGE)
        (log, 4, 400000, "partition_change", "orders", tid, 0, 1, 5, -2, [1], None, None, None,
         None, None, t),
        (log, 5, 500000, "partition_change", "orders", tid, 0, 1, 6, 3, [3], None, None, None,
         None, None, t),
        # after the quarantined zstd bomb, the snappy batch
        (md + "00000000000000000008.log", 2, 200000, "partition_change", "orders", tid, 0, 1, 9,
         1, None, None, None, None, None, None, t),
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
        # batch 4's CRC is wrong (quarantined); batch 5 is lz4: its header is all we read
        (seg, 5, 500000, "segment_batch", "orders", tid, 0, 1, None, None, None, None, 5, 1, 5,
         6, t + ms),
    ]  # fmt: skip


@pytest.mark.spark
def test_quarantine_and_raw_lines(ingested: dict[str, Any]) -> None:
    log = "00000000000000000000.log"
    q = [x for x in ingested["quarantine"] if x[0] == log]
    torn_at = len(control_batch(0) + batch(1, [topic_record("orders"), partition_record(),
                                                remove_topic()])
                  + batch(4, [partition_change(leader=2)]) + batch(5, [partition_change(isr=[1])],
                                                                   codec=LZ4)
                  + batch(6, [partition_change(leader=3, isr=[3])]))  # fmt: skip
    crc = kb.parse_header(batch(4, [partition_change(leader=2)], bad_crc=True), 0).crc
    data_crc = kb.parse_header(batch(4, [b"d"], epoch=4, bad_crc=True), 0).crc
    assert q == [
        (log, 3, f"batch CRC mismatch: stored {crc}, computed {crc ^ 1}",
         "baseOffset: 4 lastOffset: 4 count: 1 bas"),
        # the data segment's CRCs are checked by default
        (log, 4, f"batch CRC mismatch: stored {data_crc}, computed {data_crc ^ 1}",
         "baseOffset: 4 lastOffset: 4 count: 1 bas"),
        (log, 6, "torn batch header (30 of 61 bytes)", "Found 30 invalid bytes at the end of the"),
    ]  # fmt: skip
    bomb = [x for x in ingested["quarantine"] if x[0] == "00000000000000000008.log"]
    reason = "zstd batch inflates past 67108864 bytes (the limit per batch)"
    assert bomb == [
        ("00000000000000000008.log", 1, reason, "baseOffset: 8 lastOffset: 8 count: 1 bas")
    ]
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
    # Spark's scan names a file by URI (a%5B1%5D...); the line table by the
    # listing's spelling, as a person sees it on disk.
    scanned = lines.scan(spark, lines.list_files(spark, [str(root)]), [])
    assert sorted((Path(r.source_file).name, r.value) for r in scanned.collect()) == [
        ("a[1]{x}.txt", "x"),
        ("inside.txt", "x"),
        ("quorum-state", "{}"),
    ]
