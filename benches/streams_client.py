#!/usr/bin/env python3
"""Loopback clients for benches/streams.sh (standard library only).

fanout: opens N event streams on one game (spread over its four players), then plays the
        game through the same server at a steady pace and measures, for every event and every
        stream, the time from the action's request to the event's arrival (fan-out latency).
wake:   two instances on one database: a stream and long-polls on instance A, actions through
        instance B; the time from B's action request to the event on A.

Prints one JSON object. Each stream is a raw HTTP/1.1 connection read by an asyncio
protocol (callbacks, no per-stream task), so one process holds 10,000 of them.
"""

import argparse
import asyncio
import itertools
import json
import sys
import time
import http.client
import threading
import uuid


_local = threading.local()


def _connection(base, fresh=False):
    """This thread's keep-alive connection to `base`, so that a timed request never waits
    for a TCP handshake (or a SYN retransmission when the listen backlog is full)."""
    conns = _local.__dict__.setdefault("conns", {})
    if fresh or base not in conns:
        if base in conns:
            conns[base].close()
        host, port = host_port(base)
        conns[base] = http.client.HTTPConnection(host, port, timeout=30)
    return conns[base]


def call(base, method, path, token=None, body=None):
    data = None if body is None else json.dumps(body).encode()
    headers = {}
    if data is not None:
        headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = "Bearer " + token
    for attempt in range(2):
        conn = _connection(base, fresh=attempt > 0)
        try:
            conn.request(method, path, body=data, headers=headers)
            r = conn.getresponse()
            raw = r.read()
        except (http.client.HTTPException, ConnectionError, OSError):
            # The server closed an idle keep-alive connection: one retry on a new one.
            if attempt:
                raise
            continue
        return r.status, (json.loads(raw) if raw else None)


def register(base, prefix):
    name = f"{prefix}{uuid.uuid4().hex[:10]}"
    status, s = call(base, "POST", "/api/v1/auth/register", body={"username": name, "password": "correct horse battery"})
    assert status == 201, (status, s)
    return {"id": s["user"]["id"], "token": s["access_token"]}


def new_game(base, prefix):
    players = [register(base, prefix) for _ in range(4)]
    status, g = call(base, "POST", "/api/v1/games", players[0]["token"], {})
    assert status == 201, g
    for p in players[1:]:
        status, _ = call(base, "POST", f"/api/v1/games/{g['id']}/join", p["token"], {})
        assert status == 200
    return g["id"], players


def suit(code):
    return code[-1]


def legal_action(view):
    legal = view.get("legal_actions")
    if not legal:
        return None
    cards = legal["cards"]
    if legal["type"] == "play":
        return {"type": "play", "card": cards[0]}
    may_empty = set(legal.get("may_empty_suit", []))
    hand = view["round"]["hand"]
    for combo in itertools.combinations(cards, 3):
        rest = [c for c in hand if c not in combo]
        if all(c in may_empty or any(suit(r) == suit(c) for r in rest) for c in combo):
            return {"type": "pass", "cards": list(combo)}
    return None


def act_once(base, game, players):
    """One legal action by whoever can act: (the time its request was sent, finished?)."""
    for p in players:
        status, view = call(base, "GET", f"/api/v1/games/{game}", p["token"])
        if view.get("status") != "active":
            return None, True
        action = legal_action(view)
        if action:
            sent = time.monotonic()
            status, after = call(base, "POST", f"/api/v1/games/{game}/actions", p["token"], action)
            assert status == 200, (status, after)
            return sent, after.get("status") != "active"
    return None, True


def last_seq(base, game, token):
    return call(base, "GET", f"/api/v1/games/{game}/events?limit=1&after=1000000", token)[1]["last_seq"]


def pct(values, p):
    if not values:
        return None
    s = sorted(values)
    return round(s[min(len(s) - 1, int(len(s) * p))], 2)


class Stream(asyncio.Protocol):
    """One SSE connection: records when each event id arrives."""

    def __init__(self, request, opened):
        self.request = request
        self.opened = opened
        self.buf = b""
        self.head = True
        self.arrivals = {}
        self.status = None
        self.closed = False

    def connection_made(self, transport):
        transport.write(self.request)

    def data_received(self, data):
        now = time.monotonic()
        self.buf += data
        if self.head:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            self.status = int(self.buf.split(b" ", 2)[1])
            self.buf = self.buf[end + 4 :]
            self.head = False
            if not self.opened.done():
                self.opened.set_result(self.status)
        # Chunked transfer: chunk-size lines are not SSE lines and are skipped below.
        while True:
            end = self.buf.find(b"\n\n")
            if end < 0:
                break
            block, self.buf = self.buf[:end], self.buf[end + 2 :]
            for line in block.split(b"\n"):
                if line.startswith(b"id: "):
                    self.arrivals.setdefault(int(line[4:]), now)

    def connection_lost(self, exc):
        self.closed = True
        if not self.opened.done():
            self.opened.set_result(self.status or 0)


async def open_stream(host, port, path, token):
    loop = asyncio.get_running_loop()
    opened = loop.create_future()
    req = (
        f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
        "Accept: text/event-stream\r\n\r\n"
    ).encode()
    proto = Stream(req, opened)
    await loop.create_connection(lambda: proto, host, port)
    status = await asyncio.wait_for(opened, 30)
    return proto, status


def host_port(url):
    hp = url.split("://", 1)[1].rstrip("/")
    host, port = hp.rsplit(":", 1)
    return host, int(port)


async def fanout(args):
    base = args.url
    host, port = host_port(base)
    game, players = new_game(base, "fan")
    start = last_seq(base, game, players[0]["token"])
    path = f"/api/v1/games/{game}/events/stream?after={start}"
    streams, refused = [], 0
    t0 = time.monotonic()
    for batch in range(0, args.streams, 500):
        n = min(500, args.streams - batch)
        opened = await asyncio.gather(
            *(open_stream(host, port, path, players[(batch + i) % 4]["token"]) for i in range(n)),
            return_exceptions=True,
        )
        for r in opened:
            if isinstance(r, Exception) or r[1] != 200:
                refused += 1
            else:
                streams.append(r[0])
    open_s = time.monotonic() - t0
    if args.ready_file:
        open(args.ready_file, "w").write(str(len(streams)))
    sent_at = {}
    seen = start
    actions = 0
    loop = asyncio.get_running_loop()
    deadline = time.monotonic() + args.duration
    while time.monotonic() < deadline:
        sent, finished = await loop.run_in_executor(None, act_once, base, game, players)
        if sent is not None:
            actions += 1
            now_last = await loop.run_in_executor(None, last_seq, base, game, players[0]["token"])
            for seq in range(seen + 1, now_last + 1):
                sent_at[seq] = sent
            seen = now_last
        if finished:
            break
        await asyncio.sleep(args.pace / 1000)
    await asyncio.sleep(3)  # lets the last events arrive
    latencies, missing = [], 0
    for s in streams:
        for seq, t in sent_at.items():
            a = s.arrivals.get(seq)
            if a is None:
                missing += 1
            else:
                latencies.append((a - t) * 1000)
    closed = sum(1 for s in streams if s.closed)
    print(json.dumps({
        "streams_open": len(streams), "refused": refused, "open_seconds": round(open_s, 1),
        "actions": actions, "events": len(sent_at), "deliveries": len(latencies), "missing": missing,
        "closed_early": closed,
        "fanout_ms": {"p50": pct(latencies, 0.5), "p99": pct(latencies, 0.99), "max": pct(latencies, 1.0)},
    }))


async def wake(args):
    a, b = args.url, args.other
    host, port = host_port(a)
    game, players = new_game(a, "wake")
    seen = last_seq(a, game, players[0]["token"])
    stream, status = await open_stream(host, port, f"/api/v1/games/{game}/events/stream?after={seen}", players[0]["token"])
    assert status == 200
    loop = asyncio.get_running_loop()
    sse_ms, poll_ms = [], []
    for i in range(args.samples):
        if i % 2 == 0:
            sent, finished = await loop.run_in_executor(None, act_once, b, game, players)
            waited = time.monotonic()
            while seen + 1 not in stream.arrivals:
                assert time.monotonic() - waited < 10, "the stream on A never got the event"
                await asyncio.sleep(0.0005)
            sse_ms.append((stream.arrivals[seen + 1] - sent) * 1000)
        else:
            poll = loop.run_in_executor(
                None, call, a, "GET", f"/api/v1/games/{game}/events?after={seen}&wait=10", players[1]["token"]
            )
            await asyncio.sleep(0.05)
            sent, finished = await loop.run_in_executor(None, act_once, b, game, players)
            status, page = await poll
            poll_ms.append((time.monotonic() - sent) * 1000)
            assert page["events"][0]["seq"] == seen + 1
        if finished:
            game, players = new_game(a, "wake")
            seen = last_seq(a, game, players[0]["token"])
            stream, _ = await open_stream(host, port, f"/api/v1/games/{game}/events/stream?after={seen}", players[0]["token"])
            continue
        await asyncio.sleep(0.3)
        seen = max(stream.arrivals) if stream.arrivals else seen
    print(json.dumps({
        "samples": len(sse_ms) + len(poll_ms),
        "sse_ms": {"p50": pct(sse_ms, 0.5), "p99": pct(sse_ms, 0.99), "max": pct(sse_ms, 1.0)},
        "long_poll_ms": {"p50": pct(poll_ms, 0.5), "p99": pct(poll_ms, 0.99), "max": pct(poll_ms, 1.0)},
    }))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["fanout", "wake"])
    p.add_argument("--url", required=True)
    p.add_argument("--other", help="wake: the instance actions go through")
    p.add_argument("--streams", type=int, default=10000)
    p.add_argument("--duration", type=float, default=30)
    p.add_argument("--pace", type=float, default=1000, help="fanout: ms between actions")
    p.add_argument("--samples", type=int, default=100)
    p.add_argument("--ready-file", help="fanout: written once every stream is open")
    args = p.parse_args()
    asyncio.run(fanout(args) if args.mode == "fanout" else wake(args))


if __name__ == "__main__":
    sys.exit(main())
