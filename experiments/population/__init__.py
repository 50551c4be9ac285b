"""Probes and shipping: the wing above :mod:`experiments.train` and :mod:`experiments.evaluate`.

* :mod:`experiments.population.exploit` (``mus exploit AGENT``): a best response trained against a frozen agent
  and measured on held-out deals, a lower bound on its exploitability.
* :mod:`experiments.population.exploit_seeds` (``mus exploit AGENT --seeds N``): several probes of one agent and
  their report (the largest gain, the spread).
* :mod:`experiments.population.study` (``mus study AGENT ...``): probes of several agents (a method's seeds) at
  one or more lengths, the cross matrix, and their table (:mod:`experiments.population.study_table`: mean ± standard
  error over the agents, the split by lance, the rank agreement of short and long probes).
* :mod:`experiments.population.ship_agent` (``mus ship-agent``): evaluate a run and write the shipped agent with its
  model card (probes and lineage included).

It uses the trainer and the evaluation; neither imports it (``tests/test_architecture.py`` ranks the wings).
Needs the ``train`` extra (torch).
"""
