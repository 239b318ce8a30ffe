"""Phoronix Test Suite result files (``composite.xml``) as storbench results.

:mod:`.resultfile` parses the file into frozen records (pure, with defusedxml);
:mod:`.mapping` turns them into storbench results: one configuration per system, one
workload per result, one repetition per trial.  ``storbench import`` is the only caller.

May import: model, units and errors (pure); never the store or commands.
"""

from .mapping import PtsImport, PtsRecord, PtsWorkload, map_result_file
from .resultfile import (
    PtsEntry,
    PtsResult,
    PtsResultFile,
    PtsSystem,
    looks_like_pts,
    parse_result_file,
)

__all__ = [
    "PtsEntry",
    "PtsImport",
    "PtsRecord",
    "PtsResult",
    "PtsResultFile",
    "PtsSystem",
    "PtsWorkload",
    "looks_like_pts",
    "map_result_file",
    "parse_result_file",
]
