"""Evaluation: duplicate matches on seeded deal sets (:mod:`~experiments.evaluate.duplicate`,
:mod:`~experiments.evaluate.deals`), ratings (:mod:`~experiments.evaluate.ratings`), tournaments
(:mod:`~experiments.evaluate.tournament`, ``mus tournament``) with their report (:mod:`~experiments.evaluate.report`)
and Ray sharding (:mod:`~experiments.evaluate.ray_shards`), best-response probes (``mus exploit``), and the value and
information content of señas (``mus signals``, ``mus sign-info``)."""
