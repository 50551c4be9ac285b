"""Evaluation: duplicate matches on seeded deal sets (:mod:`~experiments.evaluate.duplicate`,
:mod:`~experiments.evaluate.deals`), ratings (:mod:`~experiments.evaluate.ratings`), tournaments
(:mod:`~experiments.evaluate.tournament`, ``mus tournament``) with their report (:mod:`~experiments.evaluate.report`)
and Ray sharding (:mod:`~experiments.evaluate.ray_shards`), report cards (``mus evaluate``), and the value and
information content of señas (``mus signals``, ``mus sign-info``). It imports no other wing: the best-response probes
that train against an agent are in :mod:`experiments.population`."""
