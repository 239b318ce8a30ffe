"""Edge: recording what a device did, from the kernel's own tracing (``storbench capture``, issue 51).

:mod:`.tracefs` records a block device's requests through the kernel's tracefs block events
(``block_rq_issue``, ``block_rq_complete``), read from ``trace_pipe``; it mounts tracefs where it is
not mounted and leaves the machine's tracing as it found it (events, filters, buffer size, the
mount).  :mod:`.device` finds the device to trace (a block device, or the device under a mounted
directory) and its facts.  blktrace's relay files are refused on machines such as the one
storbench is tested on; where ``blktrace`` records, its ``blkparse -d`` dump is imported
(:mod:`storbench.trace`), not recorded here.

May import: trace, process, errors and units; never run, store, render or commands.
"""
