"""Mus as an OpenSpiel game (``mus_env.adapters.openspiel``, the game ``python_mus``).

* OpenSpiel's own checks of a game (``pyspiel.random_sim_test``: legal actions, masks, clones, serialisation,
  observations of every player, rewards summing to the returns, zero-sum returns in bounds, the game length
  within ``max_game_length``), and cloning and ``serialize_game_and_state`` round trips of our own.
* Differential: thousands of games played on the OpenSpiel state and on a ``MusGame`` dealt by its seed, the
  chance nodes answered with the reference engine's cards: the same seat to act, legal actions, hands, scores,
  observations, illegal actions refused by both, and the same returns, reshuffles included; the rewards read
  at each decision add up to the returns. At every chance node the state's event and outcomes are those of a
  second ``MusGame(explicit_chance=True)`` given the same actions and outcomes.
* Hidden cards: every player's information state and observation (strings and tensors) are the same in two
  histories that differ only in cards the player never saw.
* The parameters, the chance model (uniform, card ids), the bounds.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from mus_env import MusGame  # noqa: E402
from mus_env.actions import DISCARD_BASE, ENVIDO_ACTIONS, NUM_ACTIONS, Action  # noqa: E402
from mus_env.adapters import openspiel as spiel  # noqa: E402
from mus_env.config import MusConfig  # noqa: E402
from mus_env.interfaces import team_rewards  # noqa: E402
from mus_env.observation import HAND_DIM, decode  # noqa: E402
from mus_env.phases import Phase  # noqa: E402

#: Variants for the differential test: every switch of the rules that changes who acts or what is dealt. A hand
#: rarely leaves a game to 5 stones unfinished, so the matches of several games give the deals of later hands.
VARIANTS = [
    {"target": 5},
    {"target": 5, "juegos_to_win_vaca": 3},
    {"target": 5, "reward": "stones", "first_mano": 2},
    {"target": 5, "auto_declare": False, "allow_zero_discard": True, "exclude_own_discards": False},
    {"target": 3, "kings": 4, "partner_override": False, "holders_only_speak": False, "punto": False,
     "real31": "any10", "juegos_to_win_vaca": 2, "vacas_to_win_match": 2, "reward": "stones"},
    {"target": 5, "max_mus_rounds": 1, "max_stake": 5, "bet_sizes": "2/4/6/8/9"},
]


def _choose(rng: random.Random, legal: list[int], ordago: float = 0.1) -> int:
    """A random legal action that calls MUS often (long mus phases, so the stock runs out and is reshuffled) and
    órdago seldom (weight ``ordago``, so that games last several hands); with ``ordago=0``, few bets either."""
    weights = [8.0 if a == Action.MUS else ordago if a == Action.ORDAGO
               else 0.1 if ordago == 0 and a in ENVIDO_ACTIONS else 1.0 for a in legal]
    return rng.choices(legal, weights)[0]


def _play_both(game: spiel.MusSpielGame, seed: int, rng: random.Random, stats: dict[str, int],
               ordago: float = 0.1) -> None:
    """One game on ``game``'s state and on ``MusGame(config, seed)``, the chance nodes answered with the reference's
    cards (its deck for a deal, the cards it drew for a draw); everything compared on the way."""
    cfg = game.settings.config
    ref = MusGame(cfg, seed=seed)
    twin = MusGame(cfg, seed=seed, explicit_chance=True)          # the engine's own chance events
    state = game.new_initial_state()
    dealt = 0                                    # deal nodes since the last other node
    drawn: dict[int, list[int]] = {}
    summed = 0.0                                 # team 0's rewards, read at each decision and at the end
    while not state.is_terminal():
        if state.is_chance_node():
            kind, seat = state.chance_event
            outcomes = state.chance_outcomes()
            assert (state.chance_event, outcomes) == (twin.chance_event, twin.chance_outcomes())
            stats["chance nodes"] += 1
            cards = [c for c, _ in outcomes]
            assert all(p == pytest.approx(1 / len(outcomes)) for _, p in outcomes)
            if kind == "mano":
                card = ref.mano
            elif kind == "deal":
                assert seat == (ref.mano + dealt) % 4
                card, dealt = ref.deck[dealt], dealt + 1
            else:
                card = next(c for c in drawn[seat] if c in cards)
                drawn[seat].remove(card)
            assert card in cards, (kind, seat, card, cards)
            state.apply_action(card)
            twin.apply_chance(card)
            continue
        dealt = 0
        assert not any(drawn.values()), drawn
        summed += state.rewards()[0]
        assert summed == state.returns()[0] == team_rewards(ref, 0, game.settings.reward)
        g = state.mus_game
        p = state.current_player()
        assert (g.hands, g.scores, g.hand_number, g.mano, p) == (ref.hands, ref.scores, ref.hand_number,
                                                                   ref.mano, ref.current_player)
        legal = state.legal_actions()
        assert legal == ref.legal_actions()
        assert state.legal_actions_mask(p) == [int(a in legal) for a in range(NUM_ACTIONS)]
        if rng.random() < 0.1:
            assert np.array_equal(np.asarray(state.observation_tensor(p), np.float32), ref.observe(p))
            bad = rng.choice([a for a in range(NUM_ACTIONS) if a not in legal])
            before, history = str(state), state.history()
            with pytest.raises(ValueError):
                ref.step(bad)
            with pytest.raises(Exception, match="not legal"):
                state.apply_action(bad)
            assert (str(state), state.history()) == (before, history)
            stats["refused"] += 1
        action = _choose(rng, legal, ordago)
        last_discard = ref.phase == Phase.DISCARD and (p - ref.mano) % 4 == 3
        if last_discard:
            mask = action - DISCARD_BASE
            kept = {s: set(ref.hand_of(s)) for s in range(4)}
            kept[p] = {c for i, c in enumerate(ref.hand_of(p)) if not mask >> i & 1}
        ref.step(action)
        twin.step(action)
        state.apply_action(action)
        stats["decisions"] += 1
        if last_discard:
            drawn = {s: sorted(set(ref.hand_of(s)) - kept[s]) for s in range(4)}
    assert ref.is_over and not any(drawn.values())
    r = team_rewards(ref, 0, game.settings.reward)
    assert state.returns() == [r, -r, r, -r] and summed + state.rewards()[0] == r
    stats["games"] += 1
    stats["hands"] += len(ref.hand_log)
    stats["reshuffled hands"] += sum(sum(map(sum, rec.discards)) > 24 for rec in ref.hand_log)


def _differential(params: dict, games: int, seed: int, ordago: float | None = None) -> dict[str, int]:
    """``games`` games of :func:`_play_both`; ``ordago=None`` alternates wild play (``ordago=0.1``: most games end
    in their first hand) and calm play (``ordago=0``: games of several hands, so the deals of later hands too)."""
    game = pyspiel.load_game(spiel.GAME_NAME, params)
    rng = random.Random(seed)
    stats = dict.fromkeys(("games", "hands", "decisions", "refused", "reshuffled hands", "chance nodes"), 0)
    for i in range(games):
        _play_both(game, seed * 100_000 + i, rng, stats, (0.1, 0.0)[i % 2] if ordago is None else ordago)
    return stats


def test_two_thousand_short_games_match_the_engine() -> None:
    """2,000 episodes to a few stones over the variants (1,000 of them one game on the default rules): the same
    decisions, cards, observations, refusals and returns as MusGame, with the stock reshuffled in some hands and
    many episodes of several hands."""
    total = dict.fromkeys(("games", "hands", "decisions", "refused", "reshuffled hands", "chance nodes"), 0)
    for k, params in enumerate(VARIANTS):
        stats = _differential(params, 1000 if k == 0 else 200, seed=k)
        if params.get("max_mus_rounds", 6) >= 2:                  # one round draws at most 16 of the 24 cards
            assert stats["reshuffled hands"] > 0, (params, stats)
        for key, v in stats.items():
            total[key] += v
    assert total["games"] == 2000 and total["hands"] > 1.5 * total["games"] and total["refused"] > 1000, total
    assert total["chance nodes"] > 16 * total["hands"], total


def test_the_chance_nodes_are_the_engines() -> None:
    """Over many seeded deals (every variant), each chance node's event and outcomes, with their probabilities, are
    ``MusGame``'s own (``explicit_chance=True``): the adapter holds no rule of dealing or serving."""
    for k, params in enumerate(VARIANTS):
        stats = _differential(params, 40, seed=50 + k)
        assert stats["chance nodes"] > 16 * stats["hands"], (params, stats)


def test_full_size_games_match_the_engine() -> None:
    """Games to 40 stones on the default parameters (the trainer's caps), fewer of them, without órdagos (so
    that they last many hands)."""
    stats = _differential({}, 30, seed=99, ordago=0.0)
    assert stats["hands"] > 30 * 2 and stats["reshuffled hands"] > 0, stats


# ------------------------------------------------------------------------------------------------------------
# OpenSpiel's checks
def _name(params: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in params.items()) or "default"


@pytest.mark.parametrize("params", [{}, *VARIANTS], ids=_name)
def test_openspiel_random_simulations(params: dict) -> None:
    game = pyspiel.load_game(spiel.GAME_NAME, params)
    pyspiel.random_sim_test(game, num_sims=10, serialize=True, verbose=False)


def test_load_game_and_the_game_string() -> None:
    game = pyspiel.load_game("python_mus(target=5,reward=stones,bet_sizes=2/3/4/6/8)")
    assert game.settings.config.target == 5 and game.settings.config.bet_sizes == (2, 3, 4, 6, 8)
    assert game.get_type().reward_model == pyspiel.GameType.RewardModel.REWARDS
    assert pyspiel.load_game(str(game)).settings == game.settings
    default = pyspiel.load_game("python_mus")
    assert default.get_type().reward_model == pyspiel.GameType.RewardModel.TERMINAL
    assert (default.num_players(), default.num_distinct_actions(), default.max_chance_outcomes()) == (4, 31, 40)
    assert (default.min_utility(), default.max_utility(), default.utility_sum()) == (-1.0, 1.0, 0.0)
    cfg = default.settings.config
    assert cfg == MusConfig(max_mus_rounds=6, max_stake=40), cfg          # MusConfig's defaults but the two caps
    assert default.observation_tensor_shape() == default.information_state_tensor_shape() == [345]
    assert spiel.GAME_NAME in pyspiel.registered_names()


@pytest.mark.parametrize(("params", "match"), [
    ({"max_mus_rounds": -1}, "finite"), ({"max_stake": 1}, "finite"), ({"first_mano": 4}, "first_mano"),
    ({"reward": "points"}, "reward"), ({"bet_sizes": "2,3,4,5,10"}, "bet_sizes"), ({"kings": 6}, "kings"),
    ({"bet_sizes": "2/2/4/5/10"}, "bet_sizes")])
def test_bad_parameters_are_refused(params: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        spiel.parse_params(params)
    with pytest.raises(Exception, match=match):
        pyspiel.load_game(spiel.GAME_NAME, params)


def test_the_bounds_follow_the_caps() -> None:
    cfg = MusConfig(max_mus_rounds=6, max_stake=40)
    b = spiel.bounds(cfg)
    assert b["hands"] == 40 and b["games"] == 1
    assert b["decisions_per_hand"] == 8 * 6 + 4 + 4 * (3 + 3 * (20 + 1))
    assert pyspiel.load_game(spiel.GAME_NAME).max_game_length() == b["decisions"]
    assert spiel.bounds(cfg.replace(juegos_to_win_vaca=2, vacas_to_win_match=3))["games"] == 3 * 5
    with pytest.raises(ValueError, match="max_mus_rounds"):
        spiel.bounds(MusConfig())


def test_a_long_betting_war_stays_within_the_game_length() -> None:
    """Every seat calling MUS until it is forced to cut, then raising by the smallest bet whenever it can and
    accepting otherwise: the longest hands the caps allow stay within the bound per hand, and the episode within
    ``max_game_length``."""
    game = pyspiel.load_game(spiel.GAME_NAME, {"max_stake": 9})
    b = spiel.bounds(game.settings.config)
    state = game.new_initial_state()
    rng = random.Random(3)
    per_hand, hand, longest, total = 0, 0, 0, 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rng.choice(state.chance_outcomes())[0])
            continue
        legal = state.legal_actions()
        action = next((a for a in (Action.MUS, Action.ENVIDO_2, Action.QUIERO, Action.PASO) if a in legal), legal[0])
        state.apply_action(int(action))
        per_hand, total = per_hand + 1, total + 1
        if state.mus_game.hand_number != hand:
            hand, longest, per_hand = state.mus_game.hand_number, max(longest, per_hand), 0
    longest = max(longest, per_hand)
    assert 8 * 6 + 1 + 4 * 5 < longest <= b["decisions_per_hand"]              # six mus rounds and four raise wars
    assert total <= game.max_game_length()


def test_chance_nodes_are_uniform_over_the_unseen_cards() -> None:
    game = pyspiel.load_game(spiel.GAME_NAME, {"first_mano": -1})
    state = game.new_initial_state()
    assert state.chance_event == ("mano", -1) and state.chance_outcomes() == [(s, 0.25) for s in range(4)]
    state.apply_action(1)
    dealt = []
    for i in range(16):
        assert state.chance_event == ("deal", (1 + i) % 4)
        outcomes = state.chance_outcomes()
        assert [c for c, _ in outcomes] == sorted(set(range(40)) - set(dealt))
        assert state.action_to_string(pyspiel.PlayerId.CHANCE, outcomes[0][0]).startswith("deal ")
        dealt.append(outcomes[i][0])
        state.apply_action(dealt[-1])
    g = state.mus_game
    assert g.mano == 1 and g.deck[:16] == tuple(dealt) and state.current_player() == 1
    with pytest.raises(ValueError, match="not a chance node"):
        state.chance_outcomes()


def test_draws_come_from_the_stock_only() -> None:
    """Each replacement card is a chance node over the stock, the seats served from the mano on."""
    game = pyspiel.load_game(spiel.GAME_NAME, {"first_mano": 0})
    state = game.new_initial_state()
    for c in range(16):
        state.apply_action(c)
    for _ in range(4):
        state.apply_action(int(Action.MUS))
    for p in range(4):
        state.apply_action(DISCARD_BASE + (0b11 if p == 1 else 0b1))            # seat 1 discards two cards
    stock = sorted(state.mus_game.stock)
    served = []
    while state.is_chance_node():
        kind, seat = state.chance_event
        cards = [c for c, _ in state.chance_outcomes()]
        assert kind == "draw" and cards == sorted(set(stock) - set(c for _, c in served))
        served.append((seat, cards[-1]))
        state.apply_action(cards[-1])
    assert [s for s, _ in served] == [0, 1, 1, 2, 3]
    for s in range(4):
        assert {c for t, c in served if t == s} <= set(state.mus_game.hand_of(s))


# ------------------------------------------------------------------------------------------------------------
# cloning and serialisation
def _random_state(game: spiel.MusSpielGame, rng: random.Random, steps: int) -> spiel.MusSpielState:
    state = game.new_initial_state()
    for _ in range(steps):
        if state.is_terminal():
            break
        state.apply_action(rng.choice([c for c, _ in state.chance_outcomes()]) if state.is_chance_node()
                           else _choose(rng, state.legal_actions()))
    return state


@pytest.mark.parametrize("params", [{"target": 5}, {"target": 5, "reward": "stones"}])
def test_clones_and_serialised_states_play_on_alike(params: dict) -> None:
    game = pyspiel.load_game(spiel.GAME_NAME, params)
    rng = random.Random(5)
    for steps in (0, 1, 17, 40, 90, 400):
        state = _random_state(game, rng, steps)
        clone = state.clone()
        text = pyspiel.serialize_game_and_state(game, state)
        _, restored = pyspiel.deserialize_game_and_state(text)
        for other in (clone, restored):
            assert (str(other), other.history(), other.returns()) == (str(state), state.history(), state.returns())
        follow = random.Random(steps)
        while not state.is_terminal():
            a = (follow.choice([c for c, _ in state.chance_outcomes()]) if state.is_chance_node()
                 else _choose(follow, state.legal_actions()))
            state.apply_action(a)
            clone.apply_action(a)
            restored.apply_action(a)
        for other in (clone, restored):
            assert (str(other), other.returns(), other.information_state_string(0)) == (
                str(state), state.returns(), state.information_state_string(0))


def test_a_clone_is_independent() -> None:
    game = pyspiel.load_game(spiel.GAME_NAME, {"target": 5})
    state = _random_state(game, random.Random(2), 60)
    clone = state.clone()
    before = str(state)
    while not clone.is_terminal():
        clone.apply_action(clone.chance_outcomes()[0][0] if clone.is_chance_node() else clone.legal_actions()[0])
    assert str(state) == before and state.mus_game is not clone.mus_game


# ------------------------------------------------------------------------------------------------------------
# hidden cards
def _views(state: spiel.MusSpielState) -> list[tuple]:
    return [(state.information_state_string(p), tuple(state.information_state_tensor(p)),
             state.observation_string(p), tuple(state.observation_tensor(p))) for p in range(4)]


def _trajectory(game: spiel.MusSpielGame, rng: random.Random) -> tuple[list[int], list[list[tuple]], list, list]:
    """A random episode: its actions, every player's views before each action and at the end, the chance kind of
    each action (None for a player's), and every hand held at any time (by seat)."""
    state = game.new_initial_state()
    actions, views, kinds, hands = [], [], [], []
    while True:
        views.append(_views(state))
        if state.mus_game is not None:
            hands.append(state.mus_game.hands)
        if state.is_terminal():
            return actions, views, kinds, hands
        if state.is_chance_node():
            kinds.append(state.chance_event[0])
            a = rng.choice(state.chance_outcomes())[0]
        else:
            kinds.append(None)
            a = _choose(rng, state.legal_actions())
        actions.append(a)
        state.apply_action(a)


def _swaps(seen: set[int], hands: list, rng: random.Random) -> dict[int, int]:
    """Disjoint swaps of two cards of the same number and neighbouring suits (so every hand sorts the same way and
    the game goes on alike), among cards the player never saw and never in one hand together."""
    together = set()
    for by_seat in hands:
        for hand in by_seat:
            together.update((a, b) for a in hand for b in hand)
    pairs = [(10 * s + k, 10 * (s + 1) + k) for k in range(10) for s in range(3)]
    rng.shuffle(pairs)
    sigma: dict[int, int] = {}
    for x, y in pairs:
        if x in sigma or y in sigma or x in seen or y in seen or (x, y) in together:
            continue
        sigma[x], sigma[y] = y, x
    return sigma


@pytest.mark.parametrize("params", [{"target": 5, "juegos_to_win_vaca": 3},
                                    {"target": 5, "auto_declare": False, "exclude_own_discards": False}])
def test_hidden_cards_never_reach_a_players_views(params: dict) -> None:
    """For each player, a second history with other cards where it never saw any (its own hands, the hands shown
    at showdowns) gives it the same information state and observation, strings and tensors, at every node; the
    players who hold the swapped cards see the difference."""
    game = pyspiel.load_game(spiel.GAME_NAME, params)
    rng = random.Random(11)
    checked = noticed = 0
    for _ in range(15):
        actions, views, kinds, hands = _trajectory(game, rng)
        end = pyspiel.load_game(spiel.GAME_NAME, params).new_initial_state()
        for a in actions:
            end.apply_action(a)
        shown = {c for rec in end.mus_game.hand_log if rec.shown for h in rec.final_hands for c in h}
        for p in range(4):
            seen = shown | {c for by_seat in hands for c in by_seat[p]}
            sigma = _swaps(seen, hands, rng)
            if not sigma:
                continue
            state = game.new_initial_state()
            for i, a in enumerate(actions):
                assert _views(state)[p] == views[i][p], (p, i)
                noticed += any(_views(state)[q][0] != views[i][q][0] for q in range(4) if q != p)
                state.apply_action(sigma.get(a, a) if kinds[i] in ("deal", "draw") else a)
            assert _views(state)[p] == views[-1][p]
            checked += 1
    assert checked >= 30 and noticed > 0, (checked, noticed)


def test_an_openspiel_algorithm_runs_on_the_game() -> None:
    """OpenSpiel's outcome-sampling MCCFR trains on the game for a moment and its average policy plays it
    (``experiments.integrations.openspiel_mccfr`` with a tiny budget)."""
    from experiments.integrations.openspiel_mccfr import run

    result = run(seconds=0.3, games=20, seed=1)
    assert result.iterations >= 1 and result.games == 20
    for mean, half in (result.policy, result.random):
        assert -1 <= mean <= 1 and half >= 0


@pytest.mark.parametrize("reward", ["game", "stones"])
def test_openspiels_rl_environment_pays_the_returns(reward: str) -> None:
    """OpenSpiel's ``rl_environment`` (what its DQN, NFSP and policy-gradient agents step) samples the chance nodes
    itself; the rewards it hands out over an episode add up to the state's returns, and its information state is
    the observation."""
    from open_spiel.python import rl_environment

    env = rl_environment.Environment(spiel.GAME_NAME, target=10, reward=reward,
                                     chance_event_sampler=rl_environment.ChanceEventSampler(seed=6))
    rng = random.Random(6)
    hands = 0
    for _ in range(100):
        step = env.reset()
        total = np.zeros(4)
        while not step.last():
            p = step.observations["current_player"]
            assert len(step.observations["info_state"][p]) == 345
            step = env.step([_choose(rng, step.observations["legal_actions"][p], ordago=0.0)])
            total += step.rewards
        assert total.tolist() == env.get_state.returns()
        hands += len(env.get_state.mus_game.hand_log)
    assert hands > 100                                   # more hands than episodes: hands are dealt inside them


def test_the_own_hand_pieces_are_the_players_hand() -> None:
    game = pyspiel.load_game(spiel.GAME_NAME, {"target": 5})
    rng = random.Random(4)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rng.choice(state.chance_outcomes())[0])
            continue
        for p in range(4):
            hand = list(state.mus_game.hand_of(p))
            assert decode(state.information_state_tensor(p))["hand"] == hand
            assert decode(state.observation_tensor(p))["hand"] == hand
        state.apply_action(_choose(rng, state.legal_actions()))


def test_other_observation_types() -> None:
    """Public-only views hide every hand; the all-players view shows the four; the private-only view holds the
    own hand only."""
    from open_spiel.python.observation import make_observation

    game = pyspiel.load_game(spiel.GAME_NAME, {"target": 5})
    state = _random_state(game, random.Random(8), 30)
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    g = state.mus_game
    public = make_observation(game, pyspiel.IIGObservationType(
        public_info=True, perfect_recall=False, private_info=pyspiel.PrivateInfoType.NONE))
    everything = make_observation(game, pyspiel.IIGObservationType(
        public_info=True, perfect_recall=True, private_info=pyspiel.PrivateInfoType.ALL_PLAYERS))
    private = make_observation(game, pyspiel.IIGObservationType(
        public_info=False, perfect_recall=False, private_info=pyspiel.PrivateInfoType.SINGLE_PLAYER))
    for p in range(4):
        public.set_from(state, p)
        assert decode(public.tensor)["hand"] == []
        assert public.tensor[HAND_DIM:].tolist() == list(state.observation_tensor(p))[HAND_DIM:]
        everything.set_from(state, p)
        hands = everything.dict["hands"]
        assert [sorted(np.flatnonzero(hands[(s - p) % 4])) for s in range(4)] == [sorted(h) for h in g.hands]
        text = everything.string_from(state, p)
        assert all(f"[seat {s}] seat {s}: dealt " in text for s in range(4))
        private.set_from(state, p)
        assert private.tensor.tolist() == list(state.observation_tensor(p))[:HAND_DIM]
    assert "cards of" not in public.string_from(state, 0)
