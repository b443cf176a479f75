"""Fetches one klines batch as Python clients do (httpx, Accept-Encoding: gzip, deflate), directly and
through the official TickFlow SDK; prints one JSON report for test/sdk/batch-gzip.test.ts.

usage: batch_gzip.py BASE_URL API_KEY SYMBOLS_JSON COUNT
"""
import hashlib
import json
import sys

import httpx
from tickflow import TickFlow

base, key, symbols, count = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])

# httpx decodes the gzip answer itself (the first member only, hence one member), as the SDK's client does.
r = httpx.get(f"{base}/v1/klines/batch", params={"symbols": ",".join(symbols), "count": count}, headers={"X-API-Key": key})
direct = {
    "status": r.status_code,
    "sent": r.request.headers.get("accept-encoding"),
    "encoding": r.headers.get("content-encoding"),
    "length": len(r.content),
    "sha256": hashlib.sha256(r.content).hexdigest(),
}

seen = []
tf = TickFlow(api_key=key, base_url=base)
# What the SDK's own httpx client sent and got back, per request.
tf._client._client.event_hooks = {"response": [lambda resp: seen.append([resp.request.headers.get("accept-encoding"), resp.headers.get("content-encoding")])]}
batch = tf.klines.batch(symbols, count=count, batch_size=100)
print(json.dumps({"direct": direct, "sdk": {"seen": seen, "batch": batch}}))
