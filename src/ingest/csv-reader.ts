/** @module Streaming CSV over the file's bytes: rows as field offsets into Buffers (no per-row strings), header mapped to column positions. */
import { open, stat } from 'node:fs/promises'
import { ImportError } from './import-error.js'
import { batchOfRows } from './row-batch.js'

/**
 * Rows of one read chunk. Field k of row i spans bytes [bounds[2 * (i * columns + k)], bounds[... + 1])
 * of `bytes`, quotes included (FieldReader unquotes); `lines[i]` is its 1-based line (the header is line 1).
 * A batch stays valid only until the next one is asked for.
 */
export interface CsvBatch {
  readonly rows: number
  readonly bytes: Buffer
  readonly bounds: Int32Array
  readonly lines: Uint32Array
}

export interface CsvFile {
  readonly path: string
  readonly header: readonly string[]
  readonly sizeBytes: number
  /** Rows in batches (one per read chunk), blank lines dropped. */
  readonly batches: AsyncIterable<CsvBatch>
  /** Bytes read so far (for progress). */
  bytesRead(): number
  /** Closes the file (reading all batches closes it too). */
  close(): Promise<void>
}

/** Bytes per read: big enough that a batch holds tens of thousands of rows, small against the memory goal. */
const CHUNK_BYTES = 4 << 20
/** A longer line is refused rather than grown into memory without bound (a file with no line breaks). */
const MAX_LINE_BYTES = 64 << 20

const COMMA = 44
const QUOTE = 34
const LF = 10
const CR = 13

/** How many fields the last splitLine found (a module variable: no object per line). */
let fieldCount = 0

/**
 * Splits the line starting at `at` into fields up to its line feed, in one pass over its bytes,
 * writing the bounds of the first `cols` fields at bounds[base..] (a CR before the LF is not part of
 * the last field). Returns the line feed's offset, or `end` when the bytes end first: the line is
 * unfinished unless `final`.
 */
function splitLine(
  path: string,
  line: number,
  bytes: Buffer,
  at: number,
  end: number,
  final: boolean,
  bounds: Int32Array,
  base: number,
  cols: number,
): number {
  let k = 0
  let p = at
  for (;;) {
    const s = p
    let c = p < end ? bytes[p] : LF
    if (c === QUOTE) {
      // A quoted field: commas inside are data, "" is a quote; it must close on its line.
      for (;;) {
        p++
        while (p < end && (c = bytes[p]) !== QUOTE && c !== LF) p++
        if (p >= end && !final) return end
        if (p >= end || c === LF)
          throw new ImportError(path, line, k + 1, 'a quoted field does not close on its line (a row is one line)')
        if (p + 1 < end && bytes[p + 1] === QUOTE) p++
        else break
      }
      p++
      c = p < end ? bytes[p] : LF
    }
    while (c !== COMMA && c !== LF) c = ++p < end ? bytes[p] : LF
    if (k < cols) {
      bounds[base + 2 * k] = s
      bounds[base + 2 * k + 1] = c === LF && p > s && bytes[p - 1] === CR ? p - 1 : p
    }
    k++
    if (c === LF) {
      fieldCount = k
      return p
    }
    p++ // past the comma (a comma ending the line is followed by one more, empty field)
  }
}

/**
 * splitLine for a line known to end at `lf` (the LF's offset, or the bytes' end) with no field
 * opening with a quote: a scan for commas only. Returns the field count, or -1 at a quoted field
 * (splitLine reads that line). Most lines of a market-data file take this path.
 */
function splitPlainLine(bytes: Buffer, at: number, lf: number, bounds: Int32Array, base: number, cols: number): number {
  let k = 0
  let p = at
  for (;;) {
    const s = p
    if (p < lf && bytes[p] === QUOTE) return -1
    while (p < lf && bytes[p] !== COMMA) p++
    if (k < cols) {
      bounds[base + 2 * k] = s
      bounds[base + 2 * k + 1] = p === lf && p > s && bytes[p - 1] === CR ? p - 1 : p
    }
    k++
    if (p === lf) return k
    p++ // past the comma
  }
}

/** The error for a carriage return inside line `line` (which starts at `at`), naming its column. */
function bareCarriageReturn(path: string, line: number, bytes: Buffer, at: number, cr: number): ImportError {
  let column = 1
  for (let p = at; p < cr; p++) if (bytes[p] === COMMA) column++
  return new ImportError(
    path,
    line,
    column,
    'a carriage return (CR) that is not followed by a line feed: the file has CR-only (old Mac) line ends; convert them to LF or CRLF',
  )
}

/** Splits the complete lines of a byte range into rows of exactly `columns` fields, counting lines. */
export class CsvScanner {
  bounds: Int32Array
  lines: Uint32Array
  rows = 0

  constructor(
    readonly path: string,
    readonly columns: number,
    /** Line number of the last line scanned. */
    public line = 0,
  ) {
    this.lines = new Uint32Array(1024)
    this.bounds = new Int32Array(1024 * columns * 2)
  }

  /**
   * Scans bytes[from, end); a last line without a line break is left for the next chunk unless
   * `final`. Returns where the first unscanned byte is (`end` when all was scanned).
   */
  scan(bytes: Buffer, from: number, end: number, final: boolean): number {
    const cols = this.columns
    let rows = 0
    let at = from
    // The next carriage return at or after `at` (`end` when none): one that does not end its line
    // is a line break of another convention, which would join lines and shift every line number.
    let cr = -1
    while (at < end) {
      const c = bytes[at]
      if (c === LF || (c === CR && (at + 1 < end ? bytes[at + 1] === LF : final))) {
        this.line++ // a blank line: counted, not a row
        at += c === LF || at + 1 === end ? 1 : 2
        continue
      }
      if (rows === this.lines.length) this.#grow()
      // The line's end found natively (memchr), then its commas; `bytes` may hold stale bytes past `end`.
      let lf = bytes.indexOf(LF, at)
      if (lf < 0 || lf > end) lf = end
      if (lf === end && !final) break // unfinished: read again with the next chunk
      if (cr < at) {
        cr = bytes.indexOf(CR, at)
        if (cr < 0 || cr > end) cr = end
      }
      if (cr < lf - 1) throw bareCarriageReturn(this.path, this.line + 1, bytes, at, cr)
      let k = splitPlainLine(bytes, at, lf, this.bounds, rows * cols * 2, cols)
      let stop = lf
      if (k < 0) {
        stop = splitLine(this.path, this.line + 1, bytes, at, end, final, this.bounds, rows * cols * 2, cols)
        if (stop >= end && !final) break
        k = fieldCount
      }
      const line = ++this.line
      if (k < cols)
        throw new ImportError(
          this.path,
          line,
          1,
          `this row has fewer fields than the header (${cols}); give every column, empty ones as ''`,
        )
      if (k > cols)
        throw new ImportError(this.path, line, cols + 1, `this row has ${k} fields, more than the header's ${cols}`)
      this.lines[rows++] = line
      at = stop + 1
    }
    this.rows = rows
    return Math.min(at, end)
  }

  #grow(): void {
    const lines = new Uint32Array(this.lines.length * 2)
    lines.set(this.lines)
    const bounds = new Int32Array(this.bounds.length * 2)
    bounds.set(this.bounds)
    this.lines = lines
    this.bounds = bounds
  }
}

/** The text of raw field bytes: surrounding spaces off, a quoted field unquoted. */
export function fieldText(bytes: Buffer, s: number, e: number): string {
  while (s < e && bytes[s] <= 32) s++
  while (e > s && bytes[e - 1] <= 32) e--
  if (e - s >= 2 && bytes[s] === QUOTE && bytes[e - 1] === QUOTE)
    return bytes.toString('utf8', s + 1, e - 1).replaceAll('""', '"')
  return bytes.toString('utf8', s, e)
}

/** One row of already split fields as a batch (for values read like a CSV field, e.g. --from). */
export function batchOfFields(fields: readonly string[]): CsvBatch {
  return batchOfRows([fields], [1])
}

/**
 * Opens a CSV file with a header row (a UTF-8 BOM is skipped). Line numbers hold because a row is
 * one line: a quoted field may hold commas but not line breaks, as in every market-data format mdq imports.
 */
export async function openCsv(path: string): Promise<CsvFile> {
  const info = await stat(path).catch(() => {
    throw new ImportError(path, 0, 0, 'file not found or not readable')
  })
  if (info.isDirectory()) throw new ImportError(path, 0, 0, 'a directory, not a CSV file')
  const sizeBytes = info.size
  const fh = await open(path, 'r').catch(() => {
    throw new ImportError(path, 0, 0, 'file not found or not readable')
  })
  let closed: Promise<void> | undefined
  const close = () => (closed ??= fh.close())
  let bytesRead = 0
  let buf = Buffer.allocUnsafe(CHUNK_BYTES)
  let have = 0
  let eof = false
  /** Reads on after the `keep` bytes at the end of buf, growing buf when one line fills it. */
  const fill = async (keep: number): Promise<void> => {
    if (keep > 0 && keep === have && have === buf.length) {
      if (buf.length >= MAX_LINE_BYTES)
        throw new ImportError(path, 0, 0, `a line is longer than ${MAX_LINE_BYTES >> 20} MiB`)
      const bigger = Buffer.allocUnsafe(buf.length * 2)
      buf.copy(bigger, 0, 0, have)
      buf = bigger
    } else {
      // The unfinished line moves to the front and the buffer is read into again: a batch is only
      // valid until the next is asked for, and one buffer for the whole file makes no garbage.
      buf.copy(buf, 0, have - keep, have)
      have = keep
    }
    while (!eof && have < buf.length) {
      const { bytesRead: n } = await fh.read(buf, have, buf.length - have, null)
      if (n === 0) eof = true
      have += n
      bytesRead += n
    }
  }
  try {
    await fill(0)
    const bom = have >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0
    const firstBreak = () => buf.subarray(0, have).indexOf(LF)
    // A CR-only file is one long line: refused here, before it is read whole as a header.
    const cr = buf.subarray(0, have).indexOf(CR)
    const lf0 = firstBreak()
    if (cr >= 0 && (lf0 < 0 || cr < lf0 - 1) && cr + 1 < have) throw bareCarriageReturn(path, 1, buf, bom, cr)
    while (firstBreak() < 0 && !eof) await fill(have)
    const lf = firstBreak()
    const bodyStart = lf < 0 ? have : lf + 1
    const headEnd = lf < 0 ? have : lf > bom && buf[lf - 1] === CR ? lf - 1 : lf
    if (buf.toString('utf8', bom, headEnd).trim() === '')
      throw new ImportError(
        path,
        1,
        1,
        bodyStart === have && eof
          ? 'empty file: a header row is required'
          : 'line 1 is blank: the header row comes first',
      )
    const headBounds = new Int32Array(2 * (headEnd - bom + 1))
    splitLine(path, 1, buf, bom, headEnd, true, headBounds, 0, headEnd - bom + 1)
    const header = Array.from({ length: fieldCount }, (_, k) =>
      fieldText(buf, headBounds[2 * k], headBounds[2 * k + 1]),
    )
    const scanner = new CsvScanner(path, header.length, 1)
    let from = bodyStart
    async function* batches(): AsyncGenerator<CsvBatch> {
      try {
        for (;;) {
          const done = eof
          const next = scanner.scan(buf, from, have, done)
          if (scanner.rows > 0) yield { rows: scanner.rows, bytes: buf, bounds: scanner.bounds, lines: scanner.lines }
          if (done) return
          await fill(have - next)
          from = 0
        }
      } finally {
        await close()
      }
    }
    return { path, header, sizeBytes, batches: batches(), bytesRead: () => bytesRead, close }
  } catch (err) {
    await close()
    throw err
  }
}
