"""Running fio: the stage between a job file and a stored result.

Owns the order of work and storing each result the moment it exists (:mod:`.runner`), fio as a
child process and its status lines (:mod:`.fioexec`), many hosts through fio's client/server
mode (:mod:`.hosts`), laying a test file out where fio cannot (:mod:`.layout`), the ioengine
probe (:mod:`.engines`), preconditioning (:mod:`.precondition`) and the live state a run
publishes through the store (:mod:`.live`).

May import the stages below it (model, fio parsers, jobs, storage, targets, backend, checks,
metrics, process, units, errors); never commands, study, curve, render or serve.
"""
