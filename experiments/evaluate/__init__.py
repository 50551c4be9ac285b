"""Evaluation: duplicate matches on seeded deal sets, ratings and tournaments (``mus tournament``), best-response
probes (``mus exploit``), and the value and information content of señas (``mus signals``, ``mus sign-info``)."""
