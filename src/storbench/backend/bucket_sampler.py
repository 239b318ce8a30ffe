"""The edge of :mod:`.bucket`: an ``s3://`` target's bucket counted before and after one fio run,
by the server's own totals (a ``HEAD`` of the bucket) or, where the server gives none, by listing
the run's own prefix."""

from __future__ import annotations

from collections.abc import Callable

from ..model import Target
from .activity import BackendActivity
from .bucket import LIST_PAGES, BucketActivity, BucketCount, parse_bucket_headers


def count_bucket(target: Target) -> tuple[str, str, BucketCount]:
    """(where, source, count) of ``target``'s bucket now: the server's totals when it gives them,
    else a listing of the run's prefix.  ValueError for a listing too long to count; the
    client's own exceptions for a server that did not answer."""
    from ..targets.s3 import cached_client, credentials, parse_s3_spec

    s3 = parse_s3_spec(target.path)
    api = cached_client(target.path, *credentials())
    reply = api.head_bucket(Bucket=s3.bucket)
    count = parse_bucket_headers(reply.get("ResponseMetadata", {}).get("HTTPHeaders", {}))
    if count is not None:
        return f"bucket {s3.bucket}", "server", count
    prefix = "/".join(p for p in (s3.prefix, target.param("run_prefix")) if p) + "/"
    objects = size = pages = 0
    for page in api.get_paginator("list_objects_v2").paginate(Bucket=s3.bucket, Prefix=prefix):
        pages += 1
        if pages > LIST_PAGES:
            raise ValueError(f"more than {LIST_PAGES * 1000:,} objects under s3://{s3.bucket}/{prefix}: not counted")
        for obj in page.get("Contents", ()):
            objects += 1
            size += int(obj.get("Size", 0))
    return f"s3://{s3.bucket}/{prefix}", "listing", BucketCount(objects=objects, bytes=size)


class BucketSampler:
    """An ``s3://`` target's bucket counted around one run (a context manager; ``activity()`` after it)."""

    def __init__(self, target: Target, *, count: Callable[[Target], tuple[str, str, BucketCount]] = count_bucket) -> None:
        self.target = target
        self.count = count
        self._before: tuple[str, str, BucketCount] | None = None
        self._activity: BucketActivity | None = None

    def _sample(self, when: str) -> tuple[str, str, BucketCount] | None:
        try:
            return self.count(self.target)
        except Exception as exc:  # a gateway gone or hung, a listing too long: said, the run goes on
            from ..targets.s3 import error_line, parse_s3_spec

            s3 = parse_s3_spec(self.target.path)
            said = str(exc) if isinstance(exc, ValueError) else error_line(s3, exc)
            self._activity = BucketActivity(where=f"bucket {s3.bucket}", problems=(f"bucket {s3.bucket} could not be counted {when} the run: {said}",))
            return None

    def __enter__(self) -> BucketSampler:
        self._before = self._sample("before")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._before is None:
            return
        after = self._sample("after")
        if after is not None:
            where, source, before = self._before
            self._activity = BucketActivity(where=where, source=source, before=before, after=after[2])

    def activity(self) -> BackendActivity:
        return BackendActivity(bucket=self._activity)
