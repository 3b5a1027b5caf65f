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
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

import simulator
from pipeline.cli import validation_lines
from pipeline.run import RunOptions, read_table, run_job

pytestmark = pytest.mark.spark

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
CI_SEEDS = int(os.environ.get("EPOCHTRAIL_CI_SEEDS", "25"))
CI_VARIED = int(os.environ.get("EPOCHTRAIL_CI_VARIED", "12"))


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


#: Disagreements found and not yet resolved, stated exactly so that any change
#: (fixed, or a new one) fails the test. None now: random-25 (replica 3 lost
#: [608, 875) in an unclean shutdown; the truth measured it against 845, the
#: replay against broker 1's printed HW 1037, which the truth now counts too:
#: [608, 859) on the log end in evidence) was the simulator's.
KNOWN_DISAGREEMENTS: dict[str, list[str]] = {}


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


def compare(
    truth: dict[str, Any], ours: list[dict[str, Any]], unknown: frozenset[str] = frozenset()
) -> list[str]:
    """Differences between a cluster's truth and our findings (empty = agree).

    Findings without an ``undecidable`` note compare exactly. A noted finding
    whose values rest on a mark the artefacts show differently carries the
    values the evidence gives (``visible_*``): it compares exactly on those,
    or on its real values when the replay fixed them from the evidence;
    ``visible_absent`` means the evidence shows no such finding. The few
    noted findings with neither are compared on what the evidence fixes
    (kind, topic, partition, epoch, replica, start offset), and may be absent
    when the evidence cannot show them: a local truncation (the replica's data
    is still on the leader), anything in a partition whose verdict is
    ``unknown`` (``unknown`` holds the ``topic-partition`` names with that
    verdict), or in an epoch where the replay reported a ``probable`` finding
    (it said what it could not fix)."""
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
    # The visible values are the truth's model of what the artefacts show; a
    # replay that fixes the real values from them reads more, not less.
    real_of_visible = {
        _key(findings[i], EXACT): _key(_as_visible(findings[i]), EXACT) for i in visible
    }
    want_loose = {_key(f, LOOSE) for i, f in enumerate(findings) if i in loose_idx}
    problems = []
    unmatched_loose = set(want_loose)
    # Where the evidence cannot tell whether the leader held what a replica
    # truncated, the replay says so (qualifier unknown, records_lost null).
    undecided = {k[:7]: k for k in want_exact}
    for f in ours:
        if _key(f, EXACT) in want_exact:
            want_exact.discard(_key(f, EXACT))
        elif real_of_visible.get(_key(f, EXACT)) in want_exact:
            want_exact.discard(real_of_visible[_key(f, EXACT)])
        elif f.get("qualifier") == "unknown" and _key(f, EXACT)[:7] in undecided:
            want_exact.discard(undecided.pop(_key(f, EXACT)[:7]))
        elif _key(f, LOOSE) in unmatched_loose:
            unmatched_loose.discard(_key(f, LOOSE))
        elif (f["kind"], f["topic"], f["partition"], f["leader_epoch"]) not in tolerated:
            problems.append(f"extra {_key(f, EXACT)}")
    problems += [f"missing {k}" for k in sorted(want_exact, key=str)]
    # e.g. a leader elected while down, never serving its epoch: its log end
    # is on its disk only, in no artefact any reader has.
    in_no_artefact = {
        _key(findings[n["finding"]], LOOSE)
        for n in notes
        if n.get("finding") in loose_idx
        and any(
            "in no artefact" in r or "is not in the request log" in r for r in n.get("reasons", [])
        )
    }
    # ... or where the replay itself said it was unsure (a probable finding)
    unsure_epochs = {
        (f["topic"], f["partition"], f["leader_epoch"])
        for f in ours
        if f.get("confidence") == "probable"
    }
    loose_findings = {_key(f, LOOSE): f for i, f in enumerate(findings) if i in loose_idx}
    for k in sorted(unmatched_loose, key=str):
        f = loose_findings[k]
        invisible = (
            f.get("qualifier") == "local"
            or f"{f['topic']}-{f['partition']}" in unknown
            or k in in_no_artefact
            or (f["topic"], f["partition"], f["leader_epoch"]) in unsure_epochs
        )
        if not invisible:
            problems.append(f"missing {k}")
    return problems


def judge_fleet(root: Path, out: Path) -> dict[str, list[str]]:
    summary = run_job(RunOptions(paths=[str(root)], out=str(out)))
    assert summary.quarantined_lines == 0
    # every table of every era's simulated cluster meets the validation suites
    assert validation_lines(summary.manifest["validation"]) == []
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in read_table(str(out), "anomalies"):
        found[row["cluster"]].append(row)
    verdicts = {
        (r["cluster"], f"{r['topic']}-{r['partition']}"): r["verdict"]
        for r in read_table(str(out), "partition_verdicts")
    }
    result = {}
    for folder in sorted(root.iterdir()):
        cluster = folder.name.split("=", 1)[1]
        truth = json.loads((folder / "truth.json").read_text())
        unknown = frozenset(p for (c, p), v in verdicts.items() if c == cluster and v == "unknown")
        problems = compare(truth, found.get(cluster, []), unknown)
        unsure = {f"{n['topic']}-{n['partition']}" for n in truth.get("undecidable", [])}
        for partition, verdict in truth["verdicts"].items():
            ours = verdicts.get((cluster, partition))
            if ours != verdict and partition not in unsure:
                problems.append(f"verdict {partition}: truth {verdict}, replay {ours}")
        result[cluster] = problems
    return result


def test_named_scenarios_and_random_seeds_match_their_truth(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "fleet"
    for name in NAMED:
        simulator.simulate(name, root / f"cluster={name}", seed=0)
    for seed in range(1, CI_SEEDS + 1):
        simulator.simulate("random", root / f"cluster=random-{seed}", seed=seed)
    for name, (seed, knobs) in varied(CI_VARIED, 0).items():
        simulator.simulate("random", root / f"cluster={name}", seed=seed, **knobs)

    result = judge_fleet(root, tmp_path / "out")

    disagreements = {c: p for c, p in result.items() if p}
    assert disagreements == {c: p for c, p in KNOWN_DISAGREEMENTS.items() if c in result}
    assert len(result) == len(NAMED) + CI_SEEDS + CI_VARIED


@pytest.mark.slow
def test_two_hundred_seeds_and_a_hundred_varied_clusters_match_their_truth(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "fleet"
    for seed in range(1, 201):
        simulator.simulate("random", root / f"cluster=random-{seed}", seed=seed)
    for name, (seed, knobs) in varied(100, 1).items():
        simulator.simulate("random", root / f"cluster={name}", seed=seed, **knobs)
    result = judge_fleet(root, tmp_path / "out")
    disagreements = {c: p for c, p in result.items() if p}
    assert disagreements == {c: p for c, p in KNOWN_DISAGREEMENTS.items() if c in result}
