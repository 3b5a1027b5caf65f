"""The replay judged against the simulator's truth, end to end through Spark.

Every named scenario and a set of random seeds are simulated into one fleet
archive (one ``cluster=NAME/`` folder each), ``run_job`` reads it in a single
Spark job, and each cluster's findings must equal its ``truth.json``:
kind, topic, partition, leader epoch, replica, offsets, records lost and
qualifier. Where the truth itself says the artefacts cannot decide a value
(``undecidable``: e.g. the moment of an unclean shutdown between two fetches),
the finding must still exist, compared on what the evidence does fix.
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import simulator
from pipeline.cli import validation_lines
from pipeline.run import RunOptions, read_table, run_job
from simulator.spec import EXCERPT_STYLES
from simulator.versions import ERA_VERSIONS, VERSIONS

#: every named scenario of every era, and the rule scenarios (a zombie leader,
#: the ISR-rule mutations)
NAMED = [
    name for name, _ in simulator.list_scenarios(all_eras=True, rules=True) if name != "random"
]
EXACT = (
    "kind",
    "topic",
    "partition",
    "leader_epoch",
    "replica",
    "offset_start",
    "offset_end",
    "records_lost",
    "qualifier",
)
LOOSE = ("kind", "topic", "partition", "leader_epoch", "replica", "offset_start")


def sample_size(name: str, default: int) -> tuple[int, str]:
    """A sample size, from the environment if set there; the text says so
    whenever it is not the default."""
    value = int(os.environ.get(name, str(default)))
    if value == default:
        return value, f"{value}"
    return value, f"{value} ({name}={value}; the default is {default})"


CI_SEEDS, CI_SEEDS_TEXT = sample_size("EPOCHTRAIL_CI_SEEDS", 25)
CI_VARIED, CI_VARIED_TEXT = sample_size("EPOCHTRAIL_CI_VARIED", 12)


def varied(count: int, draw: int) -> dict[str, tuple[int, dict[str, Any]]]:
    """``random`` clusters beyond the default knobs: each random era
    (kraft, kraft-elr, zk-epoch), 1-5 brokers, 1-2 topics, 1-3 partitions,
    60-180 s, produce and fault rates from calm to busy, and either rule
    mutation at even odds. Drawn from a fixed seed: the same clusters every
    run (``draw`` 0 for CI, 1 for the slow run)."""
    rng = random.Random(draw)
    out = {}
    for i in range(count):
        knobs: dict[str, Any] = {
            "era": rng.choice(["kraft", "kraft-elr", "zk-epoch"]),
            "brokers": rng.randint(1, 5),
            "topics": rng.randint(1, 2),
            "partitions": rng.randint(1, 3),
            "duration": rng.choice([60, 120, 180]),
            "produce_rate": rng.choice([0.5, 2.0, 4.0]),
            "fault_rate": rng.choice([0.0, 1.0, 2.0, 4.0]),
        }
        if rng.random() < 0.3:
            knobs["mutation_lagging_isr_join"] = 0.5
        if rng.random() < 0.3:
            knobs["mutation_acks_all_under_min_isr"] = 0.5
        seed = 1000 + draw * 1000 + i
        out[f"varied-{seed}"] = (seed, knobs)
    return out


#: the four eras of the evidence sweep, taken in turn
SWEEP_ERAS = ("kraft", "kraft-elr", "zk-epoch", "zk-hw")


def evidence_sweep(count: int, draw: int) -> dict[str, tuple[int, dict[str, Any]]]:
    """``random`` clusters with the evidence of issues 12 and 13 on: the four
    eras in turn, consumers (a ListOffsets every 5 s half the time, reads from
    a follower on 2.4+ a quarter of the time) and startup lines always, broker
    restarts (clean and unclean) at 0.5-2 a minute, and drawn at random: the
    era's template version (simulator/versions.py), describe snapshots every
    10 s (half the time), and a pasted-excerpt rendering beside every log
    (half the time, in a random style). Drawn from a fixed seed: the same
    clusters every run. Seeds 3000 + ``draw`` * 1000 + i, drawn by no other
    test."""
    rng = random.Random(f"epochtrail-sweep-{draw}")
    out = {}
    for i in range(count):
        era = SWEEP_ERAS[i % len(SWEEP_ERAS)]
        version = rng.choice(ERA_VERSIONS[era])
        knobs: dict[str, Any] = {
            "era": era,
            "version": version,
            "brokers": rng.randint(1, 5),
            "topics": rng.randint(1, 2),
            "partitions": rng.randint(1, 3),
            "duration": rng.choice([60, 120]),
            "produce_rate": rng.choice([0.5, 2.0, 4.0]),
            "fault_rate": rng.choice([0.0, 1.0, 2.0, 4.0]),
            "restart_rate": rng.choice([0.5, 1.0, 2.0]),
            "consumers": True,
            "startup_lines": True,
        }
        if rng.random() < 0.5:
            knobs["list_offsets_ms"] = 5000
        if VERSIONS[version].at_least("2.4") and rng.random() < 0.25:
            knobs["consumer_from_follower"] = True
        if rng.random() < 0.5:
            knobs["describe_every_ms"] = 10000
        if rng.random() < 0.5:
            knobs["excerpts"] = rng.choice(EXCERPT_STYLES)
        seed = 3000 + draw * 1000 + i
        out[f"sweep-{seed}"] = (seed, knobs)
    return out


#: rule violations are compared on their severity too (docs/findings.md)
RULE_KINDS = frozenset({"fencing_violation", "isr_rule_violation"})
VISIBLE = {
    "offset_start": "visible_offset_start",
    "offset_end": "visible_offset_end",
    "records_lost": "visible_records_lost",
    "qualifier": "visible_qualifier",
}


def _key(finding: dict[str, Any], fields: tuple[str, ...]) -> tuple[Any, ...]:
    key = tuple(finding.get(f) for f in fields)
    if fields == EXACT:
        key += (finding.get("severity") if finding["kind"] in RULE_KINDS else None,)
    return key


def _as_visible(finding: dict[str, Any]) -> dict[str, Any]:
    """The finding as a reader of the artefacts must report it: the truth's
    ``visible_*`` values in place of the real ones (simulator/truth.py)."""
    return {**finding, **{f: finding.get(v) for f, v in VISIBLE.items()}}


#: The comparison's only tolerances, by name. Each excused comparison is
#: counted under its name (``Comparison.excused``), the fleet check prints the
#: counts, and the tests cap them: zero for every named scenario.
READ_MORE = "replay fixed the real values where the truth gives the visible ones"
QUALIFIER_UNKNOWN = "replay said qualifier unknown where the truth fixes it"
LOOSE_MATCH = "noted finding matched on kind, partition, epoch, replica and start only"
LOCAL_UNSEEN = "noted local truncation absent (the leader still holds its records)"
PARTITION_UNKNOWN = "noted finding absent in a partition the replay calls unknown"
NO_ARTEFACT = "noted finding absent: its deciding value is in no artefact"
PROBABLE_EPOCH = "noted finding absent in an epoch where the replay reported a probable one"
EXTRA_NOTED = "extra finding where the truth has a note without a finding"
VERDICT_NOTED = "verdict differs in a partition the truth has an undecidable note for"
EXCUSES = (
    READ_MORE,
    QUALIFIER_UNKNOWN,
    LOOSE_MATCH,
    LOCAL_UNSEEN,
    PARTITION_UNKNOWN,
    NO_ARTEFACT,
    PROBABLE_EPOCH,
    EXTRA_NOTED,
    VERDICT_NOTED,
)


@dataclass
class Comparison:
    """One cluster's comparison: the differences (empty = agree) and how many
    comparisons each named tolerance excused."""

    problems: list[str] = field(default_factory=list)
    excused: Counter[str] = field(default_factory=Counter)
    #: each excused comparison: "excused (reason): the key excused"
    details: list[str] = field(default_factory=list)

    def excuse(self, reason: str, key: tuple[Any, ...]) -> None:
        self.excused[reason] += 1
        self.details.append(f"excused ({reason}): {key}")


def compare(
    truth: dict[str, Any],
    ours: list[dict[str, Any]],
    unknown: frozenset[str] = frozenset(),
    verdicts: dict[str, str | None] | None = None,
) -> Comparison:
    """The cluster's truth against our findings (and our verdicts, by
    ``topic-partition``, when given).

    Findings without an ``undecidable`` note compare exactly. A noted finding
    whose values rest on a mark the artefacts show differently carries the
    values the evidence gives (``visible_*``): it compares exactly on those
    (``READ_MORE``: or on its real values, when the replay fixed them from the
    evidence); ``visible_absent`` means the evidence shows no such finding,
    and the replay must not report it. Every other allowance is one of
    ``EXCUSES`` and is counted: the few noted findings with neither are
    compared on what the evidence fixes (``LOOSE_MATCH``), and may be absent
    when the evidence cannot show them (``LOCAL_UNSEEN``,
    ``PARTITION_UNKNOWN``: ``unknown`` holds the ``topic-partition`` names with
    that verdict, ``NO_ARTEFACT``, ``PROBABLE_EPOCH``); a qualifier ``unknown``
    (records lost null) may stand for the truth's (``QUALIFIER_UNKNOWN``); an
    extra finding may stand where the truth notes one it does not assert
    (``EXTRA_NOTED``); a partition's verdict may differ where the truth has a
    note for it (``VERDICT_NOTED``)."""
    out = Comparison()
    notes = truth.get("undecidable", [])
    noted = {n["finding"] for n in notes if n.get("finding") is not None}
    findings = truth["findings"]
    visible = {
        i
        for i in noted
        if not findings[i].get("visible_absent") and "visible_offset_start" in findings[i]
    }
    absent = {i for i in noted if findings[i].get("visible_absent")}
    loose_idx = noted - visible - absent
    # A note without a finding: the evidence may show one the truth does not have.
    tolerated = {
        (n["kind"], n["topic"], n["partition"], n["leader_epoch"])
        for n in notes
        if n.get("finding") is None
    }
    want_exact = {_key(f, EXACT) for i, f in enumerate(findings) if i not in noted}
    want_exact |= {_key(_as_visible(findings[i]), EXACT) for i in visible}
    real_of_visible = {
        _key(findings[i], EXACT): _key(_as_visible(findings[i]), EXACT) for i in visible
    }
    want_loose = {_key(f, LOOSE) for i, f in enumerate(findings) if i in loose_idx}
    unmatched_loose = set(want_loose)
    undecided = {k[:7]: k for k in want_exact}
    for f in ours:
        key = _key(f, EXACT)
        if key in want_exact:
            want_exact.discard(key)
        elif real_of_visible.get(key) in want_exact:
            want_exact.discard(real_of_visible[key])
            out.excuse(READ_MORE, key)
        elif f.get("qualifier") == "unknown" and key[:7] in undecided:
            want_exact.discard(undecided.pop(key[:7]))
            out.excuse(QUALIFIER_UNKNOWN, key)
        elif _key(f, LOOSE) in unmatched_loose:
            unmatched_loose.discard(_key(f, LOOSE))
            out.excuse(LOOSE_MATCH, key)
        elif (f["kind"], f["topic"], f["partition"], f["leader_epoch"]) in tolerated:
            out.excuse(EXTRA_NOTED, key)
        else:
            out.problems.append(f"extra {key}")
    out.problems += [f"missing {k}" for k in sorted(want_exact, key=str)]
    in_no_artefact = {
        _key(findings[n["finding"]], LOOSE)
        for n in notes
        if n.get("finding") in loose_idx
        and any(
            "in no artefact" in r or "is not in the request log" in r for r in n.get("reasons", [])
        )
    }
    unsure_epochs = {
        (f["topic"], f["partition"], f["leader_epoch"])
        for f in ours
        if f.get("confidence") == "probable"
    }
    loose_findings = {_key(f, LOOSE): f for i, f in enumerate(findings) if i in loose_idx}
    for k in sorted(unmatched_loose, key=str):
        f = loose_findings[k]
        if f.get("qualifier") == "local":
            out.excuse(LOCAL_UNSEEN, k)
        elif f"{f['topic']}-{f['partition']}" in unknown:
            out.excuse(PARTITION_UNKNOWN, k)
        elif k in in_no_artefact:
            out.excuse(NO_ARTEFACT, k)
        elif (f["topic"], f["partition"], f["leader_epoch"]) in unsure_epochs:
            out.excuse(PROBABLE_EPOCH, k)
        else:
            out.problems.append(f"missing {k}")
    if verdicts is not None:
        unsure = {f"{n['topic']}-{n['partition']}" for n in notes}
        for partition, verdict in sorted(truth["verdicts"].items()):
            theirs = verdicts.get(partition)
            if theirs == verdict:
                continue
            if partition in unsure:
                out.excuse(VERDICT_NOTED, (partition, verdict, theirs))
            else:
                out.problems.append(f"verdict {partition}: truth {verdict}, replay {theirs}")
    return out


Tables = tuple[dict[str, list[dict[str, Any]]], dict[str, dict[str, str | None]]]


def run_fleet(root: Path, out: Path) -> Tables:
    """One pipeline run over the fleet: each cluster's findings and verdicts."""
    summary = run_job(RunOptions(paths=[str(root)], out=str(out)))
    assert summary.quarantined_lines == 0
    # every table of every era's simulated cluster meets the validation suites
    assert validation_lines(summary.manifest["validation"]) == []
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in read_table(str(out), "anomalies"):
        found[row["cluster"]].append(row)
    verdicts: dict[str, dict[str, str | None]] = defaultdict(dict)
    for r in read_table(str(out), "partition_verdicts"):
        verdicts[r["cluster"]][f"{r['topic']}-{r['partition']}"] = r["verdict"]
    return found, verdicts


def judge_fleet(
    root: Path, out: Path, tables: Tables | None = None, skip: frozenset[str] = frozenset()
) -> dict[str, Comparison]:
    """Every cluster of the fleet but ``skip`` compared with its truth
    (``tables``: a run's already, else one run now)."""
    found, verdicts = tables if tables is not None else run_fleet(root, out)
    result = {}
    for folder in sorted(root.iterdir()):
        if folder.name.split("=", 1)[1] in skip:
            continue
        cluster = folder.name.split("=", 1)[1]
        truth = json.loads((folder / "truth.json").read_text())
        ours = verdicts.get(cluster, {})
        unknown = frozenset(p for p, v in ours.items() if v == "unknown")
        result[cluster] = compare(truth, found.get(cluster, []), unknown, ours)
    return result


def fleet_report(result: dict[str, Comparison], sample: str) -> str:
    """What the fleet check prints: the sample, the agreement, and every
    excused comparison counted by reason (named scenarios and random ones
    apart)."""
    named = Counter[str]()
    rest = Counter[str]()
    for cluster, comparison in result.items():
        (named if cluster in NAMED else rest).update(comparison.excused)
    agree = sum(1 for c in result.values() if not c.problems)
    lines = [f"fleet: {sample}; {agree} of {len(result)} clusters agree with their truth"]
    for title, counts in (("named scenarios", named), ("random clusters", rest)):
        lines.append(f"excused comparisons, {title}: {sum(counts.values())}")
        lines += [f"  {counts[reason]:5d}  {reason}" for reason in EXCUSES if counts[reason]]
    return "\n".join(lines)


#: Disagreements found and not yet resolved, stated exactly so that any change
#: (fixed, or a new one) fails the test; in a named scenario an excused
#: comparison is one.
#:
#: (seed000-hw-truncation's epoch-1 truncation of broker 2, the first
#: epoch's leader, was one until the replay dated a first epoch's leader's
#: records by that epoch: now global, 1 record lost, as its truth.)
KNOWN_DISAGREEMENTS: dict[str, list[str]] = {}


#: The slow sweep's (``evidence_sweep(200, 0)``) disagreements, measured
#: after the fixes it led to (the request log is not pasted as an excerpt; a
#: ZooKeeper-era leader's own ISR write; a pasted copy of a timed line is that
#: line; a ZooKeeper decision keeps its timed copy; then a ZooKeeper decision's
#: zkVersion, a follower's HW after an unclean election, an epoch's start
#: floor, the partition's only leader, and two named gaps in the truth; then
#: the causes that fix an order the clocks leave open, replay/order.py: a
#: follower shows a client a HWM only after the leader's answer that brought
#: it, a broker's own copy of a LeaderAndIsr request orders what it did after
#: on its clock, and a follower's fetch from below its last one follows its
#: own line that cut its log; a truth that measures a replica's second crash
#: loss from what was seen after its first; a 1.1 controller's offline line;
#: then a 0.10 consumer's advancing positions read as the HWM its leader
#: showed, an ISR expansion judged by the fetch answered after it, and a
#: zk-hw leader holding the HW it derived (12 of 200 then); then a 0.10
#: follower's data dated by the epoch it fetched it in: 6 of 200 clusters
#: (37 before the order's causes); then a 0.10 leader's records undated once
#: it leads: 5 of 200; then the truth's reader of a 0.10 follower's HW
#: truncation, which sees its log end only as far as its logged fetches
#: (3011, 3063: the answers that brought the rest print no offsets, the
#: truncation line no log end): 3 of 200; then a follower's truncation in
#: the millisecond of its broker's own copy of a request kept in that
#: request's epoch (3151): 2 of 200; then the truth's reader of a 0.10
#: fetch whose line is written late or never (3147): 1 of 200; then a
#: follower's fetches after the one from its leader's epoch answer ordered
#: after its truncation to that answer (3098): none. The tags they had:
#:
#: * skew-order (3098, 3151): the partition's verdict is unknown because a
#:   finding appears in one order of two lines on different brokers' clocks
#:   within the 2 s
#:   skew allowance (DESIGN.md "Ordering": not stated as fact) and no cause
#:   the replay knows fixes it; the simulated brokers share one clock, so the
#:   truth knows the order. 3098: the follower's fetch from 529 could, by the
#:   clocks, precede its own truncation to 417, which its fetch from 417 (whose
#:   answer brought the records from 417 on) followed.
#:   The cause it lacked: broker 3 fetched from 417 after truncating to 417
#:   on the leader's epoch answer (end offset 417), but the clocks put that
#:   fetch line before the truncation line, so the fetch from 529 could pass
#:   the truncation without passing it (``_fetched_after_epoch_truncation``
#:   now orders it).
#:
#: (missing-truncation_below_hwm-local, the tag of 3011, 3035, 3039, 3063,
#: 3095, 3107, 3147, 3171 and 3199 once, is no cluster's now: 0.10 data
#: dated by the wrong epoch, and losses the truth counted visible on fetch
#: lines never written.)
SWEEP_DISAGREEMENTS: dict[str, list[str]] = {}
KNOWN_DISAGREEMENTS.update(SWEEP_DISAGREEMENTS)


#: Excused comparisons allowed over the random clusters of each run, by
#: reason: what the runs measured when the caps were set (named scenarios
#: allow none). A new excuse, or more of one, fails the test.
#: Measured on the default sample (25 seeds, 12 varied clusters), 12 of the
#: comparisons in 37 clusters (24 before the truth's reader knew which start
#: offsets a line prints and which log ends an answer shows: the six
#: ``READ_MORE`` and six ``QUALIFIER_UNKNOWN`` now compare exactly):
CAPS_CI: dict[str, int] = {
    NO_ARTEFACT: 4,
    EXTRA_NOTED: 2,
    VERDICT_NOTED: 6,
}
#: Measured on the slow sample (200 seeds of ``evidence_sweep``), in one run
#: of the whole sweep after the start floor, the only leader, the truth's two
#: named gaps (a loss shown in the next epoch with a stated start, a leader
#: with an empty request log) and the fold of rising runs: 163 of 200 clusters
#: agreed, 81 comparisons excused (109 before those changes). Then the causes
#: that fix an order (replay/order.py) and the truth's second crash loss: 184
#: of 200 agree, 90 excused (185 since the offline line is read: 3022). The
#: nine more are findings now stated where the
#: order had left the partition unknown: seven truncations pinned as missing
#: before, now found with their exact offsets and qualifier unknown (zk-hw:
#: 3011, 3071 twice, 3175 twice, 3191, 3199; the 0.10 data carries no epoch to
#: date them by), and two truncations the truth notes a reader sees on the
#: artefacts' mark but has no finding for (3015, 3143: the true mark rests on
#: an ack's record count), each beside the verdict excuse it had before.
#: Then a 0.10 consumer's advancing positions, an expansion judged by the
#: fetch answered after it and a zk-hw leader holding the HW it derived: 188
#: of 200 agree, 82 excused (six qualifiers now fixed; the two noted findings
#: of partitions that were unknown are in partitions now decided, and count
#: as in no artefact). Then a 0.10 follower's data dated by the epoch it
#: fetched it in: 194 of 200 agree, 90 excused: nine truncations pinned as
#: missing before are found with their exact offsets and qualifier unknown
#: (the later epoch's start is in no 0.10 line: whether its leader still
#: holds the range is not decided), and two partitions the truth notes as
#: undecidable are now decided, one with an extra finding under that note.
#: Then the first epoch's leader's records judged by that epoch, the ELR
#: registration's order, and a 0.10 leader's records no longer dated by the
#: fetches of an epoch before the one it led (it may have written in its
#: own; the truth's reader sees a 0.10 leader's log end in its followers'
#: growing fetches): 195 of 200 agree, 94 excused; seven more truncations
#: found with exact offsets and qualifier unknown (3039, 3099 three times,
#: 3107, 3139, 3147), one verdict excuse fewer. Then 197 of 200 with the
#: same excuses (3011 and 3063's losses shown absent on the artefacts'
#: marks, as the replay read them); 198 with 3151; 199 with 3147, whose
#: epoch-4 truncation is now found with the truth's visible end and
#: qualifier unknown (one more); 200 with 3098, the same excuses (95: 11
#: ``READ_MORE``, 61 ``QUALIFIER_UNKNOWN``). Then the truth's reader takes a
#: later epoch's start offset only where a line prints it (a 0.10 leader, or
#: one elected while down, prints none) or bounds it (its log end in evidence
#: when elected and at its next startup lines, or one leader since the
#: partition began), and a leader's log end from the HWMs it answered and
#: from its acks in the order of offsets, not of answers: 200 of 200, 31
#: excused; the 53 truncations whose qualifier the replay left unknown and
#: the 11 whose real values it read are now exactly what the truth says a
#: reader sees. Then the replay's reading of a later start stated at or
#: below the cut (global, the whole range lost, whatever an unstated start
#: did): 25 excused, six of sweep-3022's truncations now exact:
CAPS_SLOW: dict[str, int] = {
    QUALIFIER_UNKNOWN: 2,
    NO_ARTEFACT: 8,
    EXTRA_NOTED: 7,
    VERDICT_NOTED: 8,
}


def check_fleet(
    result: dict[str, Comparison], caps: dict[str, int], sample: str, capsys: Any
) -> None:
    with capsys.disabled():  # printed past pytest's capture: the counts are the output
        print("\n" + fleet_report(result, sample))
    # a named scenario allows no excuse: each excused comparison is a disagreement
    disagreements = {
        c: r.problems + (r.details if c in NAMED else [])
        for c, r in result.items()
        if r.problems or (c in NAMED and r.details)
    }
    known = {c: p for c, p in KNOWN_DISAGREEMENTS.items() if c in result}
    with capsys.disabled():  # every difference from the pinned ones, in full
        for cluster in sorted(set(disagreements) | set(known)):
            if disagreements.get(cluster) != known.get(cluster):
                print(f"disagreement {cluster}: {json.dumps(disagreements.get(cluster, []))}")
    assert disagreements == {c: p for c, p in KNOWN_DISAGREEMENTS.items() if c in result}
    excused = Counter[str]()
    for cluster, comparison in result.items():
        if cluster not in NAMED:
            excused.update(comparison.excused)
    over = {r: n for r, n in excused.items() if n > caps.get(r, 0)}
    assert over == {}, f"excused comparisons over their caps {caps}"


@pytest.mark.spark
def test_named_scenarios_and_random_seeds_match_their_truth(spark, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "fleet"
    for name in NAMED:
        simulator.simulate(name, root / f"cluster={name}", seed=0)
    for seed in range(1, CI_SEEDS + 1):
        simulator.simulate("random", root / f"cluster=random-{seed}", seed=seed)
    for name, (seed, knobs) in varied(CI_VARIED, 0).items():
        simulator.simulate("random", root / f"cluster={name}", seed=seed, **knobs)

    result = judge_fleet(root, tmp_path / "out")

    sample = (
        f"{len(NAMED)} named scenarios, {CI_SEEDS_TEXT} random seeds, "
        f"{CI_VARIED_TEXT} varied clusters"
    )
    check_fleet(result, CAPS_CI, sample, capsys)
    assert len(result) == len(NAMED) + CI_SEEDS + CI_VARIED


#: the slow sweep's sample (``evidence_sweep``): the default, unless the
#: environment says otherwise (and then the output says so)
SWEEP_SEEDS, SWEEP_SEEDS_TEXT = sample_size("EPOCHTRAIL_SWEEP_SEEDS", 200)


@pytest.mark.slow
@pytest.mark.spark
def test_two_hundred_seeds_over_four_eras_with_their_evidence_match_their_truth(
    spark, tmp_path, capsys
) -> None:  # type: ignore[no-untyped-def]
    """Issues 12-14's sweep: random clusters of all four eras with consumer
    traffic, startup lines and restarts on, and template versions, describe
    snapshots and excerpts drawn at random (``evidence_sweep``), judged in one
    fleet run. Needs a 4 GiB driver heap (``EPOCHTRAIL_DRIVER_MEMORY=4g``):
    with the suite's 2 GiB the 200 clusters' event streams (durations up to
    180 s) ran the driver out of heap in the replay's materialisation."""
    heap = str(spark.sparkContext.getConf().get("spark.driver.memory", "1g")).lower()
    mib = int(heap[:-1]) * (1024 if heap.endswith("g") else 1) if heap[-1] in "gm" else 0
    assert mib >= 4096 or SWEEP_SEEDS < 200, f"run with EPOCHTRAIL_DRIVER_MEMORY=4g (heap {heap})"
    from tests.test_evidence_scenarios import EVIDENCE, differences

    root = tmp_path / "fleet"
    sweep = evidence_sweep(SWEEP_SEEDS, 0)
    for name, (seed, knobs) in sweep.items():
        simulator.simulate("random", root / f"cluster={name}", seed=seed, **knobs)
    # issue 13's named scenarios (old templates, describe snapshots, a ticket
    # of excerpts) in the same fleet run, each exact: nothing excused
    for name in EVIDENCE:
        simulator.simulate(name, root / f"cluster={name}", seed=0)
    tables = run_fleet(root, tmp_path / "out")
    found, verdicts = tables
    exact = {
        name: differences(
            json.loads((root / f"cluster={name}" / "truth.json").read_text()),
            found.get(name, []),
            verdicts.get(name, {}),
        )
        for name in EVIDENCE
    }
    assert {name: d for name, d in exact.items() if d} == {}
    result = judge_fleet(root, tmp_path / "out", tables, skip=frozenset(EVIDENCE))
    eras = Counter(knobs["era"] for _, knobs in sweep.values())
    sample = f"{SWEEP_SEEDS_TEXT} random seeds over " + ", ".join(
        f"{eras[e]} {e}" for e in SWEEP_ERAS
    )
    check_fleet(result, CAPS_SLOW, sample, capsys)
    assert len(result) == SWEEP_SEEDS


# -- the comparison itself: each excuse is counted, everything else fails ------


def _f(
    kind: str, epoch: int, replica: int | None, start: int, end: int, **more: Any
) -> dict[str, Any]:
    lost = more.pop("records_lost", end - start)
    return {
        "kind": kind,
        "topic": "orders",
        "partition": 2,
        "leader_epoch": epoch,
        "replica": replica,
        "offset_start": start,
        "offset_end": end,
        "records_lost": lost,
        "qualifier": more.pop("qualifier", None),
        **more,
    }


def _note(finding: int | None, kind: str, epoch: int, reason: str) -> dict[str, Any]:
    return {
        "finding": finding,
        "kind": kind,
        "topic": "orders",
        "partition": 2,
        "leader_epoch": epoch,
        "reasons": [reason],
    }


LOSS = _f("committed_data_loss", 3, None, 120, 150)
ELECTION = _f("unclean_election", 3, 2, 120, 150)


def test_exact_findings_agree_with_nothing_excused() -> None:
    truth = {"findings": [LOSS, ELECTION], "verdicts": {"orders-2": "invalid"}}
    result = compare(truth, [ELECTION, LOSS], verdicts={"orders-2": "invalid"})
    assert (result.problems, result.excused) == ([], Counter())


def test_a_missing_an_extra_and_a_wrong_finding_and_verdict_are_each_a_problem() -> None:
    truth = {"findings": [LOSS, ELECTION], "verdicts": {"orders-2": "invalid"}}
    wrong = {**ELECTION, "offset_end": 149, "records_lost": 29}
    extra = _f("hwm_regression", 3, 2, 120, 150, records_lost=None)
    result = compare(truth, [wrong, extra], verdicts={"orders-2": "unknown"})
    assert result.problems == [
        f"extra {_key(wrong, EXACT)}",
        f"extra {_key(extra, EXACT)}",
        f"missing {_key(LOSS, EXACT)}",
        f"missing {_key(ELECTION, EXACT)}",
        "verdict orders-2: truth invalid, replay unknown",
    ]
    assert result.excused == Counter()


def test_a_visible_absent_finding_must_not_be_reported() -> None:
    hidden = {**LOSS, "visible_absent": True}
    truth = {
        "findings": [hidden],
        "undecidable": [_note(0, "committed_data_loss", 3, "no answer shows the mark")],
        "verdicts": {"orders-2": "invalid"},
    }
    assert compare(truth, []).problems == []
    assert compare(truth, [LOSS]).problems == [f"extra {_key(LOSS, EXACT)}"]


def test_visible_values_compare_exactly_and_the_real_ones_are_an_excuse() -> None:
    seen = {
        **LOSS,
        "visible_offset_start": 120,
        "visible_offset_end": 140,
        "visible_records_lost": 20,
        "visible_qualifier": None,
    }
    truth = {
        "findings": [seen],
        "undecidable": [_note(0, "committed_data_loss", 3, "an ack's record count")],
        "verdicts": {"orders-2": "invalid"},
    }
    on_visible = {**LOSS, "offset_end": 140, "records_lost": 20}
    assert compare(truth, [on_visible]).excused == Counter()
    assert compare(truth, [on_visible]).problems == []
    real = compare(truth, [LOSS])
    assert (real.problems, real.excused) == ([], Counter({READ_MORE: 1}))
    off = {**LOSS, "offset_end": 139, "records_lost": 19}
    assert compare(truth, [off]).problems == [
        f"extra {_key(off, EXACT)}",
        f"missing {_key(on_visible, EXACT)}",
    ]


def test_every_other_tolerance_is_counted_by_its_name() -> None:
    local = _f("truncation_below_hwm", 3, 1, 130, 150, records_lost=None, qualifier="local")
    gone = _f("truncation_below_hwm", 4, 3, 100, 110, qualifier="global")
    probable = _f("truncation_below_hwm", 5, 1, 90, 95, qualifier="global")
    loose = _f("truncation_below_hwm", 6, 2, 80, 85, qualifier="global")
    truth = {
        "findings": [LOSS, local, gone, probable, loose],
        "undecidable": [
            _note(1, "truncation_below_hwm", 3, "the moment of the loss"),
            _note(2, "truncation_below_hwm", 4, "its log end is in no artefact"),
            _note(3, "truncation_below_hwm", 5, "the moment of the loss"),
            _note(4, "truncation_below_hwm", 6, "the moment of the loss"),
            _note(None, "hwm_regression", 7, "first seen in another answer"),
        ],
        "verdicts": {"orders-2": "invalid"},
    }
    ours = [
        {**LOSS, "qualifier": "unknown", "records_lost": None},
        {**loose, "offset_end": 84},
        {**_f("truncation_below_hwm", 5, 3, 1, 2), "confidence": "probable"},
        _f("hwm_regression", 7, 2, 10, 20, records_lost=None),
    ]
    result = compare(truth, ours, verdicts={"orders-2": "unknown"})
    assert result.problems == [f"extra {_key(ours[2], EXACT)}"]
    assert result.excused == Counter(
        {
            QUALIFIER_UNKNOWN: 1,
            LOOSE_MATCH: 1,
            LOCAL_UNSEEN: 1,
            NO_ARTEFACT: 1,
            PROBABLE_EPOCH: 1,
            EXTRA_NOTED: 1,
            VERDICT_NOTED: 1,
        }
    )
    # the same noted finding in a partition the replay calls unknown
    assert compare(truth, [], frozenset({"orders-2"})).excused == Counter(
        {LOCAL_UNSEEN: 1, PARTITION_UNKNOWN: 3}
    )


def test_the_report_counts_excuses_of_named_and_random_clusters_apart() -> None:
    named, other = Comparison(), Comparison(["missing x"])
    named.excused[LOOSE_MATCH] = 2
    other.excused[EXTRA_NOTED] = 1
    text = fleet_report({NAMED[0]: named, "random-7": other}, "a sample")
    assert text.splitlines() == [
        "fleet: a sample; 1 of 2 clusters agree with their truth",
        "excused comparisons, named scenarios: 2",
        f"      2  {LOOSE_MATCH}",
        "excused comparisons, random clusters: 1",
        f"      1  {EXTRA_NOTED}",
    ]


def test_a_sample_size_from_the_environment_says_so(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("EPOCHTRAIL_TEST_SAMPLE", "5")
    assert sample_size("EPOCHTRAIL_TEST_SAMPLE", 25) == (
        5,
        "5 (EPOCHTRAIL_TEST_SAMPLE=5; the default is 25)",
    )
    monkeypatch.delenv("EPOCHTRAIL_TEST_SAMPLE")
    assert sample_size("EPOCHTRAIL_TEST_SAMPLE", 25) == (25, "25")


def test_each_excuse_is_listed_with_the_comparison_it_excused() -> None:
    truth = {"findings": [ELECTION], "verdicts": {"orders-2": "invalid"}}
    ours = {**ELECTION, "qualifier": "unknown", "records_lost": None}
    result = compare(truth, [ours])
    assert result.details == [f"excused ({QUALIFIER_UNKNOWN}): {_key(ours, EXACT)}"]
