/** @module Streaming CSV rows with line numbers (uDSV parser), header mapped to column positions. */
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { inferSchema, initParser } from 'udsv'
import { ImportError } from './import-error.js'

const BLANK = '\u0000'

export interface CsvRow {
  /** 1-based line number in the file (the header is line 1). */
  readonly line: number
  readonly fields: readonly string[]
}

export interface CsvFile {
  readonly path: string
  readonly header: readonly string[]
  readonly sizeBytes: number
  /** Rows in batches (one per read chunk), blank lines dropped. */
  readonly batches: AsyncIterable<CsvRow[]>
  /** Bytes read so far (for progress). */
  bytesRead(): number
}

/**
 * Opens a CSV file with a header row. Line numbers assume no quoted field spans lines, which
 * holds for every market-data format mdq imports.
 */
export async function openCsv(path: string): Promise<CsvFile> {
  const sizeBytes = (await stat(path).catch(() => {
    throw new ImportError(path, 0, 0, 'file not found or not readable')
  })).size
  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 })
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<string>
  let bytes = 0
  // The header (and uDSV's schema) come from the text up to the first line break.
  let head = ''
  while (!/\r?\n/.test(head)) {
    const next = await chunks.next()
    if (next.done) break
    bytes += Buffer.byteLength(next.value)
    head += next.value
  }
  head = head.replace(/^\uFEFF/, '')
  if (head.trim() === '') throw new ImportError(path, 1, 1, 'empty file: a header row is required')
  const firstLine = head.slice(0, head.search(/\r?\n|$/))
  const schema = inferSchema(head.length > 65536 ? head.slice(0, 65536) : head, { col: ',', encl: '"', trim: false })
  const header = firstLine.split(',').map((h) => h.trim().replace(/^"|"$/g, ''))
  schema.cols.forEach((c, i) => (c.name = header[i] ?? c.name))
  const parser = initParser(schema)
  let line = 1
  let pending: CsvRow[] = []
  const onRow = (fields: string[]) => {
    line++
    if (fields.length === 1 && (fields[0] === BLANK || fields[0] === '')) return
    // uDSV reads a row with fewer fields than the header on into the next lines: refuse it, never merge rows.
    if (fields.some((f) => f.includes('\n'))) throw new ImportError(path, line, 1, `this row has fewer fields than the header (${header.length}: ${header.join(',')}); give every column, empty ones as ''`)
    pending.push({ line, fields })
  }
  let endedWithNewline = false
  // uDSV skips blank lines without a row; a marker keeps them in the line count.
  const markBlankLines = (text: string) => {
    let marked = text.replace(/\n(?=\r?\n)/g, `\n${BLANK}`)
    if (endedWithNewline && /^\r?\n/.test(marked)) marked = BLANK + marked
    endedWithNewline = marked.endsWith('\n')
    return marked
  }
  async function* batches(): AsyncGenerator<CsvRow[]> {
    let text: string | undefined = head
    while (text !== undefined) {
      parser.chunk<string[]>(markBlankLines(text), parser.stringArrs, onRow)
      if (pending.length) yield pending
      pending = []
      const next = await chunks.next()
      if (next.done) text = undefined
      else {
        bytes += Buffer.byteLength(next.value)
        text = next.value
      }
    }
    parser.end() // flushes a last line without a line break through onRow
    if (pending.length) yield pending
  }
  return { path, header, sizeBytes, batches: batches(), bytesRead: () => bytes }
}

/** Positions of named columns; a missing required one is an error at line 1. */
export function columnsOf<R extends string, O extends string>(file: CsvFile, required: readonly R[], optional: readonly O[]): Record<R, number> & Record<O, number | undefined> {
  const at = (name: string) => {
    const i = file.header.indexOf(name)
    return i < 0 ? undefined : i
  }
  const out: Record<string, number | undefined> = {}
  for (const name of required) {
    const i = at(name)
    if (i === undefined) throw new ImportError(file.path, 1, 1, `missing column '${name}' (header: ${file.header.join(',')})`)
    out[name] = i
  }
  for (const name of optional) out[name] = at(name)
  return out as Record<R, number> & Record<O, number | undefined>
}
