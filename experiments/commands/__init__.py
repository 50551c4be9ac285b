"""The ``mus`` subcommands' command lines: one module per subcommand, each with ``main(argv)`` that parses the
arguments (:mod:`experiments.commands.options`) and calls the libraries (:mod:`experiments.train`,
:mod:`experiments.evaluate`, :mod:`experiments.integrations`, :mod:`experiments.tools`). The libraries never
import this package."""
