"""Generated data of the agents: the equity tables (``python -m experiments.make_equity_tables``)."""
