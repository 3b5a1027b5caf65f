"""Ingest: raw artefacts -> silver ``partition_events`` + quarantine + accounting.

The plan is ``plan.py``; each artefact family has its reader module
(request_log, broker_log, metadata_dump, segment_dump, znode_dump, views,
checkpoint, binary_segment), ``sniff.py`` recognises files and ``lines.py``
holds the line table they all read.
"""

from pipeline.ingest.plan import IngestResult, ingest

__all__ = ["IngestResult", "ingest"]
