/** @module Rollup chunks kept in step with 1m chunks: rebuilt per touched local day inside the write's transaction. */
import { barCount } from '../../domain/bars.js'
import { MARKETS, parseSymbol } from '../../domain/market.js'
import { ROLLUP_PERIODS, buildRollups } from '../../domain/rollups.js'
import { deleteBarsWith, MAX_MS, putBarsWith, readBarsWith, type ChunkStatements } from './chunks.js'
import type { Db } from './sqlite-db.js'

/**
 * Rebuilds the rollups of every local day that meets [fromMs, toMs] from the 1m bars now in the
 * transaction (call after each 1m put or delete). Open bounds stay open.
 */
export function rebuildRollupsWith(st: ChunkStatements, symbol: string, fromMs = -MAX_MS, toMs = MAX_MS): void {
  if (fromMs > toMs) return
  const zone = MARKETS[parseSymbol(symbol).exchange].zone
  const lo = fromMs <= -MAX_MS ? -MAX_MS : zone.midnightUtc(zone.localDay(fromMs))
  const hi = toMs >= MAX_MS ? MAX_MS : zone.midnightUtc(zone.localDay(toMs) + 1) - 1
  const minute = readBarsWith(st, { symbol, period: '1m', fromMs: lo, toMs: hi, limit: Number.MAX_SAFE_INTEGER })
  const market = MARKETS[parseSymbol(symbol).exchange]
  for (const period of ROLLUP_PERIODS) {
    deleteBarsWith(st, { symbol, period, fromMs: lo, toMs: hi })
    if (barCount(minute)) putBarsWith(st, symbol, period, buildRollups(minute, period, market))
  }
}

/** Migration 5's second half: rollups for every symbol with 1m bars, then the mark cleared (one transaction). */
export function buildPendingRollups(db: Db, st: ChunkStatements): void {
  const pending = db.prepare("SELECT value FROM meta WHERE key = 'rollups_pending'").pluck().get()
  if (pending === undefined) return
  db.transaction(() => {
    const symbols = db.prepare<[], string>("SELECT DISTINCT symbol FROM chunks WHERE period = '1m'").pluck().all()
    for (const symbol of symbols) rebuildRollupsWith(st, symbol)
    db.prepare("DELETE FROM meta WHERE key = 'rollups_pending'").run()
  }).immediate()
}
