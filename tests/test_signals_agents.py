"""The baseline agents with señas (agents.signs): truthful signing, reading the partner, the silent twin."""

from __future__ import annotations

import numpy as np
import pytest

from agents import RuleBasedAgent, SilentAgent, make_agent
from agents.signs import SIGN_BONUS, choose_signs, read_signs, sign_quality_shift
from mus_env import MusConfig, MusGame
from mus_env.observation import OBS_DIM
from mus_env.phases import Phase
from mus_env.signals import (
    NUM_SIGNS,
    SIGNAL_BASE,
    SIGNAL_OFFSETS,
    WINDOW_GRANDE,
    WINDOW_MUS,
    Sign,
    legal_signs,
    true_signs,
)
from mus_env.tables import PARES

_G = OBS_DIM + SIGNAL_OFFSETS["signs_grande"].start


def _play(cfg: MusConfig, specs: list[str], games: int, seed: int = 0):
    """Yield (game, seat, observation, mask, action) for every decision of ``games`` games."""
    agents = [make_agent(s) for s in specs]
    rng = np.random.default_rng(seed)
    for k in range(games):
        g = MusGame(cfg, seed=seed * 1000 + k)
        while not g.is_over:
            s = g.current_player
            obs, mask = g.observe(s), g.legal_action_mask()
            a = agents[s].act(obs, mask, rng)
            yield g, s, obs, mask, a
            g.step(a)


def _pares_openings(spec: str, games: int, seed: int, keep=lambda obs: True) -> tuple[np.ndarray, np.ndarray]:
    """Observations (grande-window signs cleared) and masks of the pares openings of ``games`` truthful-signs
    games of ``spec`` at all seats, those for which ``keep(obs)`` holds."""
    rows = [(obs.copy(), mask.copy()) for g, _s, obs, mask, _a in
            _play(MusConfig(signals="truthful"), [spec] * 4, games, seed=seed)
            if g.phase == Phase.BET_OPEN and g.lance == PARES and keep(obs)]
    obs = np.stack([o for o, _ in rows])
    obs[:, _G:_G + 4 * NUM_SIGNS] = 0.0
    return obs, np.stack([m for _, m in rows])


def _with_sign(clear: np.ndarray, q: int, sign: Sign) -> np.ndarray:
    """``clear`` with seat q's grande-window sign set to ``sign`` (q = 2 partner, 1 and 3 rivals)."""
    out = clear.copy()
    out[:, _G + q * NUM_SIGNS + sign] = 1.0
    return out


@pytest.mark.parametrize("spec", ["rule", "equity"])
def test_agents_sign_only_what_is_true_even_when_free(spec: str) -> None:
    cfg = MusConfig(signals="free", signal_intercept_p=0.5, real31="sota")
    signed = set()
    for g, s, obs, _mask, a in _play(cfg, [spec, "random", spec, "random"], 12):
        if g.phase == Phase.SIGNAL and s % 2 == 0:
            window = WINDOW_MUS if read_signs(obs).window[0] == WINDOW_MUS else WINDOW_GRANDE
            true = true_signs(g.hands[s], cfg, window)
            assert true >> (a - SIGNAL_BASE) & 1, (spec, g.hands[s], a)
            signed.add(a - SIGNAL_BASE)
    assert len(signed) >= 6              # they really sign (not always NONE or CIEGO)


def test_truthful_agents_play_legal_signs_and_use_many() -> None:
    cfg = MusConfig(signals="truthful", kings=4)
    made = set()
    for g, s, obs, mask, a in _play(cfg, ["rule", "equity", "rule", "equity"], 8, seed=3):
        assert mask[a] == 1
        if g.phase == Phase.SIGNAL:
            window = read_signs(obs).window[0]
            assert legal_signs(g.hands[s], cfg, window) >> (a - SIGNAL_BASE) & 1
            made.add(a - SIGNAL_BASE)
    assert Sign.NONE not in made and len(made) >= 6


def test_silent_agents_never_sign_and_decide_as_inner_seeing_or_blind() -> None:
    """``-nosigns`` decides as the inner agent on the same observation (it still reads intercepted signs);
    ``-blind`` as the inner agent on the observation with the signal block cleared."""
    cfg = MusConfig(signals="truthful", signal_intercept_p=1.0)
    inner = RuleBasedAgent()
    silent, blind = SilentAgent(inner), SilentAgent(inner, blind=True)
    assert (make_agent("rule-nosigns").name, make_agent("rule-blind").name) == ("rule-nosigns", "rule-blind")
    assert make_agent("equity-blind").blind and not make_agent("equity-nosigns").blind
    rng = np.random.default_rng(0)
    compared = differ = 0
    for g, _s, obs, mask, _a in _play(cfg, ["rule", "rule", "rule", "rule"], 6):
        b, c = silent.act(obs, mask, rng), blind.act(obs, mask, rng)
        if g.phase == Phase.SIGNAL:
            assert b == c == SIGNAL_BASE + Sign.NONE
        else:
            cleared = obs.copy()
            cleared[OBS_DIM:OBS_DIM + SIGNAL_OFFSETS["sign_config"].start] = 0.0
            assert b == inner.act(obs, mask, rng) and c == inner.act(cleared, mask, rng)
            compared += 1
            differ += b != c
    assert compared > 100 and differ > 0          # the signs seen do change some decisions


def test_reading_the_partner_and_intercepted_opponents() -> None:
    """A partner's DUPLES raises pares quality, an intercepted opponent's DUPLES lowers it, and the rule
    agent bets pares more with the first than with nothing, less with the second."""
    clear, masks = _pares_openings("rule-blind", 300, seed=7)
    assert len(clear) > 50
    partner, opponent = _with_sign(clear, 2, Sign.DUPLES), _with_sign(clear, 1, Sign.DUPLES)
    lance = np.full(len(clear), PARES)
    idx = np.arange(len(clear))
    assert np.allclose(sign_quality_shift(read_signs(partner), idx, lance), SIGN_BONUS[Sign.DUPLES, PARES])
    assert np.allclose(sign_quality_shift(read_signs(opponent), idx, lance), -SIGN_BONUS[Sign.DUPLES, PARES])
    agent = RuleBasedAgent()
    rng = np.random.default_rng(0)
    bets = {k: (agent.act_batch(x, masks, rng) != 18).sum() for k, x in
            (("clear", clear), ("partner", partner), ("opponent", opponent))}
    assert bets["partner"] > bets["clear"] > bets["opponent"], bets


def test_choose_signs_prefers_rare_holdings_and_mus_when_drawing() -> None:
    from mus_env.cards import parse_cards
    from mus_env.tables import get_tables

    cfg = MusConfig(signals="truthful")
    hands = ["Ro Rc Re Ab", "4o 5o 6o So", "Ro 3c Ao 2c"]
    idx = np.array([int(get_tables(8).hand_index(parse_cards(h))) for h in hands])
    masks = np.zeros((3, SIGNAL_BASE + NUM_SIGNS), dtype=np.int8)
    for r, h in enumerate(hands):
        bits = legal_signs(parse_cards(h), cfg, WINDOW_MUS)
        masks[r, SIGNAL_BASE:] = [(bits >> t) & 1 for t in range(NUM_SIGNS)]
    k8 = np.ones(3, bool)
    free = np.zeros(3, bool)
    grande = choose_signs(idx, k8, np.full(3, WINDOW_GRANDE), np.zeros(3, bool), masks, free) - SIGNAL_BASE
    assert list(grande) == [Sign.SOLOMILLO, Sign.CIEGO, Sign.DUPLES]
    mus = choose_signs(idx, k8, np.full(3, WINDOW_MUS), np.ones(3, bool), masks, free) - SIGNAL_BASE
    assert list(mus) == [Sign.SOLOMILLO, Sign.MUS, Sign.DUPLES]       # strong hands still show their sign


def test_policy_trained_without_signs_plays_a_signals_game() -> None:
    torch = pytest.importorskip("torch")
    from agents.policy import PolicyNet, TorchPolicyAgent

    torch.manual_seed(0)
    agent = TorchPolicyAgent(PolicyNet(hidden=(16,)))
    cfg = MusConfig(signals="free")
    n = 0
    for g, _s, obs, mask, _a in _play(cfg, ["random"] * 4, 2):
        b = agent.act(obs, mask, np.random.default_rng(n))
        assert mask[b] == 1
        if g.phase == Phase.SIGNAL:
            assert b == SIGNAL_BASE + Sign.NONE
        n += 1
    assert n > 20


def test_mus_play_shows_partner_signs_and_hides_unseen_rival_signs() -> None:
    """A human at seat 0 with rule bots: at p=0 no rival sign is ever printed, the partner's are; at p=1
    rival signs are printed too. The human answers every sign prompt 'sin seña' and otherwise cuts / passes."""
    from agents.human import HumanAgent
    from experiments.play import play_game

    for p, rival_signs in ((0.0, False), (1.0, True)):
        cfg = MusConfig(signals="truthful", signal_intercept_p=p)
        lines: list[str] = []

        def answer(prompt: str, lines: list[str] = lines) -> str:
            last = next(line for line in reversed(lines) if line.startswith("Choose") or line.startswith("Discard"))
            for word in ("sin seña", "no hay mus", "paso", "no quiero"):
                if word in last:
                    return word
            return "0" if last.startswith("Discard") else last.split(":")[1].split()[0]

        human = HumanAgent(input_fn=answer, output_fn=lines.append, config=cfg)
        play_game(["rule", "rule", "rule"], 0, cfg, seed=11, human=human, output_fn=lines.append)
        moves = [line for line in lines if line.startswith("  ") and "seña" in line]
        assert any(line.startswith("  partner-2") for line in moves)
        assert any(line.startswith("  rival-") for line in moves) == rival_signs, moves[:10]


def test_sign_tables_are_consistent_and_deterministic() -> None:
    """A small build: every deal has one partner token (counts sum to the samples per hand), no deal signs
    NONE, REAL31 or MUS, an estimate never rests on more deals than its token has, and the same seed gives
    the same tables."""
    from experiments.tools.make_sign_tables import NUM_SIGN_CONTEXTS, build_sign_tables

    a = build_sign_tables(8, samples=400, seed=3, progress=False)
    count, n, win, base = a["count"], a["n"], a["win"], a["base"]
    assert count.shape == (330, NUM_SIGNS) and (count.sum(axis=1) == 400).all()
    assert (count[:, [Sign.NONE, Sign.REAL31, Sign.MUS]] == 0).all()
    assert n.shape == (NUM_SIGN_CONTEXTS, 330, NUM_SIGNS) and (n <= count[None]).all()
    assert (n[:2] == count[None]).all()                     # grande and chica: every deal counts
    assert ((win >= 0) & (win <= 1)).all() and ((base >= 0) & (base <= 1)).all()
    b = build_sign_tables(8, samples=400, seed=3, progress=False)
    assert all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("kings", [8, 4])
def test_sign_tables_move_win_chances_in_the_sign_direction(kings: int) -> None:
    """In the shipped tables, averaged over own hands (weighted by how often the partner signs it): a
    partner's DUPLES raises P(win pares) (partner sí), TRES_REYES raises P(win grande), DOS_ASES raises
    P(win chica), CIEGO lowers P(win grande)."""
    from agents.equity import load_sign_tables
    from agents.features import hand_weights

    st, hw = load_sign_tables(kings), hand_weights(kings)

    def delta(ctx: int, tok: int) -> float:
        w = st.count[:, tok] * hw
        return float(((st.win[ctx, :, :, tok] - st.base[ctx]) * w).sum() / (4 * w.sum()))

    assert delta(3, Sign.DUPLES) > 0.2
    assert delta(0, Sign.TRES_REYES) > 0.2
    assert delta(1, Sign.DOS_ASES) > 0.2
    assert delta(0, Sign.CIEGO) < -0.03


def test_equity_reads_the_partners_sign_from_the_tables() -> None:
    """On a batch of pares openings where the partner declared pares: with ``sign_boost`` a partner's DUPLES
    makes the equity agent bet more than no sign; by default a partner's PAR (bad news in pares) makes it
    bet less, and DUPLES changes nothing (good news is not acted on)."""
    from agents import EquityAgent
    from agents.features import DECL_SI, read

    clear, masks = _pares_openings("equity-blind", 50, seed=5,
                                   keep=lambda obs: read(obs).pares_decl[0, 2] == DECL_SI)
    assert len(clear) > 40
    duples, par = _with_sign(clear, 2, Sign.DUPLES), _with_sign(clear, 2, Sign.PAR)
    rng = np.random.default_rng(0)

    def bets(agent: EquityAgent, x: np.ndarray) -> int:
        return int((agent.act_batch(x, masks, rng) != 18).sum())

    boost, plain = EquityAgent(sign_boost=True), EquityAgent()
    assert bets(boost, duples) > bets(boost, clear)
    assert bets(plain, duples) == bets(plain, clear) > bets(plain, par)
