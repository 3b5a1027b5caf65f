"""The simulator's evidence scenarios (issues 12 and 13) judged against their
truth through the real pipeline, with no tolerance.

Every scenario ``list_scenarios(evidence=True)`` adds is simulated into one
fleet archive and read by ``run_job`` in one Spark job, from the artefacts
only (consumer answers, startup lines, pre-2.8 templates, describe
snapshots, pasted excerpts). Each cluster's findings must be exactly the
truth's findings as the artefacts show them: a finding the truth marks
``visible_absent`` must be absent, one with ``visible_*`` values must carry
those, every other one its own values; the verdict must be the truth's.
Nothing is compared loosely, nothing is excused.

A scenario whose artefacts no reader reads yet is an expected failure
(strict): the reader it waits for is named, and the mark flips to a failure
of this test (to be removed) the day that reader is merged.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import simulator
from tests.test_scenarios import EXACT

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parent.parent

#: the scenarios only ``evidence=True`` lists
EVIDENCE = [
    name
    for name, _ in simulator.list_scenarios(all_eras=True, rules=True, evidence=True)
    if name not in {n for n, _ in simulator.list_scenarios(all_eras=True, rules=True)} | {"random"}
]

#: per reader, the text its source in pipeline/ingest must hold once it exists
#: (the silver kind it writes, or the template it reads)
READERS = {
    "consumer Fetch / ListOffsets answers (kind consumer_fetch)": "consumer_fetch",
    "startup log load and recovery lines (kind log_end_at_load)": "log_end_at_load",
    "pre-2.8 broker and controller templates (become-leader LeaderAndIsr)": "become-leader",
    "kafka-topics --describe snapshots (kind partition_view)": "partition_view",
    "pasted excerpts (no timestamp, quoted or indented)": "excerpt",
}
#: the readers each scenario's artefacts need
NEEDS = {
    "elr-unclean-exclusion": ["startup log load and recovery lines (kind log_end_at_load)"],
    # both agree with their truth from the artefacts read today: broker 1's
    # own "Follower ... starts ... high watermark 310" line shows the mark the
    # consumer saw, and 3's next fetch shows what its recovery cut; the
    # consumer and startup readers add evidence, not findings
    "kraft-consumer-hwm-lost": [],
    "kraft-recovery-cut": [],
    "seed000-hw-truncation-0.10": [
        "pre-2.8 broker and controller templates (become-leader LeaderAndIsr)"
    ],
    "seed000-divergence-0.10": [
        "pre-2.8 broker and controller templates (become-leader LeaderAndIsr)"
    ],
    "zk-unclean-describe-only": ["kafka-topics --describe snapshots (kind partition_view)"],
    "kraft-unclean-ticket": ["pasted excerpts (no timestamp, quoted or indented)"],
}


def _ingest_source() -> str:
    return "\n".join(p.read_text() for p in sorted((ROOT / "pipeline" / "ingest").glob("*.py")))


def missing_readers(name: str) -> list[str]:
    source = _ingest_source()
    return [reader for reader in NEEDS[name] if READERS[reader] not in source]


def _param(name: str) -> Any:
    missing = missing_readers(name)
    if not missing:
        return name
    return pytest.param(
        name,
        marks=pytest.mark.xfail(
            strict=True, reason="no reader yet for its artefacts: " + "; ".join(missing)
        ),
    )


#: rule violations are compared on their severity too (docs/findings.md)
RULE_KINDS = frozenset({"fencing_violation", "isr_rule_violation"})


def _row(finding: dict[str, Any]) -> tuple[Any, ...]:
    severity = finding.get("severity") if finding["kind"] in RULE_KINDS else None
    return (*(finding.get(f) for f in EXACT), severity)


def expected(truth: dict[str, Any]) -> Counter[tuple[Any, ...]]:
    """The truth's findings as the artefacts show them (simulator/truth.py):
    absent where it says so, its ``visible_*`` values where it gives them."""
    out: Counter[tuple[Any, ...]] = Counter()
    for f in truth["findings"]:
        if f.get("visible_absent"):
            continue
        shown = dict(f)
        for field in ("offset_start", "offset_end", "records_lost", "qualifier", "leader_epoch"):
            if f"visible_{field}" in f:
                shown[field] = f[f"visible_{field}"]
        out[_row(shown)] += 1
    return out


def differences(
    truth: dict[str, Any], ours: list[dict[str, Any]], verdicts: dict[str, str | None]
) -> list[str]:
    want, got = expected(truth), Counter(_row(f) for f in ours)
    problems = [f"missing {k}" for k in sorted(want - got, key=str)]
    problems += [f"extra {k}" for k in sorted(got - want, key=str)]
    for partition, verdict in sorted(truth["verdicts"].items()):
        if verdicts.get(partition) != verdict:
            problems.append(
                f"verdict {partition}: truth {verdict}, replay {verdicts.get(partition)}"
            )
    return problems


def test_the_evidence_scenarios_are_the_ones_the_readers_are_named_for() -> None:
    assert sorted(EVIDENCE) == sorted(NEEDS)


def test_the_comparison_excuses_nothing() -> None:
    truth = {
        "findings": [
            {"kind": "unclean_election", "topic": "t", "partition": 0, "leader_epoch": 1,
             "replica": 2, "offset_start": 100, "offset_end": 301, "records_lost": 201,
             "qualifier": None, "visible_offset_start": None, "visible_offset_end": None,
             "visible_records_lost": None, "visible_qualifier": None,
             "visible_leader_epoch": None},
            {"kind": "hwm_regression", "topic": "t", "partition": 0, "leader_epoch": 1,
             "replica": 2, "offset_start": 100, "offset_end": 301, "records_lost": None,
             "qualifier": None, "visible_absent": True},
        ],
        "verdicts": {"t-0": "invalid"},
    }  # fmt: skip
    shown = {
        "kind": "unclean_election", "topic": "t", "partition": 0, "leader_epoch": None,
        "replica": 2, "offset_start": None, "offset_end": None, "records_lost": None,
        "qualifier": None,
    }  # fmt: skip
    assert differences(truth, [shown], {"t-0": "invalid"}) == []
    # the real values where the evidence shows none, an absent one shown, a
    # wrong verdict: each is a difference
    real = {**shown, "leader_epoch": 1, "offset_start": 100, "offset_end": 301, "records_lost": 201}
    assert len(differences(truth, [real], {"t-0": "invalid"})) == 2
    regression = {**shown, "kind": "hwm_regression"}
    assert differences(truth, [shown, regression], {"t-0": "invalid"}) != []
    assert differences(truth, [shown], {"t-0": "unknown"}) != []


@pytest.fixture(scope="module")
def fleet(spark, tmp_path_factory) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    from pipeline.run import RunOptions, read_table, run_job

    root = tmp_path_factory.mktemp("evidence") / "fleet"
    truths = {}
    for name in EVIDENCE:
        truths[name] = simulator.simulate(name, root / f"cluster={name}", seed=0)
    out = root.parent / "out"
    run_job(RunOptions(paths=[str(root)], out=str(out)))
    found: dict[str, list[dict[str, Any]]] = {name: [] for name in EVIDENCE}
    for row in read_table(str(out), "anomalies"):
        found.setdefault(row["cluster"], []).append(row)
    verdicts: dict[str, dict[str, str | None]] = {name: {} for name in EVIDENCE}
    for r in read_table(str(out), "partition_verdicts"):
        verdicts.setdefault(r["cluster"], {})[f"{r['topic']}-{r['partition']}"] = r["verdict"]
    return {
        name: differences(json.loads(json.dumps(truths[name])), found[name], verdicts[name])
        for name in EVIDENCE
    }


#: Disagreements not yet resolved, stated exactly (any change fails the test).
#: None: kraft-unclean-ticket agrees since a KRaft controller's printed change
#: gives a lineage; seed000-hw-truncation-0.10 since the truth's reader knows
#: that the fetch deriving replica 1's mark, logged 50 ms before its
#: truncation on another clock, may by the clocks have followed it (0.10's
#: line prints no log end to order them by), so that truncation is in no
#: artefact (simulator/truth.py ``_ordered_mark``).
KNOWN_DISAGREEMENTS: dict[str, list[str]] = {}


@pytest.mark.parametrize("name", [_param(n) for n in sorted(NEEDS)])
def test_an_evidence_scenario_matches_its_truth_exactly(
    fleet: dict[str, list[str]], name: str
) -> None:
    assert fleet[name] == KNOWN_DISAGREEMENTS.get(name, [])


#: random kraft-elr clusters at a high fault rate, seeds no other test draws
#: (tests/test_scenarios.py draws 1-200, 1000-1011 and 2000-2099): followers
#: re-joining the ISR after an unclean election were once judged against the
#: HWM from before it (their own HW, which the new leader never had)
SWEEP_SEEDS = range(7000, 7040)
#: Disagreements of the sweep not yet resolved, stated exactly so that any
#: change fails the test. None: the three of one case (elr-7011, elr-7018
#: twice: replica 4's crash loss after an epoch whose leader, elected while
#: down, printed no start offset) agree since the truth's reader knows that
#: start is in no artefact (qualifier unknown) and sees the crashed leader's
#: log end in the HWMs it answered and its acks in offset order.
SWEEP_KNOWN: dict[str, list[str]] = {}


@pytest.mark.slow
def test_random_kraft_elr_clusters_at_a_high_fault_rate_match_their_truth(  # type: ignore[no-untyped-def]
    spark, tmp_path, capsys
) -> None:
    from tests.test_scenarios import (
        EXTRA_NOTED,
        VERDICT_NOTED,
        check_fleet,
        judge_fleet,
    )

    root = tmp_path / "fleet"
    for seed in SWEEP_SEEDS:
        simulator.simulate(
            "random", root / f"cluster=elr-{seed}", seed=seed, era="kraft-elr", brokers=4,
            fault_rate=4.0,
        )  # fmt: skip
    result = judge_fleet(root, tmp_path / "out")
    assert {c: r.problems for c, r in result.items() if r.problems} == SWEEP_KNOWN
    # every excused comparison counted and capped, as in the main sweep: the
    # counts one run measured (40 of 40 clusters agree)
    caps = {EXTRA_NOTED: 3, VERDICT_NOTED: 5}
    check_fleet(result, caps, f"{len(SWEEP_SEEDS)} kraft-elr clusters, fault rate 4", capsys)
    assert len(result) == len(SWEEP_SEEDS)
