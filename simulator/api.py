"""The simulator's entry points (re-exported by ``simulator``)."""

from __future__ import annotations

import pathlib
from typing import Any

from simulator.cluster import Cluster, write_truth
from simulator.scenarios import build, listing
from simulator.truth import Truth


def run(
    scenario: str,
    out: pathlib.Path,
    seed: int = 0,
    scale: float = 1.0,
    check: bool = False,
    **knobs: Any,
) -> tuple[dict[str, Any], Cluster]:
    """Run a scenario; returns the truth and the finished model (for tests)."""
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    spec = build(scenario, seed=seed, scale=scale, **knobs)
    truth = Truth(spec.name, seed, spec.era, spec.params())
    cluster = Cluster(spec, out, seed, truth, check=check)
    cluster.run()
    result = truth.result()
    write_truth(out, result)
    return result, cluster


def simulate(
    scenario: str, out: pathlib.Path, seed: int = 0, scale: float = 1.0, **knobs: Any
) -> dict[str, Any]:
    """Write the artefacts of ``scenario`` under ``out`` and return its truth."""
    result, _ = run(scenario, out, seed=seed, scale=scale, **knobs)
    return result


def list_scenarios(
    all_eras: bool = False, rules: bool = False, evidence: bool = False
) -> list[tuple[str, str]]:
    """(name, one-line description) of every scenario; the ZK eras' ones only
    with ``all_eras`` (the replay does not read ZK-era artefacts yet), the ones
    whose truth holds rule violations (zombie leader, ISR-rule mutations) only
    with ``rules``, the ones made of the evidence artefacts of issues 12 and 13
    (consumer traffic, startup lines, pre-2.8 templates, describe snapshots,
    pasted excerpts) only with ``evidence``."""
    return listing(all_eras, rules, evidence)
