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
import { ImportError } from './import-error.js'
import { openPreset, type Format } from './presets/presets.js'
import { VendorFileError, type PresetFile } from './presets/converted-file.js'

export const IMPORT_KINDS = ['instruments', 'bars', 'ex-factors', 'actions', 'universes', 'financials'] as const
export type ImportKind = (typeof IMPORT_KINDS)[number]

/** The options of every kind: the bars' (whose `replace` financials take too), and which statement a financials file holds. */
export interface ImportOptions extends BarImportOptions {
  readonly statement?: Statement
  /** The vendor's file shape (presets/presets.ts); mdq's own CSV when absent. */
  readonly format?: Format
  /** Whether the period was given, not defaulted (a LEAN file's name says its period). */
  readonly periodGiven?: boolean
}

export interface ImportSummary extends ImportCounts {
  readonly kind: ImportKind
  readonly statement?: Statement
  readonly file: string
  readonly seconds: number
  /** What a vendor format left out of the file, and why. */
  readonly note?: string
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
  const preset = await presetOf(store, kind, path, options)
  const file = preset ? preset.file : await openCsv(path)
  // A converted file lives in this thread only: its bars are parsed here.
  const opts: ImportOptions = preset ? { ...options, ...preset.options, parseThread: false } : options
  // Bars report progress themselves (their file may be read on another thread).
  const tracked: CsvFile = progress && kind !== 'bars' ? withProgress(file, progress) : file
  const writer = checkpoint ? withCheckpoints(await store.beginWrite(), checkpoint) : await store.beginWrite()
  try {
    const counts =
      kind === 'bars'
        ? await importBars(tracked, { store, writer }, opts, progress)
        : kind === 'instruments'
          ? await importInstruments(tracked, { store, writer })
          : kind === 'ex-factors'
            ? await importExFactors(tracked, { store, writer })
            : kind === 'universes'
              ? await importUniverses(tracked, writer)
              : kind === 'financials'
                ? await importFinancials(tracked, { store, writer }, { ...opts, statement: statementOf(opts) })
                : await importActions(tracked, { store, writer })
    await writer.commit()
    const note = preset?.note()
    return {
      kind,
      statement: options.statement,
      file: path,
      ...counts,
      seconds: (performance.now() - t0) / 1000,
      ...(note && { note }),
    }
  } catch (err) {
    await writer.rollback()
    // An error the importer found in the converted rows points at the vendor file's own column.
    if (preset && err instanceof ImportError && !(err instanceof VendorFileError))
      throw new ImportError(err.file, err.line, preset.sourceColumn(err.column), err.reason)
    throw err
  } finally {
    progress?.stop()
    await file.close()
  }
}

function presetOf(
  store: MarketStore,
  kind: ImportKind,
  path: string,
  options: ImportOptions,
): Promise<PresetFile | undefined> {
  if (!options.format || options.format === 'mdq') return Promise.resolve(undefined)
  return openPreset(options.format, kind, path, {
    store,
    statement: options.statement,
    period: options.period,
    periodGiven: options.periodGiven ?? false,
    symbol: options.symbol,
  })
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
  return `imported ${what}: ${s.rows.toLocaleString('en-US')} rows${extra ? ` (${extra})` : ''}, ${s.symbols} symbols, from ${s.file} in ${s.seconds.toFixed(2)} s (${perSecond.toLocaleString('en-US')} rows/s)${s.note ? `; ${s.note}` : ''}`
}
