"""What every application load is made of: :class:`LoadOption`, :class:`LoadSteps`, :class:`LoadTool`,
their errors, and the option rules they share (:func:`check_options`, :func:`with_overrides`,
:func:`size_bytes`). Each tool's module imports this one; the package's face
(:mod:`storbench.loads`) holds the registry and imports the tools.

May import: units and errors; model for the type checker.
"""


from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from storbench.jsontypes import JSONMapping, JSONValue

from ..errors import StorbenchError

if TYPE_CHECKING:  # the result records load once a run's first program ran (tests/run/test_startup.py)
    from ..model import Measure


class LoadParseError(StorbenchError):
    """A tool's output storbench cannot read; the message says what was wrong, in one line."""


class LoadOptionError(StorbenchError):
    """A load's option that is not allowed; the message names the option and what is allowed."""


#: the kinds of option value: a whole number, seconds, a size (``64M``), one of some words, on/off
KINDS = ("count", "seconds", "size", "choice", "bool")
_SIZE = re.compile(r"^(\d+)([KMGT]?)$")


@dataclass(frozen=True)
class LoadOption:
    """One option of a load: its ``kind`` (one of :data:`KINDS`), default (as text), what it does."""

    name: str
    kind: str
    default: str
    help: str
    choices: tuple[str, ...] = ()
    minimum: int = 1
    maximum: int | None = None


@dataclass(frozen=True)
class LoadSteps:
    """The commands of one run of a load, each run in its directory (the working directory): the
    ``prepare`` ones before the measured one (not timed: sysbench's ``prepare``, pgbench's ``-i``),
    ``measure`` (its output is what :attr:`LoadTool.parse` reads), ``cleanup`` after it.  ``logs``:
    names of files (``fnmatch`` patterns) the measured command writes in the directory that ``parse``
    reads too (pgbench's per-transaction log).  ``creates``: what the run puts in the directory, in
    words (``--dry-run`` says it)."""

    measure: tuple[str, ...]
    creates: str
    prepare: tuple[tuple[str, ...], ...] = ()
    cleanup: tuple[tuple[str, ...], ...] = ()
    logs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Pasted:
    """What a pasted output of a load says (:attr:`LoadTool.pasted`): its figures, how it ran as
    it says it (clients, scale, threads, duration: the result's settings), what it lacks that a
    run of storbench's own has (``absent``, one phrase each: never invented), and the workload
    it is (``workload``: named as storbench's built-in suites name that load, ``dbench-4``)."""

    workload: str
    measures: tuple[Measure, ...]
    settings: Mapping[str, str]
    absent: tuple[str, ...] = ()


@dataclass(frozen=True)
class LoadTool:  # type: ignore[explicit-any]  # its parse/measures/settings (below)
    """One application load: its program, the Debian package that has it, and its functions.

    ``steps(options, directory)``; ``parse(output, logs)`` (``logs``: file name -> text of the files
    :attr:`LoadSteps.logs` names); ``measures(parsed)``; ``settings(parsed)``: how it ran, as it
    reported it; ``runtime_s(options)``: the seconds the measured command runs (the plan's ETA);
    ``server``: ``"postgresql"`` where the run's edge brings up a private server in the directory
    first; ``clients``: the option that sets how many clients (or threads) drive the load."""

    name: str
    program: str
    package: str
    description: str
    #: the unit of the figure the load is judged by (its first measure: ``"tps"``, ``"MB/s"``)
    headline: str
    options: tuple[LoadOption, ...]
    steps: Callable[[Mapping[str, str], str], LoadSteps]
    # parse's report is each tool's own type (dbench's, pgbench's, ...), read only by the same tool's
    # measures and settings: one registry holds tools of different report types
    parse: Callable[[str, Mapping[str, str]], Any]  # type: ignore[explicit-any]
    measures: Callable[[Any], tuple[Measure, ...]]  # type: ignore[explicit-any]
    runtime_s: Callable[[Mapping[str, str]], float]
    settings: Callable[[Any], Mapping[str, str]] = field(default=lambda parsed: {})  # type: ignore[explicit-any]
    server: str | None = None
    clients: str | None = None
    #: its output as a person pastes it (a ticket, a mail, a post: ``storbench import``), read
    #: without the files a run of storbench's own keeps (pgbench's per-transaction log)
    pasted: Callable[[str], Pasted] | None = None

    def option(self, name: str) -> LoadOption | None:
        return next((o for o in self.options if o.name == name), None)


def size_bytes(text: str) -> int:
    """A load's size (``64M``: K, M, G, T are powers of 1024, as sysbench and PostgreSQL read them)."""
    m = _SIZE.match(text.strip().upper().removesuffix("B").removesuffix("I"))
    if m is None:
        raise LoadOptionError(f"{text!r} is not a size (a whole number with K, M, G or T, e.g. 64M)")
    return int(m.group(1)) * 1024 ** " KMGT".index(m.group(2) or " ")


def _value_text(opt: LoadOption, value: JSONValue) -> str:
    """``value`` (from TOML) as the option's text, or :class:`LoadOptionError` saying what is allowed."""
    if opt.kind == "bool":
        if isinstance(value, bool):
            return "1" if value else "0"
        raise LoadOptionError(f"must be true or false (got {value!r})")
    if opt.kind in ("count", "seconds"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise LoadOptionError(f"must be a whole number{' of seconds' if opt.kind == 'seconds' else ''} (got {value!r})")
        high = f" and at most {opt.maximum}" if opt.maximum is not None else ""
        if value < opt.minimum or (opt.maximum is not None and value > opt.maximum):
            raise LoadOptionError(f"must be at least {opt.minimum}{high} (got {value})")
        return str(value)
    if not isinstance(value, str):
        raise LoadOptionError(f"must be text (got {value!r})")
    if opt.kind == "choice":
        if value not in opt.choices:
            raise LoadOptionError(f"must be one of {', '.join(opt.choices)} (got {value!r})")
        return value
    size_bytes(value)  # kind "size"
    return value.strip().upper()


def check_options(tool_: LoadTool, raw: JSONMapping) -> tuple[tuple[str, str], ...]:
    """The table of a workload's options -> every option of the tool as text, defaults filled in, in
    the tool's order.  :class:`LoadOptionError` names the first option that is wrong (``KEY: problem``)."""
    names = [o.name for o in tool_.options]
    for key in raw:
        if key not in names:
            raise LoadOptionError(f"{key}: unknown {tool_.name} option (allowed: {', '.join(names)})")
    out = []
    for opt in tool_.options:
        if opt.name in raw:
            try:
                out.append((opt.name, _value_text(opt, raw[opt.name])))
            except LoadOptionError as exc:
                raise LoadOptionError(f"{opt.name}: {exc}") from None
        else:
            out.append((opt.name, opt.default))
    return tuple(out)


def with_overrides(tool_: LoadTool, options: Sequence[tuple[str, str]], *, runtime_s: float | None,
                   size: str | None) -> tuple[tuple[str, str], ...]:  # fmt: skip
    """``--runtime`` and ``--size`` applied to a load's options where the tool has ``runtime`` and
    ``size`` options (whole seconds, at least the option's minimum)."""
    out = []
    for key, value in options:
        if key == "runtime" and runtime_s is not None and (opt := tool_.option("runtime")) is not None:
            value = str(max(opt.minimum, round(runtime_s)))
        elif key == "size" and size is not None and (opt := tool_.option("size")) is not None and opt.kind == "size":
            value = size
        out.append((key, value))
    return tuple(out)


def format_options_help(tool_: LoadTool) -> list[str]:
    """One line per option: name, default, what it does (``storbench suites --tools``, docs)."""
    return [f"{o.name} (default {o.default or 'unset'}): {o.help}" for o in tool_.options]
