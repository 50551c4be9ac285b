"""``mus play``: you against three bots in the terminal.

You sit at one seat (``--seat``, default 0; your partner is the seat opposite, 2 for seat 0). A card legend
opens the game. Before each of your decisions the table is shown: the score, the mano, your cards, the mus
calls and how many cards each player changed, the betting of each lance in Mus words, the declarations, and
the last hand's showdown. Every move is printed as it happens, with its lance (``[grande] envido 2``), the
pares/juego declarations included; of a discard you see how many cards each player changed, as at a real
table, and of your own which cards you threw. Type the number of an action (or, when discarding, the slots
or the cards to throw). Hands and games are counted from 1, as in ``mus replay``. Ctrl-D or "q" ends the
game; the record is written either way (``--record``) and can be replayed with ``mus replay FILE``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from agents import Agent, act_one, make_agent
from experiments.commands.options import (
    MAX_TARGET,
    ArgumentParser,
    agent_list_options,
    check_agent_specs,
    check_writable_file,
    int_in,
    read_agent_list,
)
from mus_env import MusConfig, MusGame
from mus_env.actions import DISCARD_ACTIONS, ENVIDO_ACTIONS, action_to_string, discard_mask
from mus_env.cards import card_to_string, hand_to_string
from mus_env.game import ActionEvent
from mus_env.mus_v0 import table_text
from mus_env.records import game_record, save_record
from mus_env.signals import is_sign_action, sees_sign
from mus_env.tables import LANCE_NAMES

__all__ = ["play_game", "main"]

#: The three bots of ``mus play`` when ``--bots`` is not given, in seat order.
DEFAULT_BOTS = "rule,equity,rule"

_QUIT = (EOFError, KeyboardInterrupt)


def _words(action: int, amount: int, cfg: MusConfig) -> str:
    if action in ENVIDO_ACTIONS and amount:
        return f"envido {amount}"
    if action in DISCARD_ACTIONS:                       # how many, never which slots (they are in rank order)
        return f"descarta {bin(discard_mask(action)).count('1')}"
    return action_to_string(action, cfg, words=True)


def card_legend(cfg: MusConfig) -> str:
    """How cards are written: number then suit (``Ro`` is the rey de oros)."""
    kings = ("With 8 kings every 3 is a rey (R) and every 2 an as (A)." if cfg.kings == 8
             else "With 4 kings the 3 and the 2 are plain cards.")
    return ("Cards: number then suit. Numbers A (as), 2-7, S (sota), C (caballo), R (rey); suits o oros, "
            f"c copas, e espadas, b bastos: Ro is the rey de oros, 4c the cuatro de copas. {kings}")


def _move_lines(events: list[ActionEvent], actor: int, lance: str, thrown: tuple[int, ...], seat: int,
                names: list[str], cfg: MusConfig, sign_seen: bool = True) -> list[str]:
    """The lines for the events of one step: the actor's move (with its lance, and for your own discard the
    cards you threw) and the declarations that the engine made after it. A rival's sign you did not
    intercept (``sign_seen`` False) is not shown at all."""
    out = []
    for ev in events:
        if is_sign_action(ev.action) and not sign_seen:
            continue
        what = _words(ev.action, ev.amount, cfg)
        if not ev.auto and ev.seat == actor:
            if lance:
                what = f"[{lance}] {what}"
            if ev.seat == seat and ev.action in DISCARD_ACTIONS:
                m = discard_mask(ev.action)
                what += ": " + " ".join(card_to_string(c) for k, c in enumerate(thrown) if m >> k & 1)
        out.append(f"  {names[ev.seat]}: {what}")
    return out


def play_game(bots: list[str], seat: int = 0, config: MusConfig | None = None, seed: int | None = None,
              record: str | Path | None = None, human: Agent | None = None,
              output_fn: Callable[[str], None] = print) -> MusGame:
    """Play one episode, a human at ``seat`` and ``bots`` (three specs) at the other seats in seat order.

    Returns the game (over, or stopped by the human). Writes a JSON record to ``record`` if given.
    """
    if len(bots) != 3:
        raise ValueError(f"mus play needs three bots for the other seats, got {len(bots)}: {bots}")
    if seat not in (0, 1, 2, 3):
        raise ValueError(f"--seat must be 0, 1, 2 or 3, got {seat}")
    cfg = config or MusConfig()
    game = MusGame(cfg, seed=seed)
    human = human or make_agent("human", config=cfg)
    others = [s for s in range(4) if s != seat]
    players: dict[int, Agent] = {seat: human}
    names = ["", "", "", ""]
    names[seat] = "you"                                 # "you: paso"
    for s, spec in zip(others, bots, strict=True):
        players[s] = make_agent(spec)
        names[s] = f"{'partner' if s % 2 == seat % 2 else 'rival'}-{s} ({spec})"
    rng = np.random.default_rng(game.seed)
    rivals = " and ".join(names[s] for s in range(4) if s % 2 != seat % 2)
    output_fn(f"You sit at seat {seat} (team {seat % 2}); your partner is {names[(seat + 2) % 4]}, the rivals "
              f"{rivals}. Target {cfg.target}, {cfg.kings} kings. Seed {game.seed}.")
    output_fn(card_legend(cfg))
    shown_hands = 0
    stopped = False
    try:
        while not game.is_over:
            cur = game.current_player
            if cur == seat:
                output_fn("")
                output_fn(table_text(game, seat, tuple(names)))
            before = len(game.hand_actions)
            hand_before = game.hand_number
            lance = LANCE_NAMES[game.lance] if game.lance >= 0 else ""
            thrown = tuple(game.hands[cur])
            window = game.sign_window_counter
            seen = window is None or sees_sign(game.seed, game.hand_number, window, cur, seat,
                                                cfg.signal_intercept_p)
            action = act_one(players[cur], game.observe(cur), game.legal_action_mask(), rng, game.table_rows())
            game.step(int(action))
            # the hand may have ended inside step: its actions are in the last record then
            acts = game.hand_log[-1].actions if game.hand_number != hand_before or game.is_over \
                else game.hand_actions
            for line in _move_lines(list(acts[before:]), cur, lance, thrown, seat, names, cfg, seen):
                output_fn(line)
            while shown_hands < len(game.hand_log):
                _print_hand(game.hand_log[shown_hands], names, output_fn)
                shown_hands += 1
    except _QUIT:
        stopped = True
        output_fn("\nGame stopped.")
    except Exception as e:  # the human agent's own "quit" signal, whatever its name
        if type(e).__name__ not in ("QuitGame", "HumanQuit"):
            # an unexpected error: the record of the game so far is still written, then the error raised
            if record is not None:
                _save(game, names, bots, seat, True, record, output_fn, error=f"{type(e).__name__}: {e}")
            raise
        stopped = True
        output_fn("\nGame stopped.")
    if game.is_over:
        output_fn(f"\nGAME OVER: team {game.winner} wins "
                  f"({'you win!' if game.winner == seat % 2 else 'the rivals win.'}) "
                  f"Final score {game.scores[0]}-{game.scores[1]}.")
    if record is not None:
        _save(game, names, bots, seat, stopped, record, output_fn)
    return game


def _save(game: MusGame, names: list[str], bots: list[str], seat: int, stopped: bool, record: str | Path,
          output_fn: Callable[[str], None], error: str | None = None) -> None:
    meta = {"played": datetime.now(timezone.utc).isoformat(timespec="seconds"), "stopped": stopped, "bots": bots,
            "human_seat": seat}
    if error is not None:
        meta["error"] = error
    path = save_record(game_record(game, {s: names[s] for s in range(4)}, meta), record)
    output_fn(f"Record written to {path} (mus replay {path}).")


def _print_hand(rec: object, names: list[str], output_fn: Callable[[str], None]) -> None:
    output_fn("")
    output_fn(f"--- end of hand {rec.hand_number + 1}: score {rec.scores_before[0]}-{rec.scores_before[1]} -> "
              f"{rec.scores_after[0]}-{rec.scores_after[1]}")
    if rec.shown:
        for s in range(4):
            output_fn(f"    {names[s]:<22} {hand_to_string(rec.final_hands[s])}")
    for ev in rec.stones:
        output_fn(f"    {ev.lance:<7} team {ev.team} +{ev.stones} ({ev.reason})")
    if rec.by_ordago:
        lance = rec.fourth_lance if rec.outcomes[3] == "órdago" else \
            ("grande", "chica", "pares")[list(rec.outcomes).index("órdago")]
        output_fn(f"    órdago accepted in {lance}: team {rec.game_winner} wins the game")


def main(argv: list[str] | None = None) -> None:
    p = ArgumentParser(prog="mus play", description="Play Mus against three bots in the terminal.")
    agent_list_options(p, "--bots", "--bot", DEFAULT_BOTS,
                       "three agent specs for the other seats in seat order: random, rule, equity, ordago, ppo, a "
                       "policy file (*.pt) or an sb3-contrib model (*.zip)")
    p.add_argument("--seat", type=int, default=0, choices=(0, 1, 2, 3),
                   help="your seat (your partner sits opposite: 2 for seat 0)")
    p.add_argument("--seed", type=int_in(0, 2**64 - 1), default=None, help="seed of the deals (random if omitted)")
    p.add_argument("--target", type=int_in(1, MAX_TARGET, "Mus plays to 40 or 30"), default=40,
                   help="stones that win a game")
    p.add_argument("--kings", type=int, default=8, choices=(8, 4),
                   help="8 kings (every 3 is a rey, every 2 an as) or 4 kings")
    p.add_argument("--signals", choices=("off", "truthful", "free"), default="off",
                   help="the señas channel (RULES.md §8): you may sign and you see your partner's signs, and a "
                        "rival's sign when you intercept it")
    p.add_argument("--intercept", type=float, default=0.0, metavar="P",
                   help="with --signals: chance that a rival sees a sign (yours too)")
    p.add_argument("--record", default=None,
                   help="where to write the JSON record (default: runs/play/game-<time>.json; 'none' for no record)")
    args = p.parse_args(argv)
    option, bots = read_agent_list(p, args, "--bots", "--bot", DEFAULT_BOTS)
    if len(bots) != 3:
        p.error(f"argument {option}: needs three agent specs, got {bots}")
    check_agent_specs(p, option, bots)
    if not 0.0 <= args.intercept <= 1.0:
        p.error(f"argument --intercept: a probability in [0, 1], got {args.intercept}")
    if args.intercept and args.signals == "off":
        p.error("argument --intercept: needs --signals truthful or free")
    record = args.record
    if record is None:
        record = Path("runs/play") / f"game-{datetime.now().strftime('%Y%m%d-%H%M%S')}.json"
    elif record.lower() == "none":
        record = None
    if record is not None:
        check_writable_file(p, "--record", record)
    try:
        cfg = MusConfig(kings=args.kings, target=args.target, signals=args.signals,
                        signal_intercept_p=args.intercept)
        play_game(bots, args.seat, cfg, args.seed, record)
    except OSError as e:                      # the record could not be written after all (disk full, ...)
        print(f"mus play: could not write the record {str(record)!r}: {e.strerror or e}", file=sys.stderr)
        raise SystemExit(1) from None
    sys.stdout.flush()

if __name__ == "__main__":
    main()
