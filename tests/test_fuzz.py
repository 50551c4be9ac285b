"""Random-play fuzzing of MusGame over random configs, with invariants checked at every step.

Each game gets a config drawn at random (both kings variants, targets 40 and 30, partner override, zero
discards, and now and then holders_only_speak=False, punto off, a 31-real mode, manual declarations, more
than one game per vaca/match, a mus-round cap) and a play style: uniform over the legal actions, "calm"
(órdago rare, so games last many hands), or "mus" (95 % MUS in the mus calls, so the stock runs out and the
discard pile is reshuffled, RULES.md §3.4). Actions are chosen by a seeded ``numpy`` Generator; the checks
below hold for every action sequence, so nothing depends on which stream is drawn.

Checked at every step: the legal set is non-empty (sorted, in range) and equals the mask; the current player
is a seat; the 40 cards are all in hands, stock and discard pile exactly once; each hand is in slot order;
scores never decrease within a game and the stones of the hand so far equal the score change. At every
discard round: the replacements come from the top of the stock, and a reshuffle follows §3.4. After each
game: the legal set is empty, the mask is zero, ``current_player == -1``, stepping raises, every game ends by
target or accepted órdago, the hand log adds up, and each showdown pays the rulebook's lance winners
their bonuses (``rulebook.py``).

The default run plays 10,000 games (``--fuzz-games N`` or ``$MUS_FUZZ_GAMES``); ``--runslow`` adds 1,000,000.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import rulebook as rb

from mus_env import MusConfig, MusGame, Phase

MUS, NO_MUS, DISCARD_BASE, ENVIDO_FIRST, ENVIDO_LAST, ORDAGO = 0, 1, 2, 19, 23, 26
FULL_DECK = frozenset(range(40))
MAX_STEPS = 50_000          # per game; far above any real game (a 95%-MUS game is a few thousand steps)
CHUNKS = 4                  # the default run is split so that pytest -n 2 spreads it
SLOW_GAMES, SLOW_CHUNKS = 1_000_000, 16
UNIFORM, CALM, MUS_HEAVY = "uniform", "calm", "mus"
LANCE_NAME = {0: "grande", 1: "chica", 2: "pares", 3: "juego"}


# ----------------------------------------------------------------------------------------------------------
# random configs and play styles


def random_config(rng: np.random.Generator) -> MusConfig:
    """A config covering the switches of RULES.md §1.2 (the rarer ones now and then)."""
    return MusConfig(
        kings=int(rng.choice([8, 4])),
        target=int(rng.choice([40, 30])),
        partner_override=bool(rng.random() < 0.5),
        allow_zero_discard=bool(rng.random() < 0.5),
        holders_only_speak=bool(rng.random() < 0.85),
        punto=bool(rng.random() < 0.85),
        real31=str(rng.choice(rb.REAL31_MODES[1:])) if rng.random() < 0.2 else "off",
        auto_declare=bool(rng.random() < 0.85),
        exclude_own_discards=bool(rng.random() < 0.8),
        juegos_to_win_vaca=int(rng.choice([2, 3])) if rng.random() < 0.05 else 1,
        vacas_to_win_match=int(rng.choice([2, 3])) if rng.random() < 0.05 else 1,
        max_mus_rounds=int(rng.integers(0, 4)) if rng.random() < 0.1 else None,
        max_stake=int(rng.integers(2, 12)) if rng.random() < 0.15 else None,
        first_mano="random" if rng.random() < 0.5 else int(rng.integers(0, 4)),
    )


def random_style(rng: np.random.Generator) -> str:
    u = rng.random()
    return UNIFORM if u < 0.3 else (CALM if u < 0.75 else MUS_HEAVY)


def choose(legal: list[int], style: str, rng: np.random.Generator) -> int:
    """A legal action: uniform, or (calm and mus styles) órdago rare and envidos damped so games last."""
    if style == UNIFORM:
        return legal[int(rng.random() * len(legal))]
    if style == MUS_HEAVY and legal == [MUS, NO_MUS]:
        return MUS if rng.random() < 0.95 else NO_MUS
    if ORDAGO in legal and len(legal) > 1 and rng.random() < 0.99:
        legal = [a for a in legal if a != ORDAGO]
    if ENVIDO_FIRST in legal and rng.random() < 0.8:
        calm = [a for a in legal if not ENVIDO_FIRST <= a <= ENVIDO_LAST]
        legal = calm or legal
    return legal[int(rng.random() * len(legal))]


# ----------------------------------------------------------------------------------------------------------
# checks


class FuzzFailure(AssertionError):
    pass


def _fail(g: MusGame, msg: str, history: list[int]) -> None:
    raise FuzzFailure(f"{msg}\nconfig={g.config}\nseed={g.seed}\nactions so far={history[-60:]}\n{g.describe()}")


def check_slot_order(g: MusGame, history: list[int]) -> None:
    """Every hand is kept in the hand-slot order of §9.2 (discard masks refer to it)."""
    for seat, h in enumerate(g.hands):
        if list(h) != rb.slot_sort(h, g.config.kings):
            _fail(g, f"hand of seat {seat} not in slot order: {h}", history)


def check_serving(g: MusGame, before: dict, discarded: dict[int, list[int]], history: list[int]) -> None:
    """After a discard round: replacements from the top of the stock, then a reshuffle per §3.4 if needed."""
    cfg = g.config
    stock0: list[int] = before["stock"]
    pile0: set[int] = before["pile"]
    all_discards = {c for cards in discarded.values() for c in cards}
    pos, pool, own_aside = 0, None, None
    for rel in range(4):
        seat = (before["mano"] + rel) % 4
        out = discarded[seat]
        kept = set(before["hands"][seat]) - set(out)
        new = set(g.hands[seat])
        if len(g.hands[seat]) != 4 or not kept <= new:
            _fail(g, f"seat {seat} lost cards it kept: {before['hands'][seat]} - {out} -> {g.hands[seat]}", history)
        got = new - kept
        if len(got) != len(out):
            _fail(g, f"seat {seat} received {len(got)} cards for {len(out)} discarded", history)
        if pool is None:
            left = len(stock0) - pos
            if len(out) <= left:
                if got != set(stock0[pos:pos + len(out)]):
                    _fail(g, f"seat {seat} was not served from the top of the stock", history)
                pos += len(out)
                continue
            # §3.4: the stock runs out while serving this seat.
            rest = set(stock0[pos:])
            own = set(out) if cfg.exclude_own_discards else set()
            pool = (pile0 | all_discards) - own
            own_aside = own
            if len(pool) < 21:                                  # §3.4: "the new stock holds at least 21"
                _fail(g, f"new stock of {len(pool)} cards", history)
            extra = got - rest
            if not rest <= got or not extra <= pool:
                _fail(g, f"reshuffle for seat {seat}: got {sorted(got)}, stock rest {sorted(rest)}, "
                         f"pool {sorted(pool)}", history)
            pool -= extra
        else:
            if not got <= pool:
                _fail(g, f"seat {seat} served after a reshuffle with cards not in the new stock", history)
            pool -= got
    if pool is None:
        if list(g.stock) != stock0[pos:] or sorted(g.discard_pile) != sorted(pile0 | all_discards):
            _fail(g, "stock or discard pile wrong after a round without reshuffle", history)
    else:
        if set(g.stock) != pool or len(g.stock) != len(pool) or sorted(g.discard_pile) != sorted(own_aside):
            _fail(g, f"after the reshuffle: stock {len(g.stock)} (expected {len(pool)}), pile "
                     f"{sorted(g.discard_pile)} (expected {sorted(own_aside)})", history)
    check_slot_order(g, history)
    expected_counts = tuple(len(discarded[s]) for s in range(4))
    if g.discard_counts[-1:] != (expected_counts,):
        _fail(g, f"discard_counts {g.discard_counts} do not end with {expected_counts}", history)


def _showdown_expectations(rec, cfg: MusConfig, replay: dict) -> list[tuple[str, int, int]]:
    """Rulebook showdown of a finished hand (§6.2): (lance, team, stones) per lance that pays something."""
    kings, m = cfg.kings, rec.mano
    hands = [list(rec.final_hands[(m + p) % 4]) for p in range(4)]          # by relative seat
    out = []
    for slot in range(4):
        outcome = replay["outcomes"][slot]
        lance = replay["fourth"] if slot == 3 else LANCE_NAME[slot]
        if outcome in ("void", "not played", "órdago"):
            continue
        if outcome in ("refused", "uncontested"):
            team = replay["winners"][slot]
        else:
            team = (m + rb.lance_winner(hands, lance, kings, cfg.real31)) % 2
        mates = [p for p in range(4) if (m + p) % 2 == team]
        if lance == rb.PARES:
            bonus = sum(rb.pares_bonus(hands[p], kings) for p in mates)
        elif lance == rb.JUEGO:
            bonus = sum(rb.juego_bonus(hands[p], kings) for p in mates)
        elif lance == rb.PUNTO:
            bonus = 1
        else:
            bonus = 0
        if outcome == "accepted":
            base = replay["stakes"][slot]
        elif outcome == "en paso" and lance in (rb.GRANDE, rb.CHICA):
            base = 1
        else:
            base = 0
        if base + bonus:
            out.append((lance, team, base + bonus))
    return out


def check_hand_record(rec, cfg: MusConfig) -> None:
    """Replay a finished hand through the rulebook (§3, §9.4, §6) and compare every stone with the record."""
    m = rec.mano
    delta = [rec.scores_after[t] - rec.scores_before[t] for t in range(2)]
    per_team = [sum(ev.stones for ev in rec.stones if ev.team == t) for t in range(2)]
    assert per_team == delta, (rec.stones, rec.scores_before, rec.scores_after)
    assert all(ev.stones > 0 for ev in rec.stones), rec.stones
    assert len(rec.discards) == rec.mus_rounds
    low = 0 if cfg.allow_zero_discard else 1
    assert all(low <= n <= 4 for counts in rec.discards for n in counts), rec.discards
    hands = [list(rec.final_hands[(m + p) % 4]) for p in range(4)]
    replay = rb.replay_hand(
        [(ev.seat, ev.action, ev.amount) for ev in rec.actions], m, hands, kings=cfg.kings, target=cfg.target,
        scores_before=rec.scores_before, bet_sizes=cfg.bet_sizes, partner_override=cfg.partner_override,
        holders_only_speak=cfg.holders_only_speak, punto=cfg.punto, allow_zero_discard=cfg.allow_zero_discard,
        max_mus_rounds=cfg.max_mus_rounds, max_stake=cfg.max_stake)
    context = (rec.actions, rec.stones, replay)
    assert tuple(replay["outcomes"]) == rec.outcomes, context
    assert replay["fourth"] == rec.fourth_lance, context
    assert replay["mus_rounds"] == rec.mus_rounds, context
    refusals = [(ev.lance, ev.team, ev.stones) for ev in rec.stones if ev.reason == "refused"]
    assert refusals == replay["refusals"], context
    if replay["ended"] == "ordago":                                          # §6.3
        slot = replay["ordago_slot"]
        lance = replay["fourth"] if slot == 3 else LANCE_NAME[slot]
        assert rec.game_winner == (m + rb.lance_winner(hands, lance, cfg.kings, cfg.real31)) % 2, context
        assert len(refusals) == len(rec.stones), context
        return
    if replay["ended"] == "target":                                         # §6.1
        assert len(refusals) == len(rec.stones), context
        assert rec.game_winner == refusals[-1][1], context
        return
    showdown = [(ev.lance, ev.team, ev.stones) for ev in rec.stones if ev.reason != "refused"]
    expected = _showdown_expectations(rec, cfg, replay)
    score = list(rec.scores_before)
    for _, team, stones in refusals:
        score[team] += stones
    # §6.2: count lance by lance; the first team to reach the target wins and the rest is not counted.
    n = 0
    for _lance, team, stones in expected:
        n += 1
        score[team] += stones
        if score[team] >= cfg.target:
            assert rec.game_winner == team, (context, expected)
            break
    else:
        assert rec.game_winner is None, (context, expected)
    assert showdown == expected[:n], (showdown, expected, context)
    assert list(rec.scores_after) == score, (score, context)


def check_episode(g: MusGame, history: list[int]) -> None:
    cfg = g.config
    if g.legal_actions() != [] or g.legal_action_mask().any() or g.current_player != -1 or not g.is_over:
        _fail(g, "game over but the game still offers actions", history)
    if g.winner not in (0, 1):
        _fail(g, f"winner {g.winner!r}", history)
    for a in (0, 1, 18, 24):
        with pytest.raises(ValueError):
            g.step(a)
    results = g.game_results
    assert [r.game_number for r in results] == list(range(len(results)))
    games, vacas = [0, 0], [0, 0]
    for k, r in enumerate(results):
        lo = r.scores[1 - r.winner]
        if r.by_ordago:
            assert max(r.scores) < cfg.target, r
        else:
            assert r.scores[r.winner] >= cfg.target > lo, r
        games[r.winner] += 1
        if games[r.winner] == cfg.juegos_to_win_vaca:
            vacas[r.winner] += 1
            games = [0, 0]
            if vacas[r.winner] == cfg.vacas_to_win_match:
                assert k == len(results) - 1 and g.winner == r.winner, (results, g.winner)
    assert max(vacas) == cfg.vacas_to_win_match and g.vacas_won == tuple(vacas)
    log = g.hand_log
    assert [rec.hand_number for rec in log] == list(range(len(log)))
    ended = {r.last_hand: r for r in results}
    for i, rec in enumerate(log):
        if i:
            prev = log[i - 1]
            assert rec.mano == (prev.mano + 1) % 4                          # §7, across games too
            if prev.game_winner is None:
                assert rec.game_number == prev.game_number and rec.scores_before == prev.scores_after
            else:
                assert rec.game_number == prev.game_number + 1 and rec.scores_before == (0, 0)
        assert (rec.game_winner is not None) == (rec.hand_number in ended)
        result = ended.get(rec.hand_number)
        if result is not None:
            assert result.winner == rec.game_winner and result.scores == rec.scores_after
        if result is not None:
            assert result.by_ordago == ("órdago" in rec.outcomes)
        check_hand_record(rec, cfg)


# ----------------------------------------------------------------------------------------------------------
# the fuzz loop


def play_one(g: MusGame, style: str, rng: np.random.Generator, stats: Counter) -> None:
    """Play ``g`` to the end with random legal actions, checking the invariants at every step."""
    history: list[int] = []
    game_number, scores, hand_number = g.game_number, g.scores, g.hand_number
    hand_start = scores
    round_before: dict | None = None
    discarded: dict[int, list[int]] = {}
    check_slot_order(g, history)
    for _ in range(MAX_STEPS):
        if g.is_over:
            check_episode(g, history)
            stats["games"] += 1
            stats["hands"] += g.hand_number + 1
            stats["games_in_episode>1"] += len(g.game_results) > 1
            stats["ordago_games"] += sum(r.by_ordago for r in g.game_results)
            stats["target_games"] += sum(not r.by_ordago for r in g.game_results)
            for rec in g.hand_log:
                stats["punto_hands"] += rec.fourth_lance == "punto" and rec.outcomes[3] not in ("not played", "void")
                stats["accepted"] += rec.outcomes.count("accepted")
                stats["refused"] += rec.outcomes.count("refused")
                stats["max_mus_rounds"] = max(stats["max_mus_rounds"], rec.mus_rounds)
            return
        cur = g.current_player
        legal = g.legal_actions()
        mask = g.legal_action_mask()
        if not 0 <= cur <= 3 or not legal:
            _fail(g, f"current player {cur}, legal {legal}", history)
        if mask.dtype != np.int8 or mask.shape != (31,) or mask.nonzero()[0].tolist() != legal:
            _fail(g, f"mask {mask} does not match legal {legal}", history)
        hands = g.hands
        stock, pile = g.stock, g.discard_pile
        cards = [c for h in hands for c in h]
        cards += stock
        cards += pile
        if len(cards) != 40 or set(cards) != FULL_DECK:
            _fail(g, "cards not conserved", history)
        now = g.scores
        if g.game_number != game_number:
            if g.game_number != game_number + 1 or now != (0, 0):
                _fail(g, f"new game {g.game_number} after {game_number} with scores {now}", history)
            game_number = g.game_number
        elif now[0] < scores[0] or now[1] < scores[1]:
            _fail(g, f"scores decreased within a game: {scores} -> {now}", history)
        scores = now
        if g.hand_number != hand_number:
            hand_number, hand_start = g.hand_number, now
            check_slot_order(g, history)
        if g.hand_stones != (scores[0] - hand_start[0], scores[1] - hand_start[1]):
            _fail(g, f"hand_stones {g.hand_stones} vs scores {scores} from {hand_start}", history)
        phase = g.phase
        if phase == Phase.DISCARD:
            if round_before is None:
                round_before = {"stock": list(stock), "pile": set(pile), "hands": hands, "mano": g.mano}
                discarded = {}
            elif len(hands[cur]) != 4:
                _fail(g, f"seat {cur} holds {len(hands[cur])} cards before discarding", history)
        else:
            if any(len(h) != 4 for h in hands):
                _fail(g, "a hand does not hold 4 cards outside the discard phase", history)
            if legal in ([27], [28], [29], [30]):
                stats["manual_declarations"] += 1
        a = choose(legal, style, rng)
        history.append(a)
        if phase == Phase.DISCARD:
            discarded[cur] = [c for i, c in enumerate(hands[cur]) if (a - DISCARD_BASE) >> i & 1]
        g.step(a)
        if phase == Phase.DISCARD and g.phase != Phase.DISCARD:
            total = sum(len(v) for v in discarded.values())
            stats["reshuffles"] += total > len(round_before["stock"])
            check_serving(g, round_before, discarded, history)
            round_before = None
    _fail(g, f"game not over after {MAX_STEPS} steps", history)


def run_fuzz(n_games: int, seed: int) -> Counter:
    rng = np.random.default_rng(seed)
    stats: Counter = Counter()
    for _ in range(n_games):
        cfg = random_config(rng)
        style = random_style(rng)
        stats[f"style_{style}"] += 1
        play_one(MusGame(cfg, seed=int(rng.integers(2**63))), style, rng, stats)
    return stats


def _assert_coverage(stats: Counter) -> None:
    """The random configs and styles reach every part of the game (only checked for big enough runs)."""
    for key in ("reshuffles", "ordago_games", "target_games", "punto_hands", "accepted", "refused",
                "manual_declarations", "games_in_episode>1"):
        assert stats[key] > 0, (key, stats)


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_fuzz_random_games(chunk: int, fuzz_games: int) -> None:
    n = fuzz_games // CHUNKS + (chunk < fuzz_games % CHUNKS)
    stats = run_fuzz(n, seed=1_000 + chunk)
    assert stats["games"] == n
    if n >= 1_000:
        _assert_coverage(stats)


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(SLOW_CHUNKS))
def test_fuzz_million_games(chunk: int) -> None:
    n = SLOW_GAMES // SLOW_CHUNKS
    stats = run_fuzz(n, seed=2_000_000 + chunk)
    assert stats["games"] == n
    _assert_coverage(stats)
