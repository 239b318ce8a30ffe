"""Block traces: what an application really did to its disk, as records (issue 51).

A :class:`~.events.Trace` is the requests one device completed (issue time, completion time, kind,
offset, length) with what is known of where they came from (:class:`~.events.TraceMeta`); :class:`~.rows.TraceRow`
is a stored one as listed, without its events.  This
package is pure: it reads the forms a trace comes in (:mod:`.tracefs`, the kernel's block events as
``trace_pipe`` prints them; :mod:`.iolog`, fio's own v2/v3 iologs; :mod:`.msr`, the SNIA IOTTA
repository's MSR Cambridge CSV), stores and loads one compactly (:mod:`.codec`, at most 16 bytes an
event), computes its own figures (:mod:`.figures`: IOPS and bandwidth per direction, request sizes,
mix, sequential share, queue depth, issue->complete latency percentiles, per-second series),
writes the v3 iolog fio replays (:mod:`.iolog`) and says how faithfully a replay followed it
(:mod:`.fidelity`).  Recording one is the edge's (:mod:`storbench.capture`); replaying, the run's.

May import: numpy, model, units, errors and jsontypes; never run, store, render or commands.
"""
