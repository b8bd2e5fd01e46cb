"""Plays complete games against a running server through a client generated from the committed
OpenAPI document by openapi-python-client (see config.yaml; the generated package is never
committed). Every pass is chosen from the view alone (the `may_empty_suit` rule of the
contract), every play from `legal_actions.cards`.

    openapi-python-client generate --path ../../../openapi/openapi.json --config config.yaml \\
        --meta none --output-path build/leekha_client
    python play.py [PRESET] [--bots]

PRESET (or LEEKHA_PRESET): the rule preset, default `classic` (solo); `partnership`.
--bots (or LEEKHA_SEATS=bots): one human and three heuristic bots instead of four humans.
LEEKHA_BASE_URL (default http://127.0.0.1:8080), LEEKHA_TARGET_SCORE (default 31),
LEEKHA_MAX_ACTIONS (default 3000), LEEKHA_CLIENT_DIR (where the generated package lies,
default build/ beside this file).

Exits 0 only if the game finished, no action was refused (any non-2xx answer to an action) and
every contract check held. Two probes per game are sent on purpose and must be refused: the
first action with a stale `If-Match` (409 `version_conflict`), and, when a hand allows one, a
pass that the rule forbids (422 `pass_restriction`).
The last line is a summary for .ci/clients:
    RESULT client=python preset=… seats=… status=… rounds=… actions=… refused=… probes=… violations=…
"""

from __future__ import annotations

import itertools
import os
import random
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from typing import Any, NoReturn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("LEEKHA_CLIENT_DIR", os.path.join(HERE, "build")))

# ---- Names taken from the generated client. Everything below depends on these names only;
# ---- adjust here when the document's shapes (and so the generated names) change.
from leekha_client import AuthenticatedClient, Client  # noqa: E402
from leekha_client.api.accounts import register as op_register  # noqa: E402
from leekha_client.api.games import submit_action as op_act  # noqa: E402
from leekha_client.api.games import create_game as op_create_game  # noqa: E402
from leekha_client.api.games import get_game as op_get_game  # noqa: E402
from leekha_client.api.games import join_game as op_join  # noqa: E402
from leekha_client.models import (  # noqa: E402
    CreateGame,
    Credentials,
    GameView,
    JoinRequest,
    Problem,
    RulesInput,
    SeatRequest,
)

# The `oneOf` members are named components with a discriminator on `type`.
from leekha_client.models import ActionRequestPass as PassRequest  # noqa: E402
from leekha_client.models import ActionRequestPlay as PlayRequest  # noqa: E402
from leekha_client.models import LegalActionsViewPass as PassActions  # noqa: E402
from leekha_client.models import LegalActionsViewPlay as PlayActions  # noqa: E402
from leekha_client.types import Unset  # noqa: E402

# ---- Configuration.
ARGS = sys.argv[1:]
BASE = os.environ.get("LEEKHA_BASE_URL", "http://127.0.0.1:8080").rstrip("/")
PRESET = next((a for a in ARGS if not a.startswith("--")), os.environ.get("LEEKHA_PRESET", "classic"))
WITH_BOTS = "--bots" in ARGS or os.environ.get("LEEKHA_SEATS") == "bots"
TARGET_SCORE = int(os.environ.get("LEEKHA_TARGET_SCORE", "31"))
MAX_ACTIONS = int(os.environ.get("LEEKHA_MAX_ACTIONS", "3000"))
MAX_REFUSED = 10


class Failed(Exception):
    """The game cannot go on."""


def fail(what: str) -> NoReturn:
    raise Failed(what)


def opt(value: Any) -> Any:
    """A generated optional field: `Unset` (absent from the JSON) reads as None."""
    return None if isinstance(value, Unset) else value


@dataclass
class Stats:
    actions: int = 0
    refused: int = 0
    probes: int = 0  # actions that must be refused, sent on purpose (not counted as refused)
    rounds: int = 0

    def __post_init__(self) -> None:
        self.violations: list[str] = []

    def violation(self, what: str) -> None:
        self.violations.append(what)
        print(f"contract violation: {what}", file=sys.stderr)


STATS = Stats()


@dataclass
class Player:
    name: str
    token: str
    api: AuthenticatedClient
    seat: int = -1


# ---- Cards.
def suit_of(card: str) -> str:
    return card[-1]


def is_legal_pass(pick: list[str], hand: list[str], may_empty: set[str]) -> bool:
    """The contract's rule: every card not in `may_empty_suit` leaves one of its suit in hand."""
    if len(set(pick)) != len(pick):
        return False
    left = Counter(suit_of(c) for c in hand)
    left.subtract(suit_of(c) for c in pick)
    return all(c in may_empty or left[suit_of(c)] >= 1 for c in pick)


def choose_pass(hand: list[str], legal: PassActions, want_legal: bool = True) -> list[str] | None:
    """A pass of `legal.count` distinct cards of `legal.cards`, decided from the view alone: a
    legal one, or with `want_legal=False` one the rule forbids (None if none exists). It tries
    to void its shortest suits first (shuffled within a length), as a player would, so the rule
    decides often."""
    may_empty = set(legal.may_empty_suit)
    length = Counter(suit_of(c) for c in hand)
    candidates = list(dict.fromkeys(legal.cards))
    random.shuffle(candidates)
    candidates.sort(key=lambda c: length[suit_of(c)])
    for pick in itertools.combinations(candidates, legal.count):
        if is_legal_pass(list(pick), hand, may_empty) == want_legal:
            return list(pick)
    return None


# ---- Requests.
def problem_text(parsed: Any, content: bytes) -> str:
    if isinstance(parsed, Problem):
        return f"{parsed.code}: {parsed.detail}"
    return content.decode("utf-8", "replace")[:300]


def register(i: int) -> tuple[str, str]:
    name = f"py_{uuid.uuid4().hex[:12]}_{i}"
    with Client(base_url=BASE) as anon:
        r = op_register.sync_detailed(
            client=anon, body=Credentials(username=name, password="correct horse battery staple")
        )
    if r.status_code != 201 or r.parsed is None or isinstance(r.parsed, Problem):
        fail(f"register {name}: {r.status_code} {problem_text(r.parsed, r.content)}")
    if r.parsed.token_type != "Bearer":
        STATS.violation(f"token_type {r.parsed.token_type}")
    if r.parsed.user.username != name:
        STATS.violation(f"registered as {r.parsed.user.username}, not {name}")
    return name, r.parsed.access_token


def view(p: Player, game_id: uuid.UUID) -> tuple[GameView, str]:
    r = op_get_game.sync_detailed(game_id, client=p.api)
    if not isinstance(r.parsed, GameView):
        fail(f"GET game as {p.name}: {r.status_code} {problem_text(r.parsed, r.content)}")
    etag = r.headers.get("ETag")
    if etag is None:
        fail("GET game: no ETag")
    if etag != f'"{r.parsed.version}"':
        STATS.violation(f"ETag {etag} for version {r.parsed.version}")
    return r.parsed, etag


def act(p: Player, game_id: uuid.UUID, etag: str, body: PassRequest | PlayRequest, replay_check: bool) -> GameView | None:
    """Sends one action with `If-Match` (the version it was decided on) and an
    `Idempotency-Key`, both header parameters of the generated operation; a network failure
    is retried once with the same key. With `replay_check`, the same request is sent a second
    time and must be answered from the first (`Idempotent-Replayed`)."""
    key = str(uuid.uuid4())

    def send() -> Any:
        return op_act.sync_detailed(game_id, client=p.api, body=body, if_match=etag, idempotency_key=key)

    try:
        first = send()
    except Exception as e:  # httpx.TransportError and friends
        print(f"network error ({e!r}); retrying with the same Idempotency-Key", file=sys.stderr)
        first = send()
    STATS.actions += 1
    if not 200 <= first.status_code < 300 or not isinstance(first.parsed, GameView):
        STATS.refused += 1
        print(
            f"refused: seat {p.seat} {body.to_dict()} -> {first.status_code} {problem_text(first.parsed, first.content)}",
            file=sys.stderr,
        )
        return None
    if replay_check:
        again = send()
        if not isinstance(again.parsed, GameView):
            STATS.violation(f"a retry with the same Idempotency-Key answered {again.status_code}")
        else:
            if again.headers.get("Idempotent-Replayed") != "true":
                STATS.violation("a retry with the same Idempotency-Key lacks Idempotent-Replayed: true")
            if again.parsed.version != first.parsed.version:
                STATS.violation(f"a replayed action answered version {again.parsed.version}, not {first.parsed.version}")
    return first.parsed


def probe_illegal_pass(p: Player, game_id: uuid.UUID, etag: str, cards: list[str]) -> None:
    """Sends a pass the `may_empty_suit` rule forbids: the server must refuse it with 422
    `pass_restriction` and change nothing ("the server's answer is the same")."""
    r = op_act.sync_detailed(
        game_id,
        client=p.api,
        body=PassRequest(type_="pass", cards=cards),
        if_match=etag,
        idempotency_key=str(uuid.uuid4()),
    )
    STATS.probes += 1
    if isinstance(r.parsed, GameView):
        STATS.violation(f"a pass the rule forbids ({' '.join(cards)}) was accepted")
    elif r.status_code != 422 or not isinstance(r.parsed, Problem) or r.parsed.code != "pass_restriction":
        STATS.violation(
            f"a pass the rule forbids answered {r.status_code} {problem_text(r.parsed, r.content)}, not 422 pass_restriction"
        )


def probe_stale_version(p: Player, game_id: uuid.UUID, version: int, body: PassRequest | PlayRequest) -> None:
    """Sends an action with an `If-Match` one version behind: the server must refuse it with
    409 `version_conflict` (which also shows that the header parameter reaches the server)."""
    r = op_act.sync_detailed(
        game_id, client=p.api, body=body, if_match=f'"{version - 1}"', idempotency_key=str(uuid.uuid4())
    )
    STATS.probes += 1
    if isinstance(r.parsed, GameView):
        STATS.violation("an action with a stale If-Match was accepted")
    elif r.status_code != 409 or not isinstance(r.parsed, Problem) or r.parsed.code != "version_conflict":
        STATS.violation(
            f"an action with a stale If-Match answered {r.status_code} {problem_text(r.parsed, r.content)}, "
            "not 409 version_conflict"
        )


# ---- Checks of a view against the contract.
def check_view(g: GameView, p: Player, mode: str) -> None:
    if opt(g.my_seat) != p.seat:
        STATS.violation(f"my_seat {opt(g.my_seat)} for seat {p.seat}")
    if len(g.seats) != 4:
        STATS.violation(f"{len(g.seats)} seats")
    for s in g.seats:
        want = s.seat % 2 if mode == "partnership" else None
        if opt(s.team) != want:
            STATS.violation(f"seat {s.seat} team {opt(s.team)} in {mode}")
    la = opt(g.legal_actions)
    round_ = opt(g.round_)
    hand = list(round_.hand) if round_ else []
    if la is None:
        return
    if not isinstance(la, (PassActions, PlayActions)):
        STATS.violation(f"legal_actions matches neither variant: {la!r}")
        return
    not_held = [c for c in la.cards if c not in hand]
    if not_held:
        STATS.violation(f"legal cards not in hand: {' '.join(not_held)}")
    if isinstance(la, PassActions):
        if la.count != 3:
            STATS.violation(f"pass count {la.count}")
        outside = [c for c in la.may_empty_suit if c not in hand]
        if outside:
            STATS.violation(f"may_empty_suit not in hand: {' '.join(outside)}")


# ---- The game.
def play() -> str:
    humans = 1 if WITH_BOTS else 4
    accounts = [register(i) for i in range(humans)]
    players = [Player(name, token, AuthenticatedClient(base_url=BASE, token=token)) for name, token in accounts]
    creator = players[0]

    # A private table: the other three humans are invited by name, so only they may join.
    seats = [SeatRequest(kind="me")] + [
        SeatRequest(kind="bot", level="heuristic") if WITH_BOTS else SeatRequest(kind="invite", username=accounts[i][0])
        for i in (1, 2, 3)
    ]
    create = CreateGame(rules=RulesInput(preset=PRESET, target_score=TARGET_SCORE), seats=seats, visibility="private")
    r = op_create_game.sync_detailed(client=creator.api, body=create)
    if not isinstance(r.parsed, GameView):
        fail(f"create: {r.status_code} {problem_text(r.parsed, r.content)}")
    if r.status_code != 201:
        STATS.violation(f"create answered {r.status_code}")
    created = r.parsed
    game_id = created.id
    location = r.headers.get("Location")
    if location != f"/api/v1/games/{game_id}":
        STATS.violation(f"Location {location}")
    creator.seat = opt(created.my_seat) if opt(created.my_seat) is not None else fail("the creator has no seat")
    mode = created.rules.mode
    print(f"game {game_id}: preset {PRESET}, mode {mode}, target {created.rules.target_score}, {humans} human(s)")

    latest = created
    for p in players[1:]:
        j = op_join.sync_detailed(game_id, client=p.api, body=JoinRequest())
        if not isinstance(j.parsed, GameView):
            fail(f"join as {p.name}: {j.status_code} {problem_text(j.parsed, j.content)}")
        seat = opt(j.parsed.my_seat)
        p.seat = seat if seat is not None else fail(f"{p.name} joined without a seat")
        latest = j.parsed
    if latest.status != "active":
        fail(f"the game is {latest.status} once every seat is taken")
    by_seat = {p.seat: p for p in players}

    replay_checked = False
    forbidden_probed = False
    while latest.status == "active":
        if STATS.actions >= MAX_ACTIONS:
            fail(f"no end after {STATS.actions} actions")
        if STATS.refused >= MAX_REFUSED:
            fail(f"{STATS.refused} actions refused")
        turn = opt(latest.turn)
        due = list(turn.seats) if turn else []
        if not due:
            fail(f"an active game with nobody to act (version {latest.version})")
        for seat in due:
            p = by_seat.get(seat) or fail(f"seat {seat} must act but no human of ours holds it")
            game, etag = view(p, game_id)
            latest = game
            if game.status != "active":
                break
            check_view(game, p, mode)
            la = opt(game.legal_actions)
            if la is None:
                continue  # e.g. this seat already passed
            round_ = opt(game.round_)
            hand = list(round_.hand) if round_ else []
            body: PassRequest | PlayRequest
            if isinstance(la, PassActions):
                forbidden = choose_pass(hand, la, want_legal=False) if not forbidden_probed else None
                if forbidden:
                    probe_illegal_pass(p, game_id, etag, forbidden)
                    forbidden_probed = True
                cards = choose_pass(hand, la) or fail(f"no legal pass in {' '.join(hand)}")
                body = PassRequest(type_="pass", cards=cards)
            elif isinstance(la, PlayActions):
                if not la.cards:
                    fail("no legal card to play")
                body = PlayRequest(type_="play", card=random.choice(la.cards))
            else:
                fail(f"legal_actions of neither variant: {la!r}")
            round_before = round_.number if round_ else 0
            if not replay_checked:
                probe_stale_version(p, game_id, game.version, body)
            after = act(p, game_id, etag, body, replay_check=not replay_checked)
            replay_checked = True
            if after is None:
                break  # decide again from a fresh view
            latest = after
            after_round = opt(after.round_)
            if (after_round.number if after_round else 0) != round_before or after.status != "active":
                STATS.rounds += 1

    # The end, as every player sees it; and a conditional GET that must answer 304.
    for p in players[1:]:
        game, _ = view(p, game_id)
        if game.status != latest.status:
            STATS.violation(f"seat {p.seat} sees {game.status}, not {latest.status}")
    final, etag = view(creator, game_id)
    latest = final
    nm = op_get_game.sync_detailed(game_id, client=creator.api, if_none_match=etag)
    if nm.status_code != 304:
        STATS.violation(f"If-None-Match with the current ETag answered {nm.status_code}")
    if latest.status == "finished":
        result = opt(latest.result) or fail("finished without a result")
        if len(result.ranking) != 4:
            STATS.violation(f"ranking of {len(result.ranking)} seats")
        if not result.winners:
            STATS.violation("no winner")
        if mode == "partnership" and opt(result.losing_team) is None:
            STATS.violation("partnership result without losing_team")
        scores = " ".join(f"{s.seat}:{s.total_score}" for s in latest.seats)
        winners = ",".join(str(w) for w in result.winners)
        print(f"finished after {STATS.rounds} round(s), {STATS.actions} action(s): scores {scores}, winners {winners}")
    for p in players:
        p.api.get_httpx_client().close()
    return str(latest.status)


def main() -> int:
    started = time.monotonic()
    try:
        status = play()
    except Failed as e:
        print(e, file=sys.stderr)
        status = "error"
    print(
        f"RESULT client=python preset={PRESET} seats={'bots' if WITH_BOTS else 'humans'} status={status} "
        f"rounds={STATS.rounds} actions={STATS.actions} refused={STATS.refused} probes={STATS.probes} "
        f"violations={len(STATS.violations)} seconds={time.monotonic() - started:.1f}"
    )
    return 0 if status == "finished" and STATS.refused == 0 and not STATS.violations else 1


if __name__ == "__main__":
    sys.exit(main())
