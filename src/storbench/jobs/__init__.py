"""Jobs: a workload on a target turned into the exact fio job file (:mod:`.jobfile`, pure), and
how long the jobs of a run will take before it starts (:mod:`.plan`, pure), and an application
load's commands in a directory of its own (:mod:`.load`, pure).

May import: model, units, errors, loads (an application load's commands) and the target kinds (which fio options place a job on a
target); never run, study, suites or commands.
"""
