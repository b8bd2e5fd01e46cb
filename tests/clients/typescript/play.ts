// Plays complete games against a running server through a client generated from the committed
// OpenAPI document: `schema.d.ts` (openapi-typescript) types every path, body and response,
// and openapi-fetch sends the requests. Every pass is chosen from the view alone (the
// `may_empty_suit` rule of the contract), every play from `legal_actions.cards`.
//
//   node dist/play.js [PRESET] [--bots]
//
// PRESET (or LEEKHA_PRESET): the rule preset, default `classic` (solo); `partnership`.
// --bots (or LEEKHA_SEATS=bots): one human and three heuristic bots instead of four humans.
// LEEKHA_BASE_URL (default http://127.0.0.1:8080), LEEKHA_TARGET_SCORE (default 31),
// LEEKHA_MAX_ACTIONS (default 3000).
//
// Exits 0 only if the game finished, no action was refused (any non-2xx answer to an action)
// and every contract check held. Two probes per game are sent on purpose and must be refused:
// the first action with a stale `If-Match` (409 `version_conflict`), and, when a hand allows
// one, a pass that the rule forbids (422 `pass_restriction`). The last line is a summary for .ci/clients:
//   RESULT client=typescript preset=… seats=… status=… rounds=… actions=… refused=… probes=… violations=…

import { randomUUID } from "node:crypto";
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

// ---- Types taken from the generated document. Everything below depends on these names
// ---- only; adjust here when the document's shapes change.
type Schemas = components["schemas"];
type GameView = Schemas["GameView"];
type Card = Schemas["CardCode"];
type LegalActions = NonNullable<GameView["legal_actions"]>;
type PassActions = Extract<LegalActions, { type: "pass" }>;
type ActionRequest = Schemas["ActionRequest"];
type CreateGame = Schemas["CreateGame"];
type SeatRequest = Schemas["SeatRequest"];
type Preset = NonNullable<NonNullable<CreateGame["rules"]>["preset"]>;
type Client = ReturnType<typeof createClient<paths>>;

// ---- Configuration.
const args = process.argv.slice(2);
const BASE = (process.env.LEEKHA_BASE_URL ?? "http://127.0.0.1:8080").replace(/\/+$/, "");
// Any name is sent as given (the server judges it); the cast only names the document's type.
const PRESET = (args.find((a) => !a.startsWith("--")) ?? process.env.LEEKHA_PRESET ?? "classic") as Preset;
const WITH_BOTS = args.includes("--bots") || process.env.LEEKHA_SEATS === "bots";
const TARGET_SCORE = Number(process.env.LEEKHA_TARGET_SCORE ?? "31");
const MAX_ACTIONS = Number(process.env.LEEKHA_MAX_ACTIONS ?? "3000");
const MAX_REFUSED = 10;

// ---- Bookkeeping.
let actions = 0;
let refused = 0;
let probes = 0; // actions that must be refused, sent on purpose (not counted above)
const violations: string[] = [];

function violation(what: string): void {
  violations.push(what);
  console.error(`contract violation: ${what}`);
}

function fail(what: string): never {
  throw new Error(what);
}

interface Player {
  name: string;
  api: Client;
  seat: number;
}

function client(token?: string): Client {
  return createClient<paths>({
    baseUrl: BASE,
    headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
  });
}

// ---- Cards.
const suitOf = (card: Card): string => card.slice(-1);

function countBySuit(cards: readonly Card[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const c of cards) counts.set(suitOf(c), (counts.get(suitOf(c)) ?? 0) + 1);
  return counts;
}

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** The contract's rule: every card not in `may_empty_suit` leaves one of its suit in hand. */
export function isLegalPass(pick: readonly Card[], hand: readonly Card[], mayEmpty: ReadonlySet<Card>): boolean {
  if (new Set(pick).size !== pick.length) return false;
  const left = countBySuit(hand);
  for (const c of pick) left.set(suitOf(c), (left.get(suitOf(c)) ?? 0) - 1);
  return pick.every((c) => mayEmpty.has(c) || (left.get(suitOf(c)) ?? 0) >= 1);
}

/**
 * A pass of `legal.count` distinct cards of `legal.cards`, decided from the view alone: a legal
 * one, or with `wantLegal = false` one the rule forbids (null when none exists). It tries to
 * void its shortest suits first (shuffled within a length), as a player would, so the rule
 * decides often.
 */
export function choosePass(hand: readonly Card[], legal: PassActions, wantLegal = true): Card[] | null {
  const mayEmpty = new Set(legal.may_empty_suit);
  const length = countBySuit(hand);
  const candidates = shuffled([...new Set(legal.cards)]).sort(
    (a, b) => (length.get(suitOf(a)) ?? 0) - (length.get(suitOf(b)) ?? 0),
  );
  const pick: Card[] = [];
  const search = (from: number): boolean => {
    if (pick.length === legal.count) return isLegalPass(pick, hand, mayEmpty) === wantLegal;
    for (let i = from; i < candidates.length; i++) {
      pick.push(candidates[i] as Card);
      if (search(i + 1)) return true;
      pick.pop();
    }
    return false;
  };
  return search(0) ? [...pick] : null;
}

// ---- Requests.
async function register(i: number): Promise<{ name: string; token: string }> {
  const name = `ts_${randomUUID().replace(/-/g, "").slice(0, 12)}_${i}`;
  const { data, error, response } = await client().POST("/api/v1/auth/register", {
    body: { username: name, password: "correct horse battery staple" },
  });
  if (data === undefined) fail(`register ${name}: ${response.status} ${JSON.stringify(error)}`);
  if (response.status !== 201) violation(`register answered ${response.status}, not 201`);
  if (data.token_type !== "Bearer") violation(`token_type ${data.token_type}`);
  if (data.user.username !== name) violation(`registered as ${data.user.username}, not ${name}`);
  return { name, token: data.access_token };
}

async function view(p: Player, gameId: string): Promise<{ game: GameView; etag: string }> {
  const { data, error, response } = await p.api.GET("/api/v1/games/{id}", {
    params: { path: { id: gameId } },
  });
  if (data === undefined) fail(`GET game as ${p.name}: ${response.status} ${JSON.stringify(error)}`);
  const etag = response.headers.get("ETag");
  if (etag === null) fail("GET game: no ETag");
  if (etag !== `"${data.version}"`) violation(`ETag ${etag} for version ${data.version}`);
  return { game: data, etag };
}

/**
 * Sends one action with `If-Match` (the version it was decided on) and an `Idempotency-Key`;
 * a network failure is retried once with the same key. With `replayCheck`, the same request
 * is sent a second time and must be answered from the first (`Idempotent-Replayed`).
 */
async function act(
  p: Player,
  gameId: string,
  etag: string,
  body: ActionRequest,
  replayCheck: boolean,
): Promise<GameView | null> {
  const key = randomUUID();
  const send = () =>
    p.api.POST("/api/v1/games/{id}/actions", {
      params: { path: { id: gameId }, header: { "If-Match": etag, "Idempotency-Key": key } },
      body,
    });
  const first = await send().catch(async (e: unknown) => {
    console.error(`network error (${String(e)}); retrying with the same Idempotency-Key`);
    return send();
  });
  actions++;
  if (first.data === undefined) {
    refused++;
    const problem = first.error; // typed as the document's Problem
    console.error(
      `refused: seat ${p.seat} ${JSON.stringify(body)} -> ${first.response.status} ` +
        `${String(problem?.code)}: ${String(problem?.detail)}`,
    );
    return null;
  }
  if (replayCheck) {
    const again = await send();
    if (again.data === undefined) {
      violation(`a retry with the same Idempotency-Key answered ${again.response.status}`);
    } else {
      if (again.response.headers.get("Idempotent-Replayed") !== "true")
        violation("a retry with the same Idempotency-Key lacks Idempotent-Replayed: true");
      if (again.data.version !== first.data.version)
        violation(`a replayed action answered version ${again.data.version}, not ${first.data.version}`);
    }
  }
  return first.data;
}

/**
 * Sends a pass that the `may_empty_suit` rule forbids: the server must refuse it with 422
 * `pass_restriction` and change nothing ("the server's answer is the same").
 */
async function probeIllegalPass(p: Player, gameId: string, etag: string, cards: Card[]): Promise<void> {
  const { data, error, response } = await p.api.POST("/api/v1/games/{id}/actions", {
    params: { path: { id: gameId }, header: { "If-Match": etag, "Idempotency-Key": randomUUID() } },
    body: { type: "pass", cards },
  });
  probes++;
  if (data !== undefined) violation(`a pass the rule forbids (${cards.join(" ")}) was accepted`);
  else if (response.status !== 422 || error?.code !== "pass_restriction")
    violation(`a pass the rule forbids answered ${response.status} ${String(error?.code)}, not 422 pass_restriction`);
}

/**
 * Sends an action with an `If-Match` one version behind: the server must refuse it with 409
 * `version_conflict` (which also shows that the header parameter reaches the server).
 */
async function probeStaleVersion(p: Player, gameId: string, version: number, body: ActionRequest): Promise<void> {
  const { data, error, response } = await p.api.POST("/api/v1/games/{id}/actions", {
    params: { path: { id: gameId }, header: { "If-Match": `"${version - 1}"`, "Idempotency-Key": randomUUID() } },
    body,
  });
  probes++;
  if (data !== undefined) violation(`an action with a stale If-Match was accepted`);
  else if (response.status !== 409 || error?.code !== "version_conflict")
    violation(`an action with a stale If-Match answered ${response.status} ${String(error?.code)}, not 409 version_conflict`);
}

// ---- Checks of a view against the contract.
function checkView(g: GameView, p: Player, mode: string): void {
  if (g.my_seat !== p.seat) violation(`my_seat ${String(g.my_seat)} for seat ${p.seat}`);
  if (g.seats.length !== 4) violation(`${g.seats.length} seats`);
  for (const s of g.seats) {
    const team = s.team ?? null;
    const want = mode === "partnership" ? s.seat % 2 : null;
    if (team !== want) violation(`seat ${s.seat} team ${String(team)} in ${mode}`);
  }
  const la = g.legal_actions;
  const hand = g.round?.hand ?? [];
  if (la) {
    const notHeld = la.cards.filter((c) => !hand.includes(c));
    if (notHeld.length > 0) violation(`legal cards not in hand: ${notHeld.join(" ")}`);
    if (la.type === "pass") {
      if (la.count !== 3) violation(`pass count ${la.count}`);
      const outside = la.may_empty_suit.filter((c) => !hand.includes(c));
      if (outside.length > 0) violation(`may_empty_suit not in hand: ${outside.join(" ")}`);
    }
  }
}

// ---- The game.
async function main(): Promise<number> {
  const started = Date.now();
  const humans = WITH_BOTS ? 1 : 4;
  const accounts: { name: string; token: string }[] = [];
  for (let i = 0; i < humans; i++) accounts.push(await register(i));
  const players: Player[] = accounts.map((a) => ({ name: a.name, api: client(a.token), seat: -1 }));
  const creator = players[0] ?? fail("no players");

  const create: CreateGame = {
    rules: { preset: PRESET, target_score: TARGET_SCORE },
    // A private table: the other three humans are invited by name, so only they may join.
    seats: [
      { kind: "me" },
      ...[1, 2, 3].map(
        (i): SeatRequest =>
          WITH_BOTS ? { kind: "bot", level: "heuristic" } : { kind: "invite", username: accounts[i]?.name ?? null },
      ),
    ],
    visibility: "private",
  };
  const created = await creator.api.POST("/api/v1/games", { body: create });
  if (created.data === undefined)
    fail(`create: ${created.response.status} ${JSON.stringify(created.error)}`);
  if (created.response.status !== 201) violation(`create answered ${created.response.status}`);
  const gameId = created.data.id;
  const location = created.response.headers.get("Location");
  if (location !== `/api/v1/games/${gameId}`) violation(`Location ${location}`);
  creator.seat = created.data.my_seat ?? fail("the creator has no seat");
  const mode = created.data.rules.mode;
  console.log(`game ${gameId}: preset ${PRESET}, mode ${mode}, target ${created.data.rules.target_score}, ${humans} human(s)`);

  let latest: GameView = created.data;
  for (const p of players.slice(1)) {
    const joined = await p.api.POST("/api/v1/games/{id}/join", {
      params: { path: { id: gameId } },
      body: {},
    });
    if (joined.data === undefined)
      fail(`join as ${p.name}: ${joined.response.status} ${JSON.stringify(joined.error)}`);
    p.seat = joined.data.my_seat ?? fail(`${p.name} joined without a seat`);
    latest = joined.data;
  }
  if (latest.status !== "active") fail(`the game is ${latest.status} once every seat is taken`);
  const bySeat = new Map(players.map((p) => [p.seat, p]));

  let rounds = 0;
  let replayChecked = false;
  let forbiddenProbed = false;
  while (latest.status === "active") {
    if (actions >= MAX_ACTIONS) fail(`no end after ${actions} actions`);
    if (refused >= MAX_REFUSED) fail(`${refused} actions refused`);
    const due = latest.turn?.seats ?? [];
    if (due.length === 0) fail(`an active game with nobody to act (version ${latest.version})`);
    for (const seat of due) {
      const p = bySeat.get(seat) ?? fail(`seat ${seat} must act but no human of ours holds it`);
      const { game, etag } = await view(p, gameId);
      latest = game;
      if (game.status !== "active") break;
      checkView(game, p, mode);
      const la = game.legal_actions;
      if (!la) continue; // e.g. this seat already passed
      const hand = game.round?.hand ?? [];
      let body: ActionRequest;
      if (la.type === "pass") {
        const forbidden = !forbiddenProbed ? choosePass(hand, la, false) : null;
        if (forbidden) {
          await probeIllegalPass(p, gameId, etag, forbidden);
          forbiddenProbed = true;
        }
        const cards = choosePass(hand, la) ?? fail(`no legal pass in ${hand.join(" ")}`);
        body = { type: "pass", cards };
      } else {
        const card = shuffled(la.cards)[0] ?? fail("no legal card to play");
        body = { type: "play", card };
      }
      const roundBefore = game.round?.number ?? 0;
      if (!replayChecked) await probeStaleVersion(p, gameId, game.version, body);
      const after = await act(p, gameId, etag, body, !replayChecked);
      replayChecked = true;
      if (after === null) break; // decide again from a fresh view
      latest = after;
      if ((after.round?.number ?? 0) !== roundBefore || after.status !== "active") rounds++;
    }
  }

  // The end, as every player sees it; and a conditional GET that must answer 304.
  for (const p of players.slice(1)) {
    const { game } = await view(p, gameId);
    if (game.status !== latest.status) violation(`seat ${p.seat} sees ${game.status}, not ${latest.status}`);
  }
  const final = await view(creator, gameId);
  latest = final.game;
  const notModified = await creator.api.GET("/api/v1/games/{id}", {
    params: { path: { id: gameId }, header: { "If-None-Match": final.etag } },
  });
  if (notModified.response.status !== 304)
    violation(`If-None-Match with the current ETag answered ${notModified.response.status}`);
  if (latest.status === "finished") {
    const result = latest.result ?? fail("finished without a result");
    if (result.ranking.length !== 4) violation(`ranking of ${result.ranking.length} seats`);
    if (result.winners.length === 0) violation("no winner");
    if (mode === "partnership" && (result.losing_team ?? null) === null) violation("partnership result without losing_team");
    const scores = latest.seats.map((s) => `${s.seat}:${s.total_score}`).join(" ");
    console.log(`finished after ${rounds} round(s), ${actions} action(s): scores ${scores}, winners ${result.winners.join(",")}`);
  }
  console.log(
    `RESULT client=typescript preset=${PRESET} seats=${WITH_BOTS ? "bots" : "humans"} status=${latest.status} ` +
      `rounds=${rounds} actions=${actions} refused=${refused} probes=${probes} violations=${violations.length} ` +
      `seconds=${((Date.now() - started) / 1000).toFixed(1)}`,
  );
  return latest.status === "finished" && refused === 0 && violations.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    console.log(
      `RESULT client=typescript preset=${PRESET} seats=${WITH_BOTS ? "bots" : "humans"} status=error ` +
        `rounds=0 actions=${actions} refused=${refused} probes=${probes} violations=${violations.length}`,
    );
    process.exit(1);
  },
);
