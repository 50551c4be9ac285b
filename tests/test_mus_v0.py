"""The PettingZoo AEC env ``mus_v0``: PettingZoo's conformance tests, a long fuzz against the engine,
no leakage of hidden cards, observation round trips, copies, rewards and bad input.

PettingZoo's ``max_cycles_test`` and the parallel half of ``state_test`` need a ``parallel_env`` and a
``max_cycles`` argument; Mus is not parallelizable (one seat acts at a time) and has no cycle limit, so only
``state_test``'s AEC checks (``test_state_space``, ``test_state``) are run.
"""

from __future__ import annotations

import copy
import pickle
import warnings
import zlib

import numpy as np
import pytest
from hang_guards import PROCESS_S
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.test.state_test import test_state as pz_state_test
from pettingzoo.test.state_test import test_state_space as pz_state_space_test
from rulebook import stone_rewards_from_scores

from mus_env import Action, IllegalActionError, MusConfig, MusGame, mus_v0, observation
from mus_env.cards import deck_from_hands, hand_to_string
from mus_env.observation import OBS_DIM, OFFSETS, PIECES, STATE_DIM, decode
from mus_env.phases import ORDAGO_STAKE

AGENTS = mus_v0.AGENTS
CONFIGS = {"default": MusConfig(), "kings4_target30": MusConfig(kings=4, target=30)}
CONSTRUCTORS = {"env": mus_v0.env, "raw_env": mus_v0.raw_env}

# A "calm" player: few bets, almost never an órdago, so that games last several hands.
_CALM = np.ones(47)                                     # (ids 31..46: the señas tokens, weight 1)
_CALM[int(Action.ENVIDO_2):int(Action.ENVIDO_10) + 1] = 0.1
_CALM[int(Action.ORDAGO)] = 0.01
_CALM[int(Action.MUS)] = 0.5


def uniform(legal: list[int], rng: np.random.Generator) -> int:
    return legal[int(rng.integers(len(legal)))]


def calm(legal: list[int], rng: np.random.Generator) -> int:
    w = _CALM[legal]
    return legal[int(rng.choice(len(legal), p=w / w.sum()))]


def masked_action(obs: dict, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(obs["action_mask"])
    return int(legal[rng.integers(len(legal))])


# ----------------------------------------------------------------------------------------------------------
# PettingZoo's own tests


@pytest.mark.parametrize("cfg", CONFIGS.values(), ids=CONFIGS.keys())
@pytest.mark.parametrize("make", CONSTRUCTORS.values(), ids=CONSTRUCTORS.keys())
def test_pettingzoo_api_test(make, cfg):
    api_test(make(config=cfg), num_cycles=1000)


@pytest.mark.parametrize("cfg", CONFIGS.values(), ids=CONFIGS.keys())
@pytest.mark.parametrize("make", CONSTRUCTORS.values(), ids=CONSTRUCTORS.keys())
def test_pettingzoo_seed_test(make, cfg):
    seed_test(lambda: make(config=cfg), num_cycles=500)


@pytest.mark.parametrize("cfg", CONFIGS.values(), ids=CONFIGS.keys())
@pytest.mark.parametrize("make", CONSTRUCTORS.values(), ids=CONSTRUCTORS.keys())
def test_pettingzoo_render_test(make, cfg, capsys):
    render_test(lambda render_mode=None: make(config=cfg, render_mode=render_mode),
                custom_tests={"ansi": lambda text: "score" in text and "mano" in text})


@pytest.mark.parametrize("cfg", CONFIGS.values(), ids=CONFIGS.keys())
def test_pettingzoo_state_test(cfg):
    # test_state samples unmasked actions, so it needs env()'s TerminateIllegalWrapper.
    e = mus_v0.env(config=cfg)
    pz_state_space_test(e)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # "illegal move made, game terminating" warnings
        for seed in range(5):
            pz_state_test(e, num_cycles=20, seed=seed)


def test_seed_reproduces_engine_deals_and_unseeded_resets():
    a, b = mus_v0.raw_env(), mus_v0.raw_env()
    a.reset(seed=7)
    assert a.game.hands == MusGame(MusConfig(), seed=7).hands
    first = a.game.hands
    a.reset()
    b.reset(seed=7)
    b.reset()
    assert a.game.seed == b.game.seed and a.game.hands == b.game.hands
    a.reset(seed=7)
    assert a.game.hands == first


def test_registered_in_pettingzoo_registry():
    pettingzoo = pytest.importorskip("pettingzoo")
    if not hasattr(pettingzoo, "aec_registry"):
        pytest.skip("this PettingZoo has no registry")
    e = pettingzoo.make("aec", mus_v0.ENV_ID, kings=4)
    e.reset(seed=0)
    assert e.unwrapped.config.kings == 4
    assert e.unwrapped.metadata["name"] == "mus_v0"


def test_metadata_spaces_and_agents():
    e = mus_v0.raw_env(target=30)
    assert e.metadata == {"render_modes": ["ansi", "human"], "name": "mus_v0", "is_parallelizable": False,
                          "render_fps": 1}
    assert e.possible_agents == ["player_0", "player_1", "player_2", "player_3"]
    for a in AGENTS:
        assert e.observation_space(a) is e.observation_space(a)
        assert e.action_space(a) is e.action_space(a)
        box = e.observation_space(a)["observation"]
        assert box.shape == (OBS_DIM,) and box.dtype == np.float32 and (box.low == 0).all()
        mask = e.observation_space(a)["action_mask"]
        assert mask.shape == (31,) and mask.dtype == np.int8 and (mask.high == 1).all()
        assert e.action_space(a).n == 31
    assert e.state_space.shape == (STATE_DIM,)
    e.reset(seed=1)
    assert e.state_space.contains(e.state())


def test_env_wrappers_are_pettingzoos_and_read_the_raw_env():
    """``env()`` is PettingZoo's OrderEnforcingWrapper over ActionSpaceWrapper over TerminateIllegalWrapper (subclasses
    that read the raw env's per-step attributes at once instead of walking ``__getattr__`` through every layer):
    the same objects, the same refusals before ``reset``, the same ``last()`` as ``AECEnv.last``."""
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers

    e = mus_v0.env()
    assert isinstance(e, wrappers.OrderEnforcingWrapper) and isinstance(e.env, mus_v0.ActionSpaceWrapper)
    assert isinstance(e.env.env, wrappers.TerminateIllegalWrapper) and isinstance(e.unwrapped, mus_v0.raw_env)
    names = ("agent_selection", "agents", "terminations", "truncations", "rewards", "infos")
    for name in names:
        with pytest.raises(AttributeError, match=f"{name} cannot be accessed before reset"):
            getattr(e, name)
    with pytest.raises(AttributeError, match="before reset"):
        e.last()
    e.reset(seed=4)
    raw = e.unwrapped
    assert str(e) == "ActionSpaceWrapper<mus_v0>" and e.num_agents == 4
    rng = np.random.default_rng(0)
    for k in range(60):
        if not e.agents:
            e.reset(seed=k)
        for layer in (e, e.env, e.env.env):
            assert all(getattr(layer, name) is getattr(raw, name) for name in names)
        got, want = e.last(), AECEnv.last(e)
        assert np.array_equal(got[0]["observation"], want[0]["observation"])
        assert np.array_equal(got[0]["action_mask"], want[0]["action_mask"]) and got[1:] == want[1:]
        assert e.last(observe=False)[0] is None
        obs, *_, term, trunc, _ = e.last()
        e.step(None if term or trunc else masked_action(obs, rng))


def test_every_observation_piece_has_a_deliberate_bound():
    """A piece added to observation.py must be given its bound in mus_v0 (else it silently gets inf)."""
    missing = [name for name, _, _ in PIECES if not observation.known_piece(name)]
    assert not missing, f"give these observation pieces a bound in mus_env.observation.piece_high: {missing}"
    high = mus_v0.observation_box(MusConfig(target=30, juegos_to_win_vaca=3)).high
    assert (high[OFFSETS["hand_numbers"]] == 1).all() and (high[OFFSETS["rank_counts"]] == 4).all()
    stakes = [name for name in OFFSETS if name.endswith("_stake")]
    speech = [name for name in OFFSETS if name.endswith("_speech")]
    assert stakes and all(np.isinf(high[OFFSETS[n]]).all() for n in stakes)
    assert speech and all((high[OFFSETS[n]] == 1).all() for n in speech)
    assert np.isinf(high[OFFSETS["scores"]]).all()
    assert high[OFFSETS["target"]][0] == np.float32(0.3) and high[OFFSETS["games_won"]][0] == 3


# ----------------------------------------------------------------------------------------------------------
# fuzz: random masked play through the env, checked against the engine


def fuzz_game(e, policy, rng: np.random.Generator, seed: int) -> None:
    """Play one game through ``e`` (raw_env or env()) and check it against its MusGame at every step: the env plays
    a compiled table, ``raw.game`` the same game on ``MusGame`` (read at the start, it is stepped with the env)."""
    e.reset(seed=seed)
    raw = e.unwrapped
    game = raw.game
    space = e.observation_space("player_0")
    total = dict.fromkeys(AGENTS, 0.0)
    steps = 0
    for agent in e.agent_iter():
        obs, _, terminated, truncated, _ = e.last()
        assert truncated is False and terminated is game.is_over
        if terminated:
            assert not obs["action_mask"].any()
            e.step(None)
            continue
        seat = AGENTS.index(agent)
        assert seat == game.current_player
        assert obs["action_mask"].dtype == np.int8
        assert np.flatnonzero(obs["action_mask"]).tolist() == game.legal_actions()
        assert space.contains(obs), f"observation out of bounds at step {steps}"
        assert np.array_equal(obs["observation"], game.observe(seat)), f"seat {seat}'s view, step {steps}"
        other = AGENTS[(seat + 1 + steps % 3) % 4]
        seen = e.observe(other)
        assert not seen["action_mask"].any()
        assert np.array_equal(seen["observation"], game.observe(AGENTS.index(other))), f"{other}'s view, step {steps}"
        assert raw.table_rows() == game.table_rows()
        if steps % 5 == 0:
            assert np.array_equal(raw.state(), game.state())
        hands_before = len(game.hand_log)
        e.step(policy(game.legal_actions(), rng))
        steps += 1
        r = raw.rewards
        assert r["player_0"] == r["player_2"] == -r["player_1"] == -r["player_3"]
        if len(game.hand_log) == hands_before:
            assert r["player_0"] == 0.0
        for a in AGENTS:
            total[a] += r[a]
        assert all(raw.terminations[a] is game.is_over for a in raw.agents)
        assert all(raw.truncations[a] is False for a in raw.agents)
        if not game.is_over:
            assert raw.agent_selection == AGENTS[game.current_player]
    assert game.is_over and not raw.agents
    for s in range(4):                                 # the final views (each seat's last observation)
        assert np.array_equal(raw.observe(AGENTS[s])["observation"], game.observe(s))
    expected = (1.0 if game.winner == 0 else -1.0) if raw.reward_mode == "game" else stone_rewards_from_scores(game)
    assert total["player_0"] == total["player_2"] == expected
    assert total["player_1"] == total["player_3"] == -expected


FUZZ_CASES = [  # (name, config, reward, policy, games in CI)
    ("default_uniform", MusConfig(), "game", uniform, 800),
    ("kings4_target30_calm_stones", MusConfig(kings=4, target=30), "stones", calm, 400),
    ("vaca2_stones", MusConfig(juegos_to_win_vaca=2, vacas_to_win_match=2, target=20), "stones", uniform, 400),
    ("variants_calm", MusConfig(auto_declare=False, partner_override=False, holders_only_speak=False, punto=False,
                                allow_zero_discard=True, max_mus_rounds=2, real31="any10", target=30),
     "game", calm, 400),
    ("signals_truthful", MusConfig(signals="truthful"), "stones", uniform, 200),
    ("signals_free_calm", MusConfig(signals="free", signal_intercept_p=0.5), "game", calm, 200),
]


@pytest.mark.parametrize("name, cfg, reward, policy, games", FUZZ_CASES, ids=[c[0] for c in FUZZ_CASES])
def test_fuzz_raw_env(name, cfg, reward, policy, games):
    e = mus_v0.raw_env(config=cfg, reward=reward)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    for seed in range(games):
        fuzz_game(e, policy, rng, 1000 + seed)


def test_fuzz_wrapped_env():
    e = mus_v0.env(kings=4, reward="stones")
    rng = np.random.default_rng(5)
    for seed in range(200):
        fuzz_game(e, calm, rng, seed)


@pytest.mark.slow
@pytest.mark.parametrize("name, cfg, reward, policy, games", FUZZ_CASES, ids=[c[0] for c in FUZZ_CASES])
def test_fuzz_raw_env_long(name, cfg, reward, policy, games):
    e = mus_v0.raw_env(config=cfg, reward=reward)
    rng = np.random.default_rng(zlib.crc32(name.encode()) + 1)
    for seed in range(20 * games):
        fuzz_game(e, policy, rng, 10**6 + seed)


# ----------------------------------------------------------------------------------------------------------
# no leakage: the same public history with different hidden cards gives the same observation


def play_twin(deck_a, deck_b, mano, actions, watchers, config, scores=(0, 0), past_first_hand=False):
    """Step two envs dealt from two decks with the same actions while the public history stays the same,
    checking that every seat of ``watchers`` observes the same vector in both; returns the steps compared per
    hand number. With ``past_first_hand`` the comparison goes on into later hands (dealt alike from the same
    seed) until a hand's cards are shown, which legitimately tells the deals apart."""
    a, b = mus_v0.raw_env(config=config), mus_v0.raw_env(config=config)
    a.reset(seed=0, options={"deck": deck_a, "mano": mano, "scores": scores})
    b.reset(seed=0, options={"deck": deck_b, "mano": mano, "scores": scores})
    # the full-information state tells the deals apart exactly when some hand differs
    assert np.array_equal(a.state(), b.state()) == (a.game.hands == b.game.hands)
    compared: dict[int, int] = {}
    for step in range(400):
        ga, gb = a.game, b.game
        if (ga.is_over or (ga.hand_number > 0 and not past_first_hand) or ga.declarations != gb.declarations
                or ga.current_player != gb.current_player or ga.legal_actions() != gb.legal_actions()
                or ga.hand_number != gb.hand_number or ga.scores != gb.scores
                or any(h.shown for h in ga.hand_log + gb.hand_log)):
            break                                    # the public history may legitimately differ from here
        for w in watchers:
            oa, ob = a.observe(AGENTS[w]), b.observe(AGENTS[w])
            assert np.array_equal(oa["observation"], ob["observation"]), \
                f"seat {w} sees hidden cards at step {step}, hand {ga.hand_number}: " + ", ".join(
                    name for name, sl in OFFSETS.items()
                    if not np.array_equal(oa["observation"][sl], ob["observation"][sl]))
            assert np.array_equal(oa["action_mask"], ob["action_mask"])
        compared[ga.hand_number] = compared.get(ga.hand_number, 0) + 1
        legal = ga.legal_actions()
        a.step(actions(legal, step))
        b.step(actions(legal, step))
    return compared


def _reseat(deck, mano, seats, rng):
    """``deck`` with the 4 x len(seats) cards dealt to ``seats`` (absolute) shuffled among those seats."""
    idx = [i for i in range(16) if (mano + i % 4) % 4 in seats]
    cards = [deck[i] for i in idx]
    rng.shuffle(cards)
    out = list(deck)
    for i, c in zip(idx, cards, strict=True):
        out[i] = c
    return out


def test_no_leakage_swapping_opponents_cards():
    # Mano seat 0 and partner seat 2 watch; seats 1 and 3 swap their hands. Neither opponent hand has pares
    # or juego, so every public event (declarations included) is the same in both deals.
    mine, right, partner, left = "Ro3c7e4b", "Co6c5e4o", "RbSe6o5c", "Sb7o6e2b"
    deck_a = deck_from_hands([mine, right, partner, left])
    deck_b = deck_from_hands([mine, left, partner, right])
    script = [int(Action.NO_MUS)] + [int(Action.PASO)] * 8 + [int(Action.PASO)] * 8

    def actions(legal, step):
        a = script[step] if step < len(script) else legal[0]
        return a if a in legal else legal[0]

    compared = play_twin(deck_a, deck_b, 0, actions, (0, 2), MusConfig())
    assert compared[0] >= 9                          # the mus call, grande and chica at least


@settings(max_examples=60, deadline=None)
@given(perm=st.permutations(list(range(40))), mano=st.integers(0, 3), observer=st.integers(0, 3),
       partner_too=st.booleans(), swap_seed=st.integers(0, 2**32 - 1), action_seed=st.integers(0, 2**32 - 1))
def test_no_leakage_property(perm, mano, observer, partner_too, swap_seed, action_seed):
    """Shuffle the observer's two opponents' 8 cards between them: the observer and its partner see nothing.
    Shuffle the partner's cards in with them: the observer sees nothing."""
    partner = (observer + 2) % 4
    others = {(observer + 1) % 4, (observer + 3) % 4} | ({partner} if partner_too else set())
    deck_b = _reseat(list(perm), mano, others, np.random.default_rng(swap_seed))
    rng = np.random.default_rng(action_seed)
    chosen: dict[int, int] = {}

    def actions(legal, step):
        if step not in chosen:
            chosen[step] = calm(legal, rng)
        return chosen[step]

    # One mus round at most, so that no reshuffle mixes the different discards back into the stock.
    watchers = (observer,) if partner_too else (observer, partner)
    compared = play_twin(list(perm), deck_b, mano, actions, watchers, MusConfig(max_mus_rounds=1))
    assert compared[0] >= 1       # the deal itself at least; about 13 decisions on average


@pytest.mark.parametrize("observer", [0, 1, 2, 3])
def test_no_leakage_into_the_next_game(observer):
    """A vaca of two games; the first ends on refusal stones (39-39, the first bet refused), so no card is
    shown. Deal the three other seats' cards (the partner's too) differently: through the rest of that hand
    and the whole next one, the observer sees the same (``prev_rank_counts`` stays empty)."""
    cfg = MusConfig(juegos_to_win_vaca=2, max_mus_rounds=1)
    rng = np.random.default_rng(observer)
    prefer = (int(Action.NO_MUS), int(Action.NO_QUIERO), int(Action.ENVIDO_2))

    def actions(legal, step):                        # cut the mus, bet, refuse every bet
        return next((a for a in prefer if a in legal), legal[0])

    runs = 0
    for _ in range(6):
        deck_a = [int(c) for c in rng.permutation(40)]
        others = {s for s in range(4) if s != observer}
        deck_b = _reseat(deck_a, 0, others, rng)
        compared = play_twin(deck_a, deck_b, 0, actions, (observer,), cfg, scores=(39, 39), past_first_hand=True)
        assert compared.get(0, 0) >= 2 and compared.get(1, 0) >= 4, compared   # into the next game's hand
        runs += 1
    assert runs == 6


def _rank_counts(hand, kings):
    counts = [0] * 10
    for c in hand:
        counts[_rank_of(c, kings)] += 1
    return counts


def _rank_of(card, kings):
    """Index of a card's rank in ``prev_rank_counts`` (rank 1 = as, ascending): with 4 kings the ten numbers
    A 2 3 4 5 6 7 S C R; with 8 kings the eight ranks A 4 5 6 7 S C R, every 2 an as and every 3 a rey."""
    number = "A234567SCR"[card % 10]
    ranks = "A234567SCR" if kings == 4 else "A4567SCR"
    if kings == 8:
        number = {"2": "A", "3": "R"}.get(number, number)
    return ranks.index(number)


_BOLD = np.ones(31)
_BOLD[[int(Action.ENVIDO_2), int(Action.NO_QUIERO), int(Action.ORDAGO)]] = (20.0, 4.0, 30.0)


@pytest.mark.parametrize("kings", [8, 4])
def test_prev_rank_counts_filled_exactly_when_the_rules_reveal_the_hands(kings):
    """RULES.md §6.2/§6.3/§9.5: all four hands are revealed at the showdown and at an accepted órdago; a hand
    that ends the game on refusal stones shows nothing. In a vaca (several games per episode, low target so
    that games often end on a refusal) every seat's view of the previous hand is checked against that, at
    every step."""
    cfg = MusConfig(kings=kings, target=6, juegos_to_win_vaca=3, vacas_to_win_match=2)
    rng = np.random.default_rng(kings)
    seen = {"shown": 0, "hidden": 0, "ordago": 0}
    counted = None
    for seed in range(20):
        game = MusGame(cfg, seed=seed)
        while not game.is_over:
            if game.hand_log:
                rec = game.hand_log[-1]
                refused_out = (rec.game_winner is not None and not rec.by_ordago and rec.stones
                               and rec.stones[-1].reason == "refused")
                shown = not refused_out
                assert rec.shown == shown, rec
            for seat in range(4):
                d = decode(game.observe(seat))
                counts = d["prev_rank_counts"]
                if game.hand_log and shown:
                    hands = game.hand_log[-1].final_hands
                    assert d["prev_shown"]
                    assert counts == [_rank_counts(hands[(seat + q) % 4], kings) for q in range(4)], seat
                else:
                    assert not d["prev_shown"] and counts == [[0] * 10] * 4, seat
            if game.hand_log and game.hand_log[-1] is not counted:
                counted = game.hand_log[-1]
                seen["ordago" if counted.by_ordago else "shown" if shown else "hidden"] += 1
            legal = game.legal_actions()
            w = _CALM[legal] * _BOLD[legal]                 # bets, refusals and some accepted órdagos
            game.step(legal[int(rng.choice(len(legal), p=w / w.sum()))])
    assert min(seen.values()) >= 3, seen


# ----------------------------------------------------------------------------------------------------------
# observation round trip


@pytest.mark.parametrize("cfg", CONFIGS.values(), ids=CONFIGS.keys())
def test_decode_round_trips_hand_stake_scores(cfg):
    e = mus_v0.raw_env(config=cfg, reward="stones")
    rng = np.random.default_rng(11)
    checked = 0
    for seed in range(40):
        e.reset(seed=seed)
        game = e.game
        while not game.is_over:
            for seat in range(4):
                d = decode(e.observe(AGENTS[seat])["observation"])
                team = seat % 2
                assert d["hand"] == list(game.hands[seat])
                assert d["scores"] == (game.scores[team], game.scores[1 - team])
                assert d["target"] == cfg.target and d["kings"] == cfg.kings
                assert d["mano"] == (game.mano - seat) % 4
                assert d["acting"] == (game.current_player - seat) % 4
                for slot in range(4):
                    ls = game.lance_state(slot)
                    assert d["lances"][slot]["stake"] == ("ordago" if ls.stake == ORDAGO_STAKE else ls.stake)
                checked += 1
            e.step(calm(game.legal_actions(), rng))
    assert checked > 1000


# ----------------------------------------------------------------------------------------------------------
# rewards on rigged deals


def test_ordago_rewards():
    deck = deck_from_hands(["RRRR", None, None, None])      # the mano holds four reyes: wins grande
    for reward, expected in (("game", 1.0), ("stones", 40.0 - 10)):
        e = mus_v0.raw_env(reward=reward)
        e.reset(seed=0, options={"deck": deck, "mano": 0, "scores": (10, 35)})
        for a in (Action.NO_MUS, Action.ORDAGO, Action.QUIERO):
            e.step(int(a))
        assert e.game.is_over and e.game.winner == 0
        assert [e.rewards[a] for a in AGENTS] == [expected, -expected, expected, -expected]
        assert all(e.terminations.values())
        for _ in range(4):
            obs, cumulative, terminated, truncated, _ = e.last()
            assert terminated and not truncated
            assert cumulative == (expected if AGENTS.index(e.agent_selection) % 2 == 0 else -expected)
            e.step(None)
        assert e.agents == []


def test_refusal_ending_the_game_rewards():
    deck = deck_from_hands(["RRRR", None, None, None])
    e = mus_v0.raw_env(reward="stones")
    e.reset(seed=0, options={"deck": deck, "mano": 0, "scores": (39, 20)})
    for a in (Action.NO_MUS, Action.ENVIDO_2, Action.NO_QUIERO, Action.NO_QUIERO):
        assert not e.game.is_over
        e.step(int(a))
    assert e.game.is_over and e.game.scores == (40, 20)
    assert [e.rewards[a] for a in AGENTS] == [1.0, -1.0, 1.0, -1.0]


def test_stones_reward_after_a_showdown():
    deck = deck_from_hands(["RRRR", "AAAA", None, None])
    e = mus_v0.raw_env(reward="stones")
    e.reset(seed=0, options={"deck": deck, "mano": 0})
    game = e.game
    seen = dict.fromkeys(AGENTS, 0.0)
    while game.hand_number == 0:
        assert all(v == 0 for v in e.rewards.values())
        legal = game.legal_actions()
        e.step(int(Action.PASO) if int(Action.PASO) in legal else int(Action.NO_MUS) if 1 in legal else legal[0])
        for a in AGENTS:
            seen[a] += e.rewards[a]
    rec = game.hand_log[0]
    diff = (rec.scores_after[0] - rec.scores_before[0]) - (rec.scores_after[1] - rec.scores_before[1])
    assert diff != 0
    assert seen == {"player_0": diff, "player_1": -diff, "player_2": diff, "player_3": -diff}


# ----------------------------------------------------------------------------------------------------------
# copies


def _snapshot(e) -> tuple:
    raw = e.unwrapped
    obs = {a: e.observe(a) for a in AGENTS} if raw.agents else {}
    return (raw.game.state().tobytes(), raw.agent_selection, list(raw.agents), dict(raw.rewards),
            dict(raw._cumulative_rewards), dict(raw.terminations), dict(raw.truncations),
            {a: (o["observation"].tobytes(), o["action_mask"].tobytes()) for a, o in obs.items()})


@pytest.mark.parametrize("make", CONSTRUCTORS.values(), ids=CONSTRUCTORS.keys())
def test_deepcopy_and_pickle_mid_game(make):
    e = make(reward="stones")
    e.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(6):
        obs, *_ = e.last()
        e.step(masked_action(obs, rng))
    copies = [copy.deepcopy(e), pickle.loads(pickle.dumps(e))]
    assert all(_snapshot(c) == _snapshot(e) for c in copies)
    for c in copies:
        assert c.unwrapped.game is not e.unwrapped.game
    rngs = [np.random.default_rng(1) for _ in range(3)]
    envs = [e, *copies]
    for _ in range(10_000):
        if not e.agents:
            break
        for env_, r in zip(envs, rngs, strict=True):
            obs, _, terminated, truncated, _ = env_.last()
            env_.step(None if terminated or truncated else masked_action(obs, r))
        assert all(_snapshot(c) == _snapshot(e) for c in copies)
    assert not e.agents and all(not c.agents for c in copies)


# ----------------------------------------------------------------------------------------------------------
# render


def test_render_ansi_shows_table_and_hides_other_hands():
    deck = deck_from_hands(["Ro3c7e4b", "Co6c5e4o", "RbSe6o5c", "Sb7o6e2b"])
    e = mus_v0.raw_env(render_mode="ansi")
    e.reset(seed=0, options={"deck": deck, "mano": 1, "scores": (12, 7)})
    e.step(int(Action.NO_MUS))                               # seat 1 cuts; seat 1 opens grande
    e.step(int(Action.ENVIDO_2))
    text = e.render()
    game = e.game
    acting = game.current_player
    assert "12 - 7" in text and "mano   player_1" in text and "hand 1, game 1" in text
    assert hand_to_string(game.hands[acting]) in text
    for s in range(4):
        if s != acting:
            assert hand_to_string(game.hands[s]) not in text
    assert "player_1 no hay mus" in text and "player_1 envido 2" in text
    # finish the hand: the last hand's four hands appear once shown, with its stones per lance
    while game.hand_number == 0 and not game.is_over:
        legal = game.legal_actions()
        e.step(int(Action.QUIERO) if int(Action.QUIERO) in legal else int(Action.PASO) if 18 in legal else legal[0])
    text = e.render()
    rec = game.hand_log[-1]
    assert rec.shown
    assert all(hand_to_string(h) in text for h in rec.final_hands)
    assert "stones grande" in text and "pares" in text


def test_render_human_prints(capsys):
    e = mus_v0.raw_env(render_mode="human")
    e.reset(seed=0)
    assert e.render() is None
    assert "score" in capsys.readouterr().out
    e.step(e.game.legal_actions()[0])                        # human mode also renders after every step
    assert "score" in capsys.readouterr().out


def test_render_without_mode_warns_and_returns_none():
    e = mus_v0.raw_env()
    e.reset(seed=0)
    with pytest.warns(UserWarning, match="render"):
        assert e.render() is None


# ----------------------------------------------------------------------------------------------------------
# bad input: clear errors, nothing changed


def _live_env(make=mus_v0.raw_env):
    e = make()
    e.reset(seed=5)
    rng = np.random.default_rng(2)
    for _ in range(3):
        obs, *_ = e.last()
        e.step(masked_action(obs, rng))
    return e


@pytest.mark.parametrize("bad", [26, 31, -1, 99, "mus", 2.0, None, np.int64(40)])
def test_raw_env_illegal_action_raises_and_changes_nothing(bad):
    e = _live_env()
    if bad == 26 and 26 in e.game.legal_actions():
        bad = 5                                              # keep an illegal in-range id
    before = _snapshot(e)
    with pytest.raises(IllegalActionError, match="seat|action"):
        e.step(bad)
    assert _snapshot(e) == before


OUT_OF_SPACE = [47, -1, 2**63, 2**64, 38.0, "38", True, np.bool_(True), np.float64(2.0), None, [0]]


@pytest.mark.parametrize("bad", OUT_OF_SPACE, ids=[repr(b) for b in OUT_OF_SPACE])
def test_env_out_of_space_action_is_raw_env_error_and_changes_nothing(bad):
    """With señas (47 ids): an id outside the action space or a non-int through ``env()`` is raw_env's
    IllegalActionError, word for word (the action, the seat, the phase, the legal ids), never PettingZoo's bare
    AssertionError nor numpy's "truth value of an array is ambiguous"; nothing changes, play goes on."""
    cfg = MusConfig(signals="truthful")
    messages = []
    for make in (mus_v0.raw_env, mus_v0.env):
        e = make(config=cfg)
        e.reset(seed=5)
        before = _snapshot(e)
        with pytest.raises(IllegalActionError) as err:
            e.step(bad)
        assert _snapshot(e) == before
        messages.append(str(err.value))
        legal = e.unwrapped.game.legal_actions()
        assert all(str(a) in messages[-1] for a in legal) and "legal actions" in messages[-1]
        e.step(legal[0])                                    # still usable
    assert messages[0] == messages[1]
    assert "ambiguous" not in messages[1] and (repr(bad) in messages[1] or str(bad) in messages[1])


def test_env_in_space_numpy_ints_pass_and_a_done_agent_takes_only_none():
    e = mus_v0.env(first_mano=0)
    e.reset(seed=3)
    e.step(np.int64(Action.NO_MUS))                          # numpy ints in range pass the check
    e.step(np.uint8(Action.NO_MUS))
    deck = deck_from_hands(["RRRR", None, None, None])
    e.reset(seed=0, options={"deck": deck, "mano": 0})
    for a in (Action.NO_MUS, Action.ORDAGO, Action.QUIERO):
        e.step(int(a))
    assert all(e.terminations.values())
    with pytest.raises(ValueError, match="only action is None"):
        e.step(99)
    e.step(None)


def test_env_action_check_holds_under_python_O():
    """``AssertOutOfBoundsWrapper`` is an assert: under ``python -O`` an id of 47 reached the mask (IndexError) and
    -1 read its last entry. The check of ``env()`` is explicit."""
    code = ("from mus_env import mus_v0, IllegalActionError\n"
            "e = mus_v0.env(signals='free'); e.reset(seed=0)\n"
            "for bad in (47, -1, 2**63):\n"
            "    try:\n        e.step(bad)\n    except IllegalActionError as x:\n        print('refused', bad)\n")
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=PROCESS_S)
    assert r.returncode == 0 and r.stdout.split("\n")[:3] == ["refused 47", "refused -1", f"refused {2**63}"], r


def test_env_illegal_action_terminates_with_penalty():
    e = mus_v0.env()
    e.reset(seed=5)
    agent = e.agent_selection
    illegal = next(a for a in range(31) if a not in e.unwrapped.game.legal_actions())
    e.last()
    e.step(illegal)                                         # PettingZoo logs "Illegal move made ..."
    assert all(e.terminations.values())
    assert e.rewards[agent] == -1 and all(e.rewards[a] == 0 for a in AGENTS if a != agent)


def test_stepping_a_terminated_agent():
    deck = deck_from_hands(["RRRR", None, None, None])
    e = mus_v0.raw_env()
    e.reset(seed=0, options={"deck": deck, "mano": 0})
    for a in (Action.NO_MUS, Action.ORDAGO, Action.QUIERO):
        e.step(int(a))
    before = _snapshot(e)
    with pytest.raises(ValueError, match="dead|None"):
        e.step(int(Action.PASO))
    assert _snapshot(e) == before
    for _ in range(4):
        e.step(None)
    with pytest.raises(ValueError, match="reset"):
        e.step(None)


def test_step_observe_state_before_reset():
    e = mus_v0.raw_env()
    for call in (lambda: e.step(0), lambda: e.observe("player_0"), e.state, e.last, lambda: e.last(False)):
        with pytest.raises(RuntimeError, match="reset"):
            call()
    with pytest.raises(Exception, match="reset"):
        mus_v0.env().step(0)


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="'game', 'stones'"):
        mus_v0.raw_env(reward="win")
    with pytest.raises(ValueError, match="'game', 'stones'"):
        mus_v0.env(reward=None)
    with pytest.raises(ValueError, match="kingz.*accepted fields.*kings"):
        mus_v0.raw_env(kingz=4)
    with pytest.raises(ValueError, match="MusConfig.kings"):
        mus_v0.raw_env(kings=5)
    with pytest.raises(ValueError, match="MusConfig.target"):
        mus_v0.raw_env(config=MusConfig(kings=4), target=0)
    with pytest.raises(ValueError, match="config must be a MusConfig"):
        mus_v0.raw_env(config=40)
    with pytest.raises(ValueError, match="render_mode"):
        mus_v0.raw_env(render_mode="rgb_array")
    with pytest.raises(ValueError, match="MusConfig.signals"):
        mus_v0.raw_env(signals="sometimes")
    e = mus_v0.raw_env(config={"kings": 4}, target=30)
    assert (e.config.kings, e.config.target) == (4, 30)


def test_bad_reset_arguments_change_nothing():
    e = _live_env()
    before = _snapshot(e)
    for kwargs in ({"seed": -1}, {"seed": "x"}, {"seed": 2**64}, {"seed": True},
                   {"seed": 0, "options": {"deck": list(range(39))}},
                   {"seed": 0, "options": {"mano": 2}}, {"seed": 0, "options": {"deck": list(range(40)), "mano": 4}},
                   {"seed": 0, "options": {"deck": list(range(40)), "scores": (0, 40)}}):
        with pytest.raises(ValueError):
            e.reset(**kwargs)
        assert _snapshot(e) == before
    with pytest.raises(ValueError, match="unknown agent"):
        e.observe("player_4")
    with pytest.warns(UserWarning, match="not used"):
        e.reset(seed=0, options={"dek": []})


class _StockDeadStep(mus_v0.raw_env):  # noqa: N801
    """raw_env with PettingZoo's own ``AECEnv._was_dead_step`` in place of raw_env's shorter one."""

    def _was_dead_step(self, action):
        from pettingzoo import AECEnv
        AECEnv._was_dead_step(self, action)


def _stock_env():
    """env()'s stack built from PettingZoo's own wrappers (and its dead step): the reference of env()'s short paths."""
    from pettingzoo.utils import wrappers
    e = _StockDeadStep()
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = mus_v0.ActionSpaceWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


@pytest.mark.parametrize("illegal_every", [0, 7])
def test_env_short_paths_equal_pettingzoos_wrappers(illegal_every):
    """``env()`` (its wrappers' short paths, its turn iterator and raw_env's dead step) gives what PettingZoo's own
    wrappers and dead step give over the same games: the same turns, observations, rewards and flags at every turn,
    legal play and games ended by an illegal action alike, with and without ``last()`` before each step."""
    ours, stock = mus_v0.env(), _stock_env()
    rng = np.random.default_rng(11)
    for game in range(40):
        ours.reset(seed=game)
        stock.reset(seed=game)
        observe_first = game % 3 != 2
        turns = 0
        for a, b in zip(ours.agent_iter(), stock.agent_iter(), strict=True):
            turns += 1
            assert a == b
            for name in ("agents", "rewards", "terminations", "truncations", "infos"):
                assert getattr(ours, name) == getattr(stock, name), name
            assert ours._cumulative_rewards == stock._cumulative_rewards
            if observe_first or ours.terminations[a]:
                got, want = ours.last(), stock.last()
                assert np.array_equal(got[0]["observation"], want[0]["observation"])
                assert np.array_equal(got[0]["action_mask"], want[0]["action_mask"]) and got[1:] == want[1:]
            if ours.terminations[a] or ours.truncations[a]:
                action = None
            else:
                mask = ours.unwrapped.game.legal_action_mask()
                pool = np.flatnonzero(mask == 0) if illegal_every and turns % illegal_every == 0 else mask.nonzero()[0]
                action = int(rng.choice(pool))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")                  # PettingZoo's warning on an illegal move
                ours.step(action)
                stock.step(action)
        assert ours.agents == stock.agents == [] and ours.agent_selection == stock.agent_selection


# ----------------------------------------------------------------------------------------------------------
# the MusGame replay (raw_env.game) of the compiled table


@pytest.mark.parametrize("cfg", [MusConfig(), MusConfig(signals="truthful", kings=4)], ids=["default", "signals"])
def test_game_read_late_is_the_game_the_table_played(cfg):
    """``game`` first read mid-episode replays every action so far: it is where the table is, and from then on
    it moves with the env (a rigged deal too)."""
    e = mus_v0.raw_env(config=cfg, reward="stones")
    rng = np.random.default_rng(7)
    deck = np.random.default_rng(3).permutation(40).tolist()
    for k, options in enumerate([None, {"deck": deck, "mano": 2, "scores": (5, 11)}] * 4):
        e.reset(seed=100 + k, options=options)
        for _ in range(k + 3):                      # steps before anybody reads game
            if e.terminations[e.agent_selection]:
                break
            e.step(masked_action(e.observe(e.agent_selection), rng))
        game = e.game
        while e.agents:
            agent = e.agent_selection
            if e.terminations[agent]:
                assert game.is_over
                e.step(None)
                continue
            seat = AGENTS.index(agent)
            assert game.current_player == seat and e.table_rows() == game.table_rows()
            assert np.array_equal(e.state(), game.state())
            assert np.array_equal(e.observe(agent)["observation"], game.observe(seat))
            e.step(masked_action(e.observe(agent), rng))
        assert e.game is game and game.is_over


def test_an_illegal_action_is_named_by_the_replay_and_changes_nothing():
    e = mus_v0.raw_env()
    e.reset(seed=5)
    e.step(int(Action.NO_MUS))                      # (mus is declined: a betting decision comes next)
    before = (e.state().copy(), e.agent_selection, e.observe(e.agent_selection)["action_mask"].copy())
    for bad in (int(Action.MUS), 999, -1, 2**70, 3.0, "3", True, None):
        with pytest.raises((IllegalActionError, ValueError)) as err:
            e.step(bad)
        assert e.game.current_player == AGENTS.index(e.agent_selection)
        assert "legal" in str(err.value) or "action" in str(err.value)
    assert np.array_equal(e.state(), before[0]) and e.agent_selection == before[1]
    assert np.array_equal(e.observe(e.agent_selection)["action_mask"], before[2])
    e.step(int(np.flatnonzero(before[2])[0]))        # the env plays on from where it was
    assert e.game.current_player == AGENTS.index(e.agent_selection)
