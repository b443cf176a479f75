"""Drives the official TickFlow SDK's live half against a running mdq, step by step with test/sdk/stream-sdk.test.ts.

usage: stream_sdk.py BASE_URL API_KEY sync|async SCENARIO_JSON
SCENARIO_JSON: {"symbol", "realtime_symbol", "quote_symbols": [...], "t": {"t0", ..., "t7"}}

The test pushes snapshots to mdq's ingest listener; this script subscribes and reports. They take turns over the pipes: the
script prints {"ready": STEP} when it waits for the test, and reads one line from stdin to go on.
Its last line is {"report": {...}}.
"""
import asyncio
import json
import logging
import sys
import threading
import time

from tickflow import AsyncTickFlow, TickFlow

DEADLINE_S = 120


class Seen:
    """Snapshots the handlers got, by channel, in order (the sync stream calls handlers on its own thread)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.items = {"quotes": [], "depth": []}
        self.errors = []

    def add(self, channel, data):
        with self.lock:
            self.items[channel].extend(data)

    def times(self, channel, symbol):
        with self.lock:
            return [d["timestamp"] for d in self.items[channel] if d["symbol"] == symbol]


def step(name):
    print(json.dumps({"ready": name}), flush=True)
    line = sys.stdin.readline()
    if not line:
        sys.exit("the test went away")


def wait_for(condition, what):
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > DEADLINE_S:
            raise TimeoutError(f"gave up waiting for {what}")
        time.sleep(0.02)


async def wait_for_async(condition, what):
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > DEADLINE_S:
            raise TimeoutError(f"gave up waiting for {what}")
        await asyncio.sleep(0.02)


class Warnings(logging.Handler):
    """The SDK's log records (how it reports a refused handshake)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def stream_steps(sc, seen, subscribe_depth, unsubscribe_quotes, wait):
    """The steps both clients share; `wait` polls (blocking or not), the others act on the stream."""
    sym, t = sc["symbol"], sc["t"]
    has = lambda ch, ts: lambda: ts in seen.times(ch, sym)  # noqa: E731
    out = {}
    return out, [
        # Subscribed before connect: the latest quote at once.
        lambda: wait(has("quotes", t["t0"]), "the latest quote at connect"),
        # Subscribed after connect: the latest depth at once.
        subscribe_depth,
        lambda: wait(has("depth", t["t0"]), "the latest depth after a subscribe on the open stream"),
        "live",
        lambda: wait(lambda: has("quotes", t["t5"])() and has("depth", t["t5"])(), "t1..t5 on both channels"),
        unsubscribe_quotes,
        "unsubscribed",
        # A quote of t6 was pushed, then a depth of t6: depth t6 without quote t6 = unsubscribed.
        lambda: wait(has("depth", t["t6"]), "depth t6"),
        lambda: out.update(quote_after_unsubscribe=has("quotes", t["t6"])()),
        "restart",
        # The server restarted (holding nothing of the stream); the SDK reconnected and resubscribed depth, then t7 was pushed.
        lambda: wait(has("depth", t["t7"]), "depth t7 after the restart"),
    ]


def run_sync(base, key, sc):
    seen = Seen()
    tf = TickFlow(api_key=key, base_url=base)
    stream = tf.stream
    stream.on_quotes(lambda data: seen.add("quotes", data))
    stream.on_depth(lambda data: seen.add("depth", data))
    stream.on_error(lambda message: seen.errors.append(message))
    stream.subscribe("quotes", [sc["symbol"]])
    stream.connect(block=False)
    wait_for(lambda: stream._inner is not None and stream._inner._ws is not None, "the stream to open")
    out, steps = stream_steps(
        sc,
        seen,
        lambda: stream.subscribe("depth", [sc["symbol"]]),
        lambda: stream.unsubscribe("quotes", [sc["symbol"]]),
        wait_for,
    )
    for s in steps:
        step(s) if isinstance(s, str) else s()
    stream.close()

    rt_seen = Seen()
    realtime = tf.realtime
    realtime.on_quotes(lambda data: rt_seen.add("quotes", data))
    realtime.subscribe([sc["realtime_symbol"]])
    realtime.connect(block=False)
    wait_for(lambda: rt_seen.times("quotes", sc["realtime_symbol"]), "tf.realtime's latest quote")
    realtime.close()

    out.update(
        quotes=seen.items["quotes"],
        depth=seen.items["depth"],
        errors=seen.errors,
        realtime=rt_seen.items["quotes"],
        depth_get=tf.depth.get(sc["symbol"]),
        quotes_by_symbols=tf.quotes.get_by_symbols(sc["quote_symbols"]),
        refused=refused_sync(base),
    )
    return out


def refused_sync(base):
    """What the SDK reports when the handshake is refused (a bad key): its warnings until the first retry."""
    handler = Warnings()
    log = logging.getLogger("tickflow.stream")
    log.addHandler(handler)
    log.setLevel(logging.WARNING)  # the script's own log level (ERROR) would drop the SDK's warnings unmade
    stream = TickFlow(api_key="mdq_not_a_key", base_url=base).stream
    stream.subscribe("quotes", ["600000.SH"])
    stream.connect(block=False)
    wait_for(lambda: handler.messages, "the SDK's report of the refusal")
    stream.close()
    return handler.messages[0]


async def run_async(base, key, sc):
    seen = Seen()
    loop = asyncio.get_running_loop()

    async def wait_async(condition, what):
        await wait_for_async(condition, what)

    async with AsyncTickFlow(api_key=key, base_url=base) as tf:
        stream = tf.stream
        stream.on_quotes(lambda data: seen.add("quotes", data))
        stream.on_depth(lambda data: seen.add("depth", data))
        await stream.subscribe("quotes", [sc["symbol"]])
        task = asyncio.create_task(stream.connect())
        await wait_for_async(lambda: stream._ws is not None, "the stream to open")
        out, steps = stream_steps(
            sc,
            seen,
            lambda: stream.subscribe("depth", [sc["symbol"]]),
            lambda: stream.unsubscribe("quotes", [sc["symbol"]]),
            wait_async,
        )
        for s in steps:
            if isinstance(s, str):
                await loop.run_in_executor(None, step, s)
            else:
                result = s()
                if asyncio.iscoroutine(result):
                    await result
        await stream.close()
        await task

        rt_seen = Seen()
        realtime = tf.realtime
        realtime.on_quotes(lambda data: rt_seen.add("quotes", data))
        await realtime.subscribe([sc["realtime_symbol"]])
        rt_task = asyncio.create_task(realtime.connect())
        await wait_for_async(lambda: rt_seen.times("quotes", sc["realtime_symbol"]), "tf.realtime's latest quote")
        await realtime.close()
        await rt_task

        out.update(
            quotes=seen.items["quotes"],
            depth=seen.items["depth"],
            errors=seen.errors,
            realtime=rt_seen.items["quotes"],
            depth_get=await tf.depth.get(sc["symbol"]),
            quotes_by_symbols=await tf.quotes.get_by_symbols(sc["quote_symbols"]),
        )
    return out


def main():
    base, key, mode, scenario = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    logging.basicConfig(level=logging.ERROR, stream=sys.stderr)
    report = run_sync(base, key, scenario) if mode == "sync" else asyncio.run(run_async(base, key, scenario))
    print(json.dumps({"report": report}, allow_nan=False), flush=True)


if __name__ == "__main__":
    main()
