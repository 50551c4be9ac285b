"""Worked examples of other RL libraries on mus-env: sb3-contrib MaskablePPO on the batched engine (``mus sb3``),
Ray RLlib PPO self-play (``mus rllib``), Tianshou masked DQN (``mus tianshou``), and the SB3 throughput bench
(``mus bench-sb3``)."""
