"""``epochtrail simulate``: a function usable as a typer command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

# from the submodule: works even where an old editable install maps ``simulator``
# as a namespace package (its __init__ then never runs)
from simulator.api import list_scenarios, simulate


def simulate_command(
    scenario: Optional[str] = typer.Argument(  # noqa: UP045, B008 - typer's declaration style
        None, help="Scenario name (see --list)."
    ),
    out: Optional[Path] = typer.Option(  # noqa: UP045, B008
        None, "--out", help="Output folder: broker-N/, controller/, truth.json."
    ),
    seed: int = typer.Option(0, "--seed", help="Random seed (same seed, same bytes)."),  # noqa: B008
    scale: float = typer.Option(  # noqa: B008
        1.0, "--scale", help="Multiply duration (random) or add clean traffic (named)."
    ),
    list_: bool = typer.Option(False, "--list", help="List the scenarios and exit."),  # noqa: B008
) -> None:
    """Simulate a Kafka cluster with faults; write its artefacts and truth.json."""
    if list_:
        for name, description in list_scenarios(all_eras=True, rules=True, evidence=True):
            typer.echo(f"{name}\t{description}")
        return
    if scenario is None or out is None:
        raise typer.BadParameter("give a SCENARIO and --out DIR (or --list)")
    try:
        truth = simulate(scenario, out, seed=seed, scale=scale)
    except (KeyError, ValueError) as exc:
        raise typer.BadParameter(str(exc)) from exc
    kinds: dict[str, int] = {}
    for f in truth["findings"]:
        kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
    typer.echo(json.dumps({"scenario": scenario, "out": str(out), "findings": kinds}))


def main() -> None:  # pragma: no cover - manual use: python -m simulator.cli
    typer.run(simulate_command)


if __name__ == "__main__":  # pragma: no cover
    main()
