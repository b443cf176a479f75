import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { tempDir } from '../../test/helpers/store-files.js'
import { openCsv, type CsvFile } from './csv-reader.js'
import { FieldReader } from './fields.js'

const { dir, cleanup } = tempDir()
after(cleanup)
let n = 0

/** Every row of a file as [line, ...field texts]. */
async function rowsOf(content: string | Buffer): Promise<{ header: readonly string[]; rows: (number | string)[][] }> {
  const path = join(dir, `f${n++}.csv`)
  writeFileSync(path, content)
  const file: CsvFile = await openCsv(path)
  const r = new FieldReader(file)
  const rows: (number | string)[][] = []
  for await (const batch of file.batches) {
    for (let i = 0; i < batch.rows; i++) {
      r.at(batch, i)
      rows.push([r.line, ...file.header.map((_, k) => r.text(k))])
    }
  }
  return { header: file.header, rows }
}

async function failureOf(content: string): Promise<string> {
  return rowsOf(content).then(
    () => assert.fail('the file should be refused'),
    (err: Error) => err.message.replace(/^.*?\.csv:/, ''),
  )
}

describe('CSV reader', () => {
  it('reads quoted fields (commas and doubled quotes inside), CRLF, a BOM, and a last line without a break', async () => {
    const { header, rows } = await rowsOf(
      '\uFEFFsymbol,"name",x\r\nAAPL.US,"Apple, Inc.",1\r\nB.US,"say ""hi""",\r\nC.US, spaced ,3',
    )
    assert.deepEqual(header, ['symbol', 'name', 'x'])
    assert.deepEqual(rows, [
      [2, 'AAPL.US', 'Apple, Inc.', '1'],
      [3, 'B.US', 'say "hi"', ''],
      [4, 'C.US', 'spaced', '3'],
    ])
  })

  it('counts blank lines (LF and CRLF) in the line numbers without making rows of them', async () => {
    const { rows } = await rowsOf('a,b\n\n1,2\r\n\r\n\n3,4\n\n')
    assert.deepEqual(rows, [
      [3, '1', '2'],
      [6, '3', '4'],
    ])
  })

  it('reads lines across its read chunks, and a line longer than one chunk, with the right line numbers', async () => {
    const long = 'x'.repeat(9 << 20)
    const lines = Array.from({ length: 200_000 }, (_, i) => `${i},${'y'.repeat(i % 50)}`)
    const { rows } = await rowsOf(`i,s\n${lines.join('\n')}\nlong,${long}\nend,1\n`)
    assert.equal(rows.length, 200_002)
    for (let i = 0; i < 200_000; i += 997) assert.deepEqual(rows[i], [i + 2, String(i), 'y'.repeat(i % 50)])
    assert.deepEqual(rows[200_000].slice(0, 2), [200_002, 'long'])
    assert.equal(rows[200_000][2], long)
    assert.deepEqual(rows[200_001], [200_003, 'end', '1'])
  })

  it('refuses a row with fewer or more fields than the header, and a quote left open, naming line and column', async () => {
    assert.equal(
      await failureOf('a,b,c\n1,2,3\n1,2\n'),
      "3:1: this row has fewer fields than the header (3); give every column, empty ones as ''",
    )
    assert.equal(await failureOf('a,b\n1,2\n3,4,5\n'), "3:3: this row has 3 fields, more than the header's 2")
    assert.equal(
      await failureOf('a,b\n1,2\n3,"4\n5"\n'),
      '3:2: a quoted field does not close on its line (a row is one line)',
    )
  })

  it('refuses a carriage return that does not end its line, also past the first read chunk, and reads CRLF across chunks', async () => {
    const lines = Array.from({ length: 300_000 }, (_, i) => `${i},${'y'.repeat(i % 40)}`)
    const { rows } = await rowsOf(`i,s\r\n${lines.join('\r\n')}\r\n\r\n`)
    assert.equal(rows.length, 300_000)
    for (let i = 0; i < 300_000; i += 997) assert.deepEqual(rows[i], [i + 2, String(i), 'y'.repeat(i % 40)])
    lines[250_000] = '250000,y\ry'
    assert.equal(
      await failureOf(`i,s\r\n${lines.join('\r\n')}\r\n`),
      '250002:2: a carriage return (CR) that is not followed by a line feed: the file has CR-only (old Mac) line ends; convert them to LF or CRLF',
    )
    assert.match(await failureOf('a,b\r1,2\r'), /^1:2: a carriage return \(CR\)/)
    assert.deepEqual((await rowsOf('a,b\n1,2\r')).rows, [[2, '1', '2']])
  })

  it('refuses an empty file and a blank first line', async () => {
    assert.equal(await failureOf(''), '1:1: empty file: a header row is required')
    assert.equal(await failureOf(' \n'), '1:1: empty file: a header row is required')
    assert.equal(await failureOf('\na,b\n1,2\n'), '1:1: line 1 is blank: the header row comes first')
  })
})
