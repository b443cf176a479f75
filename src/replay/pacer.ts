/** @module Snapshots handed out as their time comes, at N times real speed, in batches. */
import { setTimeout as sleep } from 'node:timers/promises'
import type { QuoteSnapshot } from '../domain/minute-bars.js'

export interface PaceOptions {
  /** Times real speed; Infinity: as fast as the consumer takes them. */
  readonly speed: number
  /** Snapshots in one batch at most. */
  readonly batch: number
  /** Real ms between batches at least: the snapshots due within one tick go out together. */
  readonly tickMs?: number
  readonly now?: () => number
}

/**
 * The snapshots (ascending by time) in batches: each is due at start + (its time - the first's) / speed,
 * start being when iteration begins; a batch holds what is due, up to `batch`. A slow consumer makes
 * later batches late, never lost.
 */
export async function* paced(snapshots: readonly QuoteSnapshot[], o: PaceOptions): AsyncGenerator<QuoteSnapshot[]> {
  const now = o.now ?? Date.now
  const tick = o.tickMs ?? 100
  if (snapshots.length === 0) return
  const t0 = snapshots[0].timestamp
  const start = now()
  let at = 0
  while (at < snapshots.length) {
    const due = Number.isFinite(o.speed) ? t0 + (now() - start) * o.speed : Infinity
    let end = at
    while (end < snapshots.length && end - at < o.batch && snapshots[end].timestamp <= due) end++
    if (end > at) {
      yield snapshots.slice(at, end)
      at = end
    } else {
      // At least a tick: at high speeds the snapshots due within one go out together.
      await sleep(Math.max(tick, (snapshots[at].timestamp - due) / o.speed))
    }
  }
}
