/** @module One import, all or nothing: open the CSV, run its importer inside one write transaction, summarize. */
import { performance } from 'node:perf_hooks'
import type { MarketStore } from '../store/market-store.js'
import { importBars, type BarImportOptions, type ImportCounts } from './bars-import.js'
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
export interface ImportProgress {
  start(totalBytes: number): void
  update(bytesRead: number): void
  stop(): void
}

export async function importFile(store: MarketStore, kind: ImportKind, path: string, bars: BarImportOptions, progress?: ImportProgress): Promise<ImportSummary> {
  const t0 = performance.now()
  const file = await openCsv(path)
  const tracked: CsvFile = progress ? withProgress(file, progress) : file
  const writer = await store.beginWrite()
  try {
    const counts =
      kind === 'bars' ? await importBars(tracked, { store, writer }, bars)
      : kind === 'instruments' ? await importInstruments(tracked, writer)
      : kind === 'ex-factors' ? await importExFactors(tracked, { store, writer })
      : kind === 'universes' ? await importUniverses(tracked, writer)
      : await importActions(tracked, { store, writer })
    await writer.commit()
    return { kind, file: path, ...counts, seconds: (performance.now() - t0) / 1000 }
  } catch (err) {
    await writer.rollback()
    throw err
  } finally {
    progress?.stop()
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
  const extra = [s.skipped ? `${s.skipped.toLocaleString('en-US')} skipped outside sessions` : '', s.events ? `${s.events} ex-factor events` : ''].filter(Boolean).join(', ')
  return `imported ${s.kind}: ${s.rows.toLocaleString('en-US')} rows${extra ? ` (${extra})` : ''}, ${s.symbols} symbols, from ${s.file} in ${s.seconds.toFixed(2)} s (${perSecond.toLocaleString('en-US')} rows/s)`
}
