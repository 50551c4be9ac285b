"""``mus benchmark``: which algorithm learns Mus best, on one protocol (:mod:`experiments.benchmark.protocol`).

Rows (:mod:`experiments.benchmark.rows`) train from scratch for the same wall-clock budget; each result is
evaluated the same way (:mod:`experiments.benchmark.run`) and the table and the plot are drawn from the results
files (:mod:`experiments.benchmark.table`).
"""
