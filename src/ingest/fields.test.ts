import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { MARKETS } from '../domain/market.js'
import { batchOfFields, type CsvFile } from './csv-reader.js'
import { FieldReader, parseDecimal } from './fields.js'
import { ImportError } from './import-error.js'

describe('parseDecimal', () => {
  it('gives exactly what Number() gives for every plain decimal', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: 0, max: 10 }), (x, d) => {
        const text = Math.abs(x) < 1e15 ? x.toFixed(d) : String(x)
        assert.ok(Object.is(parseDecimal(text), Number(text)) || (Number(text) === 0 && parseDecimal(text) === 0), text)
      }),
      { numRuns: 5000 },
    )
    for (const t of ['10.01', '0.1', '-3.75', '+2', '1e-3', '12345678901234567890', '.5', '5.'])
      assert.equal(parseDecimal(t), Number(t), t)
  })
  it('rejects what is not a plain decimal', () => {
    for (const t of ['', '-', '.', '0x10', '0b1', 'Infinity', '1,5', '1.2.3', '1e', 'NaN', '--1'])
      assert.ok(Number.isNaN(parseDecimal(t)), t)
  })
})

describe('FieldReader reading straight from the bytes', () => {
  const file: CsvFile = {
    path: 'x.csv',
    header: ['v'],
    sizeBytes: 0,
    batches: (async function* () {})(),
    bytesRead: () => 0,
    close: async () => undefined,
  }
  const read = <T>(text: string, fn: (r: FieldReader) => T): T | string => {
    const r = new FieldReader(file)
    r.at(batchOfFields([text]), 0)
    try {
      return fn(r)
    } catch (err) {
      return err instanceof ImportError ? `error: ${err.reason}` : String(err)
    }
  }

  it('reads a number as parseDecimal reads its text, an error where it gives NaN', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: 0, max: 10 }), (x, d) => {
        const text = Math.abs(x) < 1e15 ? x.toFixed(d) : String(x)
        assert.ok(
          Object.is(
            read(text, (r) => r.number(0, 'v')),
            parseDecimal(text),
          ),
          text,
        )
      }),
      { numRuns: 5000 },
    )
    for (const t of ['10.01', '-3.75', '+2', '1e-3', '12345678901234567890', '.5', '5.', ' 7 ', '"8.5"', '-0'])
      assert.ok(
        Object.is(
          read(t, (r) => r.number(0, 'v')),
          parseDecimal(t.trim().replace(/^"|"$/g, '')),
        ),
        t,
      )
    for (const t of ['-', '.', '0x10', '1.2.3', 'NaN', '1 2'])
      assert.equal(
        read(t, (r) => r.number(0, 'v')),
        `error: v '${t}' is not a number`,
        t,
      )
    assert.equal(
      read('', (r) => r.number(0, 'v', 4)),
      4,
    )
    assert.equal(
      read('', (r) => r.number(0, 'v')),
      'error: v is required',
    )
  })

  it('reads every time as the text path does (a leading space sends a field down the text path)', () => {
    const market = MARKETS.SH
    const pad = (n: number, w = 2) => String(n).padStart(w, '0')
    fc.assert(
      fc.property(
        fc.integer({ min: 1960, max: 2110 }),
        fc.integer({ min: 0, max: 14 }),
        fc.integer({ min: 0, max: 32 }),
        fc.integer({ min: 0, max: 25 }),
        fc.integer({ min: 0, max: 61 }),
        fc.option(fc.integer({ min: 0, max: 61 })),
        fc.constantFrom(' ', 'T'),
        (y, mo, d, hh, mm, ss, sep) => {
          const text = `${pad(y, 4)}-${pad(mo)}-${pad(d)}${sep}${pad(hh)}:${pad(mm)}${ss === null ? '' : `:${pad(ss)}`}`
          assert.equal(
            read(text, (r) => r.time(0, market)),
            read(` ${text}`, (r) => r.time(0, market)),
            text,
          )
        },
      ),
      { numRuns: 3000 },
    )
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 53 }), (ms) => {
        const text = String(ms)
        const fast = read(text, (r) => r.time(0, market))
        const slow = read(` ${text}`, (r) => r.time(0, market))
        assert.equal(
          typeof fast === 'string' ? fast.replace(` '${text}'`, '') : fast,
          typeof slow === 'string' ? slow.replace(` ' ${text}'`, '').replace(` '${text}'`, '') : slow,
          text,
        )
      }),
      { numRuns: 3000 },
    )
  })

  it('knows a repeated symbol by its bytes, and a different one', () => {
    const r = new FieldReader({ ...file, header: ['symbol'] })
    const batch = batchOfFields(['600000.SH'])
    r.at(batch, 0)
    const first = r.symbol(0)
    r.at(batchOfFields(['600000.SH']), 0)
    assert.equal(r.symbol(0), first)
    r.at(batchOfFields(['600001.SH']), 0)
    assert.equal(r.symbol(0).symbol, '600001.SH')
    r.at(batchOfFields(['600000.XX']), 0)
    assert.throws(() => r.symbol(0), /unknown exchange 'XX'/)
  })

  it('knows symbols met before by their bytes when every row changes symbol, also two whose bytes hash alike', () => {
    const r = new FieldReader({ ...file, header: ['symbol'] })
    // 'XAT.US' and 'XB5.US' hash alike (A*31+T = B*31+5); quoted and spaced forms are other bytes, the same symbol.
    const rows = [
      'XAT.US',
      'XB5.US',
      '600000.SH',
      'XAT.US',
      '"600000.SH"',
      'XB5.US',
      ' 600000.SH',
      '600000.SH',
      'XB5.US',
      '00700.HK',
      'XAT.US',
    ]
    for (const text of [...rows, ...rows.reverse()]) {
      r.at(batchOfFields([text]), 0)
      assert.equal(r.symbol(0).symbol, text.replaceAll('"', '').trim(), text)
    }
    r.at(batchOfFields(['XAT.XX']), 0)
    assert.throws(() => r.symbol(0), /unknown exchange 'XX'/)
    r.at(batchOfFields(['XAT.US']), 0)
    assert.equal(r.symbol(0).symbol, 'XAT.US')
  })
})
