/** @module Rows of already split fields as one CSV batch: what a converted vendor file or a single value read like a field is made of. */
import type { CsvBatch } from './csv-reader.js'

/** Rows of `width` fields each as one batch; `lines[i]` is row i's line in the file it came from. */
export function batchOfRows(rows: readonly (readonly string[])[], lines: ArrayLike<number>): CsvBatch {
  const bytes = Buffer.from(rows.map((fields) => fields.join('')).join(''), 'utf8')
  const width = rows.length ? rows[0].length : 0
  const bounds = new Int32Array(rows.length * width * 2)
  let at = 0
  let k = 0
  for (const fields of rows) {
    for (const f of fields) {
      bounds[k++] = at
      at += Buffer.byteLength(f, 'utf8')
      bounds[k++] = at
    }
  }
  return { rows: rows.length, bytes, bounds, lines: Uint32Array.from(lines) }
}
