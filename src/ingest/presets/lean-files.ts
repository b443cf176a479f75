/**
 * @module The files of LEAN's Data folder as they sit there: a zip (one CSV per entry, as LEAN
 * ships daily, hour and minute bars) or the CSV itself, its lines numbered, and what a file name says
 * (a minute file names its day and ticker; a daily or factor file is named after its ticker).
 */
import { readFile, stat } from 'node:fs/promises'
import { basename } from 'node:path'
import { unzipSync } from 'fflate'
import { VendorFileError } from './converted-file.js'

/** One CSV of a LEAN file: its name (the entry's, inside a zip) and its non-blank lines. */
export interface LeanCsv {
  readonly name: string
  readonly lines: readonly { readonly line: number; readonly text: string }[]
}

export interface LeanSource {
  readonly path: string
  readonly sizeBytes: number
  readonly csvs: readonly LeanCsv[]
}

function linesOf(text: string): LeanCsv['lines'] {
  const out: { line: number; text: string }[] = []
  text.split('\n').forEach((raw, i) => {
    const t = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    if (t.trim() !== '') out.push({ line: i + 1, text: t })
  })
  return out
}

/** Reads a LEAN CSV, or every CSV entry of a LEAN zip. */
export async function readLeanSource(path: string): Promise<LeanSource> {
  const bytes = await readFile(path).catch(() => {
    throw new VendorFileError(path, 0, 0, 'file not found or not readable')
  })
  const sizeBytes = (await stat(path)).size
  const isZip = bytes.length >= 4 && bytes.readUInt32LE(0) === 0x04034b50
  if (!isZip) return { path, sizeBytes, csvs: [{ name: basename(path), lines: linesOf(bytes.toString('utf8')) }] }
  let entries: Record<string, Uint8Array>
  try {
    entries = unzipSync(bytes)
  } catch (err) {
    throw new VendorFileError(path, 0, 0, `not a readable zip file (${(err as Error).message})`)
  }
  const csvs = Object.entries(entries)
    .filter(([name]) => name.toLowerCase().endsWith('.csv'))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, data]) => ({ name: basename(name), lines: linesOf(Buffer.from(data).toString('utf8')) }))
  if (csvs.length === 0) throw new VendorFileError(path, 0, 0, 'the zip file holds no CSV file')
  return { path, sizeBytes, csvs }
}

/** What a LEAN file name says: `20140605_aapl_minute_trade.csv` a day of minutes, `aapl.csv` a ticker's series. */
export type LeanName =
  | { readonly kind: 'minute'; readonly ymd: string; readonly ticker: string; readonly tickType: string }
  | { readonly kind: 'series'; readonly ticker: string }
  | { readonly kind: 'other'; readonly resolution: string }

const MINUTE_NAME = /^(\d{8})_(.+)_(minute|second|tick)_(trade|quote|openinterest)\.csv$/i
const SERIES_NAME = /^([^_]+)\.csv$/i

export function leanName(name: string): LeanName | undefined {
  const m = MINUTE_NAME.exec(name)
  if (m)
    return m[3].toLowerCase() === 'minute'
      ? { kind: 'minute', ymd: m[1], ticker: m[2], tickType: m[4].toLowerCase() }
      : { kind: 'other', resolution: m[3].toLowerCase() }
  const s = SERIES_NAME.exec(name)
  return s ? { kind: 'series', ticker: s[1] } : undefined
}
