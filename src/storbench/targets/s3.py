"""S3 buckets (Ceph radosgw, Swift's s3api, any S3 server), through fio's own http engine.

``--target s3://BUCKET[/PREFIX]?endpoint=http://HOST:PORT[&region=R]``.  fio's ``http`` engine
in S3 mode (``http_mode=s3``; Debian builds fio without it, ``make install`` builds it from this
fio's Debian source as an external engine, :func:`.base.external_engine`) PUTs a write, GETs a
read and DELETEs a trim, one object per block: the key is ``<filename>_<offset>_<length>``.

Where the objects go: under ``PREFIX/storbench-HOST-PID-TIME/`` (:func:`run_prefix`), a prefix of
the run's own, one key base per job and clone (``filename_format=/BUCKET/.../$jobname.$jobnum``:
with one ``filename`` every clone of ``numjobs`` would PUT and GET the same keys).  Nothing
storbench did not write is read, overwritten or deleted; after the run the prefix is emptied
(:meth:`S3Kind.remove_remote`), and a prefix a killed run of this host left is emptied by the next
run on the same bucket (said).  A bucket that does not exist is made, and removed afterwards,
only when ``--destroy-data s3://BUCKET`` names it.

fio 3.33's engine counts a GET of an object that does not exist (HTTP 404) as a success and
returns zeros.  So every job writes its objects with a pattern (``verify=pattern``) and a reading
job checks it: a 404 is fio's error ("verify failed"), never a zero-filled success; and storbench
PUTs the objects a reading workload reads before it runs (:func:`storbench.run.prepare.write_objects_first`).

Credentials: ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY`` or the AWS files the user already
has (``~/.aws/credentials``, ``AWS_PROFILE``), through botocore.  They reach fio through its
environment (``${STORBENCH_SECRET_S3_KEYID}`` in the job), never a job file or the store: fio's
output has them masked before it is parsed or kept (:func:`storbench.run.fioexec.run_fio`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from storbench.errors import TargetError
from storbench.model import Target

from .base import Options, Placement, ResolveContext, TargetKind, external_engine

if TYPE_CHECKING:
    from storbench.storage import StorageInfo

PREFIX = "s3://"
#: the environment fio reads the credentials from (run_fio masks every STORBENCH_SECRET_* value in its output)
KEYID_ENV = "STORBENCH_SECRET_S3_KEYID"
SECRET_ENV = "STORBENCH_SECRET_S3_KEY"
#: what every object storbench PUTs holds, checked by every GET (a 404's zeros fail the check)
PATTERN = "0x73626e63"
#: the start of every run's own prefix
OWN = "storbench-"
TIMEOUT_S = 15.0
_BUCKET_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_KEY_RE = re.compile(r"^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$")
_REGION_RE = re.compile(r"^[a-z0-9-]{1,40}$")
#: the options storbench sets on an S3 target (a workload setting one is refused)
OWN_OPTIONS = frozenset({"http_mode", "http_host", "http_user", "http_pass", "http_s3_key", "http_s3_keyid",
                         "http_s3_region", "https", "http_verbose", "filename_format", "verify", "verify_pattern",
                         "do_verify", "ioengine"})  # fmt: skip
#: options fio's http engine cannot carry out: it sends each request whole and waits for it
DROPPED = {
    "direct": "an S3 request has no page cache to bypass on the client",
    "end_fsync": "an S3 PUT is durable when the server answers it",
    "fsync": "an S3 PUT is durable when the server answers it",
    "fdatasync": "an S3 PUT is durable when the server answers it",
    "fsync_on_close": "an S3 PUT is durable when the server answers it",
}
_READS = {"read", "randread"}
_DELETES = {"trim", "randtrim"}


@dataclass(frozen=True)
class S3Spec:
    bucket: str
    prefix: str  #: "" or "a/b" (no slash at either end)
    endpoint: str  #: scheme://host:port
    region: str
    #: radosgw's admin socket on this machine (``admin_socket=PATH``): its own request counters are
    #: read around every repetition (:mod:`storbench.backend.rgw`)
    admin_socket: str | None = None

    @property
    def host(self) -> str:
        return urlsplit(self.endpoint).netloc

    @property
    def https(self) -> bool:
        return self.endpoint.startswith("https://")


def parse_s3_spec(spec: str) -> S3Spec:
    """``s3://BUCKET[/PREFIX]?endpoint=http://HOST:PORT[&region=R][&admin_socket=PATH]`` -> its parts;
    one line otherwise."""
    form = "s3://BUCKET[/PREFIX]?endpoint=http://HOST:PORT[&region=REGION][&admin_socket=PATH]"
    if not spec.startswith(PREFIX):
        raise TargetError(f"S3 target {spec!r} is not {form}")
    where, _, query = spec[len(PREFIX):].partition("?")
    bucket, _, prefix = where.partition("/")
    prefix = prefix.strip("/")
    if not _BUCKET_RE.match(bucket) or ".." in bucket:
        raise TargetError(f"S3 target {spec!r}: {bucket!r} is not a bucket name (3-63 lower-case letters, digits, '.' and '-'); the form is {form}")
    if prefix and not _KEY_RE.match(prefix):
        raise TargetError(f"S3 target {spec!r}: prefix {prefix!r} may hold letters, digits, '.', '_', '-' and '/' only")
    params: dict[str, str] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key not in ("endpoint", "region", "admin_socket") or key in params:
            raise TargetError(f"S3 target {spec!r}: {key!r} is not an option storbench knows here (endpoint=, region=, admin_socket=, once each)")
        params[key] = value
    endpoint = params.get("endpoint", "")
    parts = urlsplit(endpoint)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("http", "https") or not parts.hostname or port is None or parts.path not in ("", "/") or parts.query:
        raise TargetError(f"S3 target {spec!r}: endpoint {endpoint!r} is not http://HOST:PORT or https://HOST:PORT (the form is {form})")
    region = params.get("region") or "us-east-1"
    if not _REGION_RE.match(region):
        raise TargetError(f"S3 target {spec!r}: region {region!r} is not a region name (lower-case letters, digits and '-')")
    socket_path = params.get("admin_socket")
    if socket_path is not None and not (socket_path.startswith("/") and len(socket_path) < 4096):
        raise TargetError(f"S3 target {spec!r}: admin_socket {socket_path!r} is not an absolute path (radosgw's admin socket, e.g. /run/ceph/ceph-client.rgw.NAME.asok)")
    return S3Spec(bucket=bucket, prefix=prefix, endpoint=f"{parts.scheme}://{parts.netloc}", region=region, admin_socket=socket_path)


def bucket_uri(spec: str) -> str:
    """What ``--destroy-data`` names to let storbench make (and remove) the bucket: ``s3://BUCKET``."""
    return PREFIX + parse_s3_spec(spec).bucket


def run_prefix(host: str, pid: int, now_s: float) -> str:
    """The run's own prefix: ``storbench-HOST-PID-TIME`` (a killed run's is found by its host and PID)."""
    safe = re.sub(r"[^A-Za-z0-9.-]", "-", host) or "host"
    return f"{OWN}{safe}-{pid}-{int(now_s)}"


def stale_prefixes(names: Sequence[str], host: str, alive: Mapping[int, bool]) -> list[str]:
    """Of the run prefixes ``names`` (``storbench-HOST-PID-TIME``), those this host made whose
    process is gone (``alive``: pid -> whether it runs now).  Pure."""
    safe = re.sub(r"[^A-Za-z0-9.-]", "-", host) or "host"
    out = []
    for name in names:
        m = re.fullmatch(rf"{re.escape(OWN + safe)}-(\d+)-(\d+)", name)
        if m and not alive.get(int(m.group(1)), False):
            out.append(name)
    return out


def credentials(environ: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(access key, secret) from the environment or the AWS files (botocore's own search); one line when none."""
    env = os.environ if environ is None else environ
    key, secret = env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY")
    if key and secret:
        return key, secret
    import botocore.session

    try:
        found = botocore.session.Session().get_credentials()
    except Exception as exc:  # a broken AWS config file: its own words
        raise TargetError(f"cannot read the AWS credentials: {exc}") from None
    if found is None or not found.access_key or not found.secret_key:
        raise TargetError("no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give them in ~/.aws/credentials (AWS_PROFILE picks a profile)")
    return found.access_key, found.secret_key


def client(s3: S3Spec, key: str, secret: str) -> Any:
    """A boto3 S3 client for the endpoint: path-style, SigV4, bounded timeouts and no retries
    (a gateway that does not answer is one line, not minutes)."""
    import boto3
    from botocore.config import Config

    config = Config(s3={"addressing_style": "path"}, signature_version="s3v4", connect_timeout=TIMEOUT_S,
                    read_timeout=TIMEOUT_S, retries={"max_attempts": 1, "mode": "standard"})  # fmt: skip
    api = boto3.client("s3", endpoint_url=s3.endpoint, region_name=s3.region, aws_access_key_id=key,
                       aws_secret_access_key=secret, config=config)  # fmt: skip
    api.meta.events.register("before-sign.s3.DeleteObjects", _content_md5)
    api.meta.events.register_first("needs-retry.s3", _no_region_redirect)
    return api


#: the server's codes for a request signed for another region than its own
_WRONG_REGION = ("AuthorizationHeaderMalformed", "IllegalLocationConstraintException", "PermanentRedirect")


def _no_region_redirect(response: Any = None, operation: Any = None, **_: Any) -> None:
    """botocore answers a server's "wrong region" by signing the request again for the region the
    server names, silently: storbench's own requests then pass while fio, signing for the target's
    region, fails (Swift's s3api checks the region; measured).  The server's answer is raised instead."""
    parsed = response[1] if isinstance(response, tuple) and len(response) > 1 else None
    if isinstance(parsed, dict) and parsed.get("Error", {}).get("Code") in _WRONG_REGION:
        from botocore.exceptions import ClientError

        raise ClientError(parsed, getattr(operation, "name", "request"))


@functools.lru_cache(maxsize=8)
def cached_client(spec: str, key: str, secret: str) -> Any:
    """:func:`client` for a target, made once per target and keys (making one takes tens of
    milliseconds; the bucket is counted around every repetition)."""
    return client(parse_s3_spec(spec), key, secret)


def _content_md5(request: Any, **_: Any) -> None:
    """S3 requires a multi-object delete to carry its body's MD5; botocore since 1.36 sends a CRC32
    checksum instead, which Swift's s3api (2.30) refuses ("Missing required header for this
    request: Content-MD5"): the run's objects stayed and its bucket with them.  Sent as S3 says."""
    import base64
    import hashlib

    body = request.body if isinstance(request.body, bytes) else (request.body or "").encode()
    request.headers["Content-MD5"] = base64.b64encode(hashlib.md5(body, usedforsecurity=False).digest()).decode()


def error_line(s3: S3Spec, exc: BaseException) -> str:
    """A client's exception as one line: the server's own code and words where it answered."""
    from botocore.exceptions import ClientError, EndpointConnectionError, ReadTimeoutError

    if isinstance(exc, EndpointConnectionError):
        return f"no S3 server answers at {s3.endpoint} ({exc})"
    if isinstance(exc, ReadTimeoutError):
        return f"the S3 server at {s3.endpoint} did not answer within {TIMEOUT_S:g} s"
    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        code, status = err.get("Code") or "?", exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        meaning = {
            "InvalidAccessKeyId": "the access key is not known to the server",
            "SignatureDoesNotMatch": "the signature does not match: the secret key is wrong (Swift's s3api says this of an unknown access key too)",
            "AccessDenied": "the credentials may not do this",
            "NoSuchBucket": f"bucket {s3.bucket} does not exist",
            "AuthorizationHeaderMalformed": f"the server expects another region than {s3.region}",
            "IllegalLocationConstraintException": f"the server refuses region {s3.region}",
            "InvalidLocationConstraint": f"the server refuses region {s3.region}",
            "403": "access denied (wrong key, secret or region)",
            "404": f"bucket {s3.bucket} does not exist",
            "400": f"the server refused the request (a wrong region {s3.region}?)",
            "301": f"the bucket is in another region than {s3.region}",
        }.get(code, "")
        said = err.get("Message") or ""
        return f"the S3 server at {s3.endpoint} answered {status} {code}" + (f": {meaning}" if meaning else "") + (f" ({said})" if said and said != meaning else "")
    return f"the S3 server at {s3.endpoint}: {type(exc).__name__}: {exc}"


def list_keys(api: Any, bucket: str, prefix: str) -> list[str]:
    keys: list[str] = []
    for page in api.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys.extend(o["Key"] for o in page.get("Contents", ()))
    return keys


def delete_keys(api: Any, bucket: str, keys: Sequence[str]) -> None:
    for i in range(0, len(keys), 1000):  # S3's DeleteObjects takes at most 1,000 keys
        api.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys[i:i + 1000]], "Quiet": True})


class _NoBucket(Exception):
    """The bucket is made when the run starts: nothing in it to list yet."""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class S3Kind(TargetKind):
    name = "s3"
    prefixes = (PREFIX,)
    own_options = OWN_OPTIONS
    needs_size = True
    local_path = False
    noun = "an S3 bucket"
    remote_test_file = True
    reads_need_objects = True
    hosts_reach = True
    #: fio's http engine waits for a request without end (no curl timeout): stuck a minute past its end
    request_stall_s = 60.0
    dropped_options = DROPPED
    ceph_access = True

    def __init__(self) -> None:
        #: targets whose gateway did not answer a clean-up in this process: what was said then
        self._unanswered: dict[str, str] = {}

    def resolve(self, spec: str, ctx: ResolveContext) -> Target:
        s3 = parse_s3_spec(spec)
        engine = external_engine("http")
        if engine is None:
            raise TargetError(f"{spec}: fio's http engine (S3) is not built here: run make install (it builds it from this fio's Debian source), "
                              "or set STORBENCH_FIO_ENGINES to the directory holding fio-http.so")  # fmt: skip
        if s3.admin_socket is not None:  # radosgw's counters are read from it around every repetition
            import stat

            try:
                is_socket = stat.S_ISSOCK(os.stat(s3.admin_socket).st_mode)
            except OSError as exc:
                raise TargetError(f"{spec}: admin_socket {s3.admin_socket}: {exc.strerror or exc} (radosgw's admin socket: "
                                  "'admin socket' in its ceph.conf, /run/ceph/ceph-client.rgw.NAME.asok by default)") from None  # fmt: skip
            if not is_socket:
                raise TargetError(f"{spec}: admin_socket {s3.admin_socket} is not a socket (radosgw's admin socket, /run/ceph/ceph-client.rgw.NAME.asok by default)")
        key, secret = credentials()
        api = client(s3, key, secret)
        created = False
        try:
            api.list_objects_v2(Bucket=s3.bucket, MaxKeys=1)  # not HEAD: its error has a body that tells key from secret
        except Exception as exc:
            missing = getattr(exc, "response", {}).get("Error", {}).get("Code") in ("404", "NoSuchBucket")
            if not missing:
                raise TargetError(f"{spec}: {error_line(s3, exc)}") from None
            if bucket_uri(spec) not in ctx.destroy:
                raise TargetError(f"{spec}: bucket {s3.bucket} does not exist at {s3.endpoint}; create it, or pass --destroy-data "
                                  f"{bucket_uri(spec)} to let storbench make it for the run and remove it afterwards") from None  # fmt: skip
            created = True  # made when the run starts (serve), not by a --dry-run
        try:  # what a killed run of this host left under this prefix (its own prefix, never another's)
            if created:
                raise _NoBucket
            base = f"{s3.prefix}/" if s3.prefix else ""
            pages = api.get_paginator("list_objects_v2").paginate(Bucket=s3.bucket, Prefix=base + OWN, Delimiter="/")
            runs = [p["Prefix"][len(base):].rstrip("/") for page in pages for p in page.get("CommonPrefixes", ())]
        except _NoBucket:
            runs, base = [], ""
        except Exception as exc:
            raise TargetError(f"{spec}: listing bucket {s3.bucket}: {error_line(s3, exc)}") from None
        host = socket.gethostname()
        pids = {int(m.group(1)) for r in runs if (m := re.search(r"-(\d+)-\d+$", r))}
        stale = stale_prefixes(runs, host, {pid: _pid_alive(pid) for pid in pids})
        left = []
        for name in stale:
            try:
                keys = list_keys(api, s3.bucket, f"{base}{name}/")
                delete_keys(api, s3.bucket, keys)
            except Exception as exc:
                raise TargetError(f"{spec}: removing what a killed run of this host left ({name}): {error_line(s3, exc)}") from None
            left.append(f"{name} ({len(keys)} objects)")
        params: list[tuple[str, str]] = [("run_prefix", run_prefix(host, os.getpid(), time.time())), ("engine", engine)]
        if created:
            params.append(("make_bucket", "1"))
        if left:
            params.append(("removed_stale", "; ".join(left)))
        params.extend(self._cluster(spec, s3, ctx, made_later=created))
        return Target(kind="s3", path=spec, params=tuple(params))

    @staticmethod
    def _cluster(spec: str, s3: S3Spec, ctx: ResolveContext, *, made_later: bool) -> list[tuple[str, str]]:
        """The Ceph cluster under a radosgw bucket, where the user pointed at it (``--ceph-conf``,
        ``--ceph-client`` or ``--ceph-timeout``) or named radosgw's admin socket (then the
        configuration of :func:`.ceph.access_params`, checked to be radosgw's own cluster): its
        access and the bucket's data pool (``radosgw-admin bucket stats``, else the zone's placement).
        Given explicitly, what fails is one line; found only through the socket, it is a note."""
        from storbench.storage.ceph import parse_bucket_placement, parse_zone_data_pool

        from . import ceph

        explicit = bool(ctx.ceph_conf or ctx.ceph_client or ctx.ceph_timeout_s is not None)
        if not explicit and s3.admin_socket is None:
            return []

        def fail(said: str) -> list[tuple[str, str]]:
            if explicit:
                raise TargetError(f"{spec}: the Ceph cluster under the bucket: {said}")
            return [("cluster_note", f"the Ceph cluster under the gateway is not described: {said} (give --ceph-conf and --ceph-client)")]

        try:
            access = list(ceph.access_params(ctx))
        except TargetError as exc:
            return fail(str(exc))
        probe = Target(kind="s3", path=spec, params=tuple(access))
        if s3.admin_socket is not None:  # the configuration must reach radosgw's own cluster
            from storbench.process import proc

            try:
                said = proc.run(["ceph", "--admin-daemon", s3.admin_socket, "config", "get", "fsid"], timeout_s=ceph.CLI_TIMEOUT_S).stdout
            except (OSError, subprocess.TimeoutExpired):
                said = ""  # not known: the bucket stats below still have to find the bucket there
            rc, out, err = ceph.cli(probe, "ceph", "fsid", "-f", "json")
            theirs = re.search(r'"fsid"\s*:\s*"([^"]+)"', said or "")
            ours = re.search(r'"fsid"\s*:\s*"([^"]+)"', out or "")
            if rc != 0:
                return fail(f"ceph fsid with {ceph.conf_of(probe)}: {ceph.first_line(out, err, rc)}")
            if theirs and ours and theirs.group(1) != ours.group(1):
                return fail(f"{ceph.conf_of(probe)} is cluster {ours.group(1)}, radosgw at {s3.admin_socket} runs on {theirs.group(1)}")
        admin = ("--admin-socket=",)  # never bind (or take) the socket of a radosgw of the same name
        rule, pool = "default-placement", None
        if not made_later:
            rc, out, err = ceph.cli(probe, "radosgw-admin", *admin, "bucket", "stats", "--bucket", s3.bucket)
            if rc != 0:
                return fail(f"radosgw-admin bucket stats --bucket {s3.bucket}: {ceph.first_line(out, err, rc)}")
            try:
                rule, pool = parse_bucket_placement(out)
            except ValueError as exc:
                return fail(str(exc))
        if pool is None:
            rc, out, err = ceph.cli(probe, "radosgw-admin", *admin, "zone", "get")
            if rc != 0:
                return fail(f"radosgw-admin zone get: {ceph.first_line(out, err, rc)}")
            try:
                pool = parse_zone_data_pool(out, rule)
            except ValueError as exc:
                return fail(str(exc))
        return [*access, ("pool", pool), ("placement", rule)]

    def place(self, target: Target, options: Options, *, test_file_name: str, export_size: str | None) -> Placement:
        s3 = parse_s3_spec(target.path)
        for key, _ in options:
            if key in OWN_OPTIONS - {"ioengine"}:
                from storbench.errors import SuiteError

                raise SuiteError(f"option {key!r} is set by storbench on an S3 target (it decides where the objects go)")
        engines = [v for k, v in options if k == "ioengine"]
        options[:] = [(k, v) for k, v in options if k not in ("ioengine", "iodepth")]
        rw = next((v for k, v in options if k in ("rw", "readwrite")), "read") or "read"
        notes = [f"fio's http engine in S3 mode (built from this fio's Debian source, loaded as an external engine): "
                 f"one request at a time per job, each block one object{'' if not engines else f'; ioengine={engines[-1]} replaced'}"]  # fmt: skip
        base = "/".join(p for p in (s3.bucket, s3.prefix, target.param("run_prefix") or OWN + "run") if p)
        verify: list[tuple[str, str | None]] = [("verify", "pattern"), ("verify_pattern", PATTERN)]
        if rw in _DELETES:
            verify = []  # a DELETE carries no data; of a missing object it is a success in S3 too
        elif rw in _READS:
            notes.append("every GET checks the pattern storbench PUT: a missing object (404) is an error, not zeros")
        else:
            verify.append(("do_verify", "0"))
            if rw not in ("write", "randwrite"):
                notes.append("a mixed job's GETs are not checked (fio verifies reads of read-only jobs only)")
        return Placement(
            options=(("ioengine", f"external:{target.param('engine') or external_engine('http') or 'fio-http.so'}"),
                     ("http_mode", "s3"), ("http_host", s3.host), *((("https", "on"),) if s3.https else ()),
                     ("http_s3_region", s3.region), ("http_s3_keyid", "${" + KEYID_ENV + "}"),
                     ("http_s3_key", "${" + SECRET_ENV + "}"), *verify,
                     ("filename_format", f"/{base}/$jobname.$jobnum")),
            notes=tuple(notes),
            env=self._env(),
        )

    @staticmethod
    def _env() -> tuple[tuple[str, str], ...]:
        try:
            key, secret = credentials()
        except TargetError:
            return ((KEYID_ENV, ""), (SECRET_ENV, ""))  # resolve() said it already; a job built without a run (a plan)
        return ((KEYID_ENV, key), (SECRET_ENV, secret))

    def remove_remote(self, target: Target, names: Sequence[str]) -> bool:
        """Empty the run's own prefix (the bucket, when storbench made it, goes when the run ends:
        :meth:`serve`); one-line :class:`TargetError` when the server does not let it."""
        s3 = parse_s3_spec(target.path)
        problem = self._clean_up(target, client(s3, *credentials()), made=False)
        if problem:
            raise TargetError(problem)
        return True

    @contextlib.contextmanager
    def serve(self, target: Target, size_bytes: int | None = None) -> Iterator[None]:
        """For the run: the bucket made when ``--destroy-data s3://BUCKET`` allowed it; afterwards
        (an interrupted run too) the run's prefix emptied and a bucket storbench made removed."""
        s3 = parse_s3_spec(target.path)
        api = client(s3, *credentials())
        made = False
        if target.param("make_bucket"):
            try:
                api.create_bucket(Bucket=s3.bucket)
            except Exception as exc:
                raise TargetError(f"{target.path}: making bucket {s3.bucket}: {error_line(s3, exc)}") from None
            made = True
        try:
            with contextlib.ExitStack() as stack:
                if target.param("pool"):  # the cluster under the bucket is read around every repetition
                    from . import ceph

                    stack.enter_context(ceph.hold_client(target))
                yield
        finally:  # again, quietly: after Ctrl-C the runner's own removal may not have run
            self._clean_up(target, api, made)

    def _clean_up(self, target: Target, api: Any, made: bool) -> str | None:
        """Empty the run's prefix and remove a bucket storbench made; what could not be done, in a
        line.  A gateway that did not answer the first attempt is not asked again in this run (a
        full cluster's radosgw holds the deletes as it held the PUTs: each attempt waited 2 x 15 s)."""
        s3 = parse_s3_spec(target.path)
        own = "/".join(p for p in (s3.prefix, target.param("run_prefix")) if p) + "/"
        if target.path in self._unanswered:
            return self._unanswered[target.path]
        try:
            delete_keys(api, s3.bucket, list_keys(api, s3.bucket, own))
            if made:
                api.delete_bucket(Bucket=s3.bucket)
        except Exception as exc:
            from botocore.exceptions import ConnectionError as NoConnection
            from botocore.exceptions import ReadTimeoutError

            said = (f"the run's objects under s3://{s3.bucket}/{own} could not be removed "
                    f"({error_line(s3, exc)}); the next run on {target.path} removes them")  # fmt: skip
            if isinstance(exc, (ReadTimeoutError, NoConnection)):
                self._unanswered[target.path] = said
            return said
        return None

    @staticmethod
    def _gateways(target: Target, s3: S3Spec) -> list[str]:
        """The radosgw of the cluster's service map that serves the endpoint's port, in a note: its
        host, version, zone, frontend and machine's memory, and a beast frontend without
        ``tcp_nodelay=1`` (small requests then wait for delayed ACKs: ``object-request-delay``)."""
        from storbench.storage.ceph import parse_rgw_daemons
        from storbench.units import format_bytes

        from . import ceph

        rc, out, err = ceph.cli(target, "ceph", "service", "dump", "-f", "json")
        if rc != 0:
            return [f"ceph service dump failed: {ceph.first_line(out, err, rc)}"]
        try:
            daemons = parse_rgw_daemons(out)
        except ValueError as exc:
            return [f"ceph service dump: {exc}"]
        port = urlsplit(s3.endpoint).port or (443 if s3.https else 80)
        serving = [d for d in daemons if port in d.ports()]
        if not serving:
            known = ", ".join(f"{d.name} ({'/'.join(map(str, d.ports())) or '?'})" for d in daemons) or "none"
            return [f"no radosgw of the cluster listens on port {port} (its gateways: {known}): a proxy or load balancer in front of them?"]
        notes = []
        for d in serving:
            memory = f", its machine {format_bytes(d.mem_total_bytes)} of RAM" if d.mem_total_bytes else ""
            notes.append(f"served by radosgw {d.name} on host {d.hostname or '?'} (ceph {d.version or '?'}, zone {d.zone or '?'}{memory}; "
                         f"frontend: {'; '.join(d.frontends) or '?'})")  # fmt: skip
            if d.nodelay() is False:
                notes.append(f"radosgw {d.name}'s beast frontend has no tcp_nodelay=1: each small request may wait about 40 ms for a "
                             "delayed ACK (object-request-delay)")  # fmt: skip
        return notes

    def explain_failure(self, target: Target, reason: str) -> str:
        """fio's http engine says little: a transfer that failed is the server gone or refusing
        (probed now), a pattern that does not match a GET that found no object (HTTP 404, which
        fio 3.33 takes for zeros) or one changed under the run."""
        s3 = parse_s3_spec(target.path)
        if "verify failed" in reason or "bad pattern" in reason or "got pattern" in reason:
            return (f"a GET returned other bytes than storbench PUT [object-404]: the object is missing (fio 3.33's http engine "
                    f"takes the server's 404 for zeros) or was changed under the run ({reason})")  # fmt: skip
        if "engines/http.c" in reason:
            parts = urlsplit(s3.endpoint)
            try:
                with socket.create_connection((parts.hostname or "", parts.port or 80), timeout=2):
                    state = "answers connections now"
            except OSError as exc:
                state = f"is not answering now ({exc.strerror or exc}); it answered when the run started"
            return f"a request to the S3 server at {parts.netloc} failed and the server {state} (fio's http engine: {reason.split('error=')[-1]})"
        return reason

    def server(self, target: Target) -> tuple[str, str, int] | None:
        parts = urlsplit(parse_s3_spec(target.path).endpoint)
        return ("the S3 server", parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80))

    def space_paths(self, target: Target, test_files: Sequence[str]) -> tuple[list[str], str] | None:
        return None

    def describe_path(self, target: Target) -> str | None:
        return None

    def describe(self, target: Target, fio_version: str | None) -> StorageInfo | None:
        from storbench.storage import StorageInfo, describe_host

        s3 = parse_s3_spec(target.path)
        notes = [f"S3 bucket {s3.bucket} at {s3.endpoint} (region {s3.region}, path-style requests), objects under "
                 f"{'/'.join(p for p in (s3.prefix, target.param('run_prefix')) if p)}/ only, removed after the run",
                 "fio's http engine (S3 mode): one object per block, PUT payloads SHA-256-signed on the client"]  # fmt: skip
        if s3.admin_socket is not None:
            notes.append(f"radosgw's own request counters read from {s3.admin_socket} around every repetition (perf dump)")
        if target.param("make_bucket"):
            notes.append(f"bucket {s3.bucket} made for the run (--destroy-data {bucket_uri(target.path)}), removed after it")
        if target.param("removed_stale"):
            notes.append(f"removed what killed runs of this host left: {target.param('removed_stale')}")
        if target.param("cluster_note"):
            notes.append(target.param("cluster_note") or "")
        cluster = None
        pool = target.param("pool")
        if pool:
            from . import ceph

            notes.append(f"the bucket's objects are in Ceph pool {pool} (placement {target.param('placement')}); "
                         "the cluster's OSD counters read around every repetition")  # fmt: skip
            cluster = ceph.describe_cluster(target, pool, notes)
            if cluster.fsid is not None and cluster.pool is None:
                notes.append(f"Ceph pool {pool} does not exist yet: radosgw makes it when the first object is written")
            if cluster.fsid is not None:
                notes.extend(self._gateways(target, s3))
        host = describe_host(fio_version, notes=notes)
        return StorageInfo(target=target.path, target_kind="s3", filesystem=None, devices=(), host=host, notes=tuple(notes), ceph=cluster)


S3 = S3Kind()
