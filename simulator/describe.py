"""``kafka-topics.sh --describe`` snapshots taken during the story.

formats-addendum.md 12.1, read at the tags: ``core/src/main/scala/kafka/admin/
TopicCommand.scala`` (0.10.1.1, 1.1.1: the ZooKeeper path; 2.4.1, 2.8.2, 3.6.2:
the AdminClient path) and ``tools/src/main/java/org/apache/kafka/tools/
TopicCommand.java`` (trunk-2024, the 4.0 texts). Every snapshot is one run of
the tool over all topics (sorted), appended to ``describe/kafka-topics-
describe.txt``: several runs in one file, in time order, as a person
running it in a loop during an outage would collect them. No timestamps:
the tool prints none.

* Header, 0.8.2-2.3: ``Topic:t\\tPartitionCount:n\\tReplicationFactor:rf\\t
  Configs:k=v,...``; 2.4-2.7: the same with a space after each colon; 2.8+:
  ``\\tTopicId: id`` after the topic name.
* Partition line: ``\\tTopic: t\\tPartition: p\\tLeader: l\\tReplicas: r,..\\t
  Isr: i,..``; 3.8+ (here 4.0, KRaft with DescribeTopicPartitions) then
  ``\\tElr: ..\\tLastKnownElr: ..`` (an empty list prints nothing after the
  colon and space).
* No leader: the ZooKeeper path before 2.4 prints the znode's ``-1``; 2.4+ and
  every AdminClient path print ``none``.
* Configs: the topic's overrides (``min.insync.replicas`` when not 1,
  ``unclean.leader.election.enable=true`` on a ZooKeeper cluster that allows
  it), by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from simulator.model import Registration
from simulator.versions import Version


class Describe:
    def __init__(self, path: Path, version: Version) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: TextIO = path.open("w", encoding="utf-8")
        self.version = version
        self.snapshots = 0

    def close(self) -> None:
        self._fh.close()

    def snapshot(
        self,
        topics: list[tuple[str, str, dict[str, str], list[tuple[int, Registration]]]],
    ) -> None:
        """``topics``: (name, topic id, config overrides, [(partition, registration)])."""
        v = self.version
        sep = ": " if v.at_least("2.4") else ":"
        for name, topic_id, configs, parts in sorted(topics):
            configs_text = ",".join(f"{k}={val}" for k, val in sorted(configs.items()))
            head = f"Topic{sep}{name}"
            if v.at_least("2.8"):
                head += f"\tTopicId: {topic_id}"
            rf = len(parts[0][1].replicas)
            head += (
                f"\tPartitionCount{sep}{len(parts)}\tReplicationFactor{sep}{rf}\tConfigs{sep}"
                f"{configs_text}"
            )
            self._fh.write(head + "\n")
            for p, reg in sorted(parts, key=lambda x: x[0]):
                no_leader = "-1" if v.before("2.4") else "none"
                leader = str(reg.leader) if reg.leader >= 0 else no_leader
                replicas = ",".join(str(r) for r in reg.replicas)
                isr = ",".join(str(r) for r in reg.isr)
                line = (
                    f"\tTopic: {name}\tPartition: {p}\tLeader: {leader}\tReplicas: {replicas}"
                    f"\tIsr: {isr}"
                )
                if v.at_least("3.8"):
                    line += (
                        f"\tElr: {','.join(str(r) for r in reg.elr or [])}\tLastKnownElr: "
                        f"{','.join(str(r) for r in reg.lkelr or [])}"
                    )
                self._fh.write(line + "\n")
        self.snapshots += 1
