"""One run from its request to its stored results: the run's own room.

:func:`run_session` takes a :class:`~storbench.run.request.RunRequest`, the injected environment
(:class:`SessionEnv`: :class:`storbench.context.Env`, how to open the store, where to say a line)
and the reporter the person watches, and does everything between: prepares the targets (the
write guard) or the hosts (each fio server pre-flighted), plans the jobs and says how long they
will take, opens the store (on another thread while the first fio starts) and creates the run,
publishes its live state, preconditions, runs the workloads through :func:`.runner.execute` (or
SNIA's steady-state rounds), marks the run complete, incomplete or failed with one line of
reason, and returns what was stored.  It prints nothing itself and never touches click: the
command (``storbench run``) prints the figures and writes the report.

:func:`dry_run_lines` and :func:`plan_lines` are ``run --dry-run`` and ``run --plan``.

May import what :mod:`storbench.run` may; the store only through the opener it is given.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from storbench.jsontypes import JSONObject, JSONValue

from ..errors import Interrupted, StorbenchError, UsageError
from ..model import JobSpec, Repeat, Target
from .request import RunRequest

if TYPE_CHECKING:

    from ..context import Env
    from ..jobs.plan import Estimate
    from ..record import ResultRecord
    from ..store.protocol import RunStore
    from .hosts import ClientFio
    from .preflight import Preflight
    from .runner import ExecuteContext, FioExecutor, Reporter, RunOutcome, Telemetry


@dataclass(frozen=True)
class SessionEnv:
    """What a run takes from the command that started it."""

    env: Env
    #: opens the results store (creates, upgrades or refuses it: see storbench.store)
    open_store: Callable[[], RunStore]
    #: the store's name, as the person gave it (the write guard refuses a target holding it)
    db_url: str
    #: one line for the person (stderr)
    say: Callable[[str], None]


@dataclass(frozen=True)
class SessionOutcome:
    """What a run stored: its id, every record of it, and why it is not complete (None: it is)."""

    run_id: int
    records: tuple[ResultRecord, ...]
    failure: str | None
    #: a client/server run (its hosts' lines are shown)
    remote: bool


#: the reporter the person watches, made once the run's duration is known (planned seconds); the
#: :class:`LiveReporter` around it enters and leaves it when it is a context manager (the CLI's drawer)
ReporterFactory = Callable[[float | None], "Reporter"]


#: who started a run from ``storbench serve``'s page (its client's address), kept in the run's meta
STARTED_BY_ENV = "STORBENCH_STARTED_BY"
#: a file the run's id is written to once the run is stored (serve's launcher follows the run by it)
RUN_ID_FILE_ENV = "STORBENCH_RUN_ID_FILE"


def _tell_run_id(path: str | None, run_id: int) -> None:
    if not path:
        return
    with contextlib.suppress(OSError):
        with open(path + ".part", "w", encoding="ascii") as fh:
            fh.write(f"{run_id}\n")
        os.replace(path + ".part", path)


def reconcile(store: RunStore, cwd: str, say: Callable[[str], None]) -> None:
    """Before a run: runs of this host left ``running`` by a killed storbench are marked incomplete
    (said once each, with how to resume), and its fio temporary directories and scratch directory
    in ``cwd`` removed."""
    from ..store.owner import SCRATCH_RE, remove_dead_temp_dirs

    for dead in store.reconcile_dead_runs():
        say(f"note: run {dead} was left running by a storbench process that is gone: marked incomplete "
            f"(storbench run --resume {dead} finishes it)")  # fmt: skip
    remove_dead_temp_dirs()
    remove_dead_temp_dirs(cwd, SCRATCH_RE)


def refuse_resuming_a_live_run(run_id: int, owner: JSONValue) -> None:
    """A run whose process still runs it (or may: another host's) is not resumed beside it."""
    from ..store.owner import gone

    if not isinstance(owner, dict) or owner.get("pid") == os.getpid():
        return
    state = gone(owner)
    if state is False:
        raise UsageError(f"run {run_id} is still running (storbench pid {owner.get('pid')} on this host); "
                         "wait for it to end or stop it (Ctrl-C or kill PID), then resume")  # fmt: skip
    if state is None:
        raise UsageError(f"run {run_id} is marked running by storbench pid {owner.get('pid')} on {owner.get('host')}, "
                         "which cannot be checked from here; resume it on that host")  # fmt: skip


# --------------------------------------------------------------------------- targets and hosts


def remote_targets(request: RunRequest) -> tuple[Target, ...]:
    """Client runs: a --target path is a directory ON the hosts, never looked at here; without
    one, the test file goes into each agent's working directory (a relative path).  A kind every
    host reaches itself (an S3 bucket: :attr:`~storbench.targets.base.TargetKind.hosts_reach`) is
    resolved here, as for a local run; any other kind is refused in one line."""
    from ..targets import claiming_kind

    out = []
    for path in request.target_paths:
        kind = claiming_kind(path)
        if kind is None:
            out.append(Target(kind="dir", path=path))
            continue
        if not kind.hosts_reach:
            raise UsageError(f"--target {path}: {kind.noun} cannot be driven through --host/--hosts (its client or bridge runs "
                             "on this machine); give a directory on the hosts, or an s3:// bucket")  # fmt: skip
        own = [h.display for h in request.hosts if h.target is not None]
        if own:
            raise UsageError(f"--target {path}: {kind.noun} is reached by every host itself; the hosts file gives "
                             f"{', '.join(own[:3])}{' ...' if len(own) > 3 else ''} a target directory of its own: leave it out")  # fmt: skip
        out.append(Target(kind=kind.name, path=path))
    return tuple(out) or (Target(kind="dir", path="."),)


def resolve_targets(ctx: SessionEnv, request: RunRequest) -> tuple[Target, ...]:
    """The request's targets, each through its kind and the write guard (refused in one line)."""
    from ..targets import resolve
    from ..targets.local import check_requested_size

    def resolved_here(t: str) -> Target:
        return resolve(t, destroy=request.destroy, workloads=request.guarded_workloads, db_path=ctx.db_url,
                       ceph_conf=request.ceph_conf, ceph_client=request.ceph_client, ceph_timeout_s=request.ceph_timeout_s)  # fmt: skip

    if request.hosts:  # directories on the hosts as they are; a kind the hosts reach checked from here
        return tuple(t if t.kind == "dir" else resolved_here(t.path) for t in remote_targets(request))
    resolved = tuple(resolved_here(t) for t in request.target_paths)
    for target in resolved:
        check_requested_size(target, request.overrides.size)
    return resolved


def serve_targets(stack: contextlib.ExitStack, targets: Sequence[Target], specs: Sequence[JobSpec]) -> None:
    """Start what each target's kind keeps running for the run (an iSCSI LUN's or an NFS export's
    qemu-nbd bridge; an NFS test file as large as the largest job on it), stopped when ``stack`` closes."""
    from ..targets import kind_of
    from ..units import parse_size

    for target in targets:
        sizes = [parse_size(v) for s in specs if s.target == target for k, v in s.options if k == "size" and v and not v.endswith("%")]
        stack.enter_context(kind_of(target).serve(target, max(sizes, default=None)))


def prepare_hosts(ctx: SessionEnv, request: RunRequest) -> tuple[ClientFio, Preflight]:
    """Client runs: pre-flight every host (reachable? same fio?); hosts that fail are left out
    with one line each, and the rest run."""
    from .hosts import ClientFio
    from .preflight import Preflight, check_hosts, format_answered

    probe_executor = ClientFio(request.hosts, ctx.env.fio_path)
    local_version = probe_executor.version()
    preflight = Preflight(tuple(check_hosts(request.hosts, probe_executor.path, local_version)))
    for check in preflight.left_out:
        ctx.say(f"host {check.host.display}: left out: {check.problem}")
    if not preflight.usable:
        first = preflight.left_out[0]
        raise StorbenchError(f"no host can run ({len(preflight.left_out)} left out); first: host {first.host.display}: {first.problem}")
    for line in format_answered(preflight.checks):
        ctx.say(line)
    required = request.hosts_required
    if required is not None and len(preflight.usable) < required:
        first = preflight.left_out[0]
        raise StorbenchError(f"{len(preflight.usable)} of {len(request.hosts)} hosts can run, --hosts-required is {required}: "
                             f"the run does not start; first left out: host {first.host.display}: {first.problem}")  # fmt: skip
    left_out = {c.host.display: f"left out before the run: {c.problem}" for c in preflight.left_out}
    return ClientFio(preflight.usable, ctx.env.fio_path, left_out=left_out, version=local_version), preflight


def _engine_prober(executor: FioExecutor, remote: bool) -> Callable[[Target], str]:
    def engine_for(target: Target) -> str:
        from .engines import probe_ioengine
        from .hosts import ClientFio

        if remote:
            assert isinstance(executor, ClientFio), "a client run's executor is fio's client"
            return executor.probe_ioengine(target.path)
        where = target.path if target.kind == "dir" else os.path.dirname(target.path)
        return probe_ioengine(executor.path, where)

    return engine_for


# --------------------------------------------------------------------------- --dry-run and --plan


def dry_run_lines(ctx: SessionEnv, request: RunRequest) -> Iterator[str]:
    """``run --dry-run``: each workload's fio job file exactly as fio would be given it."""
    from . import runner

    resolved = resolve_targets(ctx, request)
    shown = resolved or (Target(kind="dir", path=os.path.join(ctx.env.cwd, ".storbench-scratch-XXXXXX"), scratch=True),)
    plan = runner.RunPlan(workloads=request.workloads, targets=shown, overrides=request.overrides, label=request.label)
    executor: runner.SubprocessFio | None = None

    def engine_for(target: Target) -> str:
        nonlocal executor
        from .engines import probe_ioengine

        if request.hosts:  # probed on the hosts when the run starts
            return "libaio"
        executor = executor or runner.SubprocessFio(ctx.env.fio_path)
        where = target.path if os.path.isdir(target.path) else (os.path.dirname(target.path) if target.kind == "file" else ctx.env.cwd)
        return probe_ioengine(executor.path, where)

    for spec in runner.plan_jobs(plan, engine_for):
        if request.hosts:
            from .inventory import file_tags, job_for_host

            tags = file_tags(request.hosts)
            for host in request.hosts:
                yield f"# workload {spec.workload.name} on host {host.display} ({host.endpoint}), directory {host.target or spec.target.display}"
                if any(k == "ioengine" and v == "auto" for k, v in spec.workload.options):
                    yield "# ioengine=auto: the engine is probed on the hosts when the run starts"
                yield job_for_host(spec.job_text, host.target, tags.get(host.display)).rstrip("\n")
                yield ""
            continue
        yield f"# workload {spec.workload.name} on {spec.target.display}"
        yield spec.job_text.rstrip("\n")
        yield ""


def estimates(ctx: SessionEnv, specs: Sequence[JobSpec], request: RunRequest, executor: FioExecutor, *, probe: bool) -> list[Estimate]:
    """The plan of every job (jobs/plan.py); size-based ones big enough to matter are probed
    (``probe``, runs here only) for a few seconds each, once per workload and target."""
    from ..jobs import plan
    from . import runner

    out = []
    rates: dict[tuple[str, str], float | None] = {}
    for spec in specs:
        options = dict(spec.options)
        if not spec.workload.is_fio:
            out.append(plan.load_estimate(spec.workload.name, spec.target.display, spec.workload.tool, options, request.repetitions))
            continue
        if spec.workload.replay is not None:
            out.append(plan.replay_estimate(spec.workload.name, spec.target.display, spec.workload.replay, request.repetitions))
            continue
        rate = None
        sections = [dict(o) for o in spec.every_section]
        if probe and plan.group_needs_probe(sections):
            key = (spec.workload.name, spec.target.display)
            if key not in rates:
                ctx.say(f"probing {spec.workload.name} on {spec.target.display} for {runner.PROBE_RUNTIME} to estimate its duration ...")
                rates[key] = runner.probe_rate(executor, spec)
            rate = rates[key]
        out.append(plan.group_estimate(spec.workload.name, spec.target.display, sections, request.repetitions, rate))
    return out


def plan_lines(ctx: SessionEnv, request: RunRequest) -> list[str]:
    """``run --plan``: every job's expected duration and the total; nothing is stored."""
    from ..jobs import plan
    from . import runner

    if request.hosts:
        raise UsageError("--plan probes the targets from here; it cannot be used with --host/--hosts")
    executor = runner.SubprocessFio(ctx.env.fio_path)
    executor.version()
    resolved = resolve_targets(ctx, request)
    with contextlib.ExitStack() as stack:
        if not resolved:
            resolved = (stack.enter_context(runner.scratch_target(ctx.env.cwd)),)
        run_plan = runner.RunPlan(workloads=request.workloads, targets=resolved, overrides=request.overrides, label=request.label)
        specs = runner.plan_jobs(run_plan, _engine_prober(executor, remote=False))
        serve_targets(stack, resolved, specs)
        return plan.format_plan(estimates(ctx, specs, request, executor, probe=True))


# --------------------------------------------------------------------------- the store, opened beside the first fio

#: what the first workload needs once its fio has run (its findings, its result line, its live
#: state, its interval logs): imported on the store's thread while that fio runs, not after it
USED_AFTER_FIO = (
    "storbench.checks",
    "storbench.fio.json",
    "storbench.fio.logs",
    "storbench.render.terminal",
    "storbench.run.live",
    "storbench.serialize",
)


def _warm_up(names: Sequence[str]) -> None:
    """Import ``names`` and print one line through rich into nothing (its first line imports
    and builds ~20 ms of rendering machinery)."""
    try:
        for name in names:
            importlib.import_module(name)
        import io

        from rich.console import Console

        Console(file=io.StringIO(), width=160, force_terminal=False, highlight=False).print("  done", markup=False)
    except Exception:  # a warm-up only: what fails here fails again where it is used, and is said there
        return


class PendingStore:
    """The store opened (and the run's row created) on another thread: ``opener`` returns
    ``(store, run_id)``.  The thread starts when the fio executor first asks for
    :meth:`failure` (50 ms into the first fio, which then spends ~0.3 s starting up: the
    other core is idle) or when the store is needed, whichever comes first.  Its error, if
    any, is raised where the store is needed, and :meth:`failure` lets the executor stop the
    first workload as soon as it is known.  Once the store is open, a second thread imports
    what the first workload needs after its fio (:data:`USED_AFTER_FIO`)."""

    def __init__(self, opener: Callable[[], tuple[RunStore, int]], on_opened: Callable[[], None] = lambda: None) -> None:
        self._on_opened = on_opened  #: called on the thread once the store is open
        self._value: tuple[RunStore, int] | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._work, args=(opener,), name="storbench-store-open", daemon=True)
        self._lock = threading.Lock()
        self._started = False

    def _start(self) -> None:
        with self._lock:
            if not self._started:
                self._started = True
                self._thread.start()

    def _work(self, opener: Callable[[], tuple[RunStore, int]]) -> None:
        try:
            self._value = opener()
        except BaseException as exc:  # handed to the main thread, raised there
            self._error = exc
        else:
            self._on_opened()
            threading.Thread(target=_warm_up, args=(USED_AFTER_FIO,), name="storbench-warm-up", daemon=True).start()

    def ready(self) -> bool:
        return self._started and not self._thread.is_alive()

    def failure(self, wait: bool = False) -> BaseException | None:
        """The error opening the store raised, once it is known (``wait``: wait for it)."""
        self._start()
        if wait:
            self._thread.join()
        return self._error if self.ready() else None

    def get(self) -> tuple[RunStore, int]:
        self._start()
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value

    def run_id(self) -> int:
        return self.get()[1]

    def close(self) -> None:
        if self._started:
            self._thread.join()
        if self._value is not None:
            self._value[0].close()


class StoreWhenReady:
    """The runner's sink before the store has opened: each method waits for it when called."""

    def __init__(self, pending: PendingStore) -> None:
        self._pending = pending

    def __getattr__(self, name: str) -> Callable[..., object]:  # type: ignore[explicit-any]  # any RunStore method
        def call(*args: object, **kwargs: object) -> object:
            return getattr(self._pending.get()[0], name)(*args, **kwargs)

        return call


def mark_incomplete(store: RunStore, run_id: int, reason: str) -> None:
    """Mark the run incomplete on the way out of a failure; when the store cannot take even that
    (its disk still full, its server gone), the failure that stopped the run is what is said."""
    from ..errors import StoreError

    with contextlib.suppress(StoreError):
        store.finish_run(run_id, "incomplete", reason=reason)


def failure_reason(outcome: RunOutcome, specs: Sequence[JobSpec]) -> str | None:
    """What the run's failed workloads come to, in one line (None: none failed)."""
    if not outcome.failures:
        return None
    stop = next((f for f in outcome.failures if f.stopped_run), None)
    if stop is not None:
        return f"workload {stop.workload!r} on {stop.target}: {stop.reason}"
    first = outcome.failures[0]
    # a host's failure names its target "HOST:TARGET": one workload on one target counts once
    failed = sum(1 for s in specs if any(f.workload == s.workload.name and (f.target == s.target.display or f.target.endswith(":" + s.target.display))
                                         for f in outcome.failures))  # fmt: skip
    return (f"{failed or len(outcome.failures)} of {len(specs)} workload(s) failed; first: "
            f"workload {first.workload!r} on {first.target}: {first.reason}")  # fmt: skip


def telemetry_for(request: RunRequest, store: RunStore, *, remote: bool, targets: Sequence[Target] = ()) -> Telemetry:
    """What the runner learns about the storage: nothing here for client runs on the hosts'
    directories (the storage is on the hosts); else the target's description (for a kind the
    hosts reach, such as an S3 bucket, read from here as for a local run: the bucket, the
    gateway's counters), with the network ceilings ``storbench net`` measured, for the
    share-ceiling check."""
    from ..targets import kind_of
    from . import runner

    reached = bool(targets) and all(kind_of(t).hosts_reach for t in targets)
    if (remote and not reached) or not request.telemetry:
        return runner.NoTelemetry()
    return runner.SystemTelemetry(net_ceiling_of=store.last_net_ceiling)


def _remove_remote_files(say: Callable[[str], None], executor: ClientFio, specs: Sequence[JobSpec], keep_files: bool) -> None:
    """Client runs: the test files are on the hosts; fio removes them there."""
    if keep_files:
        return
    for problem in executor.remove_test_files(s.job_text for s in specs):
        say(f"warning: {problem}")


# --------------------------------------------------------------------------- the run


def run_session(ctx: SessionEnv, request: RunRequest, reporter_for: ReporterFactory, *, resume_run: int | None = None) -> SessionOutcome:
    """Run ``request`` (or finish the stored run ``resume_run``) and return what was stored (see
    the module's text).  Raises :class:`Interrupted` (with the command that finishes the run)
    after Ctrl-C/SIGTERM, and any failure that stopped the run, the run marked incomplete."""
    from ..jobs.plan import format_total, total_seconds
    from ..targets.base import is_existing_file
    from . import runner
    from .live import LiveReporter

    # A run that opens its store while the first fio starts (below) leaves the store alone
    # until then; else the store module (SQLAlchemy: a quarter of a second) is imported on
    # another thread while this one waits for fio (--version, the ioengine probe).  For hosts,
    # only once they have answered: a thread importing beside the probe held the interpreter
    # between a connect and its probe long enough for a fio server to poll first and wait a
    # second (run/fioprobe.py).
    def import_store() -> None:
        threading.Thread(target=importlib.import_module, args=("storbench.store.database",), daemon=True).start()

    if resume_run is not None or request.until_steady:
        import_store()
    preflight: Preflight | None = None
    client: ClientFio | None = None
    local: runner.SubprocessFio | None = None
    executor: FioExecutor
    resolved = resolve_targets(ctx, request)  # before the hosts are asked: a target refused is one line at once
    if request.hosts:
        client, preflight = prepare_hosts(ctx, request)
        if resume_run is None and not request.until_steady:
            import_store()
        executor = client
    else:
        local = runner.SubprocessFio(ctx.env.fio_path)
        executor = local
    label = request.label
    with contextlib.ExitStack() as stack:
        if not resolved:
            resolved = (stack.enter_context(runner.scratch_target(ctx.env.cwd)),)
        plan = runner.RunPlan(workloads=request.workloads, targets=resolved, overrides=request.overrides, label=label,
                              keep_files=request.keep_files, repeat=request.repeat)  # fmt: skip
        specs = runner.plan_jobs(plan, _engine_prober(executor, remote=preflight is not None))
        serve_targets(stack, resolved, specs)
        capped = sorted({ln[len("# storbench: "):].split(" capped at ")[1] for s in specs if is_existing_file(s.target)
                         for ln in s.job_text.splitlines() if ln.startswith("# storbench: ") and " capped at " in ln})  # fmt: skip
        for what in capped:  # a file target is never grown: said once for the run
            ctx.say(f"note: workload sizes capped at {what} (a file target is read as it is, never grown)")
        planned = estimates(ctx, specs, request, executor, probe=preflight is None and resume_run is None)
        if resume_run is None:
            ctx.say(format_total(planned))
        if request.repeat.count == 1 and request.repeat.until_rse_pct is None and resume_run is None:
            ctx.say("note: one run per workload (--repeat 1): no spread or confidence interval can be given")
        # asked for only now: ``fio --version``, started before the suites were read, has answered
        # while the run was planned (waiting for it first put its 25 ms before the first fio)
        fio_version = executor.version()
        if client is None:  # client runs: the targets are on the hosts
            runner.check_free_space(specs)
        else:
            stack.callback(_remove_remote_files, ctx.say, client, specs, request.keep_files)

        def open_and_create() -> tuple[RunStore, int]:
            store = ctx.open_store()
            try:
                reconcile(store, ctx.env.cwd, ctx.say)
                meta = {"host": runner.host_facts(fio_version), "argv": sys.argv[1:], **request.meta()}
                if preflight is not None:  # what each fio server said about itself, and who was left out
                    meta["host_checks"] = preflight.meta()
                if started_by := ctx.env.environ.get(STARTED_BY_ENV):  # a run started from storbench serve's page
                    meta["started_by"] = started_by[:200]
                run_id = store.create_run(label=label, kind="run", suite=request.suite, meta=meta)
                _tell_run_id(ctx.env.environ.get(RUN_ID_FILE_ENV), run_id)
                return store, run_id
            except BaseException:
                store.close()
                raise

        previous: dict[tuple[str, str], list[ResultRecord]] = {}
        pending: PendingStore | None = None
        store: RunStore
        run_id: int
        execute_id: int | Callable[[], int]  # the runner's: a function while the store opens
        if local is not None and resume_run is None and not request.until_steady:
            # the store (SQLAlchemy's import and the run's row: a quarter of a second) is opened on
            # another thread while the first fio starts; fio is stopped if it cannot be opened
            here = local

            def opened() -> None:  # fio is then waited for as usual (not in 50 ms steps)
                here.abort_check = None

            pending = PendingStore(open_and_create, on_opened=opened)
            stack.callback(pending.close)
            here.abort_check = pending.failure
            store = cast("RunStore", StoreWhenReady(pending))  # each RunStore method, called, waits for it
            execute_id = pending.run_id  # an id once fio has run (see ExecuteContext.run_id)
        elif resume_run is None:
            store, run_id = open_and_create()
            execute_id = run_id
            stack.callback(store.close)
        else:
            store = stack.enter_context(contextlib.closing(ctx.open_store()))
            reconcile(store, ctx.env.cwd, ctx.say)
            run_id = execute_id = resume_run
            for rec in store.results(run_id):
                # a scratch directory is new each time: results on the old one count for the new one
                target = (rec.target or "") if request.target_paths else resolved[0].display
                if rec.host in (None, "all"):
                    previous.setdefault((rec.workload, target), []).append(rec)
            store.reopen_run(run_id)
        planned_s = total_seconds(planned)[0]
        reporter = stack.enter_context(LiveReporter(reporter_for(planned_s), planned_s=planned_s))
        if pending is None:
            reporter.publish(store, run_id, total=len(specs))
        else:
            reporter.publish_when_ready(pending, total=len(specs))
        try:
            if request.precondition and resume_run is None:
                from .precondition import precondition

                for to_fill in resolved:
                    for line in precondition(to_fill, executor, request.overrides, request.workloads[0]):
                        reporter.note(line)
            run_ctx = runner.ExecuteContext(
                run_id=execute_id, executor=executor, sink=store, reporter=reporter, label=label, clock=ctx.env.clock,
                keep_files=request.keep_files, repeat=request.repeat, telemetry=telemetry_for(request, store, remote=preflight is not None, targets=resolved),
                previous=previous, prefill=request.prefill, hosts_required=request.hosts_required,
            )  # fmt: skip
            outcome = until_steady(run_ctx, specs, store) if request.until_steady else runner.execute(specs, run_ctx)
        except BaseException as exc:
            if pending is not None:
                if (failed := pending.failure(wait=True)) is not None:  # the store never opened
                    raise failed from None
                store, run_id = pending.get()
            if not isinstance(exc, StorbenchError):
                mark_incomplete(store, run_id, f"storbench stopped: {type(exc).__name__}")
                raise
            mark_incomplete(store, run_id, str(exc))
            if isinstance(exc, Interrupted):  # said with the command that finishes it
                raise Interrupted(f"{exc.message}; storbench run --resume {run_id} finishes it") from None
            raise
        if pending is not None:
            store, run_id = pending.get()
            reporter.flush()
        reason = failure_reason(outcome, specs)
        status = "complete" if reason is None else ("incomplete" if outcome.stored or previous else "failed")
        store.finish_run(run_id, status, reason=reason)
        records = tuple(store.results(run_id))
    return SessionOutcome(run_id=run_id, records=records, failure=reason, remote=preflight is not None)


def until_steady(ctx: ExecuteContext, specs: Sequence[JobSpec], store: RunStore) -> RunOutcome:
    """``--until steady``: rounds of every workload (one repetition each) until SNIA's rule
    (stats/steady.py) holds for each workload's headline figure over its last 5 rounds, at most 25
    rounds; the window of each workload is stored in the run's metadata."""
    import dataclasses

    from ..metrics import headline_value
    from ..stats.steady import MAX_ROUNDS, steady_state
    from . import runner

    run_id = ctx.run_id if isinstance(ctx.run_id, int) else ctx.run_id()
    telemetry = runner.DescribeOnce(ctx.telemetry)
    history: dict[tuple[str, str], list[ResultRecord]] = {k: list(v) for k, v in ctx.previous.items()}
    verdicts: dict[str, JSONObject] = {}
    open_specs = list(specs)
    stored: list[int] = []
    failures: list[runner.Failure] = []
    try:
        for round_no in range(MAX_ROUNDS):
            if not open_specs:
                break
            prev: Mapping[tuple[str, str], Sequence[ResultRecord]] = {
                (s.workload.name, s.target.display): history.get((s.workload.name, s.target.display), []) for s in open_specs
            }  # fmt: skip
            rounds_done = min(len(v) for v in prev.values())
            outcome = runner.execute(open_specs, dataclasses.replace(
                ctx, run_id=run_id, keep_files=True, repeat=Repeat(count=rounds_done + 1), telemetry=telemetry, previous=prev,
                prefill=ctx.prefill and round_no == 0,
            ))  # fmt: skip
            stored += list(outcome.stored)
            failures += list(outcome.failures)
            ids = set(outcome.stored)
            for rec in store.results(run_id):
                if rec.result_id in ids:
                    history.setdefault((rec.workload, rec.target or ""), []).append(rec)
            still = []
            for spec in open_specs:
                key = (spec.workload.name, spec.target.display)
                recs = sorted(history.get(key, []), key=lambda r: r.repetition)
                values = [headline_value(r.fio, spec.workload.headline) for r in recs]
                series = [float(v) for v in values if v is not None]
                verdict = steady_state(series)
                name = spec.workload.name + (f" on {spec.target.display}" if len(specs) > len({s.workload.name for s in specs}) else "")
                verdicts[name] = {"series": series, "settled": verdict.settled, "window": list(verdict.window) if verdict.window else None,
                                  "average": verdict.average, "range_share": verdict.range_share, "slope_share": verdict.slope_share,
                                  "slope": verdict.slope, "intercept": verdict.intercept, "reason": verdict.reason,
                                  "headline": spec.workload.headline, "results": [r.result_id for r in recs]}  # fmt: skip
                if verdict.settled:
                    ctx.reporter.note(f"{name}: {verdict.reason}")
                elif any(f.workload == spec.workload.name for f in outcome.failures):
                    continue
                else:
                    still.append(spec)
            open_specs = still
        for spec in open_specs:
            name = spec.workload.name
            ctx.reporter.note(f"{name}: did not settle in {MAX_ROUNDS} rounds ({verdicts.get(name, {}).get('reason', '')})")
    finally:
        if not ctx.keep_files:
            runner.remove_test_files(specs)
        store.update_run_meta(run_id, {"steady": verdicts})
    return runner.RunOutcome(run_id=run_id, stored=tuple(stored), failures=tuple(failures))

