"""Decoding of Kafka's binary log files (issue 4, kinds 3 and 4; issue 11 item 6).

Two kinds of file, both a sequence of record batches:

* ``metadata_segment``: the controller's metadata log
  (``__cluster_metadata-0/<20-digit base offset>.log``) and its snapshots
  (``<20-digit end offset>-<10-digit epoch>.checkpoint``): every record is
  decoded, compressed batches inflated first (gzip, snappy, lz4, zstd), and
  the record types the replay uses become the same events the
  ``kafka-dump-log --cluster-metadata-decoder`` text path yields
  (``metadata_dump.py``), plus ConfigRecord ``min.insync.replicas``;
* ``data_segment``: a data partition's ``<topic>-<partition>/<base>.log``:
  one ``segment_batch`` per batch from its 61-byte header (as
  ``segment_dump.py`` yields per batch line), with every batch's CRC-32C
  checked; its records are never decoded (the header holds all we use).

The *unit* of accounting is the record batch (the "line" of a binary file):
``Unit.ordinal`` is its 1-based position in the file, and each unit is
parsed (it yields events), ignored by rule, or quarantined as a whole, with
a clear reason. Nothing in the bytes raises: every length is checked against
what is left, every batch against a size limit, every inflation against a
limit per batch.

No Spark (``binary_segment.py`` distributes it). Besides the standard
library: google-crc32c's C extension for CRC-32C (the table-driven
:func:`crc32c_pure` when it is missing) and pyarrow's codecs for snappy, lz4
and zstd (imported on the first such batch).

Sources (apache/kafka, read at commit 1eb76443, trunk 2024-10; the layout is
unchanged since 0.11 for batches and since 3.0 for metadata records):

* Record batch v2 header layout, attribute bits (compression 0x07,
  timestamp type 0x08, transactional 0x10, control 0x20, delete horizon
  0x40), CRC-32C over attributes..end, lastSequence:
  ``clients/src/main/java/org/apache/kafka/common/record/DefaultRecordBatch.java``.
* Record layout (zigzag varint length, int8 attributes, varlong timestamp
  delta, varint offset delta, key, value, headers; "Invalid record size"):
  ``clients/.../common/record/DefaultRecord.java``; varints:
  ``clients/.../common/utils/ByteUtils.java``.
* Magic 0/1 entries (``offset int64, size int32, crc, magic, ...``):
  ``clients/.../common/record/LegacyRecord.java`` (magic at byte 16 in every
  version, which is how a reader tells them apart: ``Records.MAGIC_OFFSET``).
* Compression ids (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd) and how each
  codec frames a batch's records: ``CompressionType.java``,
  ``clients/.../common/compress/{Gzip,Snappy,Lz4,Zstd}Compression.java``,
  ``Lz4BlockOutputStream.java``; xerial snappy-java's
  ``SnappyInputStream.java`` (see the compression section below).
* Every batch's CRC is checked on recovery, the records of a compressed batch
  are not read: ``storage/.../log/LogSegment.java`` ``recover`` ->
  ``RecordBatch.ensureValid``.
* Control record key ``{version int16, type int16}``: ``ControlRecordType.java``.
* Metadata frame ``uvarint frameVersion (1) | uvarint apiKey | uvarint
  version | message``, frame version 0 refused, "garbage after" check:
  ``server-common/.../serialization/AbstractApiMessageSerde.java``
  (kafka-formats.md 2.2).
* Record schemas (field order, tags, defaults, nullability, versions):
  ``metadata/src/main/resources/common/metadata/{TopicRecord, PartitionRecord,
  PartitionChangeRecord, RegisterBrokerRecord, FenceBrokerRecord,
  UnfenceBrokerRecord, BrokerRegistrationChangeRecord, ConfigRecord}.json``;
  flexible-version encoding (compact strings/arrays as uvarint N+1, 0 =
  null; tagged fields after the last regular field: uvarint count, then
  per field uvarint tag, uvarint size, bytes; unknown tags skipped), as the
  message generator writes it (``generator/.../MessageDataGenerator.java``).
* Topic ids print as ``Uuid.toString()``: URL-safe base64 of the 16 bytes,
  no padding (``clients/.../common/Uuid.java``).
* Snapshot names ``<end offset, 20 digits>-<epoch, 10 digits>.checkpoint``:
  ``raft/src/main/java/org/apache/kafka/snapshot/Snapshots.java``.
* ``min.insync.replicas`` is an INT config, parsed trimmed
  (``ConfigDef.parseType``); a BROKER resource is named by a broker id, or
  ``""`` for the cluster default (kafka-formats.md 2.4).
"""

from __future__ import annotations

import base64
import re
import struct
import warnings
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO, NamedTuple, Protocol

METADATA_SEGMENT = "metadata_segment"
DATA_SEGMENT = "data_segment"

#: File names (``Snapshots.java``; ``LogFileUtils``: 20-digit offsets).
SEGMENT_NAME = re.compile(r"^\d{20}\.log$")
SNAPSHOT_NAME = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
METADATA_DIR = "__cluster_metadata-0"
#: ``<topic>-<partition>/<file>``: the partition after the last '-'.
PARTITION_DIR = re.compile(r"(?:^|/)([^/]+)-(\d+)/[^/]+$")

LOG_OVERHEAD = 12  # baseOffset int64 + batchLength int32
HEADER_SIZE = 61  # DefaultRecordBatch.RECORD_BATCH_OVERHEAD
#: The smallest magic 0 message after LOG_OVERHEAD: crc, magic, attributes,
#: key length, value length (LegacyRecord.RECORD_OVERHEAD_V0).
_LEGACY_MIN = 14
#: A batch we would have to hold in memory (metadata) above this is refused.
#: KRaft writes batches of at most 8 MiB (KafkaRaftClient MAX_BATCH_SIZE_BYTES).
METADATA_BATCH_LIMIT = 64 << 20
#: A data batch is never held whole (its CRC is computed piece by piece); the
#: limit only flags nonsense lengths (message.max.bytes is an int; Kafka's own
#: reader caps at Integer.MAX_VALUE).
DATA_BATCH_LIMIT = (1 << 31) - 1
#: The inflated bytes of one compressed batch are capped: a "decompression
#: bomb" is quarantined instead of taking the executor's memory. KRaft writes
#: its batches uncompressed (KafkaRaftClient and RecordsSnapshotWriter:
#: Compression.NONE), at most 8 MiB each (MAX_BATCH_SIZE_BYTES); the cap
#: leaves 8 times that for another writer.
DECOMPRESSED_LIMIT = 64 << 20
#: seq = unit * SEQ_STRIDE + pos (outcome.SEQ_STRIDE); a batch yielding more
#: events is quarantined. The controller writes at most 10,000 records per
#: batch (QuorumController MAX_RECORDS_PER_BATCH).
MAX_EVENTS_PER_UNIT = 99_999

_CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
_CONTROL_TYPES = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}
_HEADER = struct.Struct(">qiibIhiqqqhii")


class DecodeError(Exception):
    """The bytes are not what the format says; the message is the reason."""


# --- CRC-32C (Castagnoli) -----------------------------------------------------------
#
# Every v2 batch stores the CRC-32C of its bytes from attributes to the end
# (DefaultRecordBatch.computeChecksum); Kafka's recovery checks it for every
# batch of a segment (LogSegment.recover -> RecordBatch.ensureValid). The
# stdlib has only CRC-32, so the native google-crc32c extension computes it
# (GB/s); without it the table-driven one below does (about 10 MB/s).


def _crc_table() -> tuple[int, ...]:
    poly = 0x82F63B78  # reflected 0x1EDC6F41
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table.append(c)
    return tuple(table)


_CRC_TABLE = _crc_table()


def crc32c_pure(data: bytes, crc: int = 0) -> int:
    """CRC-32C of ``data`` continuing ``crc`` (a finished CRC, 0 to start)."""
    table = _CRC_TABLE
    c = crc ^ 0xFFFFFFFF
    for b in data:
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def _native_extend() -> Callable[[int, bytes], int] | None:
    """google-crc32c's ``extend`` when its C extension loads, else None: its
    own pure-Python fallback is no faster than :func:`crc32c_pure` (and warns
    on import, which is silenced here: ours is the fallback)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            import google_crc32c
    except ImportError:  # pragma: no cover  (the pinned wheel ships the extension)
        return None
    return google_crc32c.extend if google_crc32c.implementation == "c" else None


_native_crc32c = _native_extend()

#: Which implementation :func:`crc32c` runs ("native" or "pure").
CRC32C_IMPLEMENTATION = "pure" if _native_crc32c is None else "native"


def crc32c(data: bytes, crc: int = 0) -> int:
    """CRC-32C of ``data`` continuing ``crc`` (``crc32c(b"123456789") ==
    0xE3069283``; ``crc32c(b, crc32c(a)) == crc32c(a + b)``)."""
    if _native_crc32c is None:
        return crc32c_pure(data, crc)
    return _native_crc32c(crc, data)


# --- primitive readers --------------------------------------------------------------


class Reader:
    """A cursor over bytes; every read checks what is left."""

    __slots__ = ("buf", "pos", "end")

    def __init__(
        self, buf: bytes | bytearray | memoryview, pos: int = 0, end: int | None = None
    ) -> None:
        self.buf = buf
        self.pos = pos
        self.end = len(buf) if end is None else end

    def remaining(self) -> int:
        return self.end - self.pos

    def take(self, n: int, what: str) -> bytes:
        if n < 0 or n > self.end - self.pos:
            raise DecodeError(f"{what}: needs {n} bytes, {self.end - self.pos} left")
        out = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return out

    def int8(self, what: str) -> int:
        value: int = struct.unpack(">b", self.take(1, what))[0]
        return value

    def uint16(self, what: str) -> int:
        value: int = struct.unpack(">H", self.take(2, what))[0]
        return value

    def int16(self, what: str) -> int:
        value: int = struct.unpack(">h", self.take(2, what))[0]
        return value

    def int32(self, what: str) -> int:
        value: int = struct.unpack(">i", self.take(4, what))[0]
        return value

    def int64(self, what: str) -> int:
        value: int = struct.unpack(">q", self.take(8, what))[0]
        return value

    def boolean(self, what: str) -> bool:
        return self.take(1, what) != b"\x00"

    def uvarint(self, what: str, max_bytes: int = 5) -> int:
        """Unsigned LEB128 (``ByteUtils.readUnsignedVarint``: at most 5 bytes)."""
        value = shift = 0
        for _ in range(max_bytes):
            if self.pos >= self.end:
                raise DecodeError(f"{what}: varint runs past the end")
            b = self.buf[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
        raise DecodeError(f"{what}: varint longer than {max_bytes} bytes")

    def varint(self, what: str) -> int:
        """Zigzag int32 (``ByteUtils.readVarint``)."""
        v = self.uvarint(what, 5) & 0xFFFFFFFF
        return (v >> 1) ^ -(v & 1)

    def varlong(self, what: str) -> int:
        """Zigzag int64 (``ByteUtils.readVarlong``)."""
        v = self.uvarint(what, 10) & 0xFFFFFFFFFFFFFFFF
        return (v >> 1) ^ -(v & 1)

    # flexible versions ("compact" types)

    def compact_length(self, what: str) -> int:
        """N for a compact string/array, -1 for null (uvarint N + 1)."""
        return self.uvarint(what) - 1

    def compact_string(self, what: str, nullable: bool = False) -> str | None:
        n = self.compact_length(what)
        if n < 0:
            if nullable:
                return None
            raise DecodeError(f"{what}: null in a non-nullable string")
        try:
            return self.take(n, what).decode("utf-8")
        except UnicodeDecodeError as e:
            raise DecodeError(f"{what}: invalid UTF-8") from e

    def compact_int32s(self, what: str, nullable: bool = False) -> list[int] | None:
        n = self.compact_length(what)
        if n < 0:
            if nullable:
                return None
            raise DecodeError(f"{what}: null in a non-nullable array")
        raw = self.take(4 * n, what)
        return list(struct.unpack(f">{n}i", raw))

    def skip_compact_array(self, what: str, element_size: int) -> None:
        n = self.compact_length(what)
        if n > 0:
            self.take(element_size * n, what)

    def uuid(self, what: str) -> str:
        return topic_id_text(self.take(16, what))

    def tagged_fields(self, what: str) -> dict[int, Reader]:
        """The tagged-field section: {tag: reader over its bytes}."""
        out: dict[int, Reader] = {}
        count = self.uvarint(what + " tag count")
        last = -1
        for _ in range(count):
            tag = self.uvarint(what + " tag")
            size = self.uvarint(what + " tag size")
            if tag <= last:  # the generator writes tags in increasing order
                raise DecodeError(f"{what}: tag {tag} after tag {last}")
            last = tag
            start = self.pos
            self.take(size, f"{what} tag {tag}")
            out[tag] = Reader(self.buf, start, start + size)
        return out


def topic_id_text(raw: bytes) -> str:
    """A UUID as Kafka prints it (``Uuid.toString``)."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _tag(tags: dict[int, Reader], tag: int, read: Callable[[Reader], Any], what: str) -> Any:
    """A tagged field's value, its bytes read exactly; None when absent."""
    r = tags.get(tag)
    if r is None:
        return None
    value = read(r)
    if r.remaining():
        raise DecodeError(f"{what}: {r.remaining()} bytes left in tagged field {tag}")
    return value


# --- metadata records (kafka-formats.md 2.3, 2.4) -----------------------------------

TOPIC_RECORD = "TOPIC_RECORD"
PARTITION_RECORD = "PARTITION_RECORD"
CONFIG_RECORD = "CONFIG_RECORD"
PARTITION_CHANGE_RECORD = "PARTITION_CHANGE_RECORD"
REGISTER_BROKER_RECORD = "REGISTER_BROKER_RECORD"
FENCE_BROKER_RECORD = "FENCE_BROKER_RECORD"
UNFENCE_BROKER_RECORD = "UNFENCE_BROKER_RECORD"
BROKER_REGISTRATION_CHANGE_RECORD = "BROKER_REGISTRATION_CHANGE_RECORD"

MIN_ISR = "min.insync.replicas"
_CONFIG_TOPIC = 2  # ConfigResource.Type.TOPIC
_CONFIG_BROKER = 4  # ConfigResource.Type.BROKER

Event = dict[str, Any]


def _topic_record(r: Reader, version: int) -> Event | None:
    name = r.compact_string("TopicRecord.name")
    topic_id = r.uuid("TopicRecord.topicId")
    r.tagged_fields("TopicRecord")
    return {"kind": "topic_record", "topic": name, "topic_id": topic_id}


def _partition_record(r: Reader, version: int) -> Event | None:
    w = "PartitionRecord"
    e: Event = {"kind": "partition_record"}
    e["partition"] = r.int32(w + ".partitionId")
    e["topic_id"] = r.uuid(w + ".topicId")
    e["replicas"] = r.compact_int32s(w + ".replicas")
    e["isr"] = r.compact_int32s(w + ".isr")
    e["removing_replicas"] = r.compact_int32s(w + ".removingReplicas")
    e["adding_replicas"] = r.compact_int32s(w + ".addingReplicas")
    e["leader"] = r.int32(w + ".leader")
    e["leader_epoch"] = r.int32(w + ".leaderEpoch")
    e["partition_epoch"] = r.int32(w + ".partitionEpoch")
    if version >= 1:
        r.skip_compact_array(w + ".directories", 16)
    tags = r.tagged_fields(w)
    state = _tag(tags, 0, lambda t: t.int8(w + ".leaderRecoveryState"), w)
    e["leader_recovery_state"] = 0 if state is None else state
    e["elr"] = e["last_known_elr"] = None
    if version >= 2:
        e["elr"] = _tag(tags, 1, lambda t: t.compact_int32s(w + ".elr", True), w)
        e["last_known_elr"] = _tag(
            tags, 2, lambda t: t.compact_int32s(w + ".lastKnownElr", True), w
        )
    return e


def _partition_change(r: Reader, version: int) -> Event | None:
    """Every field after topicId is tagged: absent = unchanged (section 2.4).
    Tags a version does not define are skipped, as Kafka's reader does."""
    w = "PartitionChangeRecord"
    e: Event = {"kind": "partition_change"}
    e["partition"] = r.int32(w + ".partitionId")
    e["topic_id"] = r.uuid(w + ".topicId")
    tags = r.tagged_fields(w)

    def ints(name: str) -> Callable[[Reader], Any]:
        return lambda t: t.compact_int32s(f"{w}.{name}", True)

    e["isr"] = _tag(tags, 0, ints("isr"), w)
    leader = _tag(tags, 1, lambda t: t.int32(w + ".leader"), w)
    e["leader"] = -2 if leader is None else leader  # NO_LEADER_CHANGE
    e["replicas"] = _tag(tags, 2, ints("replicas"), w)
    e["removing_replicas"] = _tag(tags, 3, ints("removingReplicas"), w)
    e["adding_replicas"] = _tag(tags, 4, ints("addingReplicas"), w)
    state = _tag(tags, 5, lambda t: t.int8(w + ".leaderRecoveryState"), w)
    e["leader_recovery_state"] = -1 if state is None else state  # no change
    e["elr"] = e["last_known_elr"] = None
    if version >= 2:
        e["elr"] = _tag(tags, 6, ints("elr"), w)
        e["last_known_elr"] = _tag(tags, 7, ints("lastKnownElr"), w)
    return e


def _skip_struct_array(r: Reader, what: str, read_one: Callable[[Reader], None]) -> None:
    n = r.compact_length(what)
    for _ in range(max(n, 0)):
        read_one(r)
        r.tagged_fields(what)


def _register_broker(r: Reader, version: int) -> Event | None:
    w = "RegisterBrokerRecord"
    broker_id = r.int32(w + ".brokerId")
    if version >= 2:
        r.boolean(w + ".isMigratingZkBroker")
    r.uuid(w + ".incarnationId")
    epoch = r.int64(w + ".brokerEpoch")

    def endpoint(t: Reader) -> None:
        t.compact_string(w + ".endPoints.name")
        t.compact_string(w + ".endPoints.host")
        t.uint16(w + ".endPoints.port")
        t.int16(w + ".endPoints.securityProtocol")

    def feature(t: Reader) -> None:
        t.compact_string(w + ".features.name")
        t.int16(w + ".features.minSupportedVersion")
        t.int16(w + ".features.maxSupportedVersion")

    _skip_struct_array(r, w + ".endPoints", endpoint)
    _skip_struct_array(r, w + ".features", feature)
    r.compact_string(w + ".rack", nullable=True)
    fenced = r.boolean(w + ".fenced")
    if version >= 1:
        r.boolean(w + ".inControlledShutdown")
    r.tagged_fields(w)
    return {
        "kind": "register_broker",
        "replica": broker_id,
        "broker_epoch": epoch,
        "fenced": 1 if fenced else 0,
    }


def _fence(kind: str, fenced: int) -> Callable[[Reader, int], Event | None]:
    def read(r: Reader, version: int) -> Event | None:
        broker_id = r.int32(kind + ".id")
        epoch = r.int64(kind + ".epoch")
        r.tagged_fields(kind)
        return {"kind": kind, "replica": broker_id, "broker_epoch": epoch, "fenced": fenced}

    return read


def _broker_registration_change(r: Reader, version: int) -> Event | None:
    w = "BrokerRegistrationChangeRecord"
    broker_id = r.int32(w + ".brokerId")
    epoch = r.int64(w + ".brokerEpoch")
    tags = r.tagged_fields(w)
    fenced = _tag(tags, 0, lambda t: t.int8(w + ".fenced"), w)
    shutdown = None
    if version >= 1:
        shutdown = _tag(tags, 1, lambda t: t.int8(w + ".inControlledShutdown"), w)
    return {
        "kind": "broker_registration_change",
        "replica": broker_id,
        "broker_epoch": epoch,
        "fenced": fenced or 0,
        "in_controlled_shutdown": shutdown or 0,
    }


def _config_record(r: Reader, version: int) -> Event | None:
    """``min.insync.replicas`` only (schemas/tables.py ``min_isr_config``);
    every other config, and resource types other than TOPIC and BROKER, are
    well formed and unused (None)."""
    w = "ConfigRecord"
    resource_type = r.int8(w + ".resourceType")
    resource_name = r.compact_string(w + ".resourceName")
    name = r.compact_string(w + ".name")
    value = r.compact_string(w + ".value", nullable=True)
    r.tagged_fields(w)
    if name != MIN_ISR or resource_type not in (_CONFIG_TOPIC, _CONFIG_BROKER):
        return None
    min_isr = None
    if value is not None:
        text = value.strip()
        if not re.fullmatch(r"[+-]?\d{1,10}", text) or not -(2**31) <= int(text) < 2**31:
            raise DecodeError(f"{MIN_ISR} value {value[:40]!r} is not an int")
        min_isr = int(text)
    e: Event = {"kind": "min_isr_config", "min_isr": min_isr}
    assert resource_name is not None
    if resource_type == _CONFIG_TOPIC:
        e["topic"] = resource_name
    elif resource_name != "":
        if not re.fullmatch(r"\d{1,10}", resource_name) or int(resource_name) >= 2**31:
            raise DecodeError(f"BROKER config resource {resource_name[:40]!r} is not a broker id")
        e["replica"] = int(resource_name)
    return e


@dataclass(frozen=True)
class RecordType:
    name: str
    max_version: int
    read: Callable[[Reader, int], Event | None]


#: apiKey -> the record types we read (kafka-formats.md 2.3); highest version
#: whose shape we know, as metadata_dump.KNOWN_VERSIONS (+ ConfigRecord v0).
RECORD_TYPES: dict[int, RecordType] = {
    0: RecordType(REGISTER_BROKER_RECORD, 3, _register_broker),
    2: RecordType(TOPIC_RECORD, 0, _topic_record),
    3: RecordType(PARTITION_RECORD, 2, _partition_record),
    4: RecordType(CONFIG_RECORD, 0, _config_record),
    5: RecordType(PARTITION_CHANGE_RECORD, 2, _partition_change),
    7: RecordType(FENCE_BROKER_RECORD, 0, _fence("fence_broker", 1)),
    8: RecordType(UNFENCE_BROKER_RECORD, 0, _fence("unfence_broker", -1)),
    17: RecordType(BROKER_REGISTRATION_CHANGE_RECORD, 2, _broker_registration_change),
}


def decode_metadata_record(value: bytes) -> Event | None:
    """One metadata record value (serde frame + message): its event, or None
    for a record type we do not use. Raises DecodeError."""
    r = Reader(value)
    frame = r.uvarint("frame version")
    if frame == 0:
        raise DecodeError("metadata record with frame version 0 (the 2.8 KRaft preview)")
    if frame != 1:
        raise DecodeError(f"unknown metadata frame version {frame}")
    api_key = r.uvarint("record type")
    version = r.uvarint("record version")
    rtype = RECORD_TYPES.get(api_key)
    if rtype is None:
        return None  # well formed, a type we do not read: ignored by rule
    if version > rtype.max_version:
        raise DecodeError(f"unknown {rtype.name} version {version}")
    event = rtype.read(r, version)
    if r.remaining():
        raise DecodeError(f"{r.remaining()} bytes of garbage after {rtype.name}")
    return event


# --- batches ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BatchHeader:
    """The 61-byte header of a magic v2 batch (DefaultRecordBatch)."""

    position: int
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int

    @property
    def size(self) -> int:
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def compression(self) -> int:
        return self.attributes & 0x07

    @property
    def log_append_time(self) -> bool:
        return bool(self.attributes & 0x08)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & 0x10)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & 0x20)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & 0x40)


def parse_header(raw: bytes, position: int) -> BatchHeader:
    return BatchHeader(position, *_HEADER.unpack(raw[:HEADER_SIZE]))


_BOOL = ("false", "true")
_ISVALID = {None: "not checked", False: "false", True: "true"}


def render(h: BatchHeader, valid: bool | None) -> str:
    """The batch as ``kafka-dump-log`` prints it (kafka-formats.md 2.1).

    Written out from the attribute bits rather than through the properties:
    it runs once per batch, and on a data segment of small batches it is
    most of the cost of a batch."""
    a = h.attributes
    seq = h.base_sequence
    last_seq = -1 if seq == -1 else (seq + h.last_offset_delta) % (1 << 31)
    horizon = f"OptionalLong[{h.base_timestamp}]" if a & 0x40 else "OptionalLong.empty"
    codec = _CODECS.get(a & 0x07) or f"unknown({a & 0x07})"
    return (
        f"baseOffset: {h.base_offset} lastOffset: {h.base_offset + h.last_offset_delta} "
        f"count: {h.record_count} baseSequence: {seq} lastSequence: {last_seq} "
        f"producerId: {h.producer_id} producerEpoch: {h.producer_epoch} "
        f"partitionLeaderEpoch: {h.partition_leader_epoch} "
        f"isTransactional: {_BOOL[a >> 4 & 1]} isControl: {_BOOL[a >> 5 & 1]} "
        f"deleteHorizonMs: {horizon} position: {h.position} "
        f"{'LogAppendTime' if a & 0x08 else 'CreateTime'}: {h.max_timestamp} "
        f"size: {h.batch_length + LOG_OVERHEAD} magic: {h.magic} compresscodec: {codec} "
        f"crc: {h.crc} isvalid: {_ISVALID[valid]}"
    )


@dataclass
class Unit:
    """One batch (or unreadable tail) of a file: the ``line`` of accounting.

    ``events`` carry PARTITION_EVENTS field names plus ``metadata_offset``
    and ``time_ms`` (the record's or batch's timestamp); a quarantined unit
    has ``reason`` and no events; an ignored one neither."""

    ordinal: int
    text: str
    time_ms: int | None = None
    events: list[Event] = field(default_factory=list)
    reason: str | None = None


class Source(Protocol):
    size: int

    def read(self, position: int, n: int) -> bytes: ...


class BytesSource:
    def __init__(self, data: bytes | memoryview) -> None:
        self.data = memoryview(data)
        self.size = len(data)

    def read(self, position: int, n: int) -> bytes:
        return bytes(self.data[position : position + n])


class FileSource:
    """A local file read by seeking: the whole file is never in memory."""

    def __init__(self, f: BinaryIO, size: int) -> None:
        self.f = f
        self.size = size

    def read(self, position: int, n: int) -> bytes:
        self.f.seek(position)
        return self.f.read(n)


def _tail(position: int, size: int, why: str) -> str:
    left = size - position
    return f"Found {left} invalid bytes at the end of the file (position {position}): {why}"


def iter_batches(
    src: Source, limit: int
) -> Iterator[tuple[int, BatchHeader | None, str | None, str]]:
    """(ordinal, v2 header or None, stop reason or None, text) per unit.

    A magic 0/1 entry comes as (ordinal, None, None, text). A header that
    cannot be trusted (too short, torn, over ``limit``, unknown magic) ends
    the file: one last unit with the reason covers the remaining bytes, as
    ``kafka-dump-log`` reports "invalid bytes at the end"; skipping by a
    length we do not believe would read garbage as batches.
    """
    position = 0
    ordinal = 0
    size = src.size
    why: str | None
    while position < size:
        ordinal += 1
        head = src.read(position, HEADER_SIZE)
        if len(head) < LOG_OVERHEAD + 5:
            why = f"torn batch header ({len(head)} bytes)"
            yield ordinal, None, why, _tail(position, size, why)
            return
        base_offset, length = struct.unpack(">qi", head[:LOG_OVERHEAD])
        magic = head[16]
        total = length + LOG_OVERHEAD
        if magic in (0, 1):
            if length < _LEGACY_MIN:
                why = f"magic {magic} message of {length} bytes"
                yield ordinal, None, why, _tail(position, size, why)
                return
            if position + total > size:
                why = f"torn magic {magic} message: needs {total} bytes, {size - position} left"
                yield ordinal, None, why, _tail(position, size, why)
                return
            text = (
                f"offset: {base_offset} position: {position} size: {total} magic: {magic} "
                "(pre-0.11 message set: no leader epoch)"
            )
            yield ordinal, None, None, text
            position += total
            continue
        if magic != 2:
            why = f"unknown magic {magic}"
            yield ordinal, None, why, _tail(position, size, why)
            return
        if len(head) < HEADER_SIZE:
            why = f"torn batch header ({len(head)} of {HEADER_SIZE} bytes)"
            yield ordinal, None, why, _tail(position, size, why)
            return
        h = parse_header(head, position)
        if length < HEADER_SIZE - LOG_OVERHEAD:
            why = f"batchLength {length} is below the header size"
        elif total > limit:
            why = f"batchLength {length} above the limit of {limit} bytes"
        elif position + total > size:
            why = f"torn batch: needs {total} bytes, {size - position} left in the file"
        elif h.record_count < 0 or h.last_offset_delta < 0:
            why = f"record count {h.record_count}, lastOffsetDelta {h.last_offset_delta}"
        else:
            why = None
        if why is not None:
            yield ordinal, None, why, _tail(position, size, why) + " | " + render(h, None)
            return
        yield ordinal, h, None, ""
        position += total


def _millis(h: BatchHeader, timestamp_delta: int) -> int:
    return h.max_timestamp if h.log_append_time else h.base_timestamp + timestamp_delta


class Record(NamedTuple):
    """One record of a batch (DefaultRecord): absolute offset and timestamp."""

    offset: int
    time_ms: int
    key: bytes | None
    value: bytes | None


def _records(h: BatchHeader, body: bytes | bytearray) -> Iterator[Record]:
    """The records of an uncompressed (or inflated) body, as DefaultRecord
    reads them; bytes left after ``record_count`` records are an error
    ("Incorrect declared batch size", DefaultRecordBatch.RecordIterator)."""
    r = Reader(body)
    for i in range(h.record_count):
        length = r.varint(f"record {i} length")
        if length <= 0 or length > r.remaining():
            raise DecodeError(f"record {i}: length {length}, {r.remaining()} bytes left")
        end = r.pos + length
        rec = Reader(body, r.pos, end)
        rec.int8("record attributes")
        ts_delta = rec.varlong("timestampDelta")
        offset_delta = rec.varint("offsetDelta")
        key_len = rec.varint("keyLength")
        key = None if key_len < 0 else rec.take(key_len, "key")
        value_len = rec.varint("valueLength")
        value = None if value_len < 0 else rec.take(value_len, "value")
        headers = rec.varint("header count")
        if headers < 0:
            raise DecodeError(f"record {i}: invalid number of record headers {headers}")
        for _ in range(headers):
            n = rec.varint("header key length")
            if n < 0:
                raise DecodeError(f"record {i}: invalid negative header key size {n}")
            rec.take(n, "header key")
            n = rec.varint("header value length")
            if n >= 0:
                rec.take(n, "header value")
        if rec.remaining():
            raise DecodeError(
                f"record {i}: invalid record size: expected to read {length} bytes, "
                f"read {length - rec.remaining()}"
            )
        r.pos = end
        yield Record(h.base_offset + offset_delta, _millis(h, ts_delta), key, value)
    if r.remaining():
        raise DecodeError(f"{r.remaining()} bytes after the last of {h.record_count} records")


def batch_records(h: BatchHeader, body: bytes, limit: int | None = None) -> Iterator[Record]:
    """The records of a v2 batch whose bytes after the 61-byte header are
    ``body``: inflated first when the batch is compressed (at most ``limit``
    bytes, DECOMPRESSED_LIMIT by default; :class:`InflationLimit` beyond),
    then read as an uncompressed
    batch's (DefaultRecordBatch.compressedIterator reads the inflated stream
    with the same DefaultRecord.readFrom). Raises DecodeError."""
    return _records(h, inflate(h.compression, body, limit))


# --- compression (attributes & 0x07; clients/.../common/compress/*) -----------------
#
# How Kafka frames each codec inside a v2 batch (read at the commit above):
# * gzip: one gzip stream (GzipCompression: GZIPOutputStream); the reader,
#   java.util.zip.GZIPInputStream, also takes concatenated members.
# * snappy: xerial snappy-java's SnappyOutputStream (SnappyCompression): a
#   16-byte header (8 magic bytes 0x82 "SNAPPY" 0x00, int32 version 1, int32
#   compatible version 1), then chunks of int32 big-endian length + one raw
#   snappy block (of at most 32 KiB input). SnappyInputStream reads a body
#   shorter than 16 bytes or not starting with the magic as one raw snappy
#   block (librdkafka and Snappy.compress write that), and skips a header
#   repeated between chunks (concatenated streams): xerial/snappy-java
#   SnappyInputStream.readHeader / hasNextChunk.
# * lz4: the LZ4 frame format (Lz4BlockOutputStream: magic 0x184D2204, FLG
#   version 1 with independent blocks, no checksums, no content size; BD
#   64 KiB blocks; HC = second byte of xxHash32 of FLG..BD; blocks of int32
#   little-endian length, high bit = stored uncompressed; end mark 0). Magic
#   v0 messages hashed the magic too (the "broken" HC); v2 batches never do.
# * zstd: one zstd frame from zstd-jni's streaming ZstdOutputStream
#   (ZstdCompression), so no content size in the frame header.
#
# lz4 and zstd are read with pyarrow's streaming codecs, snappy blocks with
# pyarrow's snappy codec, gzip with zlib: all C, hundreds of MB/s, far above
# what the record decoding after them costs. Every codec is read under a
# limit on the inflated size of one batch, so a "decompression bomb" (a few
# KB that inflate to GBs: zstd and gzip reach ratios of 1000:1 and more) is
# quarantined with its reason instead of taking the executor's memory.

_STREAM_CHUNK = 1 << 20
_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = 16  # magic, int32 version, int32 compatible version


class InflationLimit(DecodeError):
    """A compressed batch inflates past the limit per batch."""


def _too_big(codec: str, limit: int) -> InflationLimit:
    return InflationLimit(f"{codec} batch inflates past {limit} bytes (the limit per batch)")


def inflate(codec: int, body: bytes, limit: int | None = None) -> bytes | bytearray:
    """The records' bytes of a batch body compressed with ``codec`` (0 none,
    1 gzip, 2 snappy, 3 lz4, 4 zstd: CompressionType ids), at most ``limit``
    of them (DECOMPRESSED_LIMIT by default). Raises DecodeError
    (InflationLimit past the limit)."""
    if limit is None:
        limit = DECOMPRESSED_LIMIT
    if codec == 0:
        return body
    if codec == 1:
        return _gunzip(body, limit)
    if codec == 2:
        return _unsnappy(body, limit)
    if codec in (3, 4):
        return _inflate_stream(_CODECS[codec], body, limit)
    # CompressionType.forId: "Unknown compression type id"
    raise DecodeError(f"unknown compression codec id {codec}")


def _gunzip(body: bytes, limit: int) -> bytearray:
    out = bytearray()
    data = body
    while True:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out += d.decompress(data, limit + 1 - len(out))
        except zlib.error as e:
            raise DecodeError(f"gzip: {e}") from e
        if len(out) > limit:
            raise _too_big("gzip", limit)
        if not d.eof:
            raise DecodeError("gzip: truncated stream")
        data = d.unused_data
        if not data:
            return out
        # another member follows (GZIPInputStream reads concatenated members)


def _inflate_stream(codec: str, body: bytes, limit: int) -> bytearray:
    import pyarrow as pa

    out = bytearray()
    try:
        stream = pa.input_stream(pa.py_buffer(body), compression=codec)
        while True:
            chunk = stream.read(min(_STREAM_CHUNK, limit + 1 - len(out)))
            if not chunk:
                return out
            out += chunk
            if len(out) > limit:
                raise _too_big(codec, limit)
    except (OSError, pa.ArrowException) as e:
        raise DecodeError(f"{codec}: {e}") from e


def _unsnappy(body: bytes, limit: int) -> bytes | bytearray:
    if len(body) < _XERIAL_HEADER or body[:8] != _XERIAL_MAGIC:
        return _snappy_block(body, limit, limit)
    out = bytearray()
    pos = _XERIAL_HEADER
    while pos < len(body):
        if body[pos : pos + 8] == _XERIAL_MAGIC:  # a concatenated stream's header
            if len(body) - pos < _XERIAL_HEADER:
                raise DecodeError("snappy: torn xerial header")
            pos += _XERIAL_HEADER
            continue
        if len(body) - pos < 4:
            raise DecodeError(f"snappy: {len(body) - pos} bytes after the last chunk")
        (size,) = struct.unpack_from(">i", body, pos)
        pos += 4
        if size <= 0 or size > len(body) - pos:
            raise DecodeError(f"snappy: chunk of {size} bytes, {len(body) - pos} left")
        out += _snappy_block(body[pos : pos + size], limit - len(out), limit)
        pos += size
    return out


def _snappy_block(block: bytes, room: int, limit: int) -> bytes:
    """One raw snappy block: its preamble (uvarint) is the inflated length,
    checked against ``room`` before anything is inflated."""
    r = Reader(block)
    n = r.uvarint("snappy length preamble")
    if n > room:
        raise _too_big("snappy", limit)
    if n == 0:
        if r.remaining():
            raise DecodeError(f"snappy: {r.remaining()} bytes after an empty block")
        return b""
    import pyarrow as pa

    try:
        out: bytes = pa.Codec("snappy").decompress(block, decompressed_size=n, asbytes=True)
    except (OSError, pa.ArrowException) as e:
        raise DecodeError(f"snappy: {e}") from e
    return out


def _read_batch(src: Source, h: BatchHeader, start: int) -> bytes:
    data = src.read(h.position + start, h.size - start)
    if len(data) != h.size - start:  # the file shrank after it was sized
        raise OSError(f"short read of the batch at position {h.position}")
    return data


#: A data batch is read in pieces of at most this many bytes for its CRC
#: (batches may be up to 2 GiB; memory stays flat).
_CRC_CHUNK = 8 << 20
#: DefaultRecordBatch.ATTRIBUTES_OFFSET: the CRC covers attributes .. end.
_CRC_FROM = 21


def _data_crc(src: Source, h: BatchHeader) -> int:
    crc = 0
    position = h.position + _CRC_FROM
    end = h.position + h.size
    while position < end:
        n = min(_CRC_CHUNK, end - position)
        chunk = src.read(position, n)
        if len(chunk) != n:
            raise OSError(f"short read of the batch at position {h.position}")
        crc = crc32c(chunk, crc)
        position += n
    return crc


def decode_metadata(src: Source, snapshot_end_offset: int | None = None) -> Iterator[Unit]:
    """The units of a metadata log segment or snapshot.

    Records of the types we read become events with ``metadata_offset`` =
    the record's offset; in a snapshot (``snapshot_end_offset`` given) every
    record sits at end offset - 1 and keeps its order through the unit and
    position, as the text dump's snapshot sections do (metadata_dump.py).
    Control batches and record types we do not read are ignored by rule.
    """
    for ordinal, h, stop, text in iter_batches(src, METADATA_BATCH_LIMIT):
        if h is None:
            yield Unit(ordinal, text, reason=stop)
            continue
        data = _read_batch(src, h, _CRC_FROM)
        computed = crc32c(data)
        unit = Unit(ordinal, render(h, computed == h.crc), time_ms=h.max_timestamp)
        if computed != h.crc:
            unit.reason = f"batch CRC mismatch: stored {h.crc}, computed {computed}"
        elif h.is_control:
            pass  # LeaderChange, SnapshotHeader/Footer, KRaftVersion, Voters
        else:
            _decode_records(unit, h, data[HEADER_SIZE - _CRC_FROM :], snapshot_end_offset)
        yield unit


def _decode_records(unit: Unit, h: BatchHeader, body: bytes, snapshot_end: int | None) -> None:
    events: list[Event] = []
    try:
        for offset, millis, _key, value in batch_records(h, body):
            if value is None:
                raise DecodeError(f"record at offset {offset} has no value")
            try:
                event = decode_metadata_record(value)
            except DecodeError as e:
                raise DecodeError(f"record at offset {offset}: {e}") from e
            if event is None:
                continue
            if len(events) == MAX_EVENTS_PER_UNIT:
                raise DecodeError(f"more than {MAX_EVENTS_PER_UNIT} events in one batch")
            event["metadata_offset"] = offset if snapshot_end is None else snapshot_end - 1
            event["time_ms"] = millis
            events.append(event)
        unit.events = events
    except InflationLimit as e:
        unit.reason = str(e)
    except DecodeError as e:
        unit.reason = f"undecodable metadata batch: {e}"
    except Exception as e:  # noqa: BLE001  (a decoder bug must not fail the run)
        unit.reason = f"undecodable metadata batch: {type(e).__name__}: {e}"


def decode_data(
    src: Source, topic: str | None, partition: int | None, verify_crc: bool = True
) -> Iterator[Unit]:
    """The units of a data-partition segment: one ``segment_batch`` per v2
    batch (replica is the observer, filled by the caller). Every batch's
    CRC-32C is checked (``verify_crc``), as Kafka's recovery does
    (LogSegment.recover -> ensureValid); the CRC covers the compressed bytes,
    so no batch is inflated and no record read: the header holds all we use.
    Magic 0/1 entries have no leader epoch: ignored by rule."""
    for ordinal, h, stop, text in iter_batches(src, DATA_BATCH_LIMIT):
        if h is None:
            yield Unit(ordinal, text, reason=stop)
            continue
        computed = _data_crc(src, h) if verify_crc else None
        valid = None if computed is None else computed == h.crc
        unit = Unit(ordinal, render(h, valid), time_ms=h.max_timestamp)
        if valid is False:
            unit.reason = f"batch CRC mismatch: stored {h.crc}, computed {computed}"
        elif topic is None or partition is None:
            unit.reason = "segment path names no <topic>-<partition> folder"
        else:
            unit.events = [
                {
                    "kind": "segment_batch",
                    "topic": topic,
                    "partition": partition,
                    "base_offset": h.base_offset,
                    "last_offset": h.last_offset,
                    "leader_epoch": h.partition_leader_epoch,
                    "time_ms": h.max_timestamp,
                }
            ]
        yield unit


# --- files ------------------------------------------------------------------------


def classify(path: str) -> tuple[str, int | None] | None:
    """(kind, snapshot end offset) for a binary-log candidate by name, else None.

    ``__cluster_metadata-0/<20 digits>.log`` and any
    ``<20 digits>-<10 digits>.checkpoint`` are metadata; another
    ``<20 digits>.log`` is a data segment."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    snap = SNAPSHOT_NAME.match(name)
    if snap:
        return METADATA_SEGMENT, int(snap.group(1))
    if SEGMENT_NAME.match(name):
        parent = path.rstrip("/").rsplit("/", 2)
        if len(parent) >= 2 and parent[-2] == METADATA_DIR:
            return METADATA_SEGMENT, None
        return DATA_SEGMENT, None
    return None


def partition_of(path: str) -> tuple[str | None, int | None]:
    m = PARTITION_DIR.search(path)
    if not m or len(m.group(2)) > 9:
        return None, None
    return m.group(1), int(m.group(2))


def looks_binary(head: bytes) -> bool:
    """A file named like a segment holds batches unless its head is text (a
    saved dump, say). An empty file is an empty segment. A batch starts with
    a big-endian int64 offset (NUL bytes) and has its magic 0-2 at byte 16;
    text never holds bytes below 0x09."""
    if not head:
        return True
    return any(b < 0x09 or 0x0E <= b < 0x20 for b in head[:64])


def decode_file(path: str, src: Source, verify_data_crc: bool = True) -> Iterator[Unit]:
    """Every unit of one binary-log file, by its name (see :func:`classify`)."""
    kind = classify(path)
    if kind is None:
        raise ValueError(f"not a binary-log file name: {path}")
    if kind[0] == METADATA_SEGMENT:
        return decode_metadata(src, kind[1])
    topic, partition = partition_of(path)
    return decode_data(src, topic, partition, verify_data_crc)
