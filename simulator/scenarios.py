"""Named scenarios (fixed fault schedules) and the ``random`` generator.

Times are simulated milliseconds from 2024-05-01 10:00:00. Followers fetch
every 500 ms (broker 1 at :300, broker 2 at :350, broker 3 at :400 of each
half second); producers write on the :100 of each second. A fault placed at
``:450`` therefore lands after every follower fetch of that half second.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from simulator import versions
from simulator.spec import (
    ERAS,
    EXCERPT_STYLES,
    FAMILIES,
    MUTATIONS,
    Action,
    Evidence,
    ProducerSpec,
    Spec,
    TopicSpec,
)

ORDERS = "5LHkG7R4S0aKxLbBzyP8wA"
PAYMENTS = "q2xVh0rGT3WnYk8bCzE1mA"
SEED = "Zk1xw8QpR5yJcT0oN3bGfA"
PHASES = {1: 300, 2: 350, 3: 400}
#: the knobs of ``spec.Evidence``, which every scenario takes
EVIDENCE_KNOBS = frozenset(Evidence().__dict__)


def _spec(name: str, description: str, **kw: Any) -> Spec:
    kw.setdefault("brokers", [1, 2, 3])
    kw.setdefault("fetch_phase", dict(PHASES))
    kw.setdefault("default_flush_ms", None)
    return Spec(name=name, description=description, **kw)


def _orders(replicas: list[int] | None = None, min_isr: int = 1) -> list[TopicSpec]:
    return [TopicSpec("orders", ORDERS, [replicas or [1, 2, 3]], min_isr)]


def _acks_all(topic: str = "orders", p: int = 0, records: int = 10, **kw: Any) -> ProducerSpec:
    return ProducerSpec(topic, p, interval_ms=1000, records=records, acks=-1, **kw)


def kraft_clean() -> Spec:
    return _spec(
        "kraft-clean",
        "3 brokers, orders (3 partitions, min ISR 2, acks=all) and payments (acks=1); "
        "no faults: no findings",
        topics=[
            TopicSpec("orders", ORDERS, [[1, 2, 3], [2, 3, 1], [3, 1, 2]], 2),
            TopicSpec("payments", PAYMENTS, [[2, 3, 1]], 1),
        ],
        producers=[
            _acks_all("orders", 0),
            _acks_all("orders", 1, client=2),
            _acks_all("orders", 2, client=3),
            ProducerSpec("payments", 0, interval_ms=500, records=5, acks=1, client=4),
        ],
        duration_ms=60000,
        settle_ms=20000,
        default_flush_ms=1000,
    )


def kraft_clean_failover() -> Spec:
    return _spec(
        "kraft-clean-failover",
        "leader 1 of orders-0 is cut off and fenced; broker 2 is elected cleanly from the "
        "ISR; broker 1 returns and catches up: no findings",
        topics=_orders(min_isr=2),
        producers=[_acks_all()],
        schedule=[Action(20450, "isolate", (1,)), Action(40000, "heal", (1,))],
        duration_ms=60000,
    )


def kraft_acks1_truncation() -> Spec:
    return _spec(
        "kraft-acks1-truncation",
        "leader 1 writes acks=1 records [200, 210) above the HWM 200, is cut off and fenced; "
        "broker 2 is elected cleanly; broker 1 returns and truncates to 200: no findings",
        topics=_orders(),
        producers=[_acks_all()],
        schedule=[
            Action(20000, "producing", ("orders", 0, False)),
            Action(20420, "produce", ("orders", 0, 1, 10)),
            Action(20450, "isolate", (1,)),
            Action(35000, "heal", (1,)),
            Action(50000, "producing", ("orders", 0, True)),
        ],
        duration_ms=60000,
    )


def kraft_unclean_election() -> Spec:
    return _spec(
        "kraft-unclean-election",
        "followers 2 and 3 stop fetching, the ISR shrinks to leader 1 which alone commits "
        "[100, 301); 1 is cut off and fenced; ElectLeaders(UNCLEAN) elects 2 at 100; 1 "
        "returns and truncates to 100: unclean_election, committed_data_loss, "
        "hwm_regression, truncation_below_hwm (global)",
        topics=_orders(),
        producers=[_acks_all()],
        schedule=[
            Action(10000, "pause_fetch", (2,)),
            Action(10000, "pause_fetch", (3,)),
            Action(30000, "producing", ("orders", 0, False)),
            Action(30200, "produce", ("orders", 0, -1, 1)),
            Action(30450, "isolate", (1,)),
            Action(50000, "producing", ("orders", 0, True)),
            Action(30500, "resume_fetch", (2,)),
            Action(30500, "resume_fetch", (3,)),
            Action(45000, "elect_unclean", ("orders", 0)),
            Action(60000, "heal", (1,)),
        ],
        duration_ms=75000,
    )


def kraft_last_replica_standing() -> Spec:
    return _spec(
        "kraft-last-replica-standing",
        "seed 003 2.4.1 / 002 5.3: the ISR shrinks to leader 1, which commits [100, 301) "
        "but has flushed only up to 250 when it shuts down uncleanly; fenced with ISR [1], "
        "it restarts and is re-elected from its own log: committed_data_loss and "
        "hwm_regression, no unclean election",
        topics=_orders(),
        producers=[_acks_all()],
        schedule=[
            Action(10000, "pause_fetch", (2,)),
            Action(10000, "pause_fetch", (3,)),
            Action(25000, "flush", (1,)),
            Action(30000, "producing", ("orders", 0, False)),
            Action(30200, "produce", ("orders", 0, -1, 1)),
            Action(30450, "crash", (1, True)),
            Action(50000, "producing", ("orders", 0, True)),
            Action(30500, "resume_fetch", (2,)),
            Action(30500, "resume_fetch", (3,)),
            Action(45000, "restart", (1,)),
        ],
        duration_ms=70000,
    )


def seed000_hw_truncation_epoch() -> Spec:
    return _spec(
        "seed000-hw-truncation-epoch",
        "seed 000 'HW truncation then immediate election' with leader epochs: follower A (1) "
        "fetches m2 before the HWM covers it, restarts (no truncation with epochs), rejoins "
        "the ISR; leader B (2) fails and A is elected with m2: no findings",
        brokers=[1, 2],
        topics=[TopicSpec("seed", SEED, [[2, 1]], 1)],
        producers=[ProducerSpec("seed", 0, interval_ms=1000, records=1, acks=-1, stop_ms=10000)],
        schedule=[
            Action(10200, "produce", ("seed", 0, 1, 1)),
            Action(10320, "shutdown", (1,)),
            Action(15000, "restart", (1,)),
            Action(16400, "crash", (2, True)),
            Action(30000, "restart", (2,)),
        ],
        flush_ms={2: 0},
        duration_ms=40000,
    )


def seed000_divergence_epoch() -> Spec:
    return _spec(
        "seed000-divergence-epoch",
        "seed 000 'divergence after multiple hard failures' with leader epochs: A (1) has "
        "m2 at offset 9 (acks=1), B (2) does not; both lose power; B is elected and "
        "writes m3 at 9 in a new epoch; A returns, is told it diverges at 9 and truncates "
        "m2: logs consistent (the literal definition reports the truncation, see disputed)",
        brokers=[1, 2],
        topics=[TopicSpec("seed", SEED, [[1, 2]], 1)],
        producers=[ProducerSpec("seed", 0, interval_ms=1000, records=1, acks=-1, stop_ms=9000)],
        schedule=[
            Action(9500, "flush", (2,)),
            Action(10100, "produce", ("seed", 0, 1, 1)),
            Action(10200, "crash", (1, True)),
            Action(10200, "crash", (2, True)),
            Action(30000, "restart", (2,)),
            Action(32000, "produce", ("seed", 0, -1, 1)),
            Action(40000, "restart", (1,)),
        ],
        flush_ms={1: 0},
        duration_ms=50000,
    )


def elr_5_2_2() -> Spec:
    return _spec(
        "elr-5.2.2",
        "kraft-elr, seed 002 5.2.2: the ISR shrinks to leader 1 (2 out, then 3 into the ELR, "
        "HWM frozen); 1 shuts down uncleanly losing only uncommitted acks=1 records; 3 is "
        "elected from the ELR; 1 re-registers unclean (ELR -> LastKnownELR), catches up "
        "and rejoins: no findings",
        era="kraft-elr",
        topics=_orders(min_isr=2),
        producers=[_acks_all(records=1)],
        schedule=[
            Action(10000, "pause_fetch", (2,)),  # case F: ISR [1,3], ELR []
            Action(25000, "pause_fetch", (3,)),  # case A: ISR [1], ELR [3]
            Action(40000, "flush", (1,)),  # everything up to the frozen HWM is on disk
            Action(41000, "produce", ("orders", 0, 1, 5)),  # acks=1, above the HWM
            Action(42450, "crash", (1, True)),  # unclean, lossy: fenced at 51450
            Action(45000, "resume_fetch", (3,)),
            Action(60000, "restart", (1,)),
            Action(75000, "resume_fetch", (2,)),
        ],
        duration_ms=90000,
    )


def elr_5_3_3() -> Spec:
    return _spec(
        "elr-5.3.3",
        "kraft-elr, seed 002 5.3.3 (min ISR 2): leader 1 has LEO 15, 2 has 12, 3 has 10, "
        "HWM 10; brokers 1, 2, 3 lose power one after the other (2 had flushed every "
        "write); fenced in turn: leader 2, then 3 (ELR [2]), then none (ELR [2,3]); all "
        "re-register unclean (LastKnownELR [2,3]); balanced recovery elects 2 (highest "
        "epoch and offset): unclean_election losing nothing; 1 and 3 lost committed "
        "records locally (truncation_below_hwm, local)",
        era="kraft-elr",
        topics=_orders(min_isr=2),
        producers=[ProducerSpec("orders", 0, interval_ms=1000, records=1, acks=-1, stop_ms=10000)],
        schedule=[
            Action(5000, "flush", (1,)),
            Action(5000, "flush", (3,)),
            Action(12000, "pause_fetch", (3,)),
            Action(12100, "produce", ("orders", 0, 1, 2)),  # [10, 12) reaches 2 only
            Action(13000, "pause_fetch", (2,)),
            Action(13100, "produce", ("orders", 0, 1, 3)),  # [12, 15) on 1 only
            Action(14000, "crash", (1, True)),  # fenced at 23000: leader 2, ISR [2,3]
            Action(30000, "crash", (2, True)),  # fenced at 39000: leader 3, ISR [3], ELR [2]
            Action(45000, "crash", (3, True)),  # fenced at 54000: no leader, ELR [2,3]
            Action(60000, "restart", (1,)),
            Action(62000, "restart", (2,)),  # ELR [3], LastKnownELR [2]
            Action(64000, "restart", (3,)),  # ELR [], LastKnownELR [2,3]
            Action(66000, "resume_fetch", (2,)),
            Action(66000, "resume_fetch", (3,)),
        ],
        flush_ms={2: 0},
        duration_ms=90000,
    )


def zk_epoch_clean() -> Spec:
    spec = kraft_clean()
    spec.name = "zk-epoch-clean"
    spec.era = "zk-epoch"
    spec.description = (
        "zk-epoch (2.8 on ZooKeeper): kraft-clean's cluster and traffic, then leader 1 of "
        "orders-0 shuts down (controlled: leadership moves to 2, ISR [2,3], epoch 1) and "
        "returns: no findings"
    )
    spec.schedule = [Action(30450, "shutdown", (1,)), Action(45000, "restart", (1,))]
    return spec


def zk_epoch_unclean() -> Spec:
    spec = kraft_unclean_election()
    spec.name = "zk-epoch-unclean"
    spec.era = "zk-epoch"
    spec.unclean_election = True
    spec.description = (
        "zk-epoch, unclean.leader.election.enable=true: followers 2 and 3 stop fetching, "
        "the ISR shrinks to leader 1 which alone commits [100, 301); 1 is cut off, its ZK "
        "session expires and the controller elects 2 (out of sync) at 100: "
        "unclean_election, committed_data_loss, hwm_regression, truncation_below_hwm "
        "(global) when 1 returns"
    )
    spec.schedule = [a for a in spec.schedule if a.name != "elect_unclean"]
    return spec


def seed000_hw_truncation() -> Spec:
    return _spec(
        "seed000-hw-truncation",
        "zk-hw, seed 000 'High watermark truncation followed by immediate leader election': "
        "follower A (1) fetches m2 (offset 10, acks=all); its next fetch (offset 11, answered "
        "at once with an acks=1 record written at 10700, so in B's request log) lets leader "
        "B (2) commit m2 but A's HW stays 10; A restarts unseen by the controller and "
        "truncates to its HW; B fails before answering A again; A is elected: "
        "truncation_below_hwm (local) for A, committed_data_loss in A's epoch; B returns and "
        "truncates the last copy of m2 (truncation_below_hwm, global)",
        era="zk-hw",
        brokers=[1, 2],
        topics=[TopicSpec("seed", SEED, [[2, 1]], 1)],
        producers=[ProducerSpec("seed", 0, interval_ms=1000, records=1, acks=-1, stop_ms=10000)],
        schedule=[
            Action(10200, "produce", ("seed", 0, -1, 1)),  # m2; A fetches it at 10300
            # acks=1 at 11: A's 10800 fetch gets it at once, so 0.10.1 logs that
            # fetch (offset 11) then; a long poll would still be open when B fails
            Action(10700, "produce", ("seed", 0, 1, 1)),
            Action(10850, "bounce", (1,)),  # after A's 10800 fetch (B's HW 11, A's 10)
            Action(10900, "crash", (2, True)),  # before A's 11300 fetch
            Action(30000, "restart", (2,)),
        ],
        flush_ms={2: 0},
        duration_ms=40000,
    )


def seed000_divergence_hw() -> Spec:
    spec = seed000_divergence_epoch()
    spec.name = "seed000-divergence-hw"
    spec.era = "zk-hw"
    spec.description = (
        "zk-hw, seed 000 'Replica divergence on restart after multiple hard failures' with "
        "seed000-divergence-epoch's fault schedule and no leader epochs: A (1) has m2 at 9 "
        "above its HW 9 (acks=1), B (2) does not; both lose power; B is elected and writes "
        "m3 at 9; A returns, truncates to its HW 9 as it starts following and fetches m3: "
        "logs consistent, no findings"
    )
    return spec


def kraft_zombie_leader() -> Spec:
    return _spec(
        "kraft-zombie-leader",
        "leader 1 of orders-0 is cut off from the controller and brokers 2, 3 at 20450 but "
        "a producer with stale metadata (acks=1, client 9) still reaches it; fenced at "
        "29450, broker 2 leads epoch 1; 1 keeps acknowledging in epoch 0 until 35100 "
        "(the acts at 30100 and 31100 are within the 2 s skew allowance), then rejoins at "
        "40000 and truncates its uncommitted records: fencing_violation [265, 281)",
        topics=_orders(),
        producers=[_acks_all()],
        schedule=[Action(20450, "isolate_from_cluster", (1,)), Action(40000, "heal", (1,))]
        + [Action(ms, "produce_to", (1, "orders", 0, 1, 5, 9)) for ms in range(21100, 35101, 1000)],
        duration_ms=60000,
    )


def mutation_lagging_isr_join() -> Spec:
    return _spec(
        "mutation-lagging-isr-join",
        "a broker/controller bug: follower 3 stops fetching at 10000 and leaves the ISR at "
        "20001; it resumes slowly at 30000 (one fetch in 5 s) and is admitted back at its "
        "first fetch (34400) with its log end 100, below the HWM 340 the leader had shown; "
        "it falls out again and is taken back at 350 below 390: isr_rule_violation [100, 340) "
        "and [350, 390). The artefacts order only the HWM shown more than 2 s before each "
        "change before it, so a reader reports [100, 320) and [350, 370)",
        topics=_orders(),
        producers=[_acks_all()],
        schedule=[
            Action(10000, "pause_fetch", (3,)),
            # slow when it resumes: its next fetch comes after the skew allowance
            Action(29000, "slow", (3, 10)),
            Action(30000, "resume_fetch", (3,)),
            Action(40000, "slow", (3, 1)),
        ],
        mutations={"lagging_isr_join": 1.0},
        duration_ms=50000,
    )


def mutation_acks_all_under_min_isr() -> Spec:
    return _spec(
        "mutation-acks-all-under-min-isr",
        "a broker bug: min.insync.replicas 2; followers 2 and 3 stop fetching at 10000 and the "
        "ISR shrinks to [1] at 20001; leader 1 keeps acknowledging acks=all (errorCode 0) "
        "until they return at 40000 and rejoin: isr_rule_violation for the acks after its own "
        "(under-min-isr) line or more than 2 s after the shrink record, [200, 401)",
        topics=_orders(min_isr=2),
        producers=[_acks_all()],
        schedule=[
            Action(10000, "pause_fetch", (2,)),
            Action(10000, "pause_fetch", (3,)),
            Action(40000, "resume_fetch", (2,)),
            Action(40000, "resume_fetch", (3,)),
        ],
        mutations={"acks_all_under_min_isr": 1.0},
        duration_ms=60000,
    )


NAMED: dict[str, Callable[[], Spec]] = {
    "kraft-clean": kraft_clean,
    "kraft-clean-failover": kraft_clean_failover,
    "kraft-acks1-truncation": kraft_acks1_truncation,
    "kraft-unclean-election": kraft_unclean_election,
    "kraft-last-replica-standing": kraft_last_replica_standing,
    "seed000-hw-truncation-epoch": seed000_hw_truncation_epoch,
    "seed000-divergence-epoch": seed000_divergence_epoch,
    "elr-5.2.2": elr_5_2_2,
    "elr-5.3.3": elr_5_3_3,
}

# The ZK eras' scenarios. Kept out of the default listing (``listing()``)
# until the replay reads ZK-era artefacts: tests/test_scenarios.py runs every
# listed scenario through it. ``build`` and ``epochtrail simulate --list`` know them.
ZK_NAMED: dict[str, Callable[[], Spec]] = {
    "zk-epoch-clean": zk_epoch_clean,
    "zk-epoch-unclean": zk_epoch_unclean,
    "seed000-hw-truncation": seed000_hw_truncation,
    "seed000-divergence-hw": seed000_divergence_hw,
}

# Scenarios whose truth holds rule violations (fencing_violation,
# isr_rule_violation). Kept out of ``listing(all_eras=True)`` until the replay
# reports these kinds: tests/test_scenarios.py runs every scenario listed
# there; ``listing(rules=True)``, ``build`` and ``epochtrail simulate --list``
# know them.
RULE_NAMED: dict[str, Callable[[], Spec]] = {
    "kraft-zombie-leader": kraft_zombie_leader,
    "mutation-lagging-isr-join": mutation_lagging_isr_join,
    "mutation-acks-all-under-min-isr": mutation_acks_all_under_min_isr,
}


def elr_unclean_exclusion() -> Spec:
    return _spec(
        "elr-unclean-exclusion",
        "kraft-elr, seed 002 5.1.2 Unclean Exclusion broken by a controller bug (mutation "
        "unclean_kept_in_elr): 2 stops fetching (ISR [1,3]); 3, flushed at 22000, loses power at "
        "30450 with committed records unflushed (fenced: ISR [1], ELR [3]); leader 1 shuts down at "
        "40000 (no leader, ELR [1,3]); 3 comes back at 45000 - its startup lines recover an "
        "unflushed segment - and stays in the ELR; unfenced, it is elected from the ELR before "
        "catching up: isr_rule_violation (3 kept, epoch 1), committed_data_loss and "
        "hwm_regression in epoch 2, and 1's truncation when it returns",
        era="kraft-elr",
        topics=_orders(min_isr=2),
        producers=[_acks_all()],
        schedule=[
            Action(10000, "pause_fetch", (2,)),  # case F at 20001: ISR [1,3]
            Action(22000, "flush", (3,)),
            Action(30450, "crash", (3, True)),  # fenced at 39450: case A, ISR [1], ELR [3]
            Action(40000, "shutdown", (1,)),  # ISR [], no leader, ELR [1,3]
            Action(45000, "restart", (3,)),  # unclean: it must leave the ELR; it stays (the bug)
            Action(60000, "restart", (1,)),
            Action(65000, "resume_fetch", (2,)),
        ],
        mutations={"unclean_kept_in_elr": 1.0},
        evidence=Evidence(startup_lines=True),
        duration_ms=90000,
    )


def kraft_consumer_hwm_lost() -> Spec:
    return _spec(
        "kraft-consumer-hwm-lost",
        "followers 2 and 3 stop fetching and the ISR shrinks to leader 1, which alone commits "
        "acks=1 writes from 100 on: no follower fetch answer or acks=all acknowledgement shows "
        "its HWM, only the consumer's fetch answers (and ListOffsets) do; 1 is cut off and "
        "ElectLeaders(UNCLEAN) elects 2: unclean_election, committed_data_loss and "
        "hwm_regression measured against the consumer-seen HWM, 1's global truncation",
        topics=_orders(),
        producers=[ProducerSpec("orders", 0, interval_ms=1000, records=10, acks=1)],
        schedule=[
            Action(10000, "pause_fetch", (2,)),
            Action(10000, "pause_fetch", (3,)),
            Action(30450, "isolate", (1,)),
            Action(30500, "resume_fetch", (2,)),
            Action(30500, "resume_fetch", (3,)),
            Action(45000, "elect_unclean", ("orders", 0)),
            Action(60000, "heal", (1,)),
        ],
        evidence=Evidence(consumers=True, list_offsets_ms=5000),
        duration_ms=75000,
    )


def kraft_recovery_cut() -> Spec:
    return _spec(
        "kraft-recovery-cut",
        "follower 3 (in the ISR, flushing only at 20000) loses power at 30450 with committed "
        "records unflushed; when it starts again at 45000 its startup lines recover an "
        "unflushed segment and load the log end the disk kept, below the HWM: "
        "truncation_below_hwm (3, local: the leader holds them), caught up again",
        topics=_orders(min_isr=2),
        producers=[_acks_all()],
        schedule=[
            Action(20000, "flush", (3,)),
            Action(30450, "crash", (3, True)),
            Action(45000, "restart", (3,)),
        ],
        evidence=Evidence(startup_lines=True),
        duration_ms=60000,
    )


def seed000_hw_truncation_010() -> Spec:
    spec = seed000_hw_truncation()
    spec.name = "seed000-hw-truncation-0.10"
    spec.description = (
        "seed000-hw-truncation on a 0.10.1 cluster with 0.10's own templates: the follower's HW "
        "truncation as 'Truncating log seed-0 to offset 10.', LeaderAndIsr as PartitionState(...) "
        "and (Leader:..,ISR:..,LeaderEpoch:..,ControllerEpoch:..): the same truth"
    )
    spec.evidence = Evidence(version="0.10")
    return spec


def seed000_divergence_010() -> Spec:
    spec = seed000_divergence_hw()
    spec.name = "seed000-divergence-0.10"
    spec.description = (
        "seed000-divergence-hw on a 0.10.1 cluster with 0.10's own templates: the same truth "
        "(no findings)"
    )
    spec.evidence = Evidence(version="0.10")
    return spec


def zk_unclean_describe_only() -> Spec:
    spec = zk_epoch_unclean()
    spec.name = "zk-unclean-describe-only"
    spec.description = (
        "zk-epoch-unclean on 2.4 with nothing but kafka-topics --describe snapshots every 5 s: "
        "leader 2 appears outside the last ISR seen before it ([1]): unclean_election with its "
        "leader epoch and offsets undecidable; the loss, the regression and the truncation are "
        "in no snapshot"
    )
    spec.evidence = Evidence(version="2.4", describe_every_ms=5000, write=("describe",))
    return spec


def kraft_unclean_ticket() -> Spec:
    spec = kraft_unclean_election()
    spec.name = "kraft-unclean-ticket"
    spec.description = (
        "kraft-unclean-election as a ticket made of pasted excerpts only (state-change.log, "
        "server.log and controller.log, quoted with '> ', no timestamps, no request log, no "
        "metadata dump, no checkpoints): the same findings, each noting what the excerpts lack"
    )
    spec.evidence = Evidence(
        excerpts="quote", excerpts_only=True, write=("state_change", "server", "controller")
    )
    return spec


# Scenarios for the evidence artefacts (consumer traffic, startup lines, old
# template sets, describe snapshots, pasted excerpts), issues 12 and 13. Kept
# out of every default listing until the readers of these artefacts land:
# ``listing(evidence=True)``, ``build`` and ``epochtrail simulate --list`` know them.
EVIDENCE_NAMED: dict[str, Callable[[], Spec]] = {
    "elr-unclean-exclusion": elr_unclean_exclusion,
    "kraft-consumer-hwm-lost": kraft_consumer_hwm_lost,
    "kraft-recovery-cut": kraft_recovery_cut,
    "seed000-hw-truncation-0.10": seed000_hw_truncation_010,
    "seed000-divergence-0.10": seed000_divergence_010,
    "zk-unclean-describe-only": zk_unclean_describe_only,
    "kraft-unclean-ticket": kraft_unclean_ticket,
}

RANDOM_DESCRIPTION = (
    "random cluster and faults from --seed; knobs: brokers, topics, partitions, duration "
    "(seconds), produce_rate (batches/s per partition), fault_rate (faults per minute), "
    "era (kraft, kraft-elr or zk-epoch); rule-breaking mutations, each a probability per "
    "occasion (default 0): mutation_lagging_isr_join, mutation_acks_all_under_min_isr"
)

RANDOM_DEFAULTS: dict[str, Any] = {
    "brokers": 3,
    "topics": 2,
    "partitions": 3,
    "duration": 120,
    "produce_rate": 2.0,
    "fault_rate": 2.0,
}

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def _topic_id(rng: random.Random) -> str:
    return "".join(rng.choice(_ALPHABET) for _ in range(21)) + rng.choice("AQgw")


#: evidence knobs a random cluster takes (``write`` and ``excerpts_only`` take
#: artefacts away, which only the evidence scenarios' truth accounts for)
RANDOM_EVIDENCE_KNOBS = EVIDENCE_KNOBS - {"write", "excerpts_only"}
RANDOM_EXTRA_KNOBS = frozenset({"evidence_rate", "restart_rate"})


def random_evidence(
    seed: int, era: str, knobs: dict[str, Any], brokers: list[int], duration: int
) -> tuple[Evidence, list[Action]]:
    """The evidence knobs of a random cluster, and its extra restarts.

    Given knobs are kept. ``evidence_rate`` (default 0) switches each knob not
    given on with that probability: consumers (with a ListOffsets every 5 s
    half the time, and reads from a follower on 2.4+ a third of the time),
    startup lines, describe snapshots every 10 s, excerpts beside the logs, and
    on the ZooKeeper eras an older template set. ``restart_rate`` (restarts
    per minute, default 0) adds broker restarts: clean (a controlled shutdown,
    back 2-8 s later) or unclean (a crash, with or without the page cache, back
    after the session timeout). Both draw from their own generator, so the rest
    of the cluster is the one the seed gives without them."""
    rng = random.Random(f"epochtrail-evidence-{seed}")
    rate = float(knobs.get("evidence_rate", 0.0))
    if not 0.0 <= rate <= 1.0:
        raise ValueError("evidence_rate must be a probability in [0, 1]")
    chosen = {k: v for k, v in knobs.items() if k in RANDOM_EVIDENCE_KNOBS}
    if rate > 0:
        draws = {
            name: rng.random() < rate
            for name in ("consumers", "startup", "describe", "excerpts", "version")
        }
        if "version" not in chosen and draws["version"] and era.startswith("zk"):
            chosen["version"] = rng.choice(versions.ERA_VERSIONS[era])
        version = versions.resolve(era, chosen.get("version"))
        if "consumers" not in chosen and draws["consumers"]:
            chosen["consumers"] = True
            if "list_offsets_ms" not in chosen and rng.random() < 0.5:
                chosen["list_offsets_ms"] = 5000
            if (
                "consumer_from_follower" not in chosen
                and version.at_least("2.4")
                and rng.random() < 1 / 3
            ):
                chosen["consumer_from_follower"] = True
        if "startup_lines" not in chosen and draws["startup"]:
            chosen["startup_lines"] = True
        if "describe_every_ms" not in chosen and draws["describe"]:
            chosen["describe_every_ms"] = 10000
        if "excerpts" not in chosen and draws["excerpts"]:
            chosen["excerpts"] = rng.choice(EXCERPT_STYLES)
    restarts: list[Action] = []
    restart_rate = float(knobs.get("restart_rate", 0.0))
    if restart_rate < 0:
        raise ValueError("restart_rate must be >= 0")
    t_ms = 5000
    while restart_rate > 0:
        t_ms += int(rng.expovariate(restart_rate / 60000.0)) + 1
        if t_ms >= duration - 20000:
            break
        b = rng.choice(brokers)
        kind = rng.choice(["clean", "unclean", "unclean_kept_cache"])
        if kind == "clean":
            restarts += [
                Action(t_ms, "shutdown", (b,)),
                Action(t_ms + rng.randint(2000, 8000), "restart", (b,)),
            ]
        else:
            back = t_ms + rng.randint(9500, 15000)
            restarts += [
                Action(t_ms, "crash", (b, kind == "unclean")),
                Action(back, "restart", (b,)),
            ]
    return evidence_from(era, chosen), restarts


def random_spec(seed: int, scale: float = 1.0, **knobs: Any) -> Spec:
    mutation_knobs = {f"mutation_{m}" for m in MUTATIONS}
    unknown = (
        set(knobs)
        - set(RANDOM_DEFAULTS)
        - {"era"}
        - mutation_knobs
        - RANDOM_EVIDENCE_KNOBS
        - RANDOM_EXTRA_KNOBS
    )
    if unknown:
        raise ValueError(f"unknown knobs for random: {sorted(unknown)}")
    era = str(knobs.get("era", "kraft"))
    # zk-hw only with the 0.10 templates (its default templates are 2.8's)
    if era not in ERAS or (era == "zk-hw" and knobs.get("version") != "0.10"):
        known = ", ".join(e for e in ERAS if e != "zk-hw")
        raise ValueError(
            f"unknown era {era!r} for random; known: {known}, and zk-hw with version=0.10"
        )
    # era and mutations are in the knobs (and the truth's params) only when given
    k = {**RANDOM_DEFAULTS, **knobs}
    mutations = {m: float(knobs[f"mutation_{m}"]) for m in MUTATIONS if f"mutation_{m}" in knobs}
    for name, rate in mutations.items():
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"mutation_{name} must be a probability in [0, 1]")
    rng = random.Random(f"epochtrail-random-{seed}")
    n = int(k["brokers"])
    if n < 1:
        raise ValueError("brokers must be >= 1")
    brokers = list(range(1, n + 1))
    rf = min(3, n)
    duration = int(float(k["duration"]) * 1000 * scale)
    topics = []
    producers = []
    client = 1
    for t in range(int(k["topics"])):
        assignments = []
        for p in range(int(k["partitions"])):
            first = (t + p) % n
            assignments.append([brokers[(first + i) % n] for i in range(rf)])
        name = f"topic-{t}"
        topics.append(
            TopicSpec(name, _topic_id(rng), assignments, rng.choice([1, 1, 2]) if rf > 1 else 1)
        )
        rate = float(k["produce_rate"])
        if rate > 0:
            for p in range(len(assignments)):
                producers.append(
                    ProducerSpec(
                        name,
                        p,
                        interval_ms=max(1, int(1000 / rate)),
                        records=10,
                        acks=-1,
                        phase_ms=rng.randint(0, 999),
                        jitter_ms=max(1, int(200 / rate)),
                        acks_mix=((-1, 0.6), (1, 0.3), (0, 0.1)),
                        max_records=20,
                        client=client,
                    )
                )
                client += 1
    # 30 s stands for the OS writing back dirty pages (dirty_expire_centisecs).
    flush: dict[int, int | None] = {
        b: rng.choice([0, 500, 1000, 1000, 5000, 30000]) for b in brokers
    }
    schedule: list[Action] = []
    rate_per_ms = float(k["fault_rate"]) / 60000.0
    t_ms = 5000
    busy_until = {b: 0 for b in brokers}
    keys = [(tp.name, p) for tp in topics for p in range(len(tp.assignments))]
    while rate_per_ms > 0:
        t_ms += int(rng.expovariate(rate_per_ms)) + 1
        if t_ms >= duration - 5000:
            break
        kind = rng.choices(
            ["crash", "crash_clean", "shutdown", "isolate", "pause", "slow", "unclean"],
            [3, 1, 2, 3, 2, 1, 1],
        )[0]
        if kind == "unclean":
            key = rng.choice(keys)
            schedule.append(Action(t_ms, "elect_unclean", key))
            continue
        free = [b for b in brokers if busy_until[b] <= t_ms]
        if not free:
            continue
        b = rng.choice(free)
        length = rng.randint(5000, 40000)
        end = min(t_ms + length, duration - 1)
        busy_until[b] = end + 12000
        if kind == "crash":
            schedule += [Action(t_ms, "crash", (b, True)), Action(end, "restart", (b,))]
        elif kind == "crash_clean":
            schedule += [Action(t_ms, "crash", (b, False)), Action(end, "restart", (b,))]
        elif kind == "shutdown":
            schedule += [Action(t_ms, "shutdown", (b,)), Action(end, "restart", (b,))]
        elif kind == "isolate":
            schedule += [Action(t_ms, "isolate", (b,)), Action(end, "heal", (b,))]
        elif kind == "pause":
            schedule += [Action(t_ms, "pause_fetch", (b,)), Action(end, "resume_fetch", (b,))]
        else:
            schedule += [Action(t_ms, "slow", (b, rng.randint(4, 30))), Action(end, "slow", (b, 1))]
    evidence, restarts = random_evidence(seed, era, knobs, brokers, duration)
    if restarts:
        schedule += restarts
    schedule.sort(key=lambda a: a.at_ms)
    return Spec(
        name="random",
        description=RANDOM_DESCRIPTION,
        brokers=brokers,
        topics=topics,
        producers=producers,
        schedule=schedule,
        duration_ms=duration,
        settle_ms=30000,
        fetch_phase={b: rng.randint(0, 499) for b in brokers},
        fetch_jitter_ms=40,
        flush_ms=flush,
        default_flush_ms=1000,
        era=era,
        mutations={m: r for m, r in mutations.items() if r > 0},
        evidence=evidence,
        knobs={
            "knobs": k,
            "scale": scale,
            "flush_ms": {str(b): f for b, f in flush.items()},
            "faults": len(schedule),
        },
    )


def evidence_from(era: str, knobs: dict[str, Any], base: Evidence | None = None) -> Evidence:
    """The ``Evidence`` the knobs ask for (on top of ``base``), checked."""
    values = dict((base or Evidence()).__dict__)
    for name in EVIDENCE_KNOBS & set(knobs):
        value = knobs[name]
        if name in ("describe_at", "write") and value is not None:
            value = tuple(value)
        values[name] = value
    evidence = Evidence(**values)
    versions.resolve(era, evidence.version)  # raises for a version the era does not have
    if evidence.excerpts is not None and evidence.excerpts not in EXCERPT_STYLES:
        raise ValueError(f"excerpts must be one of {', '.join(EXCERPT_STYLES)}")
    if evidence.write is not None and set(evidence.write) - set(FAMILIES):
        raise ValueError(f"write: unknown families {sorted(set(evidence.write) - set(FAMILIES))}")
    if evidence.consumer_from_follower and versions.resolve(era, evidence.version).before("2.4"):
        raise ValueError("consumer_from_follower needs 2.4+ (KIP-392)")
    for name in ("consumer_ms", "list_offsets_ms", "describe_every_ms"):
        if int(getattr(evidence, name)) < 0:
            raise ValueError(f"{name} must be >= 0")
    if evidence.consumer_ms <= 0:
        raise ValueError("consumer_ms must be > 0")
    return evidence


def build(name: str, seed: int = 0, scale: float = 1.0, **knobs: Any) -> Spec:
    if name == "random":
        return random_spec(seed, scale, **knobs)
    makers = {**NAMED, **ZK_NAMED, **RULE_NAMED, **EVIDENCE_NAMED}
    if name not in makers:
        known = ", ".join(n for n, _ in listing(all_eras=True, rules=True, evidence=True))
        raise KeyError(f"unknown scenario {name!r}; known: {known}")
    other = set(knobs) - EVIDENCE_KNOBS
    if other:
        raise ValueError(
            f"scenario {name} takes only the evidence knobs ({', '.join(sorted(EVIDENCE_KNOBS))}); "
            f"got {sorted(other)}"
        )
    spec = makers[name]()
    spec.evidence = evidence_from(spec.era, knobs, spec.evidence)
    if scale > 1:
        # Longer clean traffic after the story: more bytes, the same truth.
        spec.tail_ms = int(spec.duration_ms * (scale - 1))
    spec.knobs = {"scale": scale}
    return spec


def listing(
    all_eras: bool = False, rules: bool = False, evidence: bool = False
) -> list[tuple[str, str]]:
    out = [(name, make().description) for name, make in NAMED.items()]
    if all_eras:
        out += [(name, make().description) for name, make in ZK_NAMED.items()]
    if rules:
        out += [(name, make().description) for name, make in RULE_NAMED.items()]
    if evidence:
        out += [(name, make().description) for name, make in EVIDENCE_NAMED.items()]
    out.append(("random", RANDOM_DESCRIPTION))
    return out
