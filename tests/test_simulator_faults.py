"""Rule violations in the simulator's truth and the evidence-visible values.

The zombie leader (``fencing_violation``), the two ISR-rule mutations
(``isr_rule_violation``), the ``visible_*`` fields beside an undecidable
finding's real values, and determinism. Every scenario's truth is checked
exactly and then against what its own artefacts show.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import simulator
from simulator.api import run
from simulator.cluster import Cluster
from simulator.scenarios import RULE_NAMED, build
from simulator.truth import SKEW_MS, Truth

BASE = datetime(2024, 5, 1, 10, 0, 0)
EPOCH_MS = 1714557600000
REQUEST = re.compile(
    r"^\[(?P<ts>[\d-]+ [\d:]+,\d{3})\] DEBUG Completed request:(?P<body>\{.*\}) "
    r"\(kafka\.request\.logger\)$"
)
RECORD = re.compile(r"^\| offset: (\d+) CreateTime: (\d+) .* payload: (\{.*\})$")


def sim_ms(stamp: str) -> int:
    moment = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f")
    return round((moment - BASE).total_seconds() * 1000)


def requests(out: Path, broker: int) -> list[tuple[int, dict[str, Any]]]:
    found = []
    for line in (out / f"broker-{broker}" / "kafka-request.log").read_text().splitlines():
        m = REQUEST.match(line)
        assert m, line
        found.append((sim_ms(m.group("ts")), json.loads(m.group("body"))))
    return found


def produce_acks(out: Path, broker: int, acks: int) -> list[tuple[int, int]]:
    """(ms, base offset) of every produce ``broker`` answered errorCode 0."""
    acked = []
    for ms, body in requests(out, broker):
        if body["requestHeader"]["requestApiKeyName"] != "PRODUCE":
            continue
        if body["request"]["acks"] != acks or body["response"] == "":
            continue
        for topic in body["response"]["responses"]:
            for part in topic["partitionResponses"]:
                if part["errorCode"] == 0:
                    acked.append((ms, part["baseOffset"]))
    return acked


def records(out: Path) -> list[tuple[int, dict[str, Any]]]:
    """(ms, record) of the metadata-log dump."""
    found = []
    for line in (out / "controller" / "metadata.log.txt").read_text().splitlines():
        m = RECORD.match(line)
        if m:
            found.append((int(m.group(2)) - EPOCH_MS, json.loads(m.group(3))))
    return found


def changes(out: Path) -> list[tuple[int, dict[str, Any]]]:
    return [(ms, r["data"]) for ms, r in records(out) if r["type"] == "PARTITION_CHANGE_RECORD"]


def F(kind: str, epoch: int, replica: int, start: int, end: int) -> dict[str, Any]:
    return {
        "kind": kind,
        "topic": "orders",
        "partition": 0,
        "leader_epoch": epoch,
        "replica": replica,
        "offset_start": start,
        "offset_end": end,
        "records_lost": None,
        "qualifier": None,
        "severity": "warning",
    }


def note(kind: str, epoch: int, reason: str) -> dict[str, Any]:
    return {
        "finding": None,
        "kind": kind,
        "topic": "orders",
        "partition": 0,
        "leader_epoch": epoch,
        "reasons": [reason],
    }


# -- the zombie leader -----------------------------------------------------------------


def test_zombie_leader_truth_exactly(tmp_path: Path) -> None:
    truth, cluster = run("kraft-zombie-leader", tmp_path, check=True)
    assert cluster.violations == []
    # acks=1 of 5 records each second from 21100 at 210; epoch 1 begins at 29450
    assert truth["findings"] == [F("fencing_violation", 0, 1, 265, 281)]
    assert truth["undecidable"] == [
        note(
            "fencing_violation",
            0,
            "broker 1 acknowledged as leader of epoch 0 within 2000 ms of the record that "
            "began a later epoch: [255, 260] (base offsets), inside the skew allowance",
        )
    ]
    assert truth["verdicts"] == {"orders-0": "invalid"}
    assert "disputed" not in truth


def test_zombie_leader_artefacts_show_its_truth(tmp_path: Path) -> None:
    truth = simulator.simulate("kraft-zombie-leader", tmp_path)
    began = [(ms, d) for ms, d in changes(tmp_path) if d.get("leader", -2) >= 0]
    assert [(ms, d["leader"], d["isr"]) for ms, d in began] == [(29450, 2, [2, 3])]
    start = began[0][0]
    stale = [(ms, base) for ms, base in produce_acks(tmp_path, 1, 1) if ms > start]
    far = [base for ms, base in stale if ms - start > SKEW_MS]
    close = [base for ms, base in stale if ms - start <= SKEW_MS]
    (finding,) = truth["findings"]
    assert (finding["offset_start"], finding["offset_end"]) == (min(far), max(far) + 1)
    assert close == [255, 260]
    # the new leader never acknowledged in epoch 0's name: all of its acks come after
    assert all(ms > start for ms, _ in produce_acks(tmp_path, 2, -1))
    # back in the cluster, the zombie truncates its uncommitted acks=1 records to the
    # new leader's start offset: nothing committed was there, no truncation_below_hwm
    server = (tmp_path / "broker-1" / "server.log").read_text()
    assert "[UnifiedLog partition=orders-0, dir=/var/lib/kafka/data] Truncating to offset 210" in (
        server
    )
    assert [f["kind"] for f in truth["findings"]] == ["fencing_violation"]


def test_fencing_rule_in_the_truth_alone() -> None:
    """Acts more than the skew allowance after the record that began a later epoch
    are the finding; closer ones a note; one finding per (broker, stale epoch)."""
    truth = Truth("unit", 0, "kraft", {})
    key = ("orders", 0)
    truth.add_partition(key)
    truth.epoch_began(key, 1, 2, 0, [1, 2], False, now=10000)
    truth.acknowledged(key, 1, 0, 40, 1, 12000)  # exactly 2 s: inside the allowance
    truth.acknowledged(key, 1, 0, 50, 1, 12001)
    truth.acknowledged(key, 1, 0, 45, 1, 15000)
    truth.acknowledged(key, 2, 1, 60, 1, 15000)  # the leader of epoch 1: fine
    result = truth.result()
    assert result["findings"] == [F("fencing_violation", 0, 1, 45, 51)]
    assert [n["reasons"] for n in result["undecidable"]] == [
        [
            "broker 1 acknowledged as leader of epoch 0 within 2000 ms of the record that "
            "began a later epoch: [40, 40] (base offsets), inside the skew allowance"
        ]
    ]


# -- ISR-rule mutations -------------------------------------------------------------------


def test_lagging_isr_join_truth_exactly(tmp_path: Path) -> None:
    truth, cluster = run("mutation-lagging-isr-join", tmp_path, check=True)
    assert cluster.violations == []

    def shown(finding: dict[str, Any], end: int) -> dict[str, Any]:
        start = finding["offset_start"]
        return {
            **finding,
            "visible_offset_start": start,
            "visible_offset_end": end,
            "visible_records_lost": None,
            "visible_qualifier": None,
        }

    # slow after resuming, 3 is taken back at 100 and, after leaving again,
    # at 350: each time below the HWM the leader had shown (340, 390); the
    # artefacts order only the HWM shown beyond the skew allowance before the
    # change (320, 370) before it
    assert truth["findings"] == [
        shown(F("isr_rule_violation", 0, 3, 100, 340), 320),
        shown(F("isr_rule_violation", 0, 3, 350, 390), 370),
    ]
    assert truth["undecidable"] == [
        {**note("isr_rule_violation", 0, reason), "finding": i}
        for i, reason in enumerate(
            f"follower 3 joined the ISR at {at}, below the HWM {real} its leader had shown; "
            f"the answers that showed more than {seen} came within the clock-skew allowance "
            f"({SKEW_MS} ms) of the change and may, by the clocks, have followed it"
            for at, real, seen in ((100, 340, 320), (350, 390, 370))
        )
    ]
    assert "disputed" not in truth
    assert truth["params"]["mutations"] == {"lagging_isr_join": 1.0}
    # the artefacts: each record taking 3 back into the ISR, 3's fetch offset then,
    # the highest HWM leader 1 answered before it, and the highest it answered
    # more than SKEW_MS before it
    isr = [(ms, d["isr"]) for ms, d in changes(tmp_path) if "isr" in d]
    pairs = zip(isr[1:], isr[:-1], strict=True)
    joins = [ms for (ms, i), (_, before) in pairs if 3 in i and 3 not in before]
    seen = []
    for joined in joins:
        fetch_offset = hwm = early = None
        for ms, body in requests(tmp_path, 1):
            if body["requestHeader"]["requestApiKeyName"] != "FETCH" or ms > joined:
                continue
            for topic in body["response"]["responses"]:
                for part in topic["partitions"]:
                    hwm = max(hwm or 0, part["highWatermark"])
                    if ms < joined - SKEW_MS:
                        early = max(early or 0, part["highWatermark"])
            if ms == joined and body["request"]["replicaId"] == 3:
                fetch_offset = body["request"]["topics"][0]["partitions"][0]["fetchOffset"]
        seen.append((fetch_offset, hwm, early))
    assert seen == [(100, 340, 320), (350, 390, 370)]


def test_without_the_mutation_the_follower_joins_caught_up(tmp_path: Path) -> None:
    spec = build("mutation-lagging-isr-join")
    spec.mutations = {}
    truth = Truth(spec.name, 0, spec.era, spec.params())
    cluster = Cluster(spec, tmp_path, 0, truth, check=True)
    cluster.run()
    assert truth.result()["findings"] == [] and cluster.violations == []
    isr = [(ms, d["isr"]) for ms, d in changes(tmp_path) if "isr" in d]
    assert [i for _, i in isr] == [[1, 2], [1, 2, 3]] and isr[1][0] > 30400


def test_acks_all_under_min_isr_truth_exactly(tmp_path: Path) -> None:
    truth, cluster = run("mutation-acks-all-under-min-isr", tmp_path, check=True)
    assert cluster.violations == []
    # from 200 on, the leader had logged its own "(under-min-isr)" line (same clock)
    assert truth["findings"] == [F("isr_rule_violation", 0, 1, 200, 401)]
    assert truth["undecidable"] == [
        note(
            "isr_rule_violation",
            0,
            "broker 1 acknowledged acks=all under min.insync.replicas in epoch 0 within 2000 "
            "ms of the record that shrank the ISR or grew it back: [100, 190] (base offsets), "
            "inside the skew allowance",
        )
    ]
    # the artefacts: min ISR 2 in a CONFIG_RECORD (kafka-formats.md 2.4), the records
    # that shrink and regrow the ISR, the acks=all answered 0 in between
    configs = [r["data"] for _, r in records(tmp_path) if r["type"] == "CONFIG_RECORD"]
    assert configs == [
        {
            "resourceType": 2,
            "resourceName": "orders",
            "name": "min.insync.replicas",
            "value": "2",
        }
    ]
    isr = [(ms, d["isr"]) for ms, d in changes(tmp_path) if "isr" in d]
    shrunk = next(ms for ms, i in isr if len(i) < 2)
    regrown = next(ms for ms, i in isr if ms > shrunk and len(i) >= 2)
    # the leader's own "(under-min-isr)" line (3.6+) is on its own clock: acks
    # logged after it are under min ISR whatever the skew
    (marker,) = [
        line
        for line in (tmp_path / "broker-1" / "server.log").read_text().splitlines()
        if "(under-min-isr)" in line
    ]
    assert marker.startswith("[2024-05-01 10:00:20,001]") and shrunk == 20001
    under = [b for ms, b in produce_acks(tmp_path, 1, -1) if shrunk < ms < regrown]
    (finding,) = truth["findings"]
    assert (finding["offset_start"], finding["offset_end"]) == (min(under), max(under) + 1)


def test_without_the_mutation_acks_all_is_refused_under_min_isr(tmp_path: Path) -> None:
    spec = build("mutation-acks-all-under-min-isr")
    spec.mutations = {}
    truth = Truth(spec.name, 0, spec.era, spec.params())
    cluster = Cluster(spec, tmp_path, 0, truth, check=True)
    cluster.run()
    assert truth.result()["findings"] == [] and cluster.violations == []
    errors = set()
    for _, body in requests(tmp_path, 1):
        if body["requestHeader"]["requestApiKeyName"] == "PRODUCE":
            for topic in body["response"]["responses"]:
                errors |= {p["errorCode"] for p in topic["partitionResponses"]}
    assert errors == {0, 19, 20}  # NOT_ENOUGH_REPLICAS (_AFTER_APPEND)


def test_rule_scenarios_are_listed_apart() -> None:
    every = dict(simulator.list_scenarios(all_eras=True))
    with_rules = dict(simulator.list_scenarios(all_eras=True, rules=True))
    assert not set(RULE_NAMED) & set(every) and set(RULE_NAMED) <= set(with_rules)
    for name in RULE_NAMED:
        assert with_rules[name] and "\n" not in with_rules[name]


def test_random_mutation_knobs(tmp_path: Path) -> None:
    plain = simulator.simulate("random", tmp_path / "plain", seed=3)
    mutated = simulator.simulate(
        "random",
        tmp_path / "mutated",
        seed=3,
        mutation_lagging_isr_join=1.0,
        mutation_acks_all_under_min_isr=1.0,
    )
    rules = [f for f in mutated["findings"] if f["kind"] == "isr_rule_violation"]
    assert rules and all(f["severity"] == "warning" for f in rules)
    assert not [f for f in plain["findings"] if f["kind"] == "isr_rule_violation"]
    assert "mutations" not in plain["params"]
    assert mutated["params"]["mutations"] == {
        "acks_all_under_min_isr": 1.0,
        "lagging_isr_join": 1.0,
    }
    with pytest.raises(ValueError):
        simulator.simulate("random", tmp_path / "x", seed=3, mutation_lagging_isr_join=2)
    with pytest.raises(ValueError):
        simulator.simulate("random", tmp_path / "y", seed=3, mutation_unknown=1)


def test_no_rule_violation_without_mutations_or_zombies(tmp_path: Path) -> None:
    for seed in range(12):
        truth = simulator.simulate("random", tmp_path / str(seed), seed=seed, fault_rate=6)
        kinds = {f["kind"] for f in truth["findings"]}
        assert not kinds & {"fencing_violation", "isr_rule_violation"}, seed


# -- evidence-visible values ------------------------------------------------------------


def test_visible_values_beside_a_mark_the_artefacts_show_lower() -> None:
    """An acks=all ack of 5 records at 10: the truth's mark is 15, the request log
    shows 11 (base offset + 1); a leader elected at 10 lost [10, 15), visibly [10, 11)."""
    truth = Truth("unit", 0, "kraft", {})
    key = ("orders", 0)
    truth.add_partition(key)
    truth.ack(key, 10, 5)
    truth.epoch_began(key, 1, 2, 10, [1, 2], False, now=1000)
    result = truth.result()
    (finding,) = result["findings"]
    assert finding == {
        "kind": "committed_data_loss",
        "topic": "orders",
        "partition": 0,
        "leader_epoch": 1,
        "replica": None,
        "offset_start": 10,
        "offset_end": 15,
        "records_lost": 5,
        "qualifier": None,
        "visible_offset_start": 10,
        "visible_offset_end": 11,
        "visible_records_lost": 1,
        "visible_qualifier": None,
    }
    assert [n["finding"] for n in result["undecidable"]] == [0]


def test_zk_hw_marks_come_from_the_fetch_offsets() -> None:
    """zk-hw: an ack shows no offset; the ISR followers' fetch offsets show the mark."""
    for shown, expected in [(None, {"visible_absent": True}), (11, {})]:
        truth = Truth("unit", 0, "zk-hw", {})
        key = ("seed", 0)
        truth.add_partition(key)
        truth.ack(key, 10, 1)
        if shown is not None:
            truth.fetch_mark(key, shown)
        truth.epoch_began(key, 1, 1, 10, [2, 1], False, now=1000)
        result = truth.result()
        (finding,) = result["findings"]
        assert (finding["offset_start"], finding["offset_end"]) == (10, 11)
        assert {k: v for k, v in finding.items() if k.startswith("visible")} == expected
        assert ("undecidable" in result) == (shown is None)


def test_random_findings_carry_visible_values_where_only_a_mark_is_unsure(
    tmp_path: Path,
) -> None:
    exact = loose = 0
    for seed in range(20):
        truth = simulator.simulate("random", tmp_path / str(seed), seed=seed)
        noted = {n["finding"]: n["reasons"] for n in truth.get("undecidable", [])}
        for i, f in enumerate(truth["findings"]):
            visible = {k for k in f if k.startswith("visible")}
            if i not in noted:
                assert not visible, f
                exact += 1
                continue
            if visible:
                assert visible in (
                    {"visible_absent"},
                    {
                        "visible_offset_start",
                        "visible_offset_end",
                        "visible_records_lost",
                        "visible_qualifier",
                    },
                ), f
                exact += 1
                if "visible_offset_start" in f and f["kind"] == "truncation_below_hwm":
                    # the truncation point is in evidence; only the committed end moves
                    assert f["visible_offset_start"] == f["offset_start"]
            else:
                # loose only when the value rests on something no artefact shows
                assert f["kind"] == "hwm_regression" or any(
                    "in no artefact" in r for r in noted[i]
                ), (f, noted[i])
                loose += 1
    assert exact > 0 and loose < exact


# -- determinism -------------------------------------------------------------------------


def digest(out: Path) -> dict[str, str]:
    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    cases: list[tuple[str, dict[str, Any]]] = [
        ("kraft-zombie-leader", {}),
        ("mutation-acks-all-under-min-isr", {}),
        ("random", {"mutation_lagging_isr_join": 0.5, "mutation_acks_all_under_min_isr": 0.5}),
    ]
    for scenario, knobs in cases:
        a, b = tmp_path / f"{scenario}-a", tmp_path / f"{scenario}-b"
        simulator.simulate(scenario, a, seed=4, **knobs)
        simulator.simulate(scenario, b, seed=4, **knobs)
        assert digest(a) == digest(b)
    c = tmp_path / "random-c"
    simulator.simulate("random", c, seed=5, **cases[2][1])
    assert digest(c) != digest(tmp_path / "random-a")


#: two random clusters of the evidence sweep (tests/test_scenarios.py
#: ``evidence_sweep``), with their knobs spelled out
SWEEP_3022 = {
    "era": "zk-epoch",
    "version": "1.1",
    "brokers": 4,
    "topics": 2,
    "partitions": 3,
    "duration": 120,
    "produce_rate": 4.0,
    "fault_rate": 4.0,
    "restart_rate": 2.0,
    "consumers": True,
    "startup_lines": True,
}
SWEEP_3166 = {
    "era": "zk-epoch",
    "version": "2.8",
    "brokers": 4,
    "topics": 1,
    "partitions": 1,
    "duration": 60,
    "produce_rate": 4.0,
    "fault_rate": 4.0,
    "restart_rate": 2.0,
    "consumers": True,
    "startup_lines": True,
    "list_offsets_ms": 5000,
    "excerpts": "quote",
}


def test_a_loss_no_artefact_dates_is_noted_where_the_next_stated_start_shows_it(
    tmp_path: Path,
) -> None:
    """Leader 2 of epoch 3 was down when elected: its X (1248, 1404) is in no
    artefact, so the truth puts the loss in epoch 3 with a note; a reader
    finds it at epoch 6, where the same leader's start is stated: a note
    without a finding names that, for both loss kinds, and nothing else."""
    truth = simulator.simulate("random", tmp_path, seed=3022, **SWEEP_3022)
    losses = [
        (f["topic"], f["partition"], f["leader_epoch"], f["offset_start"], f["offset_end"])
        for f in truth["findings"]
        if f["kind"] == "committed_data_loss"
    ]
    assert losses == [("topic-0", 1, 3, 1248, 2227), ("topic-1", 0, 3, 1404, 2373)]
    shown = [
        (n["kind"], n["topic"], n["partition"], n["leader_epoch"], n["reasons"])
        for n in truth["undecidable"]
        if n["finding"] is None
    ]
    assert shown == [
        (
            kind,
            topic,
            partition,
            6,
            [
                f"leader 2 of epoch 3 was down when elected: X={x} is in no artefact, so the "
                "loss it made shows in epoch 6, whose leader 2's start is stated"
            ],
        )
        for topic, partition, x in (("topic-0", 1, 1248), ("topic-1", 0, 1404))
        for kind in ("committed_data_loss", "hwm_regression")
    ]


def test_a_leader_whose_request_log_holds_no_line_leaves_a_clean_partition_unsure(
    tmp_path: Path,
) -> None:
    """Broker 2 led epoch 1 and wrote no request-log line (its file is empty,
    as the request logger off would leave it): the partition, with no finding,
    carries a note naming that; its verdict stays what the model says."""
    truth = simulator.simulate("random", tmp_path, seed=3166, **SWEEP_3166)
    assert (tmp_path / "broker-2" / "kafka-request.log").read_text() == ""
    assert truth["findings"] == [] and truth["verdicts"] == {"topic-0-0": "valid"}
    assert truth["undecidable"] == [
        {
            "finding": None,
            "kind": "hwm_regression",
            "topic": "topic-0",
            "partition": 0,
            "leader_epoch": 1,
            "reasons": [
                "broker 2, leader in epoch 1, wrote no request-log line: the HWM it exposed "
                "(if any) is in no artefact"
            ],
        }
    ]


def test_a_second_crash_loss_is_measured_from_what_was_seen_after_the_first() -> None:
    """Replica 2 fetched up to 151 under HWM 136 and lost all of it in an
    unclean shutdown; back, it fetched from 0 once, took records its next
    fetch would have shown, and crashed again before that fetch. The second
    loss [0, 140) is real, but its log end before it is in evidence only up
    to 0 (its 151 was the log the first crash took): named, and absent on
    what the artefacts show."""
    truth = Truth("unit", 0, "kraft", {})
    key = ("orders", 0)
    truth.add_partition(key)
    truth.hw_shown(key, 136)
    truth.follower_fetch(key, 2, 0, 151)
    truth.crash_drop(key, 2, 151, 0, 0)
    truth.follower_fetch(key, 2, 0, 0)
    truth.crash_drop(key, 2, 140, 0, 0)
    truth.follower_fetch(key, 2, 0, 0)
    result = truth.result()
    assert [
        (f["offset_start"], f["offset_end"], f.get("visible_absent")) for f in result["findings"]
    ] == [(0, 136, None), (0, 136, True)]
    assert [
        (f["kind"], f["topic"], f["partition"], f["leader_epoch"], f["replica"], f["qualifier"])
        for f in result["findings"]
    ] == [("truncation_below_hwm", "orders", 0, 0, 2, "local")] * 2
    assert [n["reasons"] for n in result["undecidable"]] == [
        [
            "replica 2 lost [0, 140) in an unclean shutdown; its log end before the loss is in "
            "evidence only up to 0"
        ]
    ]


# -- what a reader can know of a crash loss ------------------------------------------


def test_a_crash_loss_after_an_epoch_whose_start_no_line_prints(tmp_path: Path) -> None:
    """kraft-elr, seed 7011: leader 4 of epoch 4 crashes uncleanly, losing
    [1377, 1484) of topic-0-1. Broker 2 is elected for epoch 5 while down
    (not yet fenced) and prints no start offset; broker 3 leads epoch 6 from
    1483. Replica 4's records were committed up to 1466 and broker 3 still
    holds them (local), but whether epoch 5 rewrote them is in no artefact:
    the reader's qualifier is unknown. Its log end in evidence is 1469, from
    an acks=1 ack (base 1468) that an acks=all ack of an older batch (base
    1461) answered later does not take back."""
    truth = simulator.simulate(
        "random", tmp_path, seed=7011, era="kraft-elr", brokers=4, fault_rate=4.0
    )
    (i, finding), *_ = [
        (i, f)
        for i, f in enumerate(truth["findings"])
        if (f["topic"], f["partition"], f["replica"]) == ("topic-0", 1, 4)
    ]
    assert finding == {
        "kind": "truncation_below_hwm",
        "topic": "topic-0",
        "partition": 1,
        "leader_epoch": 6,
        "replica": 4,
        "offset_start": 1377,
        "offset_end": 1466,
        "records_lost": None,
        "qualifier": "local",
        "visible_offset_start": 1377,
        "visible_offset_end": 1466,
        "visible_records_lost": None,
        "visible_qualifier": "unknown",
    }
    (note,) = [n for n in truth["undecidable"] if n["finding"] == i]
    assert note["reasons"] == [
        "replica 4 lost [1377, 1484) when the true HWM was 1466; when the loss shows (its next "
        "fetch) the true HWM is 1501",
        "truncation of replica 4 [1377, 1484): the start offset of epoch 5 (written after the "
        "replica's records) is in no artefact, so whether that epoch rewrote them is not in "
        "evidence",
    ]
