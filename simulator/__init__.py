"""An independent witness: a discrete-event model of a KRaft Kafka cluster.

It injects faults, writes the artefacts a real cluster writes (request logs,
metadata-log dump) in their exact formats, and writes down the truth
(``truth.json``) from its own state, following docs/findings.md. Standard
library only; it never imports the replay, the pipeline or the schemas.
"""

from __future__ import annotations

from simulator.api import list_scenarios, run, simulate

__all__ = ["simulate", "list_scenarios", "run"]
