"""Command line: parse arguments, wire the pieces together, map errors to exit codes.

Every failure the user can cause ends as ONE line on stderr and a non-zero exit
code (see :class:`storbench.errors.ExitCode`); only an internal bug prints more,
and only with ``STORBENCH_DEBUG=1``.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
from collections.abc import Sequence

import click

from . import __version__
from . import commands as _commands
from .commands.common import App
from .context import Env
from .errors import ExitCode, StorbenchError

#: the modules of storbench.commands that are not a command: what the commands share
_NOT_COMMANDS = ("__init__", "common", "progress")


class _Commands(click.Group):
    """The subcommands, one module of :mod:`storbench.commands` each (``import_.py`` holds
    ``import``): a command's module is imported when that command runs (or when ``--help``
    lists them all), so ``storbench run`` does not import the other thirteen (0.1 s)."""

    @staticmethod
    def _modules() -> dict[str, str]:
        names = {}
        for entry in os.scandir(_commands.__path__[0]):
            stem, ext = os.path.splitext(entry.name)
            if ext == ".py" and stem not in _NOT_COMMANDS:
                names[stem.rstrip("_")] = stem
        return names

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self._modules()) | set(self.commands))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """``storbench --help``'s list of commands, from :data:`storbench.commands.SUMMARIES` (a
        command not in it is loaded to ask it): click's own layout, without importing the modules."""
        rows = []
        for name in self.list_commands(ctx):
            summary = _commands.SUMMARIES.get(name)
            cmd = click.Command(name, help=summary) if summary is not None else self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd))
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in rows])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            stem = self._modules().get(cmd_name)
            if stem is None:
                return None
            module = importlib.import_module(f"{_commands.__name__}.{stem}")
            for obj in vars(module).values():
                if isinstance(obj, click.Command) and getattr(obj.callback, "__module__", None) == module.__name__:
                    self.add_command(obj)
        return self.commands.get(cmd_name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="storbench")
@click.option(
    "--db",
    "db",
    metavar="URL",
    default=None,
    help="Results database: a SQLAlchemy URL or a SQLite file path "
    "(default: $STORBENCH_DB, else $XDG_DATA_HOME/storbench/results.sqlite).",
)
@click.pass_context
def cli(ctx: click.Context, db: str | None) -> None:
    """storbench: run faithful fio workload suites, keep every result, compare honestly."""
    env = ctx.obj if isinstance(ctx.obj, Env) else Env()
    ctx.obj = App(env=env, db_option=db)


_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


def _one_line(text: object) -> str:
    """A message as ONE line: line breaks and other control characters (from a file name,
    a suite file key, fio's words) are shown escaped, as Python writes them: ``\\n``."""
    return "".join(
        repr(c)[1:-1] if (ord(c) < 0x20 or ord(c) == 0x7F) else c for c in str(text)
    )


def main(argv: Sequence[str] | None = None, env: Env | None = None) -> int:
    """Run the CLI; return the exit code (tests call this with their own Env)."""
    env = env or Env()
    with _sigterm_as_interrupt():
        return _main(argv, env)


@contextlib.contextmanager
def _sigterm_as_interrupt():
    """SIGTERM anywhere in a command (its start, its report, between two steps) stops it as
    Ctrl-C does: exit 130 with one line, never Python's default death (143) that skips cleanup.
    Commands that treat SIGTERM themselves (run's workloads, the agent) set their own handler
    inside and restore this one."""
    import signal

    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def handler(signum, frame):
        raise KeyboardInterrupt("SIGTERM")

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _main(argv: Sequence[str] | None, env: Env) -> int:
    try:
        cli.main(
            args=list(argv) if argv is not None else None,
            prog_name="storbench",
            obj=env,
            standalone_mode=False,
        )
        return ExitCode.OK
    except StorbenchError as exc:
        env.stderr.write(f"storbench: error: {_one_line(exc.message)}\n")
        return exc.exit_code
    except (
        _NO_ARGS_IS_HELP
    ) as exc:  # bare "storbench": the help text, not an error line
        env.stderr.write(exc.format_message() + "\n")
        return ExitCode.USAGE
    except click.ClickException as exc:
        hint = ""
        ctx = getattr(exc, "ctx", None)
        if ctx is not None:
            hint = f" (see '{ctx.command_path} --help')"
        env.stderr.write(
            f"storbench: error: {_one_line(exc.format_message())}{_one_line(hint)}\n"
        )
        return ExitCode.USAGE if exc.exit_code == 2 else exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except (KeyboardInterrupt, click.exceptions.Abort):
        env.stderr.write("storbench: interrupted\n")
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        return ExitCode.OK
    except Exception as exc:  # an internal bug: still one line unless debugging
        if env.environ.get("STORBENCH_DEBUG"):
            raise
        env.stderr.write(
            f"storbench: internal error: {type(exc).__name__}: {_one_line(exc)} (set STORBENCH_DEBUG=1 for a traceback)\n"
        )
        return ExitCode.ERROR
