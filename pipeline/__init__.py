"""Spark jobs: ingest, reconstruct, replay bridge, publish; and the CLI."""

__version__ = "0.1.0"
