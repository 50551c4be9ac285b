"""``mus tournament``: a duplicate round robin between agents, its ladder, tables, CSV/JSON files and plots.

Checks every option first (a refusal creates nothing), then makes and locks the output folder
(:class:`experiments.evaluate.run_folder.RunFolder`: a second run on the same folder is refused), calls
:func:`experiments.evaluate.tournament.run_tournament`, then :func:`~experiments.evaluate.report.print_tables`,
:func:`~experiments.evaluate.report.write_outputs` and, with ``--records``,
:func:`~experiments.evaluate.tournament.write_tournament_records` into the folder's staging folder, and commits
them together. ``--ray [ADDRESS]`` starts or joins Ray first (:func:`experiments.evaluate.ray_shards.start_ray`)
and shuts down what it started. Ctrl-C is one line saying that nothing of the run was written.
"""

from __future__ import annotations

import argparse
import sys
import time

from experiments.commands.options import (
    MAX_DEALS,
    MAX_TARGET,
    SPEC_LIST_HINT,
    ArgumentParser,
    agent_list_options,
    apply_torch_threads,
    check_agent_specs,
    check_creatable_dir,
    int_in,
    read_agent_list,
    torch_threads_option,
)
from experiments.evaluate.duplicate import DEAL_CHUNK
from experiments.evaluate.ray_shards import start_ray
from experiments.evaluate.report import print_tables, write_outputs
from experiments.evaluate.run_folder import RunFolder, RunFolderBusy
from experiments.evaluate.tournament import OUTPUT_NAMES, run_tournament, write_tournament_records
from mus_env import MusConfig
from mus_env.vector import warm_up

__all__ = ["main", "DEFAULT_AGENTS"]

#: The agents of a tournament without --agents or --agent.
DEFAULT_AGENTS = "random,rule,equity,ordago"


def _start_ray(p: ArgumentParser, address: str) -> bool:
    """:func:`~experiments.evaluate.ray_shards.start_ray` for ``--ray [ADDRESS]``, its errors one-line parser
    errors; True when this call started Ray."""
    try:
        return start_ray(address)
    except ImportError:
        p.error("argument --ray: Ray is not installed (pip install -e '.[rllib]')")
    except Exception as e:  # noqa: BLE001 - any failure to connect is reported as the option's error
        p.error(f"argument --ray: cannot start or reach Ray{' at ' + repr(address) if address else ''}: {e}")
    return False


def main(argv: list[str] | None = None) -> None:
    """Run ``mus tournament`` with ``argv`` (default: the process's arguments).

    Exit status: 0 done; 2 refused (a bad option or agent, an output folder that cannot be written or that another
    run is writing now: one line on stderr, and nothing is created or changed); 130 interrupted by Ctrl-C (one
    line: nothing of this run is written, the folder is as it was, unless the run's files were already in place).
    """
    p = ArgumentParser(prog="mus tournament", description="Duplicate round-robin tournament between agents.")
    agent_list_options(p, "--agents", "--agent", DEFAULT_AGENTS,
                       "agent specs: random, rule, equity, ordago, ppo, a policy file (*.pt), an sb3-contrib model "
                       "(*.zip) or my_bot.py:MyBot; a spec given twice plays itself")
    p.add_argument("--hands", type=int_in(0, MAX_DEALS), default=4000,
                   help="duplicate deals played as single hands (0: none)")
    p.add_argument("--games", type=int_in(0, MAX_DEALS), default=1000,
                   help="duplicate deals played as whole games; the ladder is Elo on them (0: none, and the ladder "
                        "rates the hands' stones per hand instead)")
    p.add_argument("--seed", type=int_in(0, 2**64 - 1), default=0,
                   help="seed of the deal sets and the agents' randomness")
    p.add_argument("--kings", type=int, default=8, choices=(8, 4),
                   help="8 kings (every 3 is a rey, every 2 an as) or 4 kings")
    p.add_argument("--target", type=int_in(1, MAX_TARGET, "Mus plays to 40 or 30"), default=40,
                   help="stones that win a game")
    p.add_argument("--random-scores", action="store_true", help="hand deals start from random scores, not 0-0")
    p.add_argument("--signals", choices=("off", "truthful", "free"), default="off",
                   help="the señas channel (RULES.md §8): off, truthful (only true signs are legal) or free; "
                        "add -nosigns to a spec for that agent without signs (rule-nosigns)")
    p.add_argument("--intercept", type=float, default=0.0, metavar="P",
                   help="with --signals: chance that an opponent sees a sign (signal_intercept_p, 0..1)")
    p.add_argument("--tables", type=int_in(2, 2**20), default=2048,
                   help="tables stepped at once (two per deal in flight)")
    p.add_argument("--out", default="runs/tournament",
                   help="output folder (CSV, JSON, PNG); written when the run has finished, its earlier run's files "
                        "replaced together; one run writes a folder at a time")
    p.add_argument("--records", type=int_in(0, 10_000), default=0,
                   help="also write JSON records of this many duplicate games per pair (played on MusGame) into "
                        "OUT/records (without it, an earlier run's OUT/records is removed with its other files)")
    p.add_argument("--no-plots", action="store_true", help="do not draw ladder.png and lances.png")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    torch_threads_option(p)
    p.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help=f"play each pair, in chunks of {DEAL_CHUNK:,} deals, as Ray tasks: on a new local Ray "
                        "instance, or with ADDRESS on that cluster (ray.init(address=ADDRESS); 'auto': the one "
                        "RAY_ADDRESS or the last 'ray start' names); the tables and ladder are those of a run without "
                        "--ray")
    args = p.parse_args(argv)
    # every check first: a refusal creates nothing
    option, specs = read_agent_list(p, args, "--agents", "--agent", DEFAULT_AGENTS)
    if len(specs) < 2:
        p.error(f"argument {option}: needs at least two agents (a spec given twice plays itself), got {specs}")
    if args.hands <= 0 and args.games <= 0:
        p.error("nothing to play: give --hands N and/or --games N (N >= 1)")
    if not 0.0 <= args.intercept <= 1.0:                # NaN too
        p.error(f"argument --intercept: a probability in [0, 1], got {args.intercept}")
    if args.intercept and args.signals == "off":
        p.error("argument --intercept: needs --signals truthful or free (there are no signs to intercept)")
    cfg = MusConfig(kings=args.kings, target=args.target, signals=args.signals, signal_intercept_p=args.intercept)
    check_agent_specs(p, option, specs, hint=SPEC_LIST_HINT if option == "--agents" else "", config=cfg)
    out = check_creatable_dir(p, "--out", args.out)
    apply_torch_threads(args.torch_threads)
    # the first use on a machine compiles the batched engine: one line, not a stalled progress bar
    warm_up(1, log=None if args.quiet else lambda line: print(f"mus tournament: {line}", file=sys.stderr))
    t0 = time.perf_counter()
    folder = RunFolder(out, owned=OUTPUT_NAMES)
    try:
        folder.__enter__()                              # makes and locks OUT
    except RunFolderBusy as e:
        p.error(f"argument --out: {e}")
    except OSError as e:
        p.error(f"argument --out: cannot write to {str(out)!r}: {e.strerror or e}; give a folder you can write to")
    try:
        written = _play_and_write(p, args, specs, cfg, folder)
    except KeyboardInterrupt:
        print(f"mus tournament: interrupted (Ctrl-C) after {time.perf_counter() - t0:.1f} s; "
              + (f"the run had finished: its files are in {str(out)!r}" if folder.committed else
                 f"no results written: {str(out)!r} is as it was (a run's files are written once it has finished)"),
              file=sys.stderr)
        raise SystemExit(130) from None
    finally:
        folder.__exit__(None, None, None)
    print(written)


def _play_and_write(p: ArgumentParser, args: argparse.Namespace, specs: list[str], cfg: MusConfig,
                    folder: RunFolder) -> str:
    """Play the tournament, print its tables, write its files into ``folder`` and commit them; the last line."""
    started_ray = _start_ray(p, args.ray) if args.ray is not None else False
    try:
        run = run_tournament(specs, hands=args.hands, games=args.games, seed=args.seed, config=cfg,
                             random_scores=args.random_scores, max_tables=args.tables, progress=not args.quiet,
                             use_ray=args.ray is not None)
    finally:
        if started_ray:
            import ray
            ray.shutdown()
    print_tables(run.labels, run.hand_results, run.game_results, run.ladder)
    files = write_outputs(folder.stage, run.labels, run.hand_results, run.game_results, run.ladder, run.meta,
                          plots=not args.no_plots)
    n_records = 0
    if args.records > 0:
        n_records = len(write_tournament_records(folder.stage / "records", specs, cfg, args.records, args.seed))
    folder.commit()
    out = folder.path
    written = [str(out / f.name) for f in files.values()]
    if n_records:
        written.append(f"{n_records} records in {out / 'records'}")
    hands_played, elapsed = run.meta["hands_played"], run.meta["seconds"]
    return (f"{hands_played} hands in {elapsed:.1f} s ({hands_played / elapsed:,.0f} hands/s); "
            f"wrote {', '.join(written)}")


if __name__ == "__main__":
    main()
