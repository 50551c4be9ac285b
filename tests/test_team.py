"""The team mixture (agents.team): one member per game (or hand) for both partners, drawn from the team's own
seed; the rows' identity (mus_env.rows.TableRows) that every harness passes to agents that play by game; plain
agents unchanged in those harnesses.

The members are cheap instrumented agents: each records the rows it played, so a test reads which member played
which seat of which game.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from agents import Agent, RandomAgent, TableRows, TeamMixtureAgent, act_one, act_rows, make_agent, uniform_legal
from agents.team import parse_team_spec
from experiments.evaluate.deals import make_deals
from experiments.evaluate.duplicate import play_pair
from experiments.evaluate.tournament import play_record_game
from mus_env import Action, MusConfig, MusGame, VectorMusEnv

CFG = MusConfig()


class Member(Agent):
    """Uniform over the legal actions, never órdago when another action is legal; ``passive``: also paso and no
    quiero where legal (games of several hands). Records every row it plays in ``log`` as ``(label, table, game,
    hand, seat)``."""

    wants_rows = True

    def __init__(self, label: int, log: list, passive: bool = False) -> None:
        self.label, self.log, self.passive = label, log, passive

    def act_rows(self, obs, masks, rng, rows: TableRows):
        for t, g, h, s in zip(rows.table, rows.game, rows.hand, rows.seat, strict=True):
            self.log.append((self.label, int(t), int(g), int(h), int(s)))
        m = np.asarray(masks).copy()
        if self.passive:
            for a in (Action.PASO, Action.NO_QUIERO):
                only = m[:, a] > 0
                m[only] = 0
                m[only, a] = 1
        other = m.sum(axis=1) > m[:, Action.ORDAGO]
        m[other, Action.ORDAGO] = 0
        return uniform_legal(m, rng)


def _team(shares=(0.2, 0.3, 0.5), draw="game", seed=5, passive=False):
    log: list = []
    members = [Member(k, log, passive) for k in range(len(shares))]
    return TeamMixtureAgent(members, shares, draw=draw, seed=seed), log


def _members_by(log, key, tables=None):
    """``{key(row): set of member labels}`` over the logged rows (of tables below ``tables`` only, if given: a
    duplicate match numbers deal d's seatings 2d and 2d + 1, and its idle tables play on past the deal set)."""
    out = defaultdict(set)
    for label, t, g, h, s in log:
        if tables is None or t < tables:
            out[key(t, g, h, s)].add(label)
    return out


@pytest.fixture(scope="module")
def played():
    """A team of three members against random play: 1,000 deals as whole games, both seatings (2,000 games)."""
    team, log = _team()
    res = play_pair(team, RandomAgent(), make_deals(1000, 1, CFG.target), mode="games", seed=0)
    return team, log, res


def test_both_partners_of_a_team_play_the_same_member_the_whole_game(played) -> None:
    _, log, _ = played
    games = _members_by(log, lambda t, g, h, s: (t, g, s % 2), tables=2000)
    assert len(games) == 2000
    assert all(len(labels) == 1 for labels in games.values())
    seats = defaultdict(set)
    for _, t, g, _h, s in log:
        if t < 2000:
            seats[(t, g)].add(s)
    assert sum(seats_ == {0, 2} or seats_ == {1, 3} for seats_ in seats.values()) > 1900   # both partners played


def test_a_team_against_itself_draws_for_each_team_apart() -> None:
    team, log = _team(seed=9)
    play_pair(team, team, make_deals(200, 2, CFG.target), mode="games", seed=1)
    games = _members_by(log, lambda t, g, h, s: (t, g, s % 2), tables=400)
    assert len(games) == 800 and all(len(labels) == 1 for labels in games.values())
    differ = sum(games[(t, g, 0)] != games[(t, g, 1)] for (t, g, team_) in games if team_ == 0)
    assert 200 < differ < 600                                       # independent draws: 1 - sum(p^2) = 0.62 of 400


def test_the_members_frequencies_match_the_shares(played) -> None:
    team, log, _ = played
    first = {}
    for label, t, g, _h, s in log:
        if t < 2000:
            first.setdefault((t, g, s % 2), label)
    counts = np.bincount(list(first.values()), minlength=3)
    expected = team.shares * counts.sum()
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert counts.sum() == 2000 and chi2 < 13.8, (counts, expected)      # chi-square, 2 df, p = 0.001


def test_per_hand_draws_redraw_at_each_hand_and_keep_partners_together() -> None:
    team, log = _team(draw="hand", seed=3, passive=True)
    play_pair(team, Member(9, [], passive=True), make_deals(30, 3, CFG.target), mode="games", seed=2)
    hands = _members_by(log, lambda t, g, h, s: (t, g, h, s % 2), tables=60)
    assert all(len(labels) == 1 for labels in hands.values())
    games = _members_by(log, lambda t, g, h, s: (t, g, s % 2), tables=60)
    assert sum(len(labels) > 1 for labels in games.values()) > len(games) // 2   # games of several hands mix
    # the per-game draw of the same team keeps one member over every hand of those games
    rows = TableRows(np.repeat(np.arange(500), 8), np.zeros(4000, dtype=np.int64), np.tile(np.arange(8), 500),
                     np.zeros(4000, dtype=np.int64))
    by_game = TeamMixtureAgent([RandomAgent()] * 3, [0.2, 0.3, 0.5]).members_of(rows).reshape(500, 8)
    by_hand = TeamMixtureAgent([RandomAgent()] * 3, [0.2, 0.3, 0.5], draw="hand").members_of(rows).reshape(500, 8)
    assert (by_game == by_game[:, :1]).all() and (by_hand != by_hand[:, :1]).any(axis=1).mean() > 0.8
    counts = np.bincount(by_hand.ravel(), minlength=3)
    assert float(((counts - 4000 * np.array([0.2, 0.3, 0.5])) ** 2 / (4000 * np.array([0.2, 0.3, 0.5]))).sum()) < 13.8


def test_the_same_seeds_give_the_same_games_and_another_team_seed_other_draws() -> None:
    deals = make_deals(80, 4, CFG.target)
    runs = []
    for seed in (5, 5, 6):
        team, log = _team(seed=seed)
        res = play_pair(team, RandomAgent(), deals, mode="games", seed=7)
        runs.append((log, res.game_wins.tolist(), res.game_hands.tolist()))
    assert runs[0] == runs[1]
    draws = [sorted({(t, g, s % 2, label) for label, t, g, h, s in log}) for log, *_ in runs]
    assert draws[0] == draws[1] != draws[2]


class FirstLegal(Agent):
    """The lowest legal action; ``draws`` values from the generator it is given at each call (0: none)."""

    def __init__(self, draws: int) -> None:
        self.draws = draws

    def act_batch(self, obs, masks, rng):
        rng.random(self.draws)
        return np.argmax(np.asarray(masks) > 0, axis=1).astype(np.int64)


class Watcher(RandomAgent):
    """Random play that records every observation it sees and the state of the generator it is given."""

    def __init__(self) -> None:
        self.seen: list = []

    def act_batch(self, obs, masks, rng):
        self.seen.append((np.asarray(obs).tobytes(), repr(rng.bit_generator.state)))
        return super().act_batch(obs, masks, rng)


def test_the_rivals_view_and_generator_carry_nothing_of_the_draw() -> None:
    # the two members play alike but use the generator they are given differently: if the team let them use the
    # rivals' generator, the rivals' draws (and so the game) would depend on which member the team drew
    rng = np.random.default_rng(3)
    before = repr(rng.bit_generator.state)
    team = TeamMixtureAgent([FirstLegal(5), FirstLegal(0)], seed=1)
    env = VectorMusEnv(16, CFG, seed=0, num_threads=1)
    obs, mask = env.reset()
    team.act_rows(obs, mask, rng, env.table_rows())
    assert repr(rng.bit_generator.state) == before
    deals = make_deals(40, 5, CFG.target)
    watched, draws = [], []
    for seed in (1, 2):
        team = TeamMixtureAgent([FirstLegal(5), FirstLegal(0)], seed=seed)
        rival = Watcher()
        play_pair(team, rival, deals, mode="games", seed=11)
        watched.append(rival.seen)
        rows = TableRows(np.arange(80), np.zeros(80, dtype=np.int64), np.zeros(80, dtype=np.int64),
                         np.arange(80) % 2)
        draws.append(team.members_of(rows).tolist())
    assert draws[0] != draws[1]
    assert watched[0] == watched[1]


def test_team_specs_build_and_bad_ones_are_refused_by_name() -> None:
    assert parse_team_spec("team:rule=1+random=3+seed=4") == (["rule", "random"], [0.25, 0.75], "game", 4)
    assert parse_team_spec("team-hand:rule+random")[2] == "hand"
    team = make_agent("team:rule=0.4+random-nosigns=0.6")
    assert isinstance(team, TeamMixtureAgent) and team.member_specs == ["rule", "random-nosigns"]
    for bad, words in (("team:", "at least one member"), ("team:rule=0", "> 0"), ("team:rule=-1", "> 0"),
                       ("team:rule=x", "must be a number"), ("team:nope=1", "team member 'nope'"),
                       ("team:=1", "no agent spec"), ("team:rule+seed=-2", "seed"),
                       ("team:missing.pt=1", "does not exist")):
        with pytest.raises(ValueError, match=words):
            make_agent(bad)
    with pytest.raises(ValueError, match="shares"):
        TeamMixtureAgent([RandomAgent()], [1.0, 2.0])
    with pytest.raises(ValueError, match="table, game, hand and seat"):
        team.act_batch(np.zeros((1, 345), np.float32), np.ones((1, 31), np.int8), np.random.default_rng(0))


class PlainAct(Agent):
    """An agent of the old interface: only ``act``."""

    def act(self, observation, action_mask, rng):
        return int(np.flatnonzero(action_mask)[-1])


class OnlyBatch:
    """Not an ``Agent``: a plain object with ``act_batch`` only."""

    name = "only-batch"

    def act_batch(self, obs, masks, rng):
        return np.argmax(np.asarray(masks) > 0, axis=1).astype(np.int64)


def test_plain_agents_play_as_before_through_the_harness_helpers() -> None:
    g = MusGame(CFG, seed=3)
    obs, mask = g.observe(g.current_player), g.legal_action_mask()
    rows = g.table_rows()
    for agent in (PlainAct(), RandomAgent()):
        assert act_one(agent, obs, mask, np.random.default_rng(1), rows) == agent.act(obs, mask,
                                                                                    np.random.default_rng(1))
    assert act_one(lambda o, m, r: int(np.flatnonzero(m)[0]), obs, mask, None, rows) == int(np.flatnonzero(mask)[0])
    assert act_rows(OnlyBatch(), obs[None], mask[None], None, None).tolist() == [int(np.flatnonzero(mask)[0])]
    team, _ = _team()
    with pytest.raises(ValueError, match="needs each row's table"):
        act_rows(team, obs[None], mask[None], np.random.default_rng(0), None)
    for agent in (PlainAct(), OnlyBatch()):
        res = play_pair(agent, team, make_deals(10, 6, CFG.target), mode="games", seed=0)
        assert res.game_wins.shape == (10, 2)


def test_the_tournament_records_play_teams_and_plain_agents() -> None:
    team, log = _team(draw="hand")
    deals = make_deals(1, 7, CFG.target)
    agents = {0: team, 2: team, 1: PlainAct(), 3: OnlyBatch()}
    rec = play_record_game(agents, dict.fromkeys(range(4), "x"), deals.decks[0], int(deals.mano[0]),
                           int(deals.seeds[0]), CFG, np.random.default_rng(0), table=12)
    assert rec and {t for _, t, *_ in log} == {12}
    assert all(len(v) == 1 for v in _members_by(log, lambda t, g, h, s: h).values())


def test_the_gymnasium_view_passes_the_game_to_a_team_and_keeps_plain_agents() -> None:
    from mus_env.wrappers import MusGymEnv

    team, log = _team()
    for opponents in (team, {1: PlainAct(), 3: team}):
        env = MusGymEnv(learner_seats=(0, 2), opponents=opponents, seed=4)
        rng = np.random.default_rng(0)
        for _ in range(3):
            obs, info = env.reset()
            done = False
            while not done:
                obs, r, done, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    games = _members_by(log, lambda t, g, h, s: (t, g))
    assert len(games) >= 3 and all(len(v) == 1 for v in games.values())


def test_the_sb3_and_tianshou_views_pass_each_rows_identity() -> None:
    pytest.importorskip("stable_baselines3")
    from mus_env.adapters.sb3 import MusVecEnv

    team, log = _team()
    venv = MusVecEnv(6, learner_seats=(0, 2), opponents={1: team, 3: team}, seed=1)
    venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(60):
        masks = venv.action_masks()
        venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    games = _members_by(log, lambda t, g, h, s: (t, g))
    assert len(games) > 6 and all(len(v) == 1 for v in games.values())

    pytest.importorskip("tianshou")
    from mus_env.adapters.tianshou import MusTianshouEnv

    team, log = _team()
    env = MusTianshouEnv(fixed={1: team, 3: team, 2: PlainAct()}, seed=3)
    for _ in range(3):
        ob, _ = env.reset()
        done = False
        while not done:
            ob, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(ob["mask"]))))
            done = term or trunc
    assert log and all(len(v) == 1 for v in _members_by(log, lambda t, g, h, s: (t, g)).values())


def test_the_web_table_and_mus_play_seat_teams() -> None:
    from experiments.play import play_game
    from experiments.web.table import Table

    team, log = _team()
    table = Table.new(CFG, 0, {1: "team", 2: "plain", 3: "team"}, seed=8, agents={1: team, 2: PlainAct(), 3: team})
    rng = np.random.default_rng(0)
    while not table.game.is_over:
        table.play(int(rng.choice(table.game.legal_actions())), table.turn)
    assert log and all(len(v) == 1 for v in _members_by(log, lambda t, g, h, s: (t, g)).values())
    game = play_game(["team:random=1+rule=1", "rule", "team:random=1+rule=1"], 0, CFG, seed=5, human=RandomAgent(),
                     output_fn=lambda s: None)
    assert game.is_over


def test_the_probes_frozen_check_and_league_play_a_team() -> None:
    pytest.importorskip("torch")
    from experiments.population.exploit import frozen_fingerprint, policy_file_of
    from experiments.train import league as lg

    spec = "team:rule=0.5+random=0.5+seed=2"
    assert frozen_fingerprint(make_agent(spec)) == frozen_fingerprint(make_agent(spec))
    assert lg.parse_mix(f"{spec}:1") == {spec: 1.0}
    with pytest.raises(ValueError, match="largest member"):
        policy_file_of("team:rule=0.6+x.pt=0.4")
    assert policy_file_of("team:a.pt=0.3+b.pt=0.7") == "b.pt"
    team, log = _team()
    league = lg.League(lg.parse_mix("team:x:1"), pool_size=2, num_tables=16, agents={"team:x": team})
    assert league.wants_rows
    env = VectorMusEnv(16, CFG, seed=0, num_threads=1)
    obs, mask = env.reset()
    rng = np.random.default_rng(0)
    league.draw(np.arange(16), rng)
    actions = np.zeros(16, dtype=np.int64)
    for _ in range(200):
        seat = env.current_player.astype(np.int64)
        frozen = np.flatnonzero(~league.learner[np.arange(16), seat])
        actions[:] = env.sample_actions(rng)
        league.opponent_actions(frozen, obs, mask, rng, actions, env.table_rows())
        obs, mask, *_ = env.step(actions)
    games = _members_by(log, lambda t, g, h, s: (t, g))
    assert len(games) > 16 and all(len(v) == 1 for v in games.values())


def test_mus_exploit_trains_and_measures_against_the_team(tmp_path, monkeypatch) -> None:
    pytest.importorskip("torch")
    from experiments.population import exploit

    log: list = []

    def build(spec, **kw):       # the probe builds its spec three times (league, frozen check): one draw rule
        return TeamMixtureAgent([Member(0, log), Member(1, log)], [0.5, 0.5], seed=4) if spec == "team:x" \
            else make_agent(spec, **kw)

    monkeypatch.setattr(exploit, "make_agent", build)
    r = exploit.probe("team:x", tmp_path / "probe", minutes=0, decisions=128 * 8 * 3, warm_start="none",
                      eval_hands=100, eval_games=20, profile_deals=20, log=lambda *a: None, preset="tiny",
                      num_tables=128, rollout_steps=8, eval_every=100, minibatch_size=512, hidden=(32, 32),
                      value_warmup=0, progress=False)
    assert r["frozen"]["unchanged"] and r["trained"]["updates"] == 3
    assert max(g for _, t, g, h, s in log) > 0                      # the training's tables, game after game
    games = _members_by(log, lambda t, g, h, s: (t, g, s % 2))
    assert len(games) > 200 and all(len(labels) == 1 for labels in games.values())
    assert {label for labels in games.values() for label in labels} == {0, 1}
