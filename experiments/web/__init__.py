"""``mus serve``: play, replay and inspect Mus in the browser (the ``web`` extra: Starlette on uvicorn).

* :mod:`experiments.web.table`: a game at a table, the bots, and what each seat may see (the server is the
  only referee);
* :mod:`experiments.web.analysis`: what an agent thinks at a recorded decision (policy probabilities and
  value, equity's action values);
* :mod:`experiments.web.store`: games saved as records after every move, the records and run folders the
  server may read (no path outside them);
* :mod:`experiments.web.app`: the Starlette application and its JSON API; ``static/``: the pages (plain
  HTML, CSS and JavaScript, no build step).
"""
