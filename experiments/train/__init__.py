"""Training: the PPO league trainer behind ``mus train`` (:mod:`experiments.train.ppo`, one CleanRL-shaped
script), the parts beside it, ``ship_agent`` (evaluate a run and write the shipped agent with its card) and
``bench_train`` (the trainer's decisions per second and where they go). Needs the ``train`` extra (torch)."""
