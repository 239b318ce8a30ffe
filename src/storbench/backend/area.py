"""The share of a workload's area that was never written before the run (pure; NBD and Ceph samplers)."""

from __future__ import annotations


def unwritten_share(unwritten_bytes: int | None, area_bytes: int | None) -> float | None:
    """``unwritten_bytes / area_bytes``; None when either is unknown or the area is empty."""
    if unwritten_bytes is None or not area_bytes:
        return None
    return unwritten_bytes / area_bytes
