"""Reads what a feed pushed into mdq through the official TickFlow SDK; prints one JSON report for test/sdk/relay.test.ts.

usage: live_reads.py BASE_URL API_KEY SYMBOLS (comma-separated)
"""
import json
import sys

from tickflow import TickFlow

base, key, symbols = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
tf = TickFlow(api_key=key, base_url=base)
out = {}
for s in symbols:
    out[s] = {
        "intraday": tf.klines.intraday(s),
        "intraday_5m": tf.klines.intraday(s, period="5m"),
        "get_1m": tf.klines.get(s, period="1m", count=500, adjust="none"),
        "get_1d": tf.klines.get(s, period="1d", count=1, adjust="none"),
    }
out["quotes"] = tf.quotes.get(symbols=symbols)
print(json.dumps(out))
