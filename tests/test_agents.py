"""Agents: legal play (batched and single), the strength ladder, the human terminal agent, act vs act_batch,
the batched observation reader, and the equity tables and their generator.

The strength test plays fixed duplicate deal sets (experiments.evaluate.deals) with
experiments.evaluate.tournament.play_pair;
its margins fail when an agent is broken (for instance one that passes and refuses everything loses
clearly to random in hands mode, and one that accepts every órdago loses games to the órdago agent).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from agents import OrdagoAgent, RandomAgent, make_agent
from agents.equity import CONTEXTS, EquityAgent, load_tables, win_probability_table
from agents.features import percentile_table, read
from agents.human import HumanAgent, QuitGame
from agents.rule import RuleBasedAgent
from experiments.evaluate.deals import make_deals
from experiments.evaluate.tournament import play_pair
from mus_env import MusConfig, MusGame, VectorMusEnv
from mus_env.actions import DISCARD_BASE, Action
from mus_env.cards import deck_from_hands
from mus_env.observation import SPEECH_NAMES, decode
from mus_env.phases import Phase
from mus_env.tables import get_tables, multiset_index

CONFIGS = {
    "default": MusConfig(),
    "kings4_target30": MusConfig(kings=4, target=30),
    "odd": MusConfig(allow_zero_discard=True, holders_only_speak=False, punto=False, auto_declare=False,
                     bet_sizes=(2, 4, 6, 8, 20), partner_override=False, max_mus_rounds=3),
}
AGENTS = ("random", "rule", "equity", "ordago")


def _agent(name: str):
    return make_agent(name)


# --------------------------------------------------------------------------------------------------------
# legality
@pytest.mark.parametrize("cfg_name", list(CONFIGS))
@pytest.mark.parametrize("name", AGENTS)
def test_batched_play_is_legal(name: str, cfg_name: str) -> None:
    """act_batch only picks legal actions, over thousands of hands, against itself and against random."""
    cfg = CONFIGS[cfg_name]
    agent, rnd = _agent(name), RandomAgent()
    B = 256
    venv = VectorMusEnv(B, cfg, seed=11)
    obs, mask = venv.reset()
    rng = np.random.default_rng(0)
    # tables 0..127: the agent on all seats; 128..255: the agent on team 0, random on team 1
    mixed = np.arange(B) >= B // 2
    rows = np.arange(B)
    hands, steps = 0, 0
    phases_seen: set[int] = set()
    while hands < 2500:
        a = np.asarray(agent.act_batch(obs, mask, rng))
        assert a.shape == (B,) and a.dtype == np.int64
        r = rnd.act_batch(obs, mask, rng)
        a = np.where(mixed & (venv.current_player % 2 == 1), r, a)
        assert (mask[rows, a] == 1).all(), f"{name} chose an illegal action"
        phases_seen.update(np.unique(read(obs).phase).tolist())
        obs, mask, _, _, info = venv.step(a)
        hands += int(info["hand_finished"].sum())
        steps += 1
        assert steps < 20_000
    assert {Phase.MUS_CALL, Phase.BET_OPEN, Phase.BET_RESPOND} <= phases_seen


@pytest.mark.parametrize("kings", [8, 4])
def test_single_play_is_legal(kings: int) -> None:
    """act on MusGame.observe(seat) only picks legal actions (every agent, human with scripted input)."""
    cfg = MusConfig(kings=kings)
    vocab = [str(i) for i in range(31)] + ["mus", "paso", "quiero", "no quiero", "órdago", "envido", "0 2", "all",
                                           "x", "", "envido 2", "R", "A"]
    script = np.random.default_rng(kings)
    human = HumanAgent(input_fn=lambda prompt: vocab[script.integers(len(vocab))], output_fn=lambda text: None)
    players = [_agent(n) for n in AGENTS] + [human]
    rng = np.random.default_rng(1)
    hands, g = 0, 0
    while hands < 600:
        game = MusGame(cfg, seed=1000 + g)
        lineup = [players[(g + s) % len(players)] for s in range(4)]       # rotate the line-up every game
        while not game.is_over and len(game.hand_log) < 8:
            seat = game.current_player
            mask = game.legal_action_mask()
            a = lineup[seat].act(game.observe(seat), mask, rng)
            assert isinstance(a, int) and mask[a] == 1
            game.step(a)
        hands += len(game.hand_log)
        g += 1


# --------------------------------------------------------------------------------------------------------
# strength
def _hands(a, b, n: int, seed: int):
    return play_pair(a, b, make_deals(n, seed), mode="hands", names=("a", "b"))


def _games(a, b, n: int, seed: int):
    return play_pair(a, b, make_deals(n, seed), mode="games", names=("a", "b"))


def test_strength_ladder() -> None:
    """rule > random, equity > random, equity > rule (stones per hand, duplicate, 95% CI above zero);
    rule and equity beat the órdago agent in games (win rate CI above one half), the unit where an órdago
    means what it stakes; rule also beats it in hands (an accepted órdago counted as the stones lacking)."""
    rule, equity, rnd, ordago = RuleBasedAgent(), EquityAgent(), RandomAgent(), OrdagoAgent()
    for a, b, margin in ((rule, rnd, 0.5), (equity, rnd, 0.5), (equity, rule, 0.3)):
        m, lo, hi = _hands(a, b, 1500, seed=101).mean_diff()
        assert lo > 0 and m > margin, f"{a.name} vs {b.name}: {m:+.3f} [{lo:+.3f}, {hi:+.3f}] stones per hand"
    m, lo, hi = _hands(rule, ordago, 1500, seed=101).mean_diff()
    assert lo > 0, f"rule vs ordago: {m:+.3f} [{lo:+.3f}, {hi:+.3f}] stones per hand"
    for a in (rule, equity):
        w, lo, hi = _games(a, ordago, 400, seed=202).game_win_rate()
        assert lo > 0.5 and w > 0.7, f"{a.name} vs ordago: game win rate {w:.3f} [{lo:.3f}, {hi:.3f}]"
    w, lo, hi = _games(equity, rule, 400, seed=303).game_win_rate()
    assert lo > 0.5, f"equity vs rule: game win rate {w:.3f} [{lo:.3f}, {hi:.3f}]"


def test_broken_agents_fail_the_margins() -> None:
    """The ladder margins are not vacuous: on the same deals where the sound agent meets a margin of
    test_strength_ladder, a broken one measurably misses it. A rule agent that never bets and refuses
    everything loses to random. A rule agent that calls an órdago with a middling hand (q >= 0.5, not its
    0.6-0.85) still wins most games against the órdago agent but misses the 0.7 margin that rule meets. (Calling
    every órdago would not do: both seatings of a deal then end in the same first órdago, won by the same
    cards, so the win rate is exactly 0.5 by construction and says nothing.)"""
    timid = RuleBasedAgent(bet=1.1, call=1.1, raise_=1.1, ordago_open=1.1, ordago_call=1.1, call_per_stone=0.0)
    m, lo, hi = _hands(timid, RandomAgent(), 1000, seed=101).mean_diff()
    assert hi < 0, (m, lo, hi)

    def meets(agent) -> bool:                        # test_strength_ladder's margin against the órdago agent
        w, lo, hi = _games(agent, OrdagoAgent(), 300, seed=202).game_win_rate()
        assert hi - lo > 0.02, (w, lo, hi)           # a measurement, not an identity
        return lo > 0.5 and w > 0.7

    assert meets(RuleBasedAgent())
    assert not meets(RuleBasedAgent(ordago_call=0.5, desperate_call=0.0))


# --------------------------------------------------------------------------------------------------------
# act and act_batch agree
def _observations(cfg: MusConfig, n_steps: int = 60, B: int = 128) -> tuple[np.ndarray, np.ndarray]:
    venv = VectorMusEnv(B, cfg, seed=5)
    obs, mask = venv.reset()
    rng = np.random.default_rng(3)
    rnd, rule = RandomAgent(), RuleBasedAgent()
    all_obs, all_mask = [], []
    for step in range(n_steps):
        all_obs.append(obs.copy())
        all_mask.append(mask.copy())
        a = rnd.act_batch(obs, mask, rng) if step % 2 else rule.act_batch(obs, mask, rng)
        obs, mask, *_ = venv.step(a)
    return np.concatenate(all_obs), np.concatenate(all_mask)


@pytest.mark.parametrize("kings", [8, 4])
@pytest.mark.parametrize("name", ["rule", "equity", "ordago"])
def test_act_matches_act_batch(name: str, kings: int) -> None:
    obs, mask = _observations(MusConfig(kings=kings))
    obs, mask = obs[::4], mask[::4]
    agent = _agent(name)
    batch = agent.act_batch(obs, mask, np.random.default_rng(7))
    single = np.array([agent.act(o, m, np.random.default_rng(7)) for o, m in zip(obs, mask, strict=True)])
    if name == "ordago":            # random discards: compare the deterministic decisions only
        keep = read(obs).phase != Phase.DISCARD
        batch, single = batch[keep], single[keep]
    assert np.array_equal(batch, single)


def test_mixed_variant_batch() -> None:
    """A batch holding 8-kings and 4-kings observations decides each row as in its own variant."""
    o8, m8 = _observations(MusConfig(), n_steps=10, B=32)
    o4, m4 = _observations(MusConfig(kings=4), n_steps=10, B=32)
    obs, mask = np.concatenate([o8, o4]), np.concatenate([m8, m4])
    for agent in (RuleBasedAgent(), EquityAgent()):
        both = agent.act_batch(obs, mask, np.random.default_rng(0))
        apart = np.concatenate([agent.act_batch(o8, m8, np.random.default_rng(0)),
                                agent.act_batch(o4, m4, np.random.default_rng(0))])
        assert np.array_equal(both, apart)


def _scored_observations(cfg: MusConfig, seed: int, n_steps: int = 40, B: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """Observations of random and rule-based play from random decks and random scores (any distance to the target)."""
    rng = np.random.default_rng(seed)
    venv = VectorMusEnv(B, cfg, seed=seed, num_threads=1)
    obs, mask = venv.reset_from_decks(np.argsort(rng.random((B, 40)), axis=1), rng.integers(0, 4, B),
                                      rng.integers(0, cfg.target, (B, 2)))
    rnd, rule = RandomAgent(), RuleBasedAgent()
    out_obs, out_mask = [], []
    for step in range(n_steps):
        out_obs.append(obs.copy())
        out_mask.append(mask.copy())
        obs, mask, *_ = venv.step(rnd.act_batch(obs, mask, rng) if step % 3 else rule.act_batch(obs, mask, rng))
    return np.concatenate(out_obs), np.concatenate(out_mask)


@pytest.mark.parametrize("configs", [("default",), ("k4",), ("default", "k4", "t30"), ("odd",), ("truthful",),
                                     ("free", "free_k4")])
def test_compiled_agents_match_their_numpy_reference(configs: tuple[str, ...]) -> None:
    """The compiled paths (``agents.compiled``) and the numpy reference (``compiled=False``) take the same action on
    every row, consume the same random draws, and value every betting action the same (``action_values``), on
    batches of random and rule-based play from random scores; a batch may mix variants and targets."""
    cfgs = {"default": MusConfig(), "k4": MusConfig(kings=4, target=30), "t30": MusConfig(target=30),
            "odd": CONFIGS["odd"], "truthful": MusConfig(signals="truthful", signal_intercept_p=0.4),
            "free": MusConfig(signals="free", signal_intercept_p=0.4),
            "free_k4": MusConfig(kings=4, signals="free", signal_intercept_p=0.4)}
    parts = [_scored_observations(cfgs[c], seed=k) for k, c in enumerate(configs)]
    order = np.random.default_rng(1).permutation(sum(len(o) for o, _ in parts))
    obs = np.concatenate([o for o, _ in parts])[order]
    mask = np.concatenate([m for _, m in parts])[order]
    pairs = [(RuleBasedAgent, {}), (RuleBasedAgent, {"bluff_rate": 0.3}), (EquityAgent, {}),
             (EquityAgent, {"bluff_rate": 0.2}), (EquityAgent, {"score_aware": False}),
             (EquityAgent, {"sign_boost": True, "mus_margin": 0.3})]
    for cls, kw in pairs:
        fast, ref = cls(**kw), cls(compiled=False, **kw)
        for rows in (slice(None), slice(0, 1), slice(0, 0), slice(5, 700)):
            rng_fast, rng_ref = np.random.default_rng(9), np.random.default_rng(9)
            a = fast.act_batch(obs[rows], mask[rows], rng_fast)
            b = ref.act_batch(obs[rows], mask[rows], rng_ref)
            assert a.dtype == b.dtype == np.int64
            assert np.array_equal(a, b), (cls.__name__, kw, np.flatnonzero(a != b)[:5])
            assert rng_fast.random() == rng_ref.random()                      # the same draws were consumed
        if cls is EquityAgent:
            np.testing.assert_array_equal(fast.action_values(obs, mask), ref.action_values(obs, mask))


# --------------------------------------------------------------------------------------------------------
# policies on chosen hands
def _decide(agent, hands: list[str], actions: list[int], mano: int = 0, scores=(0, 0), kings: int = 8) -> int:
    cfg = MusConfig(kings=kings)
    game = MusGame.from_deck(deck_from_hands(hands), mano=mano, scores=scores, config=cfg, seed=0)
    for a in actions:
        game.step(a)
    seat = game.current_player
    return agent.act(game.observe(seat), game.legal_action_mask(), np.random.default_rng(0))


@pytest.mark.parametrize("agent", [RuleBasedAgent(), EquityAgent()], ids=["rule", "equity"])
def test_sound_choices(agent) -> None:
    no_mus, paso = int(Action.NO_MUS), int(Action.PASO)
    # the ley del mus: R-R-C-S cuts; a hand with nothing asks for cards
    assert _decide(agent, ["RRCS", "7654", "A456", "RCS4"], []) == no_mus
    assert _decide(agent, ["7654", "RRCS", "A456", "RCS4"], []) == int(Action.MUS)
    # discards keep the reyes (R-3 with 8 kings) and throw the middle cards
    disc = _decide(agent, ["R376", "7654", "A456", "RCS4"], [0, 0, 0, 0])
    assert disc - DISCARD_BASE == 0b1100
    # with R-R-R-C the mano opens the grande
    assert _decide(agent, ["RRRC", "7654", "A456", "RCS4"], [no_mus]) != paso
    # a weak grande does not accept an órdago at 0-0
    assert _decide(agent, ["7654", "RRCS", "A456", "RCS4"], [no_mus, paso, int(Action.ORDAGO)]) == \
        int(Action.NO_QUIERO)


def test_rule_score_awareness() -> None:
    rule = RuleBasedAgent()
    no_mus, paso, ordago = int(Action.NO_MUS), int(Action.PASO), int(Action.ORDAGO)
    hands = ["7654", "RCS7", "RC54", "RCS4"]
    # S2 facing an órdago with a fair grande: refused at 0-0, accepted when the rivals are about to win anyway
    assert _decide(rule, hands, [no_mus, paso, ordago]) == int(Action.NO_QUIERO)
    assert _decide(rule, hands, [no_mus, paso, ordago], scores=(10, 39)) == int(Action.QUIERO)
    # one stone from the target: open every lance (a refusal wins the game)
    assert _decide(rule, ["7654", "RCS7", "A456", "RCS4"], [no_mus], scores=(39, 10)) != paso


# --------------------------------------------------------------------------------------------------------
# human agent
def _scripted(lines: list[str]):
    it = iter(lines)
    out: list[str] = []

    def inp(prompt: str) -> str:
        try:
            return next(it)
        except StopIteration:
            raise EOFError from None

    return HumanAgent(input_fn=inp, output_fn=out.append), out


def _mus_call_state():
    game = MusGame.from_deck(deck_from_hands(["Ro3c7e4b", "7654", "A456", "RCS4"]), mano=0, config=MusConfig(), seed=0)
    return game


def test_human_bad_inputs_then_good() -> None:
    game = _mus_call_state()
    human, out = _scripted(["", "banana", "7", "0 1 2", "  No Hay Mus "])
    a = human.act(game.observe(0), game.legal_action_mask(), np.random.default_rng(0))
    assert a == int(Action.NO_MUS)
    text = "\n".join(out)
    assert "[0] Ro" in text and "[3] 4b" in text
    assert "no hay mus" in text and "Did not understand" in text and "not one of the legal actions" in text


def test_human_huge_and_unicode_numbers_are_just_bad_input() -> None:
    """4,301+ digits exceed Python's int-string limit and '²' passes str.isdigit: each is a retry, no crash."""
    game = _mus_call_state()
    human, out = _scripted(["9" * 5000, "²", "1 " + "7" * 4400, "1"])
    assert human.act(game.observe(0), game.legal_action_mask(), np.random.default_rng(0)) == int(Action.NO_MUS)
    assert sum("not one of the legal actions" in line or "Did not understand" in line for line in out) == 3


def test_human_discards_by_slots_or_cards_never_ids() -> None:
    game = _mus_call_state()
    for _ in range(4):
        game.step(int(Action.MUS))
    obs, mask = game.observe(0), game.legal_action_mask()
    cases = {"0 2": 0b0101, "2,3": 0b1100, "7e 4b": 0b1100, "R 3": 0b0011, "all": 0b1111, "3": 0b1000,
             "1": 0b0010, "descarta 1 (slots 1)": 0b0010}
    for text, m in cases.items():
        human, _ = _scripted([text])
        assert human.act(obs, mask, np.random.default_rng(0)) == DISCARD_BASE + m, text
    # the menu lists slot lists and cards, no action ids; the prompt says numbers are slots
    human, out = _scripted(["0 2"])
    human.act(obs, mask, np.random.default_rng(0))
    text = "\n".join(out)
    assert "numbers here are slots" in text and "  0 2      Ro 7e" in text
    assert not any(line.lstrip().startswith(str(DISCARD_BASE + 5)) for line in out)
    # an action id (6 is the id of throwing slot 2), a repeated slot, glued digits, a card not in hand: each
    # refused with a reason, then a good answer
    human, out = _scripted(["6", "0 0", "02", "Ae", "0 1"])
    assert human.act(obs, mask, np.random.default_rng(0)) == DISCARD_BASE + 0b0011
    said = [line for line in out if "Slots are" in line or "Each slot once" in line or "Did not understand" in line]
    assert len(said) == 4, out
    assert "a number is a slot, not an action id" in said[0] and "names a slot twice" in said[1]
    zero = MusGame.from_deck(deck_from_hands(["Ro3c7e4b", "7654", "A456", "RCS4"]), mano=0,
                             config=MusConfig(allow_zero_discard=False), seed=0)
    for _ in range(4):
        zero.step(int(Action.MUS))
    human, out = _scripted(["DISCARD_0", "0"])
    assert human.act(zero.observe(0), zero.legal_action_mask(), np.random.default_rng(0)) == DISCARD_BASE + 1


def test_human_quits_cleanly() -> None:
    game = _mus_call_state()
    human, _ = _scripted([])                                       # end of input at once
    with pytest.raises(QuitGame):
        human.act(game.observe(0), game.legal_action_mask(), np.random.default_rng(0))
    human, _ = _scripted(["?", "q"])
    with pytest.raises(QuitGame):
        human.act(game.observe(0), game.legal_action_mask(), np.random.default_rng(0))
    assert HumanAgent().name == "human"                             # constructible with no arguments


def test_human_forced_action_needs_no_input() -> None:
    mask = np.zeros(31, dtype=np.int8)
    mask[int(Action.NO_MUS)] = 1
    human, out = _scripted([])
    assert human.act(_mus_call_state().observe(0), mask, np.random.default_rng(0)) == int(Action.NO_MUS)


# --------------------------------------------------------------------------------------------------------
# the batched observation reader
@pytest.mark.parametrize("kings", [8, 4])
def test_features_agree_with_decode(kings: int) -> None:
    obs, _ = _observations(MusConfig(kings=kings), n_steps=40, B=64)
    f = read(obs)
    t = get_tables(kings)
    for b in range(0, len(obs), 7):
        d = decode(obs[b])
        assert d["mano"] == (-f.seat[b]) % 4
        assert (d["phase"], d["lance"], d["responder"]) == (f.phase[b], f.lance[b], f.responder[b])
        assert d["rank_counts"] == np.bincount(f.ranks[b], minlength=11)[1:].tolist()
        assert f.idx[b] == multiset_index(np.sort(f.ranks[b]))
        assert f.points[b] == t.juego_points[f.idx[b]]
        assert d["scores"] == (f.own[b], f.other[b]) and d["target"] == f.target[b]
        assert d["mus_rounds"] == f.mus_rounds[b]
        code = {True: 1, False: 0, None: -1}
        assert [code[x] for x in d["pares_decl"]] == f.pares_decl[b].tolist()
        assert [code[x] for x in d["juego_decl"]] == f.juego_decl[b].tolist()
        if f.slot[b] >= 0:
            lance = d["lances"][f.slot[b]]
            assert (lance["stake"] == "ordago") == f.ordago[b]
            if lance["stake"] != "ordago":
                assert lance["stake"] == f.stake[b]
            assert lance["fallback"] == f.fallback[b]
            assert (lance["bettor"] == "own") == f.bettor_own[b]
            assert [SPEECH_NAMES.index(s) if s else -1 for s in lance["speech"]] == f.speech[b].tolist()
            assert lance["raised"] == f.raised[b].tolist()


def test_percentiles() -> None:
    for kings in (8, 4):
        p = percentile_table(kings)
        below, equal = p[0], p[1]
        t = get_tables(kings)
        inside = below >= 0
        assert ((below + equal)[inside] <= 1 + 1e-9).all()
        # stronger hands have higher percentiles, within each lance's population
        for lance in range(5):
            s = t.strength[lance][inside[lance]]
            b = below[lance][inside[lance]]
            order = np.argsort(s, kind="stable")
            assert (np.diff(b[order]) >= -1e-12).all()
        assert not inside[2][t.pares_class == 0].any() and inside[2][t.pares_class > 0].all()


# --------------------------------------------------------------------------------------------------------
# equity tables
@pytest.mark.parametrize("kings", [8, 4])
def test_equity_tables_are_sane(kings: int) -> None:
    t = load_tables(kings)
    M = get_tables(kings).size
    assert t.acc.shape == t.win.shape == (len(CONTEXTS), 4, M, len(t.tau))
    assert t.ev.shape == (4, 4, M) and t.disc.shape == (4, 4, M, 16)
    assert (t.win >= 0).all() and (t.win <= t.acc + 2e-3).all() and (t.acc <= 1 + 1e-3).all()
    assert np.allclose(t.acc[0, :, :, 0], 1.0, atol=1e-3)                      # tau = 0: every hand
    tab = get_tables(kings)
    best_grande = int(np.argmax(tab.strength[0]))
    assert np.allclose(t.win[0, 0, best_grande, 0], 1.0)                       # the mano's best grande never loses
    ms31 = np.flatnonzero(tab.juego_points == 31)
    sampled = t.count[8:14][:, ms31] >= 1000
    assert sampled.mean() > 0.5
    assert np.allclose(t.win[8:14, 0][:, ms31, 0][sampled], 1.0, atol=0.05)    # nor the mano's 31 (no real)
    assert np.allclose(t.disc[:, :, :, 0], t.ev, atol=1e-4)                   # mask 0 keeps the hand
    assert abs(t.hand_pmf.sum() - 1) < 1e-9 and np.allclose(t.hand_pmf, t.hand_pmf.T)


def test_win_probability_table() -> None:
    pmf = np.zeros((3, 3))
    pmf[1, 0] = pmf[0, 1] = 0.5                                                 # one stone to either side
    wp = win_probability_table(pmf, 3)
    assert wp[0, 0] == pytest.approx(0.5) and wp[2, 2] == pytest.approx(0.5)
    assert wp[2, 0] == pytest.approx(7 / 8) and wp[3, 1] == 1.0 and wp[1, 3] == 0.0


def test_missing_tables_say_how_to_regenerate(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="mus make-tables equity"):
        EquityAgent(tables_dir=tmp_path)
    for kings in (8, 4):
        (tmp_path / f"equity_tables_k{kings}.npz").write_bytes(b"not a table file")
    with pytest.raises(FileNotFoundError, match="make-tables equity"):
        EquityAgent(tables_dir=tmp_path)


def test_table_generator_quick(tmp_path) -> None:
    """The generator runs (quick mode), is seeded, and its output loads and plays."""
    from experiments.commands.make_tables import main

    args = ["equity", "--quick", "--samples", "300", "--selfplay-hands", "300", "--no-progress"]
    main(args + ["--out-dir", str(tmp_path / "a")])
    main(args + ["--kings", "8", "--out-dir", str(tmp_path / "b")])
    with np.load(tmp_path / "a" / "equity_tables_k8.npz") as a, np.load(tmp_path / "b" / "equity_tables_k8.npz") as b:
        for key in a.files:
            assert np.array_equal(a[key], b[key]), key
    agent = EquityAgent(tables_dir=tmp_path / "a")
    obs, mask = _observations(MusConfig(kings=4), n_steps=20, B=32)
    a = agent.act_batch(obs, mask, np.random.default_rng(0))
    assert (mask[np.arange(len(a)), a] == 1).all()
    with pytest.raises(FileNotFoundError, match="make-tables equity"):          # b has no 4-kings file
        EquityAgent(tables_dir=tmp_path / "b")


def test_make_agent_specs() -> None:
    assert isinstance(make_agent("rule"), RuleBasedAgent) and isinstance(make_agent("equity"), EquityAgent)
    assert isinstance(make_agent("human"), HumanAgent)
    with pytest.raises(ValueError):
        RuleBasedAgent(bet=(0.5, 0.5))
    with pytest.raises(ValueError):
        EquityAgent(bluff_rate=2.0)


def test_a_research_candidates_name_is_no_agent_spec() -> None:
    """Only the shipped agent plays by name: the name of a research candidate (``psro_e``, a folder the package once
    carried) is an unknown spec, and the message lists what a spec can be."""
    for name in ("psro_e", "refine_y4", "ppo_2026_11"):
        with pytest.raises(ValueError, match=f"unknown agent spec '{name}'; use one of random, rule"):
            make_agent(name)


def test_bluff_rate_uses_rng() -> None:
    obs, mask = _observations(MusConfig(), n_steps=30)
    opening = read(obs).phase == Phase.BET_OPEN
    for agent in (RuleBasedAgent(bluff_rate=0.5), EquityAgent(bluff_rate=0.5)):
        a = agent.act_batch(obs, mask, np.random.default_rng(0))
        b = agent.act_batch(obs, mask, np.random.default_rng(1))
        assert (a[opening] != b[opening]).any()
    for agent in (RuleBasedAgent(), EquityAgent()):
        a = agent.act_batch(obs, mask, np.random.default_rng(0))
        b = agent.act_batch(obs, mask, np.random.default_rng(1))
        assert np.array_equal(a, b)



_OWN_AGENT = '''
import numpy as np
from agents import Agent

class LastLegal(Agent):
    name = "last"
    def act(self, observation, action_mask, rng):
        return int(np.flatnonzero(action_mask)[-1])

NOT_AN_AGENT = 3
'''


def test_own_agent_class_from_a_file_or_module(tmp_path, monkeypatch) -> None:
    """``make_agent("file.py:Class")`` and ``"module:Class"`` build the user's agent; it plays legal moves."""
    from agents import make_agent
    from mus_env import MusGame

    (tmp_path / "first_bot.py").write_text(_OWN_AGENT, encoding="utf-8")
    from_file = make_agent(str(tmp_path / "first_bot.py") + ":LastLegal")
    monkeypatch.syspath_prepend(str(tmp_path))
    from_module = make_agent("first_bot:LastLegal")
    assert type(from_file).__name__ == type(from_module).__name__ == "LastLegal"
    g, rng = MusGame(seed=3), np.random.default_rng(0)
    while not g.is_over:
        a = from_file.act(g.observe(g.current_player), g.legal_action_mask(), rng)
        assert a == g.legal_actions()[-1]
        g.step(a)


@pytest.mark.parametrize("suffix, words", [
    (":Missing", "has no 'Missing'"), (":NOT_AN_AGENT", "is not an agent"), (":1bad", "my_bot.py:MyBot"),
])
def test_own_agent_spec_errors_name_the_problem(tmp_path, suffix: str, words: str) -> None:
    from agents import make_agent

    (tmp_path / "first_bot.py").write_text(_OWN_AGENT, encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(words)):
        make_agent(str(tmp_path / "first_bot.py") + suffix)


def test_own_agent_spec_missing_file_or_broken_code(tmp_path) -> None:
    from agents import make_agent

    with pytest.raises(ValueError, match="does not exist"):
        make_agent(str(tmp_path / "nowhere.py") + ":Bot")
    (tmp_path / "broken.py").write_text("raise RuntimeError('boom')\n", encoding="utf-8")
    with pytest.raises(ValueError, match="importing .* failed: RuntimeError: boom"):
        make_agent(str(tmp_path / "broken.py") + ":Bot")
    with pytest.raises(ValueError, match="importing 'no_such_module_xyz' failed"):
        make_agent("no_such_module_xyz:Bot")


def test_equity_action_values_explain_its_choices() -> None:
    """``EquityAgent.action_values``: at a discard or a bet the agent takes the best-valued legal action (no
    bluffs), at a mus call it cuts exactly when NO_MUS beats MUS by its margin; illegal actions are NaN."""
    agent = EquityAgent(bluff_rate=0.0)
    venv = VectorMusEnv(256, seed=11)
    obs, mask = venv.reset()
    rng = np.random.default_rng(0)
    seen = {"mus": 0, "discard": 0, "bet": 0}
    for _ in range(120):
        acts = agent.act_batch(obs, mask, rng)
        vals = agent.action_values(obs, mask)
        assert np.isnan(vals[mask == 0]).all()
        f = read(obs)
        for b in range(len(acts)):
            row = vals[b]
            if f.phase[b] == Phase.MUS_CALL:
                cut = row[Action.NO_MUS] >= row[Action.MUS] + agent.mus_margin
                assert acts[b] == (Action.NO_MUS if cut else Action.MUS)
                seen["mus"] += 1
            elif f.phase[b] == Phase.DISCARD or Phase.BET_OPEN <= f.phase[b] <= Phase.BET_CONFIRM:
                assert acts[b] == int(np.nanargmax(row)), (b, f.phase[b], row)
                seen["discard" if f.phase[b] == Phase.DISCARD else "bet"] += 1
        obs, mask, *_ = venv.step(acts)
    assert min(seen.values()) > 100, seen


def test_policy_values_come_from_the_value_head() -> None:
    """``TorchPolicyAgent.values``: one estimate per observation, as the network's forward pass gives it."""
    torch = pytest.importorskip("torch")
    agent = make_agent("ppo")
    g = MusGame(seed=4)
    obs = np.stack([g.observe(s) for s in range(4)])
    v = agent.values(obs)
    with torch.no_grad():
        _, ref = agent.net(torch.from_numpy(obs))
    assert v.shape == (4,) and np.allclose(v, ref.numpy())
    with pytest.raises(ValueError):
        agent.values(obs[:, :10])
