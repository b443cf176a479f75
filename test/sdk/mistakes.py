"""Drives the official TickFlow SDK into the mistakes its users make; prints one JSON report for test/sdk/sdk-mistakes.test.ts.

usage: mistakes.py BASE_URL API_KEY SCENARIO_JSON
SCENARIO_JSON: {"symbols": [...], "first": {"symbol", "time"}, "quoted": [...]}
"""
import json
import re
import sys
from datetime import datetime

from tickflow import TickFlow
from tickflow._exceptions import BadRequestError


def refused(call):
    """The status and message of the BadRequestError a call raises (None if it raises none)."""
    try:
        call()
    except BadRequestError as e:
        return {"status": e.status_code, "message": e.message}
    return None


def main():
    base, key, sc = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    tf = TickFlow(api_key=key, base_url=base)
    syms = sc["symbols"]
    out = {}
    # What the SDK's users write: seconds (a naive datetime, this machine's zone) and a YYYYMMDD integer.
    seconds = int(datetime(2020, 1, 2).timestamp())
    out["seconds"] = seconds
    out["seconds_get"] = refused(lambda: tf.klines.get(syms[0], start_time=seconds))
    out["seconds_batch"] = refused(lambda: tf.klines.batch(syms, end_time=seconds))
    out["seconds_ex_factors"] = refused(lambda: tf.klines.ex_factors(syms, start_time=seconds))
    out["yyyymmdd_get"] = refused(lambda: tf.klines.get(syms[0], start_time=20200102))
    meant = int(re.search(r"that is (\d+)\.", out["seconds_get"]["message"]).group(1))
    out["meant"] = meant
    out["meant_get"] = tf.klines.get(syms[0], start_time=meant, end_time=meant + 7 * 86400000, adjust="none")
    # A symbol the store does not hold, and Yahoo's spelling of a Shanghai one.
    with_unknown = [*syms, "999999.SH"]
    out["batch_unknown"] = {s: len(d["timestamp"]) for s, d in tf.klines.batch(with_unknown, count=5).items()}
    frames = tf.klines.batch(with_unknown, count=5, batch_size=1, as_dataframe=True)
    out["batch_unknown_df"] = {s: len(df) for s, df in frames.items()}
    intraday = tf.klines.intraday_batch(["SPY.US", "999999.SH"], count=5)
    out["intraday_unknown"] = {s: len(d["timestamp"]) for s, d in intraday.items()}
    out["yahoo_batch"] = refused(lambda: tf.klines.batch(["600000.SS", syms[0]]))
    out["quotes"] = tf.quotes.get(symbols=sc["quoted"])
    first = sc["first"]
    out["first_bar"] = tf.klines.get(first["symbol"], adjust="none", start_time=first["time"], end_time=first["time"])
    print(json.dumps(out, allow_nan=False))


if __name__ == "__main__":
    main()
