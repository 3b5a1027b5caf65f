"""What really happened, in docs/findings.md's terms, from the simulator's state.

The simulator calls the hooks below as its events happen; the recorder keeps
only small per-partition state (no history of records), so it stays bounded.

Besides ``findings`` (docs/findings.md, literally), the truth carries:

* ``undecidable``: findings whose exact values rest on facts the artefacts do
  not carry (an acks=all ack's record count, a replica's log end reached in a
  fetch answer it never followed up, ...), with the reason;
* ``disputed``: findings where the literal definition (true HWM as offsets,
  never going back) counts records that were never committed in their own
  lineage (e.g. an uncommitted ``acks=1`` tail rewritten by a new leader whose
  own records were later committed at the same offsets).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Key = tuple[str, int]


def key_name(key: Key) -> str:
    return f"{key[0]}-{key[1]}"


@dataclass
class EpochInfo:
    leader: int
    x: int  # the leader's LEO when the epoch began
    h: int  # true HWM just before (literal, acks counted to their end)
    h_evidence: int  # the same with an ack counted as base + 1 (what the log shows)
    h_lineage: int  # committed prefix of the lineage the leader continues
    h_lineage_evidence: int = 0  # the same with acks counted as base + 1


@dataclass
class Drop:
    """A replica's LEO fell in an unclean shutdown; reported at its next fetch."""

    frm: int
    to: int
    h: int
    h_evidence: int
    top_epoch: int


class Truth:
    def __init__(self, scenario: str, seed: int, era: str, params: dict[str, Any]) -> None:
        self.scenario = scenario
        self.seed = seed
        self.era = era
        self.params = params
        self.keys: list[Key] = []
        self.hwm: dict[Key, int] = {}
        self.hwm_evidence: dict[Key, int] = {}
        self.hwm_lineage: dict[Key, int] = {}
        self.hwm_lineage_evidence: dict[Key, int] = {}
        self.epochs: dict[Key, dict[int, EpochInfo]] = {}
        self.watch: dict[Key, tuple[int, int, int, int]] = {}  # epoch, leader, H(E), evidence
        self.drops: dict[tuple[Key, int], Drop] = {}
        self.position: dict[tuple[Key, int], int] = {}  # replica log end in evidence
        self.findings: list[dict[str, Any]] = []
        self.undecidable: list[dict[str, Any]] = []
        self.disputed: list[dict[str, Any]] = []
        self.violations: list[str] = []
        self._parked: list[str] = []

    def add_partition(self, key: Key) -> None:
        self.keys.append(key)
        for table in (self.hwm, self.hwm_evidence, self.hwm_lineage, self.hwm_lineage_evidence):
            table[key] = 0
        self.epochs[key] = {}

    # -- helpers ---------------------------------------------------------------
    def _finding(
        self,
        kind: str,
        key: Key,
        epoch: int | None,
        replica: int | None,
        start: int | None,
        end: int | None,
        lost: int | None,
        qualifier: str | None = None,
    ) -> dict[str, Any]:
        f = {
            "kind": kind,
            "topic": key[0],
            "partition": key[1],
            "leader_epoch": epoch,
            "replica": replica,
            "offset_start": start,
            "offset_end": end,
            "records_lost": lost,
            "qualifier": qualifier,
        }
        self.findings.append(f)
        self._flush_notes(len(self.findings) - 1, key, kind, epoch)
        return f

    def _note(self, key: Key, kind: str, epoch: int | None, reason: str) -> None:
        """Park a reason; ``_finding`` attaches parked reasons to the next finding."""
        self._parked.append(reason)

    def _flush_notes(self, index: int | None, key: Key, kind: str, epoch: int | None) -> None:
        if self._parked:
            self.undecidable.append(
                {
                    "finding": index,
                    "kind": kind,
                    "topic": key[0],
                    "partition": key[1],
                    "leader_epoch": epoch,
                    "reasons": self._parked,
                }
            )
            self._parked = []

    def _dispute(self, f: dict[str, Any], committed: int, reason: str) -> None:
        self.disputed.append(
            {
                "kind": f["kind"],
                "topic": f["topic"],
                "partition": f["partition"],
                "leader_epoch": f["leader_epoch"],
                "replica": f["replica"],
                "literal_records_lost": f["records_lost"],
                "committed_records_lost": committed,
                "reason": reason,
            }
        )

    def _raise(self, key: Key, value: int, evidence: int) -> None:
        if value > self.hwm[key]:
            self.hwm[key] = value
        if evidence > self.hwm_evidence[key]:
            self.hwm_evidence[key] = evidence
        if value > self.hwm_lineage[key]:
            self.hwm_lineage[key] = value
        if evidence > self.hwm_lineage_evidence[key]:
            self.hwm_lineage_evidence[key] = evidence

    # -- hooks -----------------------------------------------------------------
    def exposure(self, key: Key, leader: int, epoch: int, hwm: int) -> None:
        """A leader put ``hwm`` in a fetch answer."""
        before = self.hwm[key]
        self._raise(key, hwm, hwm)
        if self.hwm[key] < before:
            self.violations.append(f"true HWM of {key_name(key)} went back")
        w = self.watch.get(key)
        if w is not None and w[0] == epoch and w[1] == leader and hwm < w[2]:
            del self.watch[key]
            if w[3] != w[2]:
                self._note(
                    key,
                    "hwm_regression",
                    epoch,
                    f"H({epoch})={w[2]} comes from an acks=all ack whose record count is not in "
                    f"the request log; the artefacts show only H={w[3]} (base offset + 1)",
                )
            self._finding("hwm_regression", key, epoch, leader, hwm, w[2], None)

    def ack(self, key: Key, base: int, records: int) -> None:
        """An acks=all produce answered errorCode 0."""
        self._raise(key, base + records, base + 1)

    def position_seen(self, key: Key, replica: int, offset: int) -> None:
        k = (key, replica)
        if offset > self.position.get(k, -1):
            self.position[k] = offset

    def epoch_began(
        self,
        key: Key,
        epoch: int,
        leader: int,
        x: int,
        prev_isr: list[int],
        recovering: bool,
        leader_alive: bool = True,
    ) -> None:
        """The PartitionChangeRecord carrying ``leader`` (epoch ``epoch``) was written."""
        self.watch.pop(key, None)
        if leader < 0:
            return
        h, h_ev, h_lin = self.hwm[key], self.hwm_evidence[key], self.hwm_lineage[key]
        h_lin_ev = self.hwm_lineage_evidence[key]
        self.epochs[key][epoch] = EpochInfo(leader, x, h, h_ev, h_lin, h_lin_ev)
        # Every finding resting on H(E) is undecidable when H(E) comes from an
        # acks=all batch's record count, which no artefact shows.
        unsure = (
            f"H({epoch})={h_lin} comes from an acks=all ack whose record count is not in the "
            f"request log; the artefacts show only H={h_lin_ev} (base offset + 1)"
            if h_lin != h_lin_ev and (x < h_lin or x < h_lin_ev)
            else None
        )
        if unsure:
            self._note(key, "committed_data_loss", epoch, unsure)
        if not leader_alive and x < h:
            self._note(
                key,
                "committed_data_loss",
                epoch,
                f"leader {leader} of epoch {epoch} was down (not yet fenced) when elected and "
                f"never served the epoch: X={x} is its on-disk log end, in no artefact",
            )
        # H(E) is what was committed in the lineage the new leader continues: a
        # loss is counted once, in the epoch where it happened (seed 000's
        # orphaned m2 and seed 002 5.3.3's cascade; docs/findings.md).
        if leader not in prev_isr or recovering:
            lo, hi, lost = (x, h_lin, h_lin - x) if x < h_lin else (None, None, 0)
            f = self._finding("unclean_election", key, epoch, leader, lo, hi, lost)
            if h != h_lin and x < h:
                self._dispute(
                    f, lost, "the never-falling true HWM would count an earlier loss again"
                )
        if x < h_lin:
            if unsure:
                self._note(key, "committed_data_loss", epoch, unsure)
            f = self._finding("committed_data_loss", key, epoch, None, x, h_lin, h_lin - x)
            self.watch[key] = (epoch, leader, h_lin, h_lin_ev)
        self._flush_notes(None, key, "committed_data_loss", epoch)
        if x < h_lin:
            self.hwm_lineage[key] = x
            self.hwm_lineage_evidence[key] = x

    def became_leader(self, key: Key, replica: int) -> None:
        """A replica acts as leader: a pending crash loss is the election's concern."""
        self.drops.pop((key, replica), None)

    def crash_drop(self, key: Key, replica: int, frm: int, to: int, top_epoch: int) -> None:
        if to >= frm:
            return
        k = (key, replica)
        old = self.drops.get(k)
        if old is not None:
            old.to = min(old.to, to)
            return
        self.drops[k] = Drop(frm, to, self.hwm[key], self.hwm_evidence[key], top_epoch)

    def follower_fetch(self, key: Key, replica: int, cle: int, fetch_offset: int) -> None:
        """A follower's fetch reached its leader: a crash loss is now in evidence."""
        drop = self.drops.pop((key, replica), None)
        if drop is not None:
            seen = self.position.get((key, replica), -1)
            now_h = self.hwm[key]
            if drop.to < drop.h and seen < min(drop.frm, drop.h):
                self._note(
                    key,
                    "truncation_below_hwm",
                    cle,
                    f"replica {replica} lost [{drop.to}, {drop.frm}) in an unclean shutdown; its "
                    f"log end before the loss is in evidence only up to {seen}",
                )
            if (drop.to < drop.h) != (drop.to < now_h) or min(drop.frm, drop.h) != min(
                drop.frm, now_h
            ):
                self._note(
                    key,
                    "truncation_below_hwm",
                    cle,
                    f"replica {replica} lost [{drop.to}, {drop.frm}) when the true HWM was "
                    f"{drop.h}; when the loss shows (its next fetch) the true HWM is {now_h}",
                )
            self._truncation(
                key, replica, drop.frm, drop.to, cle, drop.top_epoch, drop.h, drop.h_evidence
            )
        self.position_seen(key, replica, fetch_offset)

    def truncated(self, key: Key, replica: int, frm: int, to: int, cle: int, top: int) -> None:
        """A follower truncated after a diverging-epoch answer."""
        self._truncation(key, replica, frm, to, cle, top, self.hwm[key], self.hwm_evidence[key])

    def _truncation(
        self, key: Key, replica: int, frm: int, to: int, cle: int, top: int, h: int, h_ev: int
    ) -> None:
        try:
            self._truncation_finding(key, replica, frm, to, cle, top, h, h_ev)
        finally:
            # reasons left over: the evidence may show a finding the truth does not have
            self._flush_notes(None, key, "truncation_below_hwm", cle)

    def _truncation_finding(
        self, key: Key, replica: int, frm: int, to: int, cle: int, top: int, h: int, h_ev: int
    ) -> None:
        if to >= frm:
            return
        if (to < h) != (to < h_ev) or min(frm, h) != min(frm, h_ev):
            self._note(
                key,
                "truncation_below_hwm",
                cle,
                f"truncation of replica {replica} [{to}, {frm}): the true HWM {h} rests on an "
                f"acks=all ack's record count; the artefacts show {h_ev}",
            )
        # Records of the epoch in force are the leader's own lineage: committed
        # up to the lineage's HWM now. Records of an older epoch were committed
        # only up to what their lineage had committed when the next epoch with
        # a leader began; from the start offset of any later epoch on, that
        # epoch's leader rewrote the offsets, so the replica's records there
        # exist nowhere else (seed 000, "Epoch in data diverge scenario").
        later = [info for e, info in sorted(self.epochs[key].items()) if top < e <= cle]
        if top >= cle:
            h_ref = min(h, self.hwm_lineage[key])
            h_ref_ev = min(h_ev, self.hwm_lineage_evidence[key])
        elif not later or top < 0:
            h_ref, h_ref_ev = h, h_ev
        else:
            h_ref, h_ref_ev = later[0].h_lineage, later[0].h_lineage_evidence
        if h_ref != h_ref_ev and (
            (to < h_ref) != (to < h_ref_ev) or min(frm, h_ref) != min(frm, h_ref_ev)
        ):
            self._note(
                key,
                "truncation_below_hwm",
                cle,
                f"truncation of replica {replica} [{to}, {frm}): the committed mark {h_ref} rests "
                f"on an acks=all ack's record count; the artefacts show {h_ref_ev}",
            )
        if to >= h_ref:
            return
        end = min(frm, h_ref)
        qualifier, lost = "local", None
        if top >= cle:
            qualifier = "local"
        elif not later or top < 0:
            qualifier = "unknown"
        else:
            rewritten_from = min(info.x for info in later)
            if end <= rewritten_from:
                qualifier = "local"
            else:
                qualifier, lost = "global", end - max(rewritten_from, to)
        f = self._finding("truncation_below_hwm", key, cle, replica, to, end, lost, qualifier)
        if h_ref != h and to < h:
            self._dispute(f, lost, "the never-falling true HWM would count uncommitted records")

    # -- result ----------------------------------------------------------------
    def result(self) -> dict[str, Any]:
        verdicts = {}
        bad = {(f["topic"], f["partition"]) for f in self.findings}
        for key in self.keys:
            verdicts[key_name(key)] = "invalid" if key in bad else "valid"
        out: dict[str, Any] = {
            "scenario": self.scenario,
            "seed": self.seed,
            "era": self.era,
            "params": self.params,
            "findings": self.findings,
            "verdicts": verdicts,
        }
        if self.undecidable:
            out["undecidable"] = self.undecidable
        if self.disputed:
            out["disputed"] = self.disputed
        return out
