/** @module One import, all or nothing: open the CSV, run its importer inside one write transaction, summarize. */
import { performance } from 'node:perf_hooks'
import type { MarketStore, StoreWriter } from '../store/market-store.js'
import { importBars, type BarImportOptions } from './bars-import.js'
import type { ImportCheckpoint, ImportCounts, ImportProgress } from './import-target.js'
export type { ImportCheckpoint, ImportProgress } from './import-target.js'
import { openCsv, type CsvFile } from './csv-reader.js'
import { importActions, importExFactors, importInstruments } from './reference-import.js'
import { importUniverses } from './universe-import.js'

export const IMPORT_KINDS = ['instruments', 'bars', 'ex-factors', 'actions', 'universes'] as const
export type ImportKind = (typeof IMPORT_KINDS)[number]

export interface ImportSummary extends ImportCounts {
  readonly kind: ImportKind
  readonly file: string
  readonly seconds: number
}

/** Progress of the bytes read, for a terminal progress bar. */

export async function importFile(
  store: MarketStore,
  kind: ImportKind,
  path: string,
  bars: BarImportOptions,
  progress?: ImportProgress,
  checkpoint?: ImportCheckpoint,
): Promise<ImportSummary> {
  const t0 = performance.now()
  const file = await openCsv(path)
  // Bars report progress themselves (their file may be read on another thread).
  const tracked: CsvFile = progress && kind !== 'bars' ? withProgress(file, progress) : file
  const writer = checkpoint ? withCheckpoints(await store.beginWrite(), checkpoint) : await store.beginWrite()
  try {
    const counts =
      kind === 'bars'
        ? await importBars(tracked, { store, writer }, bars, progress)
        : kind === 'instruments'
          ? await importInstruments(tracked, writer)
          : kind === 'ex-factors'
            ? await importExFactors(tracked, { store, writer })
            : kind === 'universes'
              ? await importUniverses(tracked, writer)
              : await importActions(tracked, { store, writer })
    await writer.commit()
    return { kind, file: path, ...counts, seconds: (performance.now() - t0) / 1000 }
  } catch (err) {
    await writer.rollback()
    throw err
  } finally {
    progress?.stop()
    await file.close()
  }
}

function withCheckpoints(writer: StoreWriter, reached: ImportCheckpoint): StoreWriter {
  reached('begun')
  let bars = 0
  let events = 0
  return {
    deleteBars: (range) => writer.deleteBars(range),
    deleteExFactors: (range) => writer.deleteExFactors(range),
    deleteInstruments: (symbols) => writer.deleteInstruments(symbols),
    putUniverses: (list) => writer.putUniverses(list),
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

function withProgress(file: CsvFile, progress: ImportProgress): CsvFile {
  async function* batches() {
    progress.start(file.sizeBytes)
    for await (const batch of file.batches) {
      progress.update(file.bytesRead())
      yield batch
    }
  }
  return { ...file, batches: batches() }
}

export function formatSummary(s: ImportSummary): string {
  const perSecond = s.seconds > 0 ? Math.round(s.rows / s.seconds) : s.rows
  const extra = [
    s.skipped ? `${s.skipped.toLocaleString('en-US')} skipped outside sessions` : '',
    s.events ? `${s.events} ex-factor events` : '',
  ]
    .filter(Boolean)
    .join(', ')
  return `imported ${s.kind}: ${s.rows.toLocaleString('en-US')} rows${extra ? ` (${extra})` : ''}, ${s.symbols} symbols, from ${s.file} in ${s.seconds.toFixed(2)} s (${perSecond.toLocaleString('en-US')} rows/s)`
}
