/** @module What every importer writes to and reports: the store and its write transaction, counts, progress, checkpoints. */
import type { MarketStore, StoreWriter } from '../store/market-store.js'

export interface ImportTarget {
  readonly store: MarketStore
  readonly writer: StoreWriter
}

export interface ImportCounts {
  rows: number
  skipped: number
  symbols: number
  events: number
  /** Stored bars a `--replace` import deleted (absent without --replace). */
  replaced?: number
}

export interface ImportProgress {
  start(totalBytes: number): void
  update(bytesRead: number): void
  stop(): void
}

/**
 * Called at named points of the import's write transaction, in this order: `begun`, `bars:N`
 * (after the Nth block of bars written), `instruments`, `ex-factors:N`, `committing`. Lets a test
 * kill an import at a known point instead of racing a timer (`MDQ_IMPORT_PAUSE_AT`, cli/import-command.ts).
 */
export type ImportCheckpoint = (point: string) => void
