"""Drives the official TickFlow SDK against a running mdq; prints one JSON report for test/sdk/sdk.test.ts.

usage: drive.py BASE_URL API_KEY sync|async SCENARIO_JSON
SCENARIO_JSON: {"symbols": [...], "whole": {"symbol", "time"}, "intraday": symbol, "universe": id}
"""
import asyncio
import json
import sys

from tickflow import AsyncTickFlow, TickFlow
from tickflow._exceptions import NotFoundError

PRICES = ["open", "high", "low", "close", "amount"]
STATEMENTS = ["income", "balance_sheet", "cash_flow", "metrics", "shares"]


def dtypes(df):
    return {c: str(df[c].dtype) for c in ["timestamp", *PRICES, "volume"]}


def frame(df):
    """A financials DataFrame as JSON: its columns, their dtypes and its rows (NaN as None)."""
    return {
        "columns": list(df.columns),
        "dtypes": {c: str(df[c].dtype) for c in df.columns},
        "rows": [{c: (None if v != v else v) for c, v in row.items()} for row in df.to_dict(orient="records")],
    }


def not_found(call):
    """The message of the NotFoundError a call raises (None if it does not raise one)."""
    try:
        call()
    except NotFoundError as e:
        return e.message
    return None


async def not_found_async(call):
    try:
        await call()
    except NotFoundError as e:
        return e.message
    return None


def compare_batch(batch, singles):
    """Per symbol: the batch DataFrame equals the single-symbol DataFrame exactly."""
    return {s: bool(s in batch and batch[s].equals(singles[s])) for s in singles}


def run_sync(base, key, sc):
    tf = TickFlow(api_key=key, base_url=base)
    syms = sc["symbols"]
    out = {}
    out["get"] = {s: tf.klines.get(s, count=300, adjust="forward") for s in syms}
    singles = {s: tf.klines.get(s, count=300, as_dataframe=True) for s in syms}
    batch = tf.klines.batch(syms, count=300, batch_size=2, as_dataframe=True)
    out["batch_equal"] = compare_batch(batch, singles)
    out["batch_dtypes"] = {s: dtypes(df) for s, df in batch.items()}
    w = sc["whole"]
    whole = tf.klines.get(w["symbol"], adjust="none", start_time=w["time"], end_time=w["time"], as_dataframe=True)
    out["whole"] = {"dtypes": dtypes(whole), "row": {c: float(whole[c].iloc[0]) for c in PRICES}}
    out["intraday"] = tf.klines.intraday(sc["intraday"])
    out["intraday_5m"] = tf.klines.intraday(sc["intraday"], period="5m", count=3)
    out["intraday_batch"] = tf.klines.intraday_batch(syms, batch_size=2)
    out["ex_factors"] = tf.klines.ex_factors(syms)
    out["instrument"] = tf.instruments.get(syms[0])
    out["instruments"] = tf.instruments.batch(syms)
    out["exchanges"] = tf.exchanges.list()
    sh = tf.exchanges.get_instruments("SH")
    out["sh_stocks"] = tf.exchanges.get_instruments("SH", instrument_type="stock")
    sh_symbols = [i["symbol"] for i in sh]
    sh_batch = tf.klines.batch(sh_symbols, count=50, batch_size=2, as_dataframe=True)
    out["sh_batch"] = {"symbols": sh_symbols, "equal": compare_batch(sh_batch, {s: tf.klines.get(s, count=50, as_dataframe=True) for s in sh_symbols})}
    out["universes"] = tf.universes.list()
    out["universe"] = tf.universes.get(sc["universe"])
    out["universe_batch"] = tf.universes.batch([sc["universe"], "CN_Equity_A", "NO_SUCH"])
    out["quotes"] = tf.quotes.get(symbols=syms)
    out["quotes_universe"] = tf.quotes.get(universes=[sc["universe"]])
    out["quotes_by_symbols"] = tf.quotes.get_by_symbols(syms)
    out["quotes_by_universes"] = tf.quotes.get_by_universes(["US_Equity", "CN_Equity_A"])
    qdf = tf.quotes.get(symbols=syms, as_dataframe=True)
    out["quotes_df_dtypes"] = {c: str(qdf[c].dtype) for c in ["last_price", "prev_close", "open", "high", "low", "amount", "ext.change_pct"]}
    out["not_served"] = {"depth": not_found(lambda: tf.depth.get(syms[0]))}
    out["financials"] = {name: getattr(tf.financials, name)(syms, batch_size=2) for name in STATEMENTS}
    out["financials_df"] = {name: frame(getattr(tf.financials, name)(syms, as_dataframe=True)) for name in STATEMENTS}
    out["income_range"] = tf.financials.income(["600519.SH"], start_date="2020-01-01", end_date="2020-12-31")
    out["income_latest"] = tf.financials.income(["600519.SH", "600000.SH"], latest=True)
    return out


async def run_async(base, key, sc):
    syms = sc["symbols"]
    out = {}
    async with AsyncTickFlow(api_key=key, base_url=base) as tf:
        singles = {s: await tf.klines.get(s, count=300, as_dataframe=True) for s in syms}
        batch = await tf.klines.batch(syms, count=300, batch_size=2, as_dataframe=True)
        out["batch_equal"] = compare_batch(batch, singles)
        out["batch_dtypes"] = {s: dtypes(df) for s, df in batch.items()}
        out["intraday"] = await tf.klines.intraday(sc["intraday"])
        out["intraday_batch"] = await tf.klines.intraday_batch(syms, batch_size=2)
        out["ex_factors"] = await tf.klines.ex_factors(syms, batch_size=2)
        out["instrument"] = await tf.instruments.get(syms[0])
        out["instruments"] = await tf.instruments.batch(syms)
        out["exchanges"] = await tf.exchanges.list()
        sh_symbols = [i["symbol"] for i in await tf.exchanges.get_instruments("SH")]
        sh_batch = await tf.klines.batch(sh_symbols, count=50, batch_size=2, as_dataframe=True)
        out["sh_batch"] = {"symbols": sh_symbols, "equal": compare_batch(sh_batch, {s: await tf.klines.get(s, count=50, as_dataframe=True) for s in sh_symbols})}
        out["universes"] = await tf.universes.list()
        out["universe"] = await tf.universes.get(sc["universe"])
        out["universe_batch"] = await tf.universes.batch([sc["universe"], "NO_SUCH"])
        out["quotes"] = await tf.quotes.get(symbols=syms)
        out["quotes_by_symbols"] = await tf.quotes.get_by_symbols(syms)
        out["quotes_by_universes"] = await tf.quotes.get_by_universes([sc["universe"]])
        out["not_served"] = {"depth": await not_found_async(lambda: tf.depth.get(syms[0]))}
        out["financials"] = {name: await getattr(tf.financials, name)(syms, batch_size=2) for name in STATEMENTS}
        out["financials_df"] = {name: frame(await getattr(tf.financials, name)(syms, as_dataframe=True)) for name in STATEMENTS}
    return out


def main():
    base, key, mode, scenario = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    report = run_sync(base, key, scenario) if mode == "sync" else asyncio.run(run_async(base, key, scenario))
    print(json.dumps(report, allow_nan=False))


if __name__ == "__main__":
    main()
