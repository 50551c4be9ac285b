"""Slow, rulebook-literal hand evaluation written straight from RULES.md, for tests only.

Nothing here imports ``mus_env``: the card encoding (§2.1), the rank and value tables (§2.2, §2.3), the
lance keys (§4), the juego order (§4.4), the bonuses (§6.2) and the 31 real (§1.2) are written out again
from the text, so that the fast tables of ``mus_env.tables`` and the engine can be checked against them.
Every function takes a hand as a list of card ids and the variant (``kings`` 8 or 4).

Keys are plain tuples compared lexicographically; ``None`` means "does not take part" (no pares, no juego).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# §2.1: card id = suit * 10 + k, k indexes the natural numbers below; suits 0 oros, 1 copas, 2 espadas, 3 bastos.
NUMBERS = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
OROS, COPAS, ESPADAS, BASTOS = 0, 1, 2, 3
AS, SOTA, CABALLO, REY = 1, 10, 11, 12

# §2.2, copied column by column (A 2 3 4 5 6 7 S C R), keyed by the natural number on the card.
RANK = {
    8: {1: 1, 2: 1, 3: 8, 4: 2, 5: 3, 6: 4, 7: 5, 10: 6, 11: 7, 12: 8},
    4: {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 10: 8, 11: 9, 12: 10},
}
# §2.3, same layout.
VALUE = {
    8: {1: 1, 2: 1, 3: 10, 4: 4, 5: 5, 6: 6, 7: 7, 10: 10, 11: 10, 12: 10},
    4: {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 10: 10, 11: 10, 12: 10},
}
# §4.4: juego totals, best first.
JUEGO_ORDER_BEST_FIRST = (31, 32, 40, 37, 36, 35, 34, 33)
# §4.3 class names and their §6.2 bonus per holder.
NO_PARES, PAR, MEDIAS, DUPLES = 0, 1, 2, 3
PARES_BONUS = {NO_PARES: 0, PAR: 1, MEDIAS: 2, DUPLES: 3}
REAL31_MODES = ("off", "any10", "sota", "sota_oros", "sota_4suits")

GRANDE, CHICA, PARES, JUEGO, PUNTO = "grande", "chica", "pares", "juego", "punto"


def number(card: int) -> int:
    """Natural number printed on the card (§2.1)."""
    assert 0 <= card < 40
    return NUMBERS[card % 10]


def suit(card: int) -> int:
    """Suit index of the card (§2.1)."""
    assert 0 <= card < 40
    return card // 10


def ranks(cards: Sequence[int], kings: int = 8) -> list[int]:
    """Ranks of the cards (§2.2), in the order given."""
    return [RANK[kings][number(c)] for c in cards]


def grande_key(cards: Sequence[int], kings: int = 8) -> tuple[int, ...]:
    """§4.1: the four ranks sorted descending; higher wins."""
    return tuple(sorted(ranks(cards, kings), reverse=True))


def chica_key(cards: Sequence[int], kings: int = 8) -> tuple[int, ...]:
    """§4.2: the four ranks sorted ascending; **lower** wins."""
    return tuple(sorted(ranks(cards, kings)))


def pares(cards: Sequence[int], kings: int = 8) -> tuple[int, tuple[int, ...] | None]:
    """§4.3: (class, key) with class 0 none, 1 par, 2 medias, 3 duples; key None without pares.

    par = exactly two cards of one rank, the other two different from it and from each other -> (1, rank);
    medias = exactly three of one rank -> (2, rank); duples = two pairs, or four of a kind counted as two
    equal pairs -> (3, higher pair rank, lower pair rank).
    """
    rs = ranks(cards, kings)
    assert len(rs) == 4
    how_many = {r: rs.count(r) for r in rs}
    fours = [r for r, n in how_many.items() if n == 4]
    threes = [r for r, n in how_many.items() if n == 3]
    twos = [r for r, n in how_many.items() if n == 2]
    if fours:
        return DUPLES, (3, fours[0], fours[0])
    if len(twos) == 2:
        return DUPLES, (3, max(twos), min(twos))
    if threes:
        return MEDIAS, (2, threes[0])
    if len(twos) == 1:
        others = [r for r in rs if r != twos[0]]
        assert len(others) == 2 and others[0] != others[1]
        return PAR, (1, twos[0])
    assert len(how_many) == 4
    return NO_PARES, None


def pares_class(cards: Sequence[int], kings: int = 8) -> int:
    return pares(cards, kings)[0]


def pares_key(cards: Sequence[int], kings: int = 8) -> tuple[int, ...] | None:
    return pares(cards, kings)[1]


def pares_bonus(cards: Sequence[int], kings: int = 8) -> int:
    """§6.2: par 1, medias 2, duples 3 per holder."""
    return PARES_BONUS[pares_class(cards, kings)]


def total(cards: Sequence[int], kings: int = 8) -> int:
    """§2.3 / §4.4: sum of the point values."""
    return sum(VALUE[kings][number(c)] for c in cards)


def has_juego(cards: Sequence[int], kings: int = 8) -> bool:
    """§4.4: juego iff total >= 31."""
    return total(cards, kings) >= 31


def is_real31(cards: Sequence[int], mode: str, kings: int = 8) -> bool:
    """§1.2 ``real31``: three 7s plus one 10-point card (any10), a sota (sota), the sota of oros (sota_oros),
    or a sota plus 7s of the three other suits (sota_4suits). ``off``: never."""
    assert mode in REAL31_MODES
    if mode == "off":
        return False
    sevens = [c for c in cards if number(c) == 7]
    rest = [c for c in cards if number(c) != 7]
    if len(sevens) != 3 or len(rest) != 1:
        return False
    fourth = rest[0]
    if mode == "any10":
        return VALUE[kings][number(fourth)] == 10
    if number(fourth) != SOTA:
        return False
    if mode == "sota":
        return True
    if mode == "sota_oros":
        return suit(fourth) == OROS
    other_suits = {OROS, COPAS, ESPADAS, BASTOS} - {suit(fourth)}
    return {suit(c) for c in sevens} == other_suits


def juego_key(cards: Sequence[int], kings: int = 8, real31: str = "off") -> tuple[int, int] | None:
    """§4.4: None without juego; else (is a 31 real, places above the worst juego); higher wins."""
    t = total(cards, kings)
    if t < 31:
        return None
    place = len(JUEGO_ORDER_BEST_FIRST) - JUEGO_ORDER_BEST_FIRST.index(t)
    return (1 if is_real31(cards, real31, kings) else 0, place)


def juego_bonus(cards: Sequence[int], kings: int = 8) -> int:
    """§6.2: 3 for a total of 31 (a 31 real is a 31), 2 for any other juego, 0 without juego."""
    t = total(cards, kings)
    if t == 31:
        return 3
    return 2 if t >= 31 else 0


def punto_key(cards: Sequence[int], kings: int = 8) -> int | None:
    """§4.4: punto key = the total (at most 30); higher wins; None for a hand with juego."""
    t = total(cards, kings)
    return t if t <= 30 else None


def _better(lance: str, a, b) -> bool:
    """Whether key ``a`` strictly beats key ``b`` for the lance."""
    if lance == CHICA:
        return a < b
    return a > b


def lance_key(cards: Sequence[int], lance: str, kings: int = 8, real31: str = "off"):
    """Key of a hand for a lance; None if the hand does not take part (pares/juego without them)."""
    if lance == GRANDE:
        return grande_key(cards, kings)
    if lance == CHICA:
        return chica_key(cards, kings)
    if lance == PARES:
        return pares_key(cards, kings)
    if lance == JUEGO:
        return juego_key(cards, kings, real31)
    if lance == PUNTO:
        return punto_key(cards, kings)
    raise ValueError(lance)


def lance_winner(hands: Sequence[Sequence[int]], lance: str, kings: int = 8, real31: str = "off") -> int | None:
    """Relative seat (0 = mano) that wins the lance among the eligible hands, None if nobody takes part.

    ``hands[p]`` is the hand of relative seat p. Seats are visited in turn order S0..S3 and a later seat only
    takes the lead with a strictly better key, which is the "lower relative seat wins ties" rule of §2.4.
    """
    best, best_key = None, None
    for p in range(4):
        key = lance_key(hands[p], lance, kings, real31)
        if key is None:
            continue
        if best is None or _better(lance, key, best_key):
            best, best_key = p, key
    return best


def slot_sort(cards: Sequence[int], kings: int = 8) -> list[int]:
    """§9.2 hand slots: sort by (rank desc, point value desc, natural number desc, suit asc)."""
    return sorted(cards, key=lambda c: (-RANK[kings][number(c)], -VALUE[kings][number(c)], -number(c), suit(c)))


def team_of_relative(p: int) -> int:
    """Team of relative seat p within a hand: 0 = the mano's side (S0, S2), 1 = the other (S1, S3)."""
    return p % 2


# ----------------------------------------------------------------------------------------------------------
# Betting: the reference pseudo-code of §9.4 (with §3 for the mus phase), replayed over a recorded hand.

MUS_ID, NO_MUS_ID, PASO_ID, QUIERO_ID, NO_QUIERO_ID, ORDAGO_ID = 0, 1, 18, 24, 25, 26
PARES_SI_ID, PARES_NO_ID, JUEGO_SI_ID, JUEGO_NO_ID = 27, 28, 29, 30
ENVIDO_IDS = frozenset(range(19, 24))
DISCARD_IDS = frozenset(range(2, 18))                          # DISCARD_m = 2 + m
OPEN_SET = frozenset({PASO_ID, ORDAGO_ID}) | ENVIDO_IDS       # §9.3 BET_OPEN
RESPOND_SET = frozenset({QUIERO_ID, NO_QUIERO_ID, ORDAGO_ID}) | ENVIDO_IDS
RESPOND_ORDAGO_SET = frozenset({QUIERO_ID, NO_QUIERO_ID})
CONFIRM_SET = frozenset({QUIERO_ID, ORDAGO_ID}) | ENVIDO_IDS
ORDAGO = "ORDAGO"


class ReplayError(AssertionError):
    """The recorded actions do not follow the procedure of RULES.md."""


def replay_hand(events: Sequence[tuple[int, int, int]], mano: int, hands: Sequence[Sequence[int]], *,
                kings: int = 8, target: int = 40, scores_before: tuple[int, int] = (0, 0),
                bet_sizes: Sequence[int] = (2, 3, 4, 5, 10), partner_override: bool = True,
                holders_only_speak: bool = True, punto: bool = True, allow_zero_discard: bool = False,
                max_mus_rounds: int | None = None, max_stake: int | None = None) -> dict:
    """Replay one hand's actions through §3 and §9.4 and say what each lance produced.

    Args:
        events: (absolute seat, action id, amount) in order, declarations included.
        mano: absolute seat of the mano.
        hands: final hands by **relative** seat (they decide who holds pares and juego).

    Returns:
        dict with ``outcomes`` (four names: "not played", "void", "uncontested", "en paso", "accepted",
        "refused", "órdago"), ``stakes`` (accepted stake per slot or None), ``refusals`` (lance, absolute team,
        stones) in order, ``winners`` (absolute team per slot for refused/uncontested, else None), ``fourth``
        ("juego" or "punto"), ``ended`` (None, "target" or "ordago") and ``ordago_slot``.

    Raises:
        ReplayError: a recorded action comes from the wrong seat or is not in the legal set of §9.3.
    """
    pos = 0

    def take(rel: int, allowed: frozenset[int], what: str) -> tuple[int, int]:
        nonlocal pos
        if pos >= len(events):
            raise ReplayError(f"{what}: expected an action of relative seat {rel}, the record ends")
        seat, a, amount = events[pos][0], events[pos][1], events[pos][2]
        pos += 1
        if seat != (mano + rel) % 4:
            raise ReplayError(f"{what}: action {a} by seat {seat}, expected seat {(mano + rel) % 4} (S{rel})")
        if a not in allowed:
            raise ReplayError(f"{what}: action {a} by S{rel} not in {sorted(allowed)}")
        return a, amount

    def size(a: int, amount: int) -> int:
        k = bet_sizes[a - 19]
        if amount != k:
            raise ReplayError(f"envido action {a} recorded with amount {amount}, bet_sizes say {k}")
        return k

    # §3: mus calls and discards.
    rounds = 0
    cut = False
    while not cut:
        forced = max_mus_rounds is not None and rounds >= max_mus_rounds
        for rel in range(4):
            a, _ = take(rel, frozenset({NO_MUS_ID}) if forced else frozenset({MUS_ID, NO_MUS_ID}), "mus call")
            if a == NO_MUS_ID:
                cut = True
                break
        if cut:
            break
        low = 2 if allow_zero_discard else 3
        for rel in range(4):
            take(rel, frozenset(range(low, 18)), "discard")
        rounds += 1

    result: dict = {"outcomes": ["not played"] * 4, "stakes": [None] * 4, "refusals": [], "winners": [None] * 4,
                    "fourth": JUEGO, "ended": None, "ordago_slot": None, "mus_rounds": rounds}
    score = list(scores_before)

    def team(rel: int) -> int:                                  # absolute team of a relative seat
        return (mano + rel) % 2

    def bet_lance(slot: int, lance: str, elig: list[int]) -> bool:
        """§9.4 for one lance; returns False when the game ended in it."""
        stake = fallback = bettor = last = None
        for s in elig:                                          # opening round
            a, amount = take(s, OPEN_SET, f"{lance} opening")
            if a != PASO_ID:
                stake = ORDAGO if a == ORDAGO_ID else size(a, amount)
                fallback, bettor, last = 1, team(s), s
                break
        else:
            result["outcomes"][slot] = "en paso"
            return True
        while True:                                             # response loop
            resp = [r for r in ((last + 1) % 4, (last + 2) % 4, (last + 3) % 4) if r in elig and team(r) != bettor]
            r1, r2 = resp[0], (resp[1] if len(resp) > 1 else None)
            capped = stake != ORDAGO and max_stake is not None and stake >= max_stake   # the RL cap: no raise
            allowed = RESPOND_ORDAGO_SET if stake == ORDAGO else RESPOND_SET - ENVIDO_IDS if capped else RESPOND_SET
            a, amount = take(r1, allowed, f"{lance} response")
            actor = r1
            if a == NO_QUIERO_ID and r2 is not None:
                a, amount = take(r2, allowed, f"{lance} second responder")
                actor = r2
            elif a == QUIERO_ID and r2 is not None and stake != ORDAGO and partner_override:
                a2, amount2 = take(r2, CONFIRM_SET - ENVIDO_IDS if capped else CONFIRM_SET,
                                   f"{lance} partner confirmation")
                if a2 != QUIERO_ID:
                    a, amount, actor = a2, amount2, r2
            if a == QUIERO_ID:
                if stake == ORDAGO:
                    result["outcomes"][slot] = "órdago"
                    result["ended"], result["ordago_slot"] = "ordago", slot
                    return False
                result["outcomes"][slot] = "accepted"
                result["stakes"][slot] = stake
                return True
            if a == NO_QUIERO_ID:
                result["outcomes"][slot] = "refused"
                result["winners"][slot] = bettor
                result["refusals"].append((lance, bettor, fallback))
                score[bettor] += fallback
                if score[bettor] >= target:                     # §6.1
                    result["ended"] = "target"
                    return False
                return True
            fallback, stake = stake, (ORDAGO if a == ORDAGO_ID else stake + size(a, amount))
            bettor, last = team(actor), actor

    def declared(slot: int, lance: str) -> list[int]:
        si, no = (PARES_SI_ID, PARES_NO_ID) if lance == PARES else (JUEGO_SI_ID, JUEGO_NO_ID)
        holders = []
        for rel in range(4):
            has = lance_key(hands[rel], lance, kings) is not None
            take(rel, frozenset({si if has else no}), f"{lance} declaration")
            if has:
                holders.append(rel)
        return holders

    if not bet_lance(0, GRANDE, [0, 1, 2, 3]) or not bet_lance(1, CHICA, [0, 1, 2, 3]):
        return _finish(result, events, pos)
    for slot, lance in ((2, PARES), (3, JUEGO)):
        holders = declared(slot, lance)
        teams = {team(p) for p in holders}
        if slot == 3 and not holders:
            result["fourth"] = PUNTO
            if not punto:
                result["outcomes"][3] = "void"
            elif not bet_lance(3, PUNTO, [0, 1, 2, 3]):
                return _finish(result, events, pos)
            continue
        if not holders:
            result["outcomes"][slot] = "void"
        elif len(teams) == 1:
            result["outcomes"][slot] = "uncontested"
            result["winners"][slot] = teams.pop()
        elif not bet_lance(slot, lance, holders if holders_only_speak else [0, 1, 2, 3]):
            return _finish(result, events, pos)
    return _finish(result, events, pos)


def _finish(result: dict, events: Sequence, pos: int) -> dict:
    if pos != len(events):
        raise ReplayError(f"{len(events) - pos} recorded actions left after the hand ended: {list(events[pos:])}")
    return result


def stone_rewards_from_scores(game: Any) -> float:
    """Team 0's total ``reward="stones"`` of a finished game, recomputed from the score movements and the game
    results alone (an accepted órdago credits the stones the winners lacked): the oracle of the env tests."""
    total = 0
    for rec in game.hand_log:
        total += (rec.scores_after[0] - rec.scores_before[0]) - (rec.scores_after[1] - rec.scores_before[1])
    for res in game.game_results:
        if res.by_ordago:
            credit = game.config.target - res.scores[res.winner]
            total += credit if res.winner == 0 else -credit
    return float(total)
