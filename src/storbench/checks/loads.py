"""The pitfalls of the application loads (pgbench, dbench, fs_mark, sysbench fileio).

Checks (ids), over a load's options (the workload's, every one filled in) and what its last
repetition reported in ``global_options`` (the tool's own settings; for pgbench the server's
``fsync``, ``synchronous_commit``, ``checkpoint_timeout`` and the database's size in bytes;
``client_cpu_s`` and ``wall_s``: the CPU the load's own programs used and how long it ran):

* ``load-dataset-in-ram`` -- the data the load reads fits in the machine's RAM (pgbench's
  database; sysbench fileio's files without O_DIRECT, in a mode that reads), so after the first
  pass its reads are answered from memory (shared buffers, the page cache, the ARC).
* ``load-not-durable`` -- commits or files acknowledged before they are on stable storage:
  PostgreSQL with ``fsync=off`` (invalid: nothing is durable) or ``synchronous_commit=off``;
  fs_mark without any sync (``sync=0``); sysbench fileio writing without fsync or O_DIRECT.
* ``load-client-cpu-bound`` -- the load's own programs used :data:`CLIENT_CPU_BOUND_SHARE` or more of
  the CPUs they could use (their threads or clients, at most the machine's CPUs): the client, not
  the storage, set the pace.
* ``load-clients-over-cores`` -- more than :data:`CLIENTS_PER_CORE` clients per CPU: they take turns
  on the CPUs, and the figure includes that queueing (seed 002's 128 and 256 dbench clients on a
  2-core machine).
* ``load-short-run`` -- a pgbench run that writes, shorter than the server's ``checkpoint_timeout``:
  no checkpoint need fall in the window, so the figure may leave out the checkpoint's writes (and
  two runs differ by whether one did).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from storbench.model import Finding
from storbench.units import format_bytes

from ._common import CheckInfo, finding, fix_of

if TYPE_CHECKING:  # pragma: no cover
    from .context import CheckContext

#: a load whose own programs used this share of the CPUs they could use was CPU-bound
CLIENT_CPU_BOUND_SHARE = 0.8
#: more clients than this per CPU wait for the CPU
CLIENTS_PER_CORE = 4
#: the options that set how many clients or threads drive each load
_CLIENTS = {"pgbench": "clients", "dbench": "clients", "fs_mark": "threads", "sysbench-fileio": "threads"}
_READING_MODES = ("seqrd", "rndrd", "rndrw")
_WRITING_MODES = ("seqwr", "seqrewr", "rndwr", "rndrw")

INFO = {
    "load-dataset-in-ram": CheckInfo(
        title="The load's data fits in RAM",
        explanation="The data an application load reads (a pgbench database, sysbench's files read without O_DIRECT) is smaller than the machine's memory, so after the first pass its reads come from shared buffers, the page cache or the ARC: the figure is the memory's for reads and the storage's only for what must be written.",
        evidence="pgbench: the database's size (pg_database_size after the run) below the RAM; sysbench fileio: its files' total size below the RAM in a mode that reads, without direct.",
        fix="Make the dataset larger than the RAM (pgbench size or scale, sysbench size), or open the files O_DIRECT (sysbench direct = true); or state that the figure is of a dataset held in memory.",
        severities=("warning",),
    ),
    "load-not-durable": CheckInfo(
        title="Commits acknowledged before they are durable",
        explanation="The load's writes are acknowledged before they reach stable storage (PostgreSQL with fsync or synchronous_commit off; fs_mark or sysbench without any sync), so the figure is how fast the page cache or the WAL buffer takes them, not how fast the storage makes them durable: it cannot be compared with a durable run.",
        evidence="pgbench: the server's fsync = off (invalid) or synchronous_commit = off (warning); fs_mark: sync = 0; sysbench fileio: a writing mode with fsync_freq = 0 and no direct.",
        fix="Run with fsync = on and synchronous_commit = on (PostgreSQL's defaults), fs_mark sync = 1, sysbench fsync_freq > 0; compare durable runs with durable runs only.",
        severities=("warning", "invalid"),
    ),
    "load-client-cpu-bound": CheckInfo(
        title="The load's client was CPU-bound",
        explanation="The load's own programs (pgbench, dbench's clients, fs_mark, sysbench) used nearly all the CPU they could use, so they, not the storage, may have set the pace.",
        evidence="The CPU time of the load's processes over its wall time is 80% or more of min(its threads or clients, the machine's CPUs).",
        fix="Use more threads (pgbench threads, up to the CPUs), run the client on another machine, or rerun on an idle machine; compare only runs whose client was not the limit.",
        severities=("warning",),
    ),
    "load-clients-over-cores": CheckInfo(
        title="More clients than the CPUs can serve",
        explanation="The load runs many more clients than the machine has CPUs, so the clients take turns on the CPUs and the figure includes that queueing, not only the storage's.",
        evidence="The load's clients (or threads) are more than 4 per CPU.",
        fix="Scale the client count to the machine (the seed's 1..256 ladder to 1..4x the CPUs), or say the CPUs were shared.",
        severities=("info",),
    ),
    "load-short-run": CheckInfo(
        title="No checkpoint need fall inside the run",
        explanation="A pgbench run that writes and is shorter than PostgreSQL's checkpoint_timeout may have no checkpoint inside its window, so its figure leaves out the checkpoint's writes (and two runs differ by whether one fell in).",
        evidence="pgbench tpcb or simple-update with a runtime below the server's checkpoint_timeout.",
        fix="Run at least as long as checkpoint_timeout (5 min by default), or lower checkpoint_timeout for the test; compare runs of equal length.",
        severities=("info",),
    ),
}


def _number(settings: Mapping[str, str | None], key: str) -> float | None:
    text = settings.get(key) or ""
    try:
        return float(text)
    except ValueError:
        return None


def _seconds(text: str | None) -> float | None:
    """PostgreSQL's ``300s``/``5min``/``1h`` as seconds."""
    if not text:
        return None
    for unit, factor in (("min", 60), ("ms", 0.001), ("s", 1), ("h", 3600), ("d", 86400)):
        if text.endswith(unit) and text[: -len(unit)].isdigit():
            return int(text[: -len(unit)]) * factor
    return float(text) if text.isdigit() else None


def _dataset_in_ram(ctx: CheckContext, tool: str, settings: Mapping[str, str | None]) -> Finding | None:
    if ctx.mem_bytes is None:
        return None
    ram = format_bytes(ctx.mem_bytes)
    if tool == "pgbench":
        size = _number(settings, "database_size")
        if size is None or size >= ctx.mem_bytes:
            return None
        return finding("load-dataset-in-ram", "warning",
                       f"the database is {format_bytes(size)} (scale {settings.get('scale', '?')}) and the machine has {ram} of RAM: "
                       "after the first pass its reads are answered from shared buffers and the page cache, not the storage",
                       fix_of(INFO["load-dataset-in-ram"]))  # fmt: skip
    if tool == "sysbench-fileio" and ctx.options.get("mode") in _READING_MODES and ctx.options.get("direct") != "1":
        from ..loads import LoadOptionError, size_bytes

        try:
            total = size_bytes(ctx.options.get("size") or "")
        except LoadOptionError:
            return None
        if total >= ctx.mem_bytes:
            return None
        return finding("load-dataset-in-ram", "warning",
                       f"sysbench's files are {format_bytes(total)} in all, read without O_DIRECT, and the machine has {ram} of RAM: "
                       "its reads are answered from the page cache",
                       fix_of(INFO["load-dataset-in-ram"]))  # fmt: skip
    return None


def _not_durable(ctx: CheckContext, tool: str, settings: Mapping[str, str | None]) -> Finding | None:
    fix = fix_of(INFO["load-not-durable"])
    if tool == "pgbench":
        if settings.get("fsync") == "off":
            return finding("load-not-durable", "invalid",
                           "PostgreSQL ran with fsync = off: no commit waited for the storage, and a crash may lose or corrupt "
                           "the database; the figure says nothing of the storage's durable speed", fix)  # fmt: skip
        if settings.get("synchronous_commit") == "off":
            return finding("load-not-durable", "warning",
                           "PostgreSQL ran with synchronous_commit = off: commits were acknowledged before their WAL was flushed "
                           "(up to 3 x wal_writer_delay of commits lost in a crash)", fix)  # fmt: skip
    elif tool == "fs_mark" and ctx.options.get("sync") == "0":
        return finding("load-not-durable", "warning",
                       "fs_mark ran with sync = 0: no file was synced, so files/s is how fast the page cache takes them", fix)  # fmt: skip
    elif (tool == "sysbench-fileio" and ctx.options.get("mode") in _WRITING_MODES and ctx.options.get("fsync_freq") == "0"
          and ctx.options.get("direct") != "1"):  # fmt: skip
        return finding("load-not-durable", "warning",
                       "sysbench wrote without fsync (fsync_freq = 0) or O_DIRECT: its writes stayed in the page cache", fix)  # fmt: skip
    return None


def _clients(ctx: CheckContext, tool: str) -> int | None:
    text = ctx.options.get(_CLIENTS.get(tool, ""))
    return int(text) if text and text.isdigit() else None


def _cpus(ctx: CheckContext) -> int | None:
    host = ctx.storage.host if ctx.storage is not None else None
    return host.cpu_count if host is not None else None


def _client_cpu_bound(ctx: CheckContext, tool: str, settings: Mapping[str, str | None]) -> Finding | None:
    cpu_s, wall_s, cpus = _number(settings, "client_cpu_s"), _number(settings, "wall_s"), _cpus(ctx)
    clients = _clients(ctx, tool)
    if tool == "pgbench":  # pgbench's clients share its threads
        clients = min(clients or 1, int(ctx.options.get("threads") or "1"))
    if cpu_s is None or not wall_s or cpus is None or clients is None:
        return None
    usable = min(clients, cpus)
    used = cpu_s / wall_s
    if used < CLIENT_CPU_BOUND_SHARE * usable:
        return None
    return finding("load-client-cpu-bound", "warning",
                   f"{tool}'s own processes used {used:.2f} CPUs over its {wall_s:.1f} s, of the {usable} they could use "
                   f"({clients} client thread(s), {cpus} CPUs): the client, not the storage, may have set the pace",
                   fix_of(INFO["load-client-cpu-bound"]))  # fmt: skip


def _clients_over_cores(ctx: CheckContext, tool: str) -> Finding | None:
    clients, cpus = _clients(ctx, tool), _cpus(ctx)
    if clients is None or not cpus or clients <= CLIENTS_PER_CORE * cpus:
        return None
    return finding("load-clients-over-cores", "info",
                   f"{clients} clients on {cpus} CPUs ({clients / cpus:.0f} per CPU): they take turns on the CPUs, and the figure "
                   "includes their queueing", fix_of(INFO["load-clients-over-cores"]))  # fmt: skip


def _short_run(ctx: CheckContext, tool: str, settings: Mapping[str, str | None]) -> Finding | None:
    if tool != "pgbench" or ctx.options.get("mode") == "select-only":
        return None
    runtime = _seconds(ctx.options.get("runtime"))
    timeout = _seconds(settings.get("checkpoint_timeout"))
    if runtime is None or timeout is None or runtime >= timeout:
        return None
    return finding("load-short-run", "info",
                   f"the run wrote for {runtime:g} s, less than checkpoint_timeout ({timeout:g} s): no checkpoint need fall inside it, "
                   "so its figure may leave out the checkpoint's writes", fix_of(INFO["load-short-run"]))  # fmt: skip


def check(ctx: CheckContext) -> list[Finding]:
    if ctx.tool == "fio":
        return []
    settings = ctx.results[-1].global_options
    found = [
        _dataset_in_ram(ctx, ctx.tool, settings),
        _not_durable(ctx, ctx.tool, settings),
        _client_cpu_bound(ctx, ctx.tool, settings),
        _clients_over_cores(ctx, ctx.tool),
        _short_run(ctx, ctx.tool, settings),
    ]
    return [f for f in found if f is not None]
