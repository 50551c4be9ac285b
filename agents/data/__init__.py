"""Data of the agents: the equity tables (``python -m experiments.tools.make_equity_tables``) and the shipped trained
policy ``ppo.pt`` with its model card ``ppo.md`` (``mus ship-agent``)."""
