"""Data of the agents: the equity tables (``mus make-tables equity``) and the shipped trained
policy ``ppo.pt`` with its model card ``ppo.md`` (``mus ship-agent``)."""
