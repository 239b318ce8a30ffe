"""Child processes and signals, the bottom layer every edge uses.

:mod:`.proc` is the one way storbench starts, waits for and stops a child process and runs an
outside command (a new session, the parent-death signal, signals held while forking, bounded
stops); :mod:`.signals` is how SIGINT and SIGTERM become one clean stop.  Imports nothing of
storbench but :mod:`storbench.errors`.

May import: errors only; never anything above it.
"""
