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

/** `writer`, calling `reached` at each named point of ImportCheckpoint. */
export function withCheckpoints(writer: StoreWriter, reached: ImportCheckpoint): StoreWriter {
  reached('begun')
  let bars = 0
  let events = 0
  return {
    deleteBars: (range) => writer.deleteBars(range),
    deleteExFactors: (range) => writer.deleteExFactors(range),
    deleteFinancials: (range) => writer.deleteFinancials(range),
    putFinancials: (batch) => writer.putFinancials(batch),
    deleteInstruments: (symbols) => writer.deleteInstruments(symbols),
    putUniverses: (list) => writer.putUniverses(list),
    putLive: (writes) => writer.putLive(writes),
    putLiveQuotes: (list) => writer.putLiveQuotes(list),
    putDepth: (list) => writer.putDepth(list),
    rollback: () => writer.rollback(),
    putBars: async (symbol, period, b) => {
      await writer.putBars(symbol, period, b)
      reached(`bars:${++bars}`)
    },
    putInstruments: async (list) => {
      await writer.putInstruments(list)
      reached('instruments')
    },
    putExFactors: async (symbol, list) => {
      await writer.putExFactors(symbol, list)
      reached(`ex-factors:${++events}`)
    },
    commit: async () => {
      reached('committing')
      await writer.commit()
    },
  }
}
