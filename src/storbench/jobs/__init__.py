"""Jobs: a workload on a target turned into the exact fio job file (:mod:`.jobfile`, pure), and
how long the jobs of a run will take before it starts (:mod:`.plan`, pure).

May import: model, units, errors and the target kinds (which fio options place a job on a
target); never run, study, suites or commands.
"""
