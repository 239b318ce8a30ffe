"""Subcommands that live in their own modules.

Each module imports ``cli`` (the click group), ``App`` and ``pass_app`` from
:mod:`storbench.cli` and registers its command with ``@cli.command()``; cli.py
imports them all at its end.  Keep command modules thin: parse options, call the
pure modules, print.
"""
