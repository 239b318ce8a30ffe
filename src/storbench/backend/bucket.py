"""What an S3 bucket held before and after one fio run, in the server's own count.

fio counts the requests its engine believes served; the server knows what the bucket holds.
Around every repetition on an ``s3://`` target storbench asks the server for the bucket's objects
and bytes, the way each server says it cheaply:

* **radosgw** answers a ``HEAD`` of the bucket with ``X-RGW-Object-Count`` and ``X-RGW-Bytes-Used``
  (the bucket index's own totals: one request whatever the bucket holds; its
  ``X-RGW-Quota-Bucket-*`` headers are not read: radosgw 16 sends a quota's values whether it is
  enabled or not);
* a server that does not (Swift's ``s3api``, most others) is counted by listing the run's own
  prefix (``ListObjectsV2``, at most :data:`LIST_PAGES` pages): what the run's objects are, not
  the whole bucket's.

The difference beside fio's own requests is :mod:`storbench.checks.objects`' ``object-bucket-changed``
(another client writing to, or deleting from, the bucket during a repetition).

Pure: :class:`BucketCount`, :class:`BucketActivity`, :func:`parse_bucket_headers`,
:func:`format_bucket_activity`.  The edge: :mod:`.bucket_sampler`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

#: a listing stops after this many pages of 1,000 keys (the count is then not known)
LIST_PAGES = 20
#: where a count came from: the server's own totals for the whole bucket, or a listing of the run's prefix
SOURCES = ("server", "listing")


@dataclass(frozen=True)
class BucketCount:
    """What a bucket (or a prefix of it) held at one moment."""

    objects: int
    bytes: int


def _int(headers: Mapping[str, str], name: str) -> int | None:
    value = headers.get(name)
    if value is None:
        return None
    try:
        return int(value.strip())
    except ValueError:
        raise ValueError(f"the server's {name} header is not a number: {value!r}") from None


def parse_bucket_headers(headers: Mapping[str, str]) -> BucketCount | None:
    """A ``HEAD`` of a bucket's response headers (any case) -> its count, when the server gives
    one (radosgw: ``X-RGW-Object-Count``, ``X-RGW-Bytes-Used``); None when it does not.
    ValueError for a count that is not a number."""
    low = {k.lower(): v for k, v in headers.items()}
    objects, used = _int(low, "x-rgw-object-count"), _int(low, "x-rgw-bytes-used")
    if objects is None or used is None:
        return None
    return BucketCount(objects=objects, bytes=used)


@dataclass(frozen=True)
class BucketActivity:
    """A bucket's count before and after one run (``source``: :data:`SOURCES`; ``where``: the
    bucket, or the prefix listed), and what could not be read."""

    where: str
    source: str = "server"
    before: BucketCount | None = None
    after: BucketCount | None = None
    problems: tuple[str, ...] = ()

    def delta_objects(self) -> int | None:
        """How many objects more the bucket (prefix) held after the run (negative: fewer); None: not read."""
        if self.before is None or self.after is None:
            return None
        return self.after.objects - self.before.objects

    def delta_bytes(self) -> int | None:
        if self.before is None or self.after is None:
            return None
        return self.after.bytes - self.before.bytes


def format_bucket_activity(activity: BucketActivity) -> list[str]:
    """``bucket bench (radosgw's own count): 1,024 objects (4.0 MiB) before, 1,280 (5.0 MiB) after: 256 more``,
    or what could not be read."""
    from ..units import format_bytes

    if activity.problems:
        return list(activity.problems)
    if activity.before is None or activity.after is None:
        return []
    whose = "the server's own count" if activity.source == "server" else "listed: the run's own objects"
    change = activity.delta_objects() or 0
    moved = f"{change:,} more" if change > 0 else (f"{-change:,} fewer" if change < 0 else "no change")
    return [f"{activity.where} ({whose}): {activity.before.objects:,} objects ({format_bytes(activity.before.bytes)}) before, "
            f"{activity.after.objects:,} ({format_bytes(activity.after.bytes)}) after: {moved}"]  # fmt: skip
