/** @module One import, all or nothing: open the CSV, run its importer inside one write transaction, summarize. */
import { performance } from 'node:perf_hooks'
import type { MarketStore } from '../store/market-store.js'
import { importBars, type BarImportOptions } from './bars-import.js'
import { withCheckpoints, type ImportCheckpoint, type ImportCounts, type ImportProgress } from './import-target.js'
export type { ImportCheckpoint, ImportProgress } from './import-target.js'
import { openCsv, type CsvFile } from './csv-reader.js'
import { importActions, importExFactors, importInstruments } from './reference-import.js'
import { importUniverses } from './universe-import.js'
import { importFinancials } from './financials-import.js'
import type { Statement } from '../domain/financials.js'

export const IMPORT_KINDS = ['instruments', 'bars', 'ex-factors', 'actions', 'universes', 'financials'] as const
export type ImportKind = (typeof IMPORT_KINDS)[number]

/** The options of every kind: the bars' (whose `replace` financials take too), and which statement a financials file holds. */
export interface ImportOptions extends BarImportOptions {
  readonly statement?: Statement
}

export interface ImportSummary extends ImportCounts {
  readonly kind: ImportKind
  readonly statement?: Statement
  readonly file: string
  readonly seconds: number
}

/** Progress of the bytes read, for a terminal progress bar. */

export async function importFile(
  store: MarketStore,
  kind: ImportKind,
  path: string,
  options: ImportOptions,
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
        ? await importBars(tracked, { store, writer }, options, progress)
        : kind === 'instruments'
          ? await importInstruments(tracked, writer)
          : kind === 'ex-factors'
            ? await importExFactors(tracked, { store, writer })
            : kind === 'universes'
              ? await importUniverses(tracked, writer)
              : kind === 'financials'
                ? await importFinancials(tracked, { store, writer }, { ...options, statement: statementOf(options) })
                : await importActions(tracked, { store, writer })
    await writer.commit()
    return { kind, statement: options.statement, file: path, ...counts, seconds: (performance.now() - t0) / 1000 }
  } catch (err) {
    await writer.rollback()
    throw err
  } finally {
    progress?.stop()
    await file.close()
  }
}

function statementOf(options: ImportOptions): Statement {
  if (!options.statement) throw new Error('import financials: no statement given')
  return options.statement
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
  const what = s.statement ? `${s.kind} ${s.statement}` : s.kind
  const extra = [
    s.skipped ? `${s.skipped.toLocaleString('en-US')} skipped outside sessions` : '',
    s.events ? `${s.events} ex-factor events` : '',
    s.replaced !== undefined ? `${s.replaced.toLocaleString('en-US')} stored bars replaced` : '',
  ]
    .filter(Boolean)
    .join(', ')
  return `imported ${what}: ${s.rows.toLocaleString('en-US')} rows${extra ? ` (${extra})` : ''}, ${s.symbols} symbols, from ${s.file} in ${s.seconds.toFixed(2)} s (${perSecond.toLocaleString('en-US')} rows/s)`
}
