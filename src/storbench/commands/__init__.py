"""Every subcommand, one module each (``run.py`` is ``storbench run``).

Each module defines its command with ``@click.command()``, takes what commands share
(:class:`~storbench.commands.common.App`, the injected environment; ``pass_app``; JSON
printing, run lookup) from :mod:`.common`, and never imports :mod:`storbench.cli`:
``cli.py`` holds only the group, its ``--db`` option and the mapping of errors to exit
codes, and adds every command it finds here.  Keep command modules thin: parse options,
call the pure modules, print.

May import every stage (commands are the top: they parse options, call the stages, print);
never :mod:`storbench.cli`.
"""
