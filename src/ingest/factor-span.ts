/** @module The bound on how far a symbol's ex-factors move its prices, checked against the events it will have after an import. */
import type { ExFactorEvent } from '../domain/ex-factors.js'
import { factorDigits, MAX_FACTOR_DIGITS } from '../domain/value-bounds.js'
import type { MarketStore } from '../store/market-store.js'

/**
 * Calls `fail` (which throws) when `symbol`'s committed events with `events` put over them (by ex-date)
 * would move its prices by more than 10^MAX_FACTOR_DIGITS; `worst` is the most extreme of `events`.
 */
export async function checkFactorSpan(
  store: MarketStore,
  symbol: string,
  events: readonly ExFactorEvent[],
  fail: (message: string, worst: ExFactorEvent) => never,
): Promise<void> {
  const merged = new Map<number, ExFactorEvent>()
  for (const e of (await store.readExFactors([symbol])).get(symbol) ?? []) merged.set(e.timestamp, e)
  for (const e of events) merged.set(e.timestamp, e)
  const digits = factorDigits(merged.values())
  if (!(digits > MAX_FACTOR_DIGITS)) return
  const reach = (e: ExFactorEvent) => Math.abs(Math.log10(e.exFactor))
  const worst = events.reduce((a, b) => (reach(b) > reach(a) ? b : a))
  fail(
    `the ex-factors of ${symbol} would move its prices by 10^${digits.toFixed(1)} (the product of max(f, 1/f) over its events), more than the 10^${MAX_FACTOR_DIGITS} any adjustment can carry: the largest here is ${worst.exFactor}`,
    worst,
  )
}
