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

Evidence-visible values. A finding with an ``undecidable`` note whose exact
values rest only on a committed mark (or a log end) the artefacts show
differently carries, beside its real values, what the same definition gives
on the marks the artefacts do show:

* ``visible_offset_start``, ``visible_offset_end``, ``visible_records_lost``,
  ``visible_qualifier``: the finding as a reader of the artefacts must report
  it. The marks used: the highest HWM any fetch answer showed, an
  ``acks=all`` ack's base offset + 1 (kafka-formats.md 1.5, 1.6), or a
  broker's HW printed in its "starts at leader epoch" line (which also
  raises the real mark: a broker's HW never exceeds its leader's); in zk-hw
  (0.10.1, whose request log prints neither answers nor produce offsets) the
  lowest fetch offset among the ISR followers when the leader read it (seed
  000 "HW/LEO update rules": the leader's HW is the minimum LEO of the ISR),
  and at a truncation only as far as the fetch lines logged more than
  ``SKEW_MS`` before it raised it (a later one may, by the clocks, follow
  the cut), unless a fetch is the truncating follower's own from below the
  log end its lines show at the cut (it held those records only once that
  fetch was answered, and a fetch is logged as it is answered);
  for a loss in an unclean shutdown, the mark when the loss shows (the
  replica's next fetch) and the replica's last log end in evidence (its
  fetch offset; a leader's acks, in the order of their offsets, and the
  HWMs it answered, which never exceed its log end). A later epoch's start
  offset X decides a truncation's qualifier only where a line prints it
  (the leader's "starts at leader epoch E from offset X": none in 0.10, none
  from a leader elected while down) or bounds it: X is at least the lower
  of the leader's log end in evidence when elected and the one its next
  startup lines print, and a partition led by one broker since it began,
  with no startup line of it since, had nothing rewritten. Otherwise the
  reader's qualifier is ``unknown``;
* ``visible_absent: true`` instead: on those marks there is no such finding.

Findings whose notes rest on something else (a leader elected while down,
whose log end is on its disk only; an HWM regression first seen in another
answer) carry neither and stay compared loosely.

Rule violations (DESIGN.md's catalogue, docs/findings.md's field table):

* ``fencing_violation``: a broker acknowledged produces as leader of epoch E
  after the PartitionChangeRecord that began a later epoch: replica = that
  broker, leader_epoch = E, [lowest base offset it acknowledged more than
  ``SKEW_MS`` after that record, highest such base + 1), records_lost null,
  severity warning; one per (broker, stale epoch). Acts within ``SKEW_MS``
  are listed under ``undecidable`` (finding null). The simulator's brokers
  share one clock (no per-broker offset is modelled).
* ``isr_rule_violation``: (a) a follower admitted to the ISR with its log end
  (last fetch offset) below the larger of the HWM its leader had exposed in
  the epoch and the epoch's start offset: replica = the follower, [its log
  end, that larger value). What the artefacts show of it: an answer within
  ``SKEW_MS`` before the change may, by the clocks, follow it, so the visible
  bound is the HWM shown before that (``visible_offset_end``, or absent when
  the log end reaches it); and the finding is absent from the artefacts when
  a fetch of the follower within ``SKEW_MS`` after the change reached the
  visible bound (by the clocks it may have come first; the simulator's
  follower joins on a fetch, so its last fetch before the change is never
  older than the allowance); (b) a leader
  acknowledging ``acks=all`` produces (error 0) while the ISR is smaller than
  min.insync.replicas, more than ``SKEW_MS`` after the record that shrank it
  and before the one that grew it back, or after the leader's own
  ``(under-min-isr)`` line (same clock,
  no skew; a later millisecond: within one, the order of its two files is in
  no artefact): replica = the leader,
  [lowest, highest + 1) base offset, one per (leader, epoch).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Key = tuple[str, int]

#: the clock-skew allowance (DESIGN.md): acts this close to the record that
#: made them stale are not judged
SKEW_MS = 2000


@dataclass
class Lagging:
    """A follower taken into the ISR of ``epoch`` at ``offset``, below ``end``."""

    epoch: int
    offset: int
    end: int
    at: int
    #: the bound the artefacts show: the HWM answers showed more than the
    #: clock-skew allowance before the change (a later one may, by the clocks,
    #: follow it), or the start offset
    shown_end: int
    #: a fetch within the allowance after the change at or beyond ``shown_end``
    caught_up: int | None = None


#: a finding's real fields and the ones a reader of the artefacts must report
VISIBLE_FIELDS = {
    "offset_start": "visible_offset_start",
    "offset_end": "visible_offset_end",
    "records_lost": "visible_records_lost",
    "qualifier": "visible_qualifier",
}


def _started_at_or_above(infos: list[EpochInfo], offset: int) -> bool:
    """Whether the artefacts show every one of these epochs began at or above
    ``offset`` (its start printed, else its floor): none rewrote below it."""
    return all(
        v is not None and v >= offset
        for v in (info.x if info.x_shown else info.x_floor for info in infos)
    )


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
    #: a line the model wrote prints x (the leader's "starts at leader epoch E
    #: from offset X"; 0.10 prints none, a leader elected while down none
    #: until it comes back with that log end)
    x_shown: bool = False
    #: the leader's log end in evidence when the epoch began (its last line
    #: showing it), and the log end its first startup lines after that
    #: printed: X is at least the lower of the two (a log end falls only by a
    #: truncation, whose line prints it, or by a restart, whose lines do)
    x_held: int | None = None
    x_reloaded: int | None = None

    @property
    def x_floor(self) -> int | None:
        """What the artefacts show X to be at least, if anything."""
        if self.x_held is None or self.x_reloaded is None:
            return None
        return min(self.x_held, self.x_reloaded)


@dataclass
class Drop:
    """A replica's LEO fell in an unclean shutdown; reported at its next fetch."""

    frm: int
    to: int
    h: int
    h_evidence: int
    top_epoch: int
    #: the marks when the loss showed at the restart (its startup lines print
    #: the log end it came back with), if they were written
    shown_h: int | None = None
    shown_h_evidence: int | None = None
    #: the replica's log end last in evidence before the loss
    last_seen: int = -1


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
        #: truncations whose reader's qualifier waits on a later startup line
        #: (finding, key, later epochs, visible end, the note's reason)
        self.start_pending: list[tuple[dict[str, Any], Key, list[int], int, str]] = []
        self.watch: dict[Key, tuple[int, int, int, int]] = {}  # epoch, leader, H(E), evidence
        #: brokers whose request log holds no line (``silent_request_logs``)
        self.silent: set[int] = set()
        #: a loss at the start of an epoch whose leader was down when elected
        #: (its X in no artefact): epoch, leader, X, the mark it cut shown
        self.unseen_loss: dict[Key, tuple[int, int, int, int]] = {}
        self.drops: dict[tuple[Key, int], Drop] = {}
        #: the highest log end of a replica in evidence (its fetch offsets)
        #: since its last crash loss was reported
        self.position: dict[tuple[Key, int], int] = {}
        self.findings: list[dict[str, Any]] = []
        self.undecidable: list[dict[str, Any]] = []
        self.disputed: list[dict[str, Any]] = []
        self.violations: list[str] = []
        self._parked: list[str] = []
        self.hw_era = era == "zk-hw"
        self.last_position: dict[tuple[Key, int], int] = {}
        #: the log end a replica's startup lines printed, until its next
        #: logged fetch (formats-addendum.md 10: "log end offset N")
        self.loaded_end: dict[tuple[Key, int], int] = {}
        # epoch -> ms of the record that began it, per partition
        self.epoch_ms: dict[Key, dict[int, int]] = {}
        # (key, broker, stale epoch) -> [lowest base, highest base] acknowledged
        self.stale_acks: dict[tuple[Key, int, int], list[int]] = {}
        self.stale_close: dict[tuple[Key, int, int], list[int]] = {}
        # ISR under min ISR since (ms of the record), per partition
        self.under_min_since: dict[Key, int] = {}
        #: (key, leader) -> when the leader itself logged "(under-min-isr)"
        self.under_min_marked: dict[tuple[Key, int], int] = {}
        self.under_acks: dict[tuple[Key, int, int], list[int]] = {}
        self.under_close: dict[tuple[Key, int, int], list[int]] = {}
        #: acks beyond the allowance after the shrink, but still within it of
        #: a grow-back that may come: (key, broker, epoch) -> [(ms, base)]
        self.under_recent: dict[tuple[Key, int, int], list[tuple[int, int]]] = {}
        #: followers taken into the ISR below the bound, until their next
        #: fetches decide whether the artefacts show it
        self.lagging: dict[tuple[Key, int], list[Lagging]] = {}
        #: kraft-elr (seed 002 5.1.2, Unclean Exclusion): replicas back from an
        #: unclean shutdown and not yet caught up -> (log end at the restart,
        #: whether an artefact says the restart was unclean)
        self.unclean: dict[tuple[Key, int], tuple[int, bool]] = {}
        #: ``kafka-topics --describe`` snapshots written: (ms, leader, ISR) per partition
        self.snapshots: dict[Key, list[tuple[int, int, list[int]]]] = {}
        #: the leader of each partition's first epoch, and the partitions whose
        #: first leader printed startup lines since (it restarted in evidence)
        self.first_leader: dict[Key, int] = {}
        self.first_leader_reloaded: set[Key] = set()
        #: zk-hw: the mark a reader derives from the ISR's fetch lines, raised
        #: within the clock-skew allowance: (ms of the raising line, the mark
        #: before it, (follower, fetch offset) of that line), per partition
        self.recent_marks: dict[Key, list[tuple[int, int, tuple[int, int] | None]]] = {}

    def add_partition(self, key: Key, leader: int | None = None) -> None:
        self.keys.append(key)
        if leader is not None:
            self.first_leader[key] = leader
        for table in (self.hwm, self.hwm_evidence, self.hwm_lineage, self.hwm_lineage_evidence):
            table[key] = 0
        self.epochs[key] = {}
        self.epoch_ms[key] = {0: -(10**9)}

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
        visible: Any = False,
    ) -> dict[str, Any]:
        """``visible``: False when not computed, None when the evidence shows no
        such finding, else (start, end, records lost, qualifier) on the marks
        the artefacts show; attached only when a note makes the finding loose."""
        f: dict[str, Any] = {
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
        if self._parked and visible is not False:
            if visible is None:
                f["visible_absent"] = True
            else:
                v_start, v_end, v_lost, v_qualifier = visible
                f["visible_offset_start"] = v_start
                f["visible_offset_end"] = v_end
                f["visible_records_lost"] = v_lost
                f["visible_qualifier"] = v_qualifier
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
                    "reasons": list(dict.fromkeys(self._parked)),
                }
            )
            self._parked = []

    def _dispute(self, f: dict[str, Any], committed: int | None, reason: str) -> None:
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

    def _raise(self, key: Key, value: int | None, evidence: int | None) -> None:
        if value is not None:
            if value > self.hwm[key]:
                self.hwm[key] = value
            if value > self.hwm_lineage[key]:
                self.hwm_lineage[key] = value
        if evidence is not None:
            if evidence > self.hwm_evidence[key]:
                self.hwm_evidence[key] = evidence
            if evidence > self.hwm_lineage_evidence[key]:
                self.hwm_lineage_evidence[key] = evidence

    @property
    def _shown(self) -> str:
        if self.hw_era:
            return "the ISR followers' fetch offsets show only"
        return "the artefacts show only"

    # -- hooks -----------------------------------------------------------------
    def exposure(self, key: Key, leader: int, epoch: int, hwm: int) -> None:
        """A leader put ``hwm`` in a fetch answer."""
        before = self.hwm[key]
        # zk-hw (0.10.1): the request log prints no answer
        self._raise(key, hwm, None if self.hw_era else hwm)
        if not self.hw_era:
            # a broker's HW never exceeds its own log end: the answer shows
            # the broker that gave it held that much
            self.position_seen(key, leader, hwm, grows=True)
        if self.hwm[key] < before:
            self.violations.append(f"true HWM of {key_name(key)} went back")
        w = self.watch.get(key)
        if w is not None and w[0] == epoch and w[1] == leader and hwm < w[2]:
            del self.watch[key]
            visible: Any = False
            if w[3] < 0:
                # the epoch's start offset is in no line (0.10): that X < H(E),
                # which makes a lower exposure a regression, is not in evidence
                self._note(
                    key,
                    "hwm_regression",
                    epoch,
                    f"leader {leader} of epoch {epoch} printed no start offset (0.10 has no "
                    "such line): that it began below H is in no artefact",
                )
                visible = None
            elif w[3] != w[2]:
                self._note(
                    key,
                    "hwm_regression",
                    epoch,
                    f"H({epoch})={w[2]} comes from an acks=all ack whose record count is not in "
                    f"the request log; {self._shown} H={w[3]}",
                )
                # the same answer shows the regression on the visible mark too
                if hwm < w[3]:
                    visible = (hwm, w[3], None, None)
            self._finding("hwm_regression", key, epoch, leader, hwm, w[2], None, visible=visible)

    def ack(self, key: Key, base: int, records: int) -> None:
        """An acks=all produce answered errorCode 0."""
        # zk-hw (0.10.1): the request log prints no produce offsets
        self._raise(key, base + records, None if self.hw_era else base + 1)

    def hw_shown(self, key: Key, hwm: int) -> None:
        """A broker printed its high watermark ("... starts at leader epoch E
        ... high watermark H"): a broker's HW never exceeds its leader's, and
        a leader's HW is what it has committed (seed 003: it advances when
        the ISR shrinks, down to the leader alone, with no answer showing it);
        the line shows it to a reader."""
        self._raise(key, hwm, hwm)

    def fetch_mark(
        self,
        key: Key,
        mark: int,
        now: int | None = None,
        fetched: tuple[int, int] | None = None,
    ) -> None:
        """zk-hw: the leader read a fetch; ``mark`` is the lowest fetch offset
        of its ISR followers (all of them have fetched in this leadership).
        ``now``: when the leader logged that fetch, on its own clock;
        ``fetched``: (the follower, its fetch offset) of that fetch."""
        before = self.hwm_evidence[key]
        self._raise(key, None, mark)
        if now is not None and self.hwm_evidence[key] > before:
            recent = [r for r in self.recent_marks.get(key, []) if now - r[0] <= SKEW_MS]
            self.recent_marks[key] = recent + [(now, before, fetched)]

    def _ordered_mark(self, key: Key, now: int | None, replica: int, shown_end: int | None) -> int:
        """The derived mark a reader can place before a truncation logged at
        ``now`` on the follower's clock: a fetch line of the leader logged
        within the clock-skew allowance before it may, by the clocks, have
        followed it, so the mark it raised is not ordered before the cut
        (as for a lagging ISR join, docs/findings.md). Unless it is the
        follower's own fetch from below the log end its lines show at the
        cut (``shown_end``): it held those records only once that fetch was
        answered, and the leader logs a fetch as it answers it."""
        h_ev = self.hwm_evidence[key]
        if now is None:
            return h_ev
        recent = [
            before
            for at, before, fetched in self.recent_marks.get(key, [])
            if now - at <= SKEW_MS
            and not (
                fetched is not None
                and fetched[0] == replica
                and shown_end is not None
                and fetched[1] < shown_end
            )
        ]
        return min([h_ev, *recent])

    def _skewed_mark_note(
        self,
        key: Key,
        replica: int,
        values: tuple[int, int, int, int, int],
        h_ev: int,
        shown_h: int,
    ) -> None:
        """Say so when the mark ``_ordered_mark`` leaves changes what a reader
        can find. ``values``: (from, to, leader epoch, top epoch, the log end
        in evidence)."""
        frm, to, cle, top, seen = values
        if shown_h == h_ev:
            return
        if self._truncation_values(key, seen, to, cle, top, h_ev, True) == (
            self._truncation_values(key, seen, to, cle, top, shown_h, True)
        ):
            return
        self._note(
            key,
            "truncation_below_hwm",
            cle,
            f"truncation of replica {replica} [{to}, {frm}): the fetch lines that derive the "
            f"mark {h_ev} were logged within the clock-skew allowance ({SKEW_MS} ms) before it, "
            f"on the leader's clock, and may, by the clocks, have followed it; before them the "
            f"mark is {shown_h}",
        )

    def position_seen(self, key: Key, replica: int, offset: int, grows: bool = False) -> None:
        """A line shows ``replica``'s log end at ``offset`` or beyond. ``grows``:
        a leader's own append (an ack's base offset + 1), which an ack of an
        older batch answered later does not take back (a leader's log end
        only grows while it leads)."""
        k = (key, replica)
        self.loaded_end.pop(k, None)
        if offset > self.position.get(k, -1):
            self.position[k] = offset
        if grows:
            offset = max(offset, self.last_position.get(k, -1))
        self.last_position[k] = offset

    def epoch_began(
        self,
        key: Key,
        epoch: int,
        leader: int,
        x: int,
        prev_isr: list[int],
        recovering: bool,
        leader_alive: bool = True,
        now: int | None = None,
        start_printed: bool = True,
    ) -> None:
        """The PartitionChangeRecord carrying ``leader`` (epoch ``epoch``) was written.
        ``start_printed`` False: the era's leader prints no start offset (0.10)."""
        self.watch.pop(key, None)
        if now is not None:
            self.epoch_ms[key][epoch] = now
        if leader < 0:
            return
        if (key, leader) in self.unclean:
            if leader in prev_isr and not recovering:
                self.unclean_member(key, leader, epoch, "elected")
            else:
                self.caught_up(key, leader)  # an unclean election: its own finding
        h, h_ev, h_lin = self.hwm[key], self.hwm_evidence[key], self.hwm_lineage[key]
        h_lin_ev = self.hwm_lineage_evidence[key]
        self.epochs[key][epoch] = EpochInfo(
            leader, x, h, h_ev, h_lin, h_lin_ev, x_held=self.last_position.get((key, leader))
        )
        down = not leader_alive and x < h
        unseen = self.unseen_loss.pop(key, None)
        if unseen is not None and x < unseen[3] and leader_alive:
            # The evidence shows the earlier epoch's loss only here: it states
            # no X for that epoch, so a reader finds the mark it cut still in
            # force, and this leader's start (and first HWM) below it.
            e0, l0, x0, _ = unseen
            reason = (
                f"leader {l0} of epoch {e0} was down when elected: X={x0} is in no artefact, so "
                f"the loss it made shows in epoch {epoch}, whose leader {leader}'s start is stated"
            )
            for kind in ("committed_data_loss", "hwm_regression"):
                self._note(key, kind, epoch, reason)
                self._flush_notes(None, key, kind, epoch)
        if down and x < h_lin_ev:
            self.unseen_loss[key] = (epoch, leader, x, h_lin_ev)
        # the same on the marks the artefacts show (unknowable when the leader
        # was down: X is then in no artefact)
        real = (x, h_lin, h_lin - x, None) if x < h_lin else None
        seen = (x, h_lin_ev, h_lin_ev - x, None) if x < h_lin_ev else None
        visible: Any = False if down else seen
        unprinted = leader_alive and not start_printed and x < h_lin_ev
        if unprinted:
            visible = None
        # Every finding resting on H(E) is undecidable when H(E) comes from an
        # acks=all batch's record count, which no artefact shows, and the
        # shown mark gives other values.
        unsure = (
            f"H({epoch})={h_lin} comes from an acks=all ack whose record count is not in the "
            f"request log; {self._shown} H={h_lin_ev}"
            if h_lin != h_lin_ev and (x < h_lin or x < h_lin_ev) and (down or seen != real)
            else None
        )
        if unsure:
            self._note(key, "committed_data_loss", epoch, unsure)
        if down:
            self._note(
                key,
                "committed_data_loss",
                epoch,
                f"leader {leader} of epoch {epoch} was down (not yet fenced) when elected and "
                f"never served the epoch: X={x} is its on-disk log end, in no artefact",
            )
        if unprinted:
            self._note(
                key,
                "committed_data_loss",
                epoch,
                f"leader {leader} of epoch {epoch} printed no start offset (0.10 has no such "
                f"line): X={x} is in no artefact",
            )
        # H(E) is what was committed in the lineage the new leader continues: a
        # loss is counted once, in the epoch where it happened (seed 000's
        # orphaned m2 and seed 002 5.3.3's cascade; docs/findings.md).
        if leader not in prev_isr or recovering:
            lo, hi, lost = (x, h_lin, h_lin - x) if x < h_lin else (None, None, 0)
            v_unclean: Any = visible
            if unprinted:
                v_unclean = (None, h_lin_ev, None, None)
            elif visible is None:
                v_unclean = (None, None, 0, None)
            f = self._finding(
                "unclean_election", key, epoch, leader, lo, hi, lost, visible=v_unclean
            )
            if h != h_lin and x < h:
                self._dispute(
                    f, lost, "the never-falling true HWM would count an earlier loss again"
                )
        if x < h_lin:
            if unsure:
                self._note(key, "committed_data_loss", epoch, unsure)
            f = self._finding(
                "committed_data_loss", key, epoch, None, x, h_lin, h_lin - x, visible=visible
            )
            self.watch[key] = (epoch, leader, h_lin, -1 if unprinted else h_lin_ev)
        self._flush_notes(None, key, "committed_data_loss", epoch)
        if x < h_lin:
            self.hwm_lineage[key] = x
            self.hwm_lineage_evidence[key] = x

    def start_shown(self, key: Key, epoch: int, start: int) -> None:
        """The leader of ``epoch`` printed its start offset ``start`` ("...
        starts at leader epoch E from offset X"): it is in evidence when it
        is the epoch's X (a leader elected while down prints the log end it
        came back with, which recovery may have cut below X)."""
        info = self.epochs[key].get(epoch)
        if info is not None and info.x == start:
            info.x_shown = True

    def became_leader(self, key: Key, replica: int) -> None:
        """A replica acts as leader: a pending crash loss is the election's concern."""
        if self.drops.pop((key, replica), None) is not None:
            # the log end last seen described the log the crash cut
            self.position.pop((key, replica), None)
            self.last_position.pop((key, replica), None)

    def crash_drop(self, key: Key, replica: int, frm: int, to: int, top_epoch: int) -> None:
        if to >= frm:
            return
        k = (key, replica)
        old = self.drops.get(k)
        if old is not None:
            old.to = min(old.to, to)
            return
        self.drops[k] = Drop(
            frm,
            to,
            self.hwm[key],
            self.hwm_evidence[key],
            top_epoch,
            last_seen=self.last_position.get(k, -1),
        )

    def restart_shown(self, key: Key, replica: int, leo: int, clean: bool) -> None:
        """The replica's startup lines were written (formats-addendum.md 10): the
        log end it came back with, and (3.5+ in words, every version through a
        recovered segment) whether the shutdown was clean, are in evidence from
        now on. A crash loss not yet reported shows here."""
        self.loaded_end[(key, replica)] = leo
        if self.first_leader.get(key) == replica:
            self.first_leader_reloaded.add(key)
        for info in self.epochs[key].values():
            if info.leader == replica and info.x_reloaded is None:
                info.x_reloaded = leo
        drop = self.drops.get((key, replica))
        if drop is not None and drop.shown_h is None:
            drop.shown_h = self.hwm[key]
            drop.shown_h_evidence = self.hwm_evidence[key]
        pending = self.unclean.get((key, replica))
        if pending is not None and not clean:
            self.unclean[(key, replica)] = (pending[0], True)

    def restarted(self, key: Key, replica: int, leo: int, clean: bool) -> None:
        """A broker started again (kraft-elr only: the Unclean Exclusion rule of
        seed 002 5.1.2 is KIP-966's). After an unclean shutdown the replica must
        stay out of leadership, the ISR and the ELR until it has caught up."""
        if self.era != "kraft-elr":
            return
        if clean:
            self.unclean.pop((key, replica), None)
        else:
            self.unclean[(key, replica)] = (leo, False)

    def caught_up(self, key: Key, replica: int) -> None:
        """The replica joined the ISR (its leader found it caught up), or was made
        leader by an unclean election or recovery (seed 002 5.3's fallback, its
        own finding): the rule no longer concerns it."""
        self.unclean.pop((key, replica), None)

    def unclean_member(self, key: Key, replica: int, epoch: int, how: str) -> None:
        """The unclean replica ``replica`` was left in the ELR at its registration
        (``how`` "elr") or elected from the ISR/ELR (``how`` "elected") before
        catching up: ``isr_rule_violation`` (variant unclean_exclusion, one per
        unclean restart). Its offsets: [its log end, the committed mark), both
        null when its log end had reached the mark."""
        pending = self.unclean.pop((key, replica), None)
        if pending is None:
            return
        leo, shown = pending
        h, h_ev = self.hwm[key], self.hwm_evidence[key]
        start, end = (leo, h) if leo < h else (None, None)
        visible: Any = (leo, h_ev, None, None) if leo < h_ev else (None, None, None, None)
        if not shown:
            self._note(
                key,
                "isr_rule_violation",
                epoch,
                f"replica {replica} came back from an unclean shutdown ({how} before catching "
                "up), but no artefact says its shutdown was unclean (no startup lines)",
            )
            visible = None
        elif visible != (start, end, None, None):
            self._note(
                key,
                "isr_rule_violation",
                epoch,
                f"replica {replica} re-entered before catching up to {h}; the artefacts show "
                f"the committed mark {h_ev}",
            )
        f = self._finding(
            "isr_rule_violation", key, epoch, replica, start, end, None, visible=visible
        )
        f["severity"] = "warning"

    def follower_fetch(
        self,
        key: Key,
        replica: int,
        cle: int,
        fetch_offset: int,
        now: int | None = None,
        logged: bool = True,
    ) -> None:
        """A follower's fetch reached its leader: a crash loss is now in
        evidence. ``logged`` False: its request-log line is written later, if
        ever (0.10.1 logs a long poll once answered): its offset is in
        evidence from then (``position_seen``), not now."""
        self._lagging_fetch(key, replica, fetch_offset, now)
        drop = self.drops.pop((key, replica), None)
        if drop is not None:
            seen = self.position.get((key, replica), -1)
            now_h = self.hwm[key] if drop.shown_h is None else drop.shown_h
            when = "its next fetch" if drop.shown_h is None else "its restart"
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
                    f"{drop.h}; when the loss shows ({when}) the true HWM is {now_h}",
                )
            last = drop.last_seen
            self._truncation(
                key,
                replica,
                drop.frm,
                drop.to,
                cle,
                drop.top_epoch,
                drop.h,
                drop.h_evidence,
                # what a reader sees: the replica's last log end in evidence, and
                # the mark when the loss shows
                visible_frm=min(drop.frm, last) if last >= 0 else drop.frm,
                visible_h=(
                    self.hwm_evidence[key]
                    if drop.shown_h_evidence is None
                    else drop.shown_h_evidence
                ),
            )
            # the log end in evidence before the loss described a log now
            # gone: a later loss is measured from what was seen after this
            self.position.pop((key, replica), None)
        if logged:
            self.position_seen(key, replica, fetch_offset)

    def described(self, key: Key, leader: int, isr: list[int], now: int) -> None:
        """A ``kafka-topics --describe`` snapshot showed this leader and ISR."""
        self.snapshots.setdefault(key, []).append((now, leader, isr))

    def unseen_divergence(
        self, key: Key, replica: int, leader: int, offset: int, kip101: bool = False
    ) -> None:
        """At the end ``replica``'s log differs from its leader's from ``offset``
        on, and no check of the version told it: named, not a finding. zk-hw
        (0.10): no leader epochs in the data. 1.1 (KIP-101 without KIP-279): the
        replica kept batches of an epoch its leader never had, and its epoch
        cache ignored the leader's older epoch, so where the divergence ends is
        in no artefact."""
        why = (
            "its OffsetsForLeaderEpoch answer (1.1, before KIP-279) did not find it, and the "
            "epoch cache ignores the older epoch it fetched afterwards"
            if kip101
            else "the zk-hw era's artefacts carry no leader epochs that could show it"
        )
        self._note(
            key,
            "log_divergence",
            None,
            f"replica {replica}'s log differs from leader {leader}'s from offset {offset}; {why}",
        )
        self._flush_notes(None, key, "log_divergence", None)

    def truncated(
        self,
        key: Key,
        replica: int,
        frm: int,
        to: int,
        cle: int,
        top: int,
        line_shows_end: bool = True,
        now: int | None = None,
    ) -> None:
        """A follower truncated (after a diverging-epoch answer, an
        out-of-range reset, or on following a new leader). ``line_shows_end``
        False: its line prints only the offset it truncated to (0.8-0.10's
        makeFollower, "Truncating log t-p to offset N."), so what a reader
        knows of its log end before is its last logged fetch offset (or the
        log end its startup lines printed, if it loaded its logs since): the
        answers that brought it more print no offsets in that era (as for a
        crash loss, ``follower_fetch``). ``now``: when the follower logged it,
        on its own clock (``_ordered_mark``)."""
        h, h_ev = self.hwm[key], self.hwm_evidence[key]
        shown_h = self._ordered_mark(key, now, replica, frm if line_shows_end else None)
        last = self.last_position.get((key, replica), -1)
        # or the log end its startup lines printed, when it truncates on
        # following its leader after loading its logs
        last = max(last, self.loaded_end.get((key, replica), -1))
        if to < frm:
            self.last_position[(key, replica)] = to  # its line prints where it cut to
        if line_shows_end or last >= frm:
            self._skewed_mark_note(key, replica, (frm, to, cle, top, frm), h_ev, shown_h)
            self._truncation(key, replica, frm, to, cle, top, h, h_ev, visible_h=shown_h)
            return
        seen = max(last, 0)
        self._skewed_mark_note(key, replica, (frm, to, cle, top, seen), h_ev, shown_h)
        with_end = self._truncation_values(key, frm, to, cle, top, h_ev, evidence=True)
        shown = self._truncation_values(key, seen, to, cle, top, h_ev, evidence=True)
        if with_end != shown:
            self._note(
                key,
                "truncation_below_hwm",
                cle,
                f"replica {replica} truncated [{to}, {frm}) to its HW; its log end before "
                f"that is in evidence only up to {seen} (the fetch answers that brought the "
                "rest print no offsets, and its truncation line no log end)",
            )
        self._truncation(
            key, replica, frm, to, cle, top, h, h_ev, visible_frm=seen, visible_h=shown_h
        )

    def _truncation(
        self,
        key: Key,
        replica: int,
        frm: int,
        to: int,
        cle: int,
        top: int,
        h: int,
        h_ev: int,
        visible_frm: int | None = None,
        visible_h: int | None = None,
    ) -> None:
        try:
            self._truncation_finding(
                key,
                replica,
                frm,
                to,
                cle,
                top,
                h,
                h_ev,
                frm if visible_frm is None else visible_frm,
                h_ev if visible_h is None else visible_h,
            )
        finally:
            # reasons left over: the evidence may show a finding the truth does not have
            self._flush_notes(None, key, "truncation_below_hwm", cle)

    def _truncation_values(
        self, key: Key, frm: int, to: int, cle: int, top: int, h: int, evidence: bool
    ) -> tuple[int, int, int | None, str] | None:
        """docs/findings.md's truncation_below_hwm on the real marks, or (with
        ``evidence``) on the marks the artefacts show; None: no finding."""
        if to >= frm:
            return None
        lineage = self.hwm_lineage_evidence[key] if evidence else self.hwm_lineage[key]
        later = [info for e, info in sorted(self.epochs[key].items()) if top < e <= cle]
        if top >= cle:
            h_ref = min(h, lineage)
        elif not later or top < 0:
            h_ref = h
        else:
            h_ref = later[0].h_lineage_evidence if evidence else later[0].h_lineage
        if to >= h_ref:
            return None
        end = min(frm, h_ref)
        qualifier, lost = "local", None
        if top >= cle:
            qualifier = "local"
        elif not later or top < 0:
            qualifier = "unknown"
        elif evidence and not all(info.x_shown for info in later):
            # a later epoch's start is in no line: it rewrote nothing below
            # what the artefacts show X to be at least; one shown at or below
            # ``to`` rewrote the whole range
            shown = [info.x for info in later if info.x_shown]
            if shown and min(shown) <= to:
                qualifier, lost = "global", end - to
            elif _started_at_or_above(later, end):
                qualifier = "local"
            else:
                qualifier = "unknown"
        else:
            rewritten_from = min(info.x for info in later)
            if end > rewritten_from:
                qualifier, lost = "global", end - max(rewritten_from, to)
        return to, end, lost, qualifier

    def _truncation_finding(
        self,
        key: Key,
        replica: int,
        frm: int,
        to: int,
        cle: int,
        top: int,
        h: int,
        h_ev: int,
        v_frm: int,
        v_h: int,
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
        real = self._truncation_values(key, frm, to, cle, top, h, evidence=False)
        visible = self._truncation_values(key, v_frm, to, cle, top, v_h, evidence=True)
        later_epochs = [e for e in sorted(self.epochs[key]) if top < e <= cle]
        unshown = [e for e in later_epochs if not self.epochs[key][e].x_shown]
        pending: str | None = None
        if real != visible and unshown and visible is not None and visible[3] == "unknown":
            pending = (
                f"truncation of replica {replica} [{to}, {frm}): the start offset of epoch "
                f"{', '.join(map(str, unshown))} (written after the replica's records) is in no "
                "artefact, so whether that epoch rewrote them is not in evidence"
            )
            self._note(key, "truncation_below_hwm", cle, pending)
        if real == visible:
            self._parked = []  # the artefacts show exactly this: nothing undecidable
        if real is None:
            return
        start, end, lost, qualifier = real
        f = self._finding(
            "truncation_below_hwm", key, cle, replica, start, end, lost, qualifier, visible=visible
        )
        if pending is not None and visible is not None:
            # a startup line of those epochs' leaders written later may still
            # show how far they reached (``_settle_starts``)
            self.start_pending.append((f, key, later_epochs, visible[1], pending))
        if h_ref != h and to < h:
            self._dispute(f, lost, "the never-falling true HWM would count uncommitted records")

    # -- rule violations ---------------------------------------------------------
    @staticmethod
    def _widen(
        table: dict[tuple[Key, int, int], list[int]], k: tuple[Key, int, int], base: int
    ) -> None:
        span = table.setdefault(k, [base, base])
        span[0], span[1] = min(span[0], base), max(span[1], base)

    def _settle_recent(self, key: Key, now: int, grown_back: bool) -> None:
        """Acks under min ISR by the controller's ISR are certain only beyond
        the allowance of both records: the one that shrank the ISR and the
        one that grew it back (either clock may be ahead)."""
        for k in [k for k in self.under_recent if k[0] == key]:
            keep = []
            for at, base in self.under_recent[k]:
                if now - at > SKEW_MS:
                    self._widen(self.under_acks, k, base)
                elif grown_back:
                    self._widen(self.under_close, k, base)
                else:
                    keep.append((at, base))
            if keep:
                self.under_recent[k] = keep
            else:
                del self.under_recent[k]

    def isr_in_force(self, key: Key, under_min: bool, now: int) -> None:
        """A PartitionChangeRecord (or ZK write) set the ISR now in force."""
        if not under_min:
            self._settle_recent(key, now, grown_back=key in self.under_min_since)
            self.under_min_since.pop(key, None)
            for k in [k for k in self.under_min_marked if k[0] == key]:
                del self.under_min_marked[k]
        elif key not in self.under_min_since:
            self.under_min_since[key] = now

    def under_min_logged(self, key: Key, broker: int, now: int) -> None:
        """The leader logged "ISR updated to ... (under-min-isr)" (3.6+)."""
        self.under_min_marked.setdefault((key, broker), now)

    def acknowledged(
        self, key: Key, broker: int, epoch: int, base: int, acks: int, now: int
    ) -> None:
        """``broker``, acting as leader of ``epoch``, answered a produce errorCode 0."""
        later = [e for e in self.epoch_ms[key] if e > epoch]
        if later:
            began = self.epoch_ms[key][min(later)]
            table = self.stale_acks if now - began > SKEW_MS else self.stale_close
            self._widen(table, (key, broker, epoch), base)
        since = self.under_min_since.get(key)
        if acks == -1 and since is not None:
            # The leader's own "(under-min-isr)" line is on its own clock: an
            # ack it logged after that line is under min ISR, skew or not.
            # Within the same millisecond as the line the order of the two
            # files is not in evidence.
            marked = self.under_min_marked.get((key, broker))
            self._settle_recent(key, now, grown_back=False)
            if marked is not None and marked < now:
                self._widen(self.under_acks, (key, broker, epoch), base)
            elif now - since > SKEW_MS:
                self.under_recent.setdefault((key, broker, epoch), []).append((now, base))
            else:
                self._widen(self.under_close, (key, broker, epoch), base)

    def lagging_join(
        self,
        key: Key,
        follower: int,
        epoch: int,
        offset: int,
        exposed: int,
        shown: int,
        start: int,
        hwm: int,
        now: int,
    ) -> None:
        """The ISR took ``follower`` with its log end ``offset`` below the leader's
        HWM ``hwm`` or the epoch's start offset ``start``. ``exposed`` is the
        highest HWM the leader's answers carried in the epoch (the finding's
        bound), ``shown`` the highest they carried more than ``SKEW_MS`` before
        the change (the bound the artefacts can order before it)."""
        end = max(exposed, start)
        if offset < end:
            # decided by the follower's next fetches (``_lagging_fetch``)
            lag = Lagging(epoch, offset, end, now, shown_end=max(shown, start))
            self.lagging.setdefault((key, follower), []).append(lag)
            return
        self._note(
            key,
            "isr_rule_violation",
            epoch,
            f"follower {follower} joined the ISR at {offset}, below the leader's HWM {hwm} "
            f"that no fetch answer had shown yet (highest shown {exposed}, start {start})",
        )
        self._flush_notes(None, key, "isr_rule_violation", epoch)

    def _lagging_fetch(self, key: Key, follower: int, offset: int, now: int | None) -> None:
        """The follower's fetches after it joined (docs/findings.md): a fetch
        within the clock-skew allowance of the change may, by the clocks, have
        come before it; one there that reached the bound leaves the log end at
        the change undecided. The first fetch beyond the allowance decides."""
        pending = self.lagging.get((key, follower))
        if not pending or now is None:
            return
        for lag in list(pending):
            if now - lag.at > SKEW_MS:
                pending.remove(lag)
                self._lagging_decided(key, follower, lag)
            elif offset >= lag.shown_end:
                lag.caught_up = lag.caught_up or offset
        if not pending:
            del self.lagging[(key, follower)]

    def _lagging_decided(self, key: Key, follower: int, lag: Lagging) -> None:
        visible: Any = False
        if lag.shown_end < lag.end:
            self._note(
                key,
                "isr_rule_violation",
                lag.epoch,
                f"follower {follower} joined the ISR at {lag.offset}, below the HWM {lag.end} "
                f"its leader had shown; the answers that showed more than {lag.shown_end} came "
                f"within the clock-skew allowance ({SKEW_MS} ms) of the change and may, by the "
                "clocks, have followed it",
            )
            visible = (
                (lag.offset, lag.shown_end, None, None) if lag.offset < lag.shown_end else None
            )
        if lag.caught_up is not None:
            self._note(
                key,
                "isr_rule_violation",
                lag.epoch,
                f"follower {follower} joined the ISR at {lag.offset}, below {lag.shown_end}; its "
                f"fetch at {lag.caught_up} within the clock-skew allowance of the change may, "
                "by the clocks, have come before it",
            )
            visible = None
        f = self._finding(
            "isr_rule_violation",
            key,
            lag.epoch,
            follower,
            lag.offset,
            lag.end,
            None,
            visible=visible,
        )
        f["severity"] = "warning"

    def _close_rules(self) -> None:
        """Emit the per-(broker, epoch) rule violations gathered during the run."""
        for (key, follower), pending in list(self.lagging.items()):
            for lag in pending:
                self._lagging_decided(key, follower, lag)
        self.lagging.clear()
        for key in {k[0] for k in self.under_recent}:
            self._settle_recent(key, 1 << 62, grown_back=False)
        rules = (
            (
                "fencing_violation",
                self.stale_acks,
                self.stale_close,
                "acknowledged as leader of epoch {e} within {skew} ms of the record that "
                "began a later epoch: [{lo}, {hi}] (base offsets), inside the skew allowance",
            ),
            (
                "isr_rule_violation",
                self.under_acks,
                self.under_close,
                "acknowledged acks=all under min.insync.replicas in epoch {e} within {skew} ms "
                "of the record that shrank the ISR or grew it back: [{lo}, {hi}] (base offsets), "
                "inside the skew allowance",
            ),
        )
        for kind, far, close, reason in rules:
            for (key, broker, epoch), (lo, hi) in sorted(far.items()):
                visible: Any = False
                if far is self.under_acks and self.era.startswith("zk"):
                    # ZooKeeper keeps min.insync.replicas in /config/topics,
                    # which no artefact read holds, and these versions print
                    # no (under-min-isr) marker (3.6+)
                    self._note(
                        key,
                        kind,
                        epoch,
                        f"broker {broker} acknowledged acks=all under min.insync.replicas in "
                        f"epoch {epoch}, but no artefact of the {self.era} era states the "
                        "setting",
                    )
                    visible = None
                f = self._finding(kind, key, epoch, broker, lo, hi + 1, None, visible=visible)
                f["severity"] = "warning"
            for (key, broker, epoch), (lo, hi) in sorted(close.items()):
                text = reason.format(e=epoch, skew=SKEW_MS, lo=lo, hi=hi)
                self._note(key, kind, epoch, f"broker {broker} {text}")
                self._flush_notes(None, key, kind, epoch)
        for table in (self.stale_acks, self.stale_close, self.under_acks, self.under_close):
            table.clear()

    # -- artefacts taken away (the evidence scenarios) ---------------------------
    def silent_request_logs(self, silent: set[int]) -> None:
        """Brokers whose request log holds no line: an empty kafka-request.log
        is also what a broker with the request logger off leaves, so the file
        shows nothing of what a leader among them exposed (or that it exposed
        nothing, as when it never served its epoch). A partition with no
        finding is then not shown valid (``result``)."""
        self.silent = set(silent)

    def _silent_leaders(self) -> None:
        bad = {(f["topic"], f["partition"]) for f in self.findings}
        for key in self.keys:
            if key in bad:
                continue  # its findings show it invalid whatever the leader exposed
            for epoch, info in sorted(self.epochs[key].items()):
                if info.leader in self.silent:
                    self._note(
                        key,
                        "hwm_regression",
                        epoch,
                        f"broker {info.leader}, leader in epoch {epoch}, wrote no request-log "
                        "line: the HWM it exposed (if any) is in no artefact",
                    )
                    self._flush_notes(None, key, "hwm_regression", epoch)

    def artefacts_written(self, write: tuple[str, ...] | None, excerpts_only: bool) -> None:
        """What the findings are when only some artefact families were written
        (``Evidence.write``): every value computed above assumes request logs,
        the metadata log and the broker logs. Two such sets are defined: the
        ``kafka-topics --describe`` snapshots alone, and pasted excerpts of the
        broker and controller logs alone."""
        if write is None:
            return
        families = set(write)
        self._close_rules()
        if families == {"describe"}:
            self._describe_only()
        elif excerpts_only and not families & {"request", "metadata", "checkpoints"}:
            self._excerpts_only()

    def _absent(self, i: int, reason: str) -> None:
        f = self.findings[i]
        f["visible_absent"] = True
        self._undecidable(i, f, [reason])

    def _undecidable(self, i: int, f: dict[str, Any], reasons: list[str]) -> None:
        self.undecidable.append(
            {
                "finding": i,
                "kind": f["kind"],
                "topic": f["topic"],
                "partition": f["partition"],
                "leader_epoch": f["leader_epoch"],
                "reasons": reasons,
            }
        )

    def _describe_only(self) -> None:
        """formats-addendum 12.1: a snapshot gives the leader, the replicas and the
        ISR, never a leader epoch, a HWM or a log end. An unclean election shows
        when a snapshot's leader is outside the ISR of the last snapshot before
        the election; nothing else shows."""
        for i, f in enumerate(self.findings):
            key = (f["topic"], f["partition"])
            if f["kind"] != "unclean_election":
                self._absent(i, "kafka-topics --describe shows no offset, HWM or log end")
                continue
            began = self.epoch_ms[key].get(f["leader_epoch"])
            shots = self.snapshots.get(key, [])
            before = [s for s in shots if began is not None and s[0] < began]
            after = [s for s in shots if began is not None and s[0] >= began]
            if not before or not after or after[0][1] != f["replica"]:
                self._absent(i, "no pair of snapshots brackets the election")
                continue
            (t0, _, isr0), (t1, leader1, _) = before[-1], after[0]
            if leader1 in isr0:
                self._absent(i, f"the snapshot at {t0} ms already had {leader1} in the ISR")
                continue
            f.update(
                {
                    "visible_offset_start": None,
                    "visible_offset_end": None,
                    "visible_records_lost": None,
                    "visible_qualifier": None,
                    "visible_leader_epoch": None,
                }
            )
            self._undecidable(
                i,
                f,
                [
                    f"leader {leader1} (snapshot at {t1} ms) is outside the last ISR seen before "
                    f"it, {isr0} (snapshot at {t0} ms); kafka-topics --describe shows no leader "
                    "epoch and no offset: the epoch, the offsets at risk and the records lost are "
                    "not in evidence"
                ],
            )

    def _excerpts_only(self) -> None:
        """Pasted excerpts (no timestamps) of the broker and controller logs, and
        nothing else: no fetch answer shows an exposed HWM, and lines of different
        files have no order. A truncation is stated whole by the truncating
        replica's own lines (its offset and its HWM) and the new leader's start
        offset; an election's committed mark rests on HWMs other files print at
        times no excerpt gives."""
        for i, f in enumerate(self.findings):
            kind = f["kind"]
            if kind == "hwm_regression":
                self._absent(i, "no request log: no fetch answer shows the HWM a leader exposed")
            elif kind in ("unclean_election", "committed_data_loss"):
                self._undecidable(
                    i,
                    f,
                    [
                        f"pasted excerpts only: the committed mark before epoch "
                        f"{f['leader_epoch']} ({f['offset_end']}) is printed by other brokers' "
                        "lines whose time against the election no excerpt gives"
                    ],
                )
            elif kind not in ("truncation_below_hwm",):
                self._undecidable(
                    i, f, ["pasted excerpts only: no timestamps, no request log, no metadata log"]
                )

    # -- result ----------------------------------------------------------------
    def _sole_leader(self, key: Key, cle: int) -> bool:
        """What the artefacts show of a partition led by one broker since its
        creation: every epoch up to ``cle`` has a leader, that broker, and no
        startup line of it came since the first began. It truncates only on
        becoming a follower and loses records only in a crash, so it holds
        every record the partition had: no epoch rewrote any."""
        leader = self.first_leader.get(key)
        epochs = self.epochs[key]
        return (
            leader is not None
            and key not in self.first_leader_reloaded
            and [e for e in sorted(epochs) if e <= cle] == list(range(1, cle + 1))
            and all(
                epochs[e].leader == leader and epochs[e].x_reloaded is None
                for e in epochs
                if e <= cle
            )
        )

    def _settle_starts(self) -> None:
        """A truncation judged ``unknown`` because a later epoch's start was in
        no line, re-judged on everything written: the first startup lines of
        its leader after it began may have come since, and with the log end
        it held then they show X at least their lower (``EpochInfo.x_floor``).
        Local when every such epoch's X is shown or floored at or above the
        range's end."""
        for f, key, epochs, end, reason in self.start_pending:
            infos = [self.epochs[key][e] for e in epochs]
            if not self._sole_leader(key, max(epochs)) and not _started_at_or_above(infos, end):
                continue
            f["visible_qualifier"] = "local"
            index = self.findings.index(f)
            for n in [n for n in self.undecidable if n["finding"] == index]:
                n["reasons"] = [r for r in n["reasons"] if r != reason]
                if not n["reasons"]:
                    self.undecidable.remove(n)
            if not any(n["finding"] == index for n in self.undecidable) and all(
                f[v] == f[r] for r, v in VISIBLE_FIELDS.items()
            ):
                for v in VISIBLE_FIELDS.values():
                    del f[v]
        self.start_pending.clear()

    def result(self) -> dict[str, Any]:
        self._close_rules()
        self._settle_starts()
        self._silent_leaders()
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
