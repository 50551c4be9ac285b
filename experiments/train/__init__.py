"""Training: the PPO league trainer behind ``mus train`` and the parts beside it.

* :mod:`experiments.train.ppo`: the trainer, one CleanRL-shaped script (``Args``, the environment, rollouts,
  turn-based GAE, the PPO update, evaluation, the training loop).
* :mod:`experiments.train.league`: the league (opponents per table, the snapshot pool and its batched forward
  pass, frozen agents, restricted learners).
* :mod:`experiments.train.buffer`: the turn-based trajectories (``TurnBuffer``, ``turn_based_gae``) and the
  centralised critic's input.
* :mod:`experiments.train.regularisers`: the magnet term, the averaged magnet and the entropy floor.
* :mod:`experiments.train.warm_start`: behaviour cloning of ``equity``, or the weights of a policy file.
* :mod:`experiments.train.checkpoint`: checkpoints (exact resume, every part checked before it is used),
  policy files, the run's files.
* :mod:`experiments.train.settings`: the checks of every setting and agent before anything is written.
* :mod:`experiments.train.session`: a session's hold on the run's folder (an old run replaced only at the new
  one's first checkpoint, a failed or interrupted session undone) and how a session ends badly (interrupted,
  diverged).
* :mod:`experiments.train.report`: ``metrics.csv``, ``eval.csv``, the learning curve, ``run.json``, the progress
  bar and the final summary.
* :mod:`experiments.train.ship_agent` (``mus ship-agent``): evaluate a run and write the shipped agent with its
  card; :mod:`experiments.train.bench_train` (``mus bench-train``): the trainer's decisions per second.

Needs the ``train`` extra (torch, tensorboard). The command lines are in :mod:`experiments.commands`; nothing
here imports them.
"""
