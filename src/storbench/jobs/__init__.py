"""Jobs: a workload on a target turned into the exact fio job file (:mod:`.jobfile`, pure), and
how long the jobs of a run will take before it starts (:mod:`.plan`, pure).

May import model, units, suites and targets' pure parts; nothing that runs a process.
"""
