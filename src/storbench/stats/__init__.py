"""Statistics, pure: summaries of repeated runs, repetition control, Welch's t-test and the
other comparisons (:mod:`.core`), and SNIA's steady-state rule (:mod:`.steady`).

Imports nothing of storbench but errors; everything that judges a figure imports it.

May import: errors only (pure); never anything above it.
"""
