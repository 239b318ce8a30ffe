"""What every command shares: the injected environment (:class:`App`), printing JSON,
finding runs, public records, the suite catalog and size/runtime overrides."""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from ..context import Env
from ..errors import UsageError
from ..model import Overrides

if TYPE_CHECKING:
    from rich.console import Console

    from ..record import ResultRecord
    from ..store import Store
    from ..suites import Catalog

# --------------------------------------------------------------------------- shared state


@dataclass
class App:
    env: Env
    db_option: str | None

    @property
    def db_url(self) -> str:
        from ..context import (
            default_db_url,  # not from ..store: no SQLAlchemy import for a path
        )

        if self.db_option:
            return (
                self.db_option
                if "://" in self.db_option
                else f"sqlite:///{os.path.abspath(self.db_option)}"
            )
        return default_db_url(self.env.environ)

    def open_store(self) -> Store:
        from ..store import Store

        return Store.open(self.db_url)

    def open_reader(self):
        """For a command that only reads (show, list): the store's reads without SQLAlchemy when the
        database is at this storbench's schema (:mod:`storbench.store.reader`), else the store."""
        from ..store.reader import open_reader

        return open_reader(self.db_url) or self.open_store()

    def console(self, err: bool = False, *, width: int = 160) -> Console:
        """A console on stdout (or stderr): the terminal's width on a terminal, else ``width``."""
        from rich.console import Console  # here: 30 ms of import a run's start-up does not need

        stream = self.env.stderr if err else self.env.stdout
        isatty = getattr(stream, "isatty", None)
        tty = bool(isatty and isatty())
        return Console(
            file=stream,
            width=None if tty else width,
            force_terminal=False,
            highlight=False,
        )

    def out(self, text: str = "") -> None:
        self.env.stdout.write(text + "\n")

    def err(self, text: str) -> None:
        self.env.stderr.write(text + "\n")


pass_app = click.make_pass_decorator(App)


# --------------------------------------------------------------------------- helpers


def run_catalog(suite_file: str | None, suite_name: str | None, workload_names) -> Catalog:
    """What a run of ``--suite``/``--workload`` needs: a built-in suite alone, read from its own
    file, when that is all it names (a fifth of the parse); else :func:`load_catalog`."""
    from ..suites import DEFAULT_SUITE, builtin_suite_catalog

    if not suite_file and not workload_names:
        alone = builtin_suite_catalog(suite_name or DEFAULT_SUITE)
        if alone is not None:
            return alone
    return load_catalog(suite_file)


def job_file_catalog(app: App, path: str) -> Catalog:
    """A fio job file's workloads as a catalog of one suite (:mod:`storbench.suites.fiofile`), after
    the installed fio has read the file itself (``fio --parse-only``: what fio refuses is refused in
    fio's words); each option storbench replaced or left out is said on stderr."""
    import subprocess
    from types import MappingProxyType

    from ..suites import Catalog
    from ..suites.fiofile import parse_job_file_text

    cwd = app.env.cwd or os.getcwd()
    text = _read_text(os.path.join(cwd, path), "job file", path)

    def read(name: str, from_label: str) -> tuple[str, str]:  # fio's rule: as given, else beside the including file
        here = os.path.join(cwd, name)
        found = here if os.path.exists(here) else os.path.join(cwd, os.path.dirname(from_label), name)
        return name, _read_text(found, f"file included by {from_label}", name)

    job_file = parse_job_file_text(text, path, environ=app.env.environ, read=read)
    from ..process import proc

    try:
        checked = proc.run([app.env.fio_path, "--parse-only", path], timeout_s=60, c_locale=False, errors="replace",
                           env_extra=dict(app.env.environ), cwd=cwd)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"{path}: fio could not read it ({exc})") from None
    if checked.returncode != 0:
        said = [ln.strip() for ln in (checked.stderr + checked.stdout).splitlines() if ln.strip()]
        raise UsageError(f"{path}: fio refuses it: {'; '.join(said[:2]) or f'exit status {checked.returncode}'}")
    for note in job_file.notes:
        app.err(f"storbench: {note}")
    suite = job_file.suite
    return Catalog(workloads=MappingProxyType({w.name: w for w in suite.workloads}), suites=MappingProxyType({suite.name: suite}))


def _read_text(path: str, what: str, label: str) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise UsageError(f"{label}: cannot read the {what}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{label}: the {what} is not UTF-8 text (byte {exc.start})") from None


def load_catalog(suite_file: str | None) -> Catalog:
    """Every built-in suite and workload, with ``suite_file``'s added."""
    from ..suites import builtin_catalog, load_suite_file

    catalog = builtin_catalog()
    if suite_file:
        catalog = load_suite_file(suite_file, catalog)
    return catalog


def chosen_workloads(catalog, suite_name: str | None, workload_names, default: str = "quick") -> tuple[tuple, str | None]:
    """The workloads ``--suite``/``--workload`` name (default: the quick suite, or a job file's
    one) and the suite's name (None for single workloads); a one-line UsageError for both at once."""
    if workload_names:
        if suite_name:
            raise UsageError("give either --suite or --workload, not both")
        return tuple(catalog.workload(n) for n in workload_names), None
    suite = catalog.suite(suite_name or default)
    return suite.workloads, suite.name


@contextlib.contextmanager
def replay_logs(app: App, workloads):
    """``workloads`` with each replay's log written (a directory of the run's own, removed after it;
    :func:`storbench.run.replay.write_logs`); the same workloads where none replays."""
    if not any(w.replay is not None for w in workloads):
        yield tuple(workloads)
        return
    import tempfile

    from ..run.replay import write_logs

    with tempfile.TemporaryDirectory(prefix=f"storbench-replay-{os.getpid()}-") as directory:  # whose it is, as storbench-fio-PID-
        with contextlib.closing(app.open_reader()) as store:
            written = write_logs(store, workloads, directory)
        yield written


def finite(data):
    """``data`` with NaN and infinities as None: JSON has no such numbers, and fio's text
    output does print ``stdev=nan`` (a figure that was not measured, which JSON calls null)."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: finite(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [finite(v) for v in data]
    return data


def print_json(app: App, data) -> None:
    app.out(
        json.dumps(
            finite(data), indent=2, sort_keys=False, allow_nan=False, default=str
        )
    )


#: repetitions of each workload when neither --repeat nor $STORBENCH_REPEAT says otherwise
DEFAULT_REPEAT = 3


def default_repeat(environ) -> int:
    """``$STORBENCH_REPEAT`` (a whole number from 1), else :data:`DEFAULT_REPEAT`; one-line UsageError otherwise."""
    value = environ.get("STORBENCH_REPEAT")
    if value is None or value == "":
        return DEFAULT_REPEAT
    if not value.strip().isdigit() or int(value) < 1:
        raise UsageError(
            f"STORBENCH_REPEAT={value!r}: give a whole number of repetitions, 1 or more"
        )
    return int(value)


def public_records(records: Sequence[ResultRecord]) -> list[dict]:
    """The ``--json`` form of ``records`` (:func:`storbench.render.public.records_to_public`)."""
    from ..render.public import records_to_public

    return records_to_public(records)


def resolve_runs(store, refs: Sequence[str]) -> list[int]:
    ids: list[int] = []
    for ref in refs:
        if ref == "last":
            newest = store.list_runs(limit=1)
            found = [newest[0].run_id] if newest else []
        else:
            found = store.find_runs(ref)
        if not found:
            raise UsageError(
                f"no run matches {ref!r} (give a run id, a label or 'last'; see 'storbench list')"
            )
        ids.extend(found)
    return ids


def overrides_from(size: str | None, runtime: str | None) -> Overrides:
    from ..units import fio_size, parse_duration, parse_size

    rt = None
    if runtime is not None:
        seconds = parse_duration(runtime)
        if seconds <= 0:
            raise UsageError(f"--runtime {runtime!r} must be longer than 0 s")
        ms = round(seconds * 1000) if seconds < 1e15 else None
        if not ms:  # 0 would tell fio "no limit"
            raise UsageError(
                f"--runtime {runtime!r} must be from 1 ms to 1e15 s (fio counts whole milliseconds)"
            )
        rt = str(ms // 1000) if ms % 1000 == 0 else f"{ms}ms"
    if size is not None and parse_size(size) == 0:
        raise UsageError(f"--size {size!r} must be more than 0 bytes")
    return Overrides(size=fio_size(size) if size is not None else None, runtime=rt)


def reconcile(app: App, store) -> None:
    """Before a run: runs of this host left ``running`` by a killed storbench are marked incomplete
    (said once each, with how to resume), and its fio temporary directories and scratch directory
    in the current directory removed."""
    from ..run.session import reconcile as reconcile_here

    reconcile_here(store, app.env.cwd, app.err)
