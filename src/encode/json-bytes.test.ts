import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { ChunkPool, JsonBytes, type NumberStyle } from './json-bytes.js'
import { formatFloat, formatNumber, formatPrice4 } from './wire.js'

const REFERENCE: Record<NumberStyle, (x: number) => string> = {
  integer: formatNumber,
  float: formatFloat,
  price4: formatPrice4,
  // x rounded to 6 decimals: the double nearest the decimal toFixed rounds x itself to
  amount6: (x) => formatFloat(Number(x.toFixed(6))),
}
const written = (x: number, style: NumberStyle) => {
  const out = new JsonBytes()
  out.number(x, style)
  return Buffer.concat(out.take()).toString('latin1')
}

describe('JsonBytes', () => {
  it('writes every number exactly as the string formatters do, in every style', () => {
    for (const style of Object.keys(REFERENCE) as NumberStyle[]) {
      const check = (x: number) => assert.equal(written(x, style), REFERENCE[style](x), `${style} ${x}`)
      fc.assert(fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), check), { numRuns: 10_000 })
      fc.assert(
        fc.property(fc.integer({ min: -1e9, max: 1e9 }), fc.integer({ min: 0, max: 6 }), (n, d) => check(n / 10 ** d)),
        { numRuns: 10_000 },
      )
      fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 53 - 1 }), check), { numRuns: 10_000 })
      for (const x of [
        0,
        -0,
        266,
        0.5,
        -0.5,
        10.0385,
        1e-7,
        1700000040000,
        2 ** 31,
        2 ** 31 - 1,
        2 ** 53,
        999999999,
        1e9,
        1e9 + 1,
        99999999999.9999,
        1e11,
        1e21,
        -12.00004,
        5e-324,
        NaN,
      ])
        check(x)
    }
  })
  it('writes a large aggregated amount as it is, and a non-zero adjusted price never as 0.0', () => {
    const column = (values: number[], style: NumberStyle) => {
      const out = new JsonBytes<string>(true)
      out.column(Float64Array.from(values), style)
      return out.take().join('')
    }
    assert.equal(
      column([4419832049.68, 513749529538.11, 0.1 + 0.2, 1234.5600000000002], 'amount6'),
      '[4419832049.68,513749529538.11,0.3,1234.56]',
    )
    assert.equal(column([5e-324, 0.00002, -0.0000123456, 0, 1.5], 'price4'), '[5e-324,0.00002,-0.00001235,0.0,1.5]')
  })

  it('columns across many chunks join to the same text as JSON.stringify', () => {
    const values = Float64Array.from({ length: 50_000 }, (_, i) => 1_700_000_000_000 + i * 60_000)
    const out = new JsonBytes()
    out.column(values, 'integer')
    const chunks = out.take()
    assert.ok(chunks.length > 5 && chunks.every((c) => c.length <= 1 << 14))
    assert.equal(Buffer.concat(chunks).toString('latin1'), JSON.stringify([...values]))
  })
  it('columns write each number as number() does, in every style, across chunks and fallbacks', () => {
    // Prices as decoded (cents / 100) and adjusted (divided by a factor), amounts up to 10^11 with decimals, negatives, -0, NaN, huge.
    const special = [
      0,
      -0,
      NaN,
      Infinity,
      1e21,
      5e-324,
      -12.00004,
      9999.99995,
      9999.9999,
      10_000,
      1e11,
      2 ** 53,
      1700000040000,
      4419832049.68,
      0.00002,
      -0.0000123456,
    ]
    const values = fc.sample(
      fc.oneof(
        fc.integer({ min: -1e6, max: 1e7 }).map((c) => c / 100),
        fc.integer({ min: 1, max: 1e7 }).map((c) => c / 100 / 1.0731),
        fc.tuple(fc.nat(), fc.nat({ max: 9999 })).map(([a, c]) => a * 47 + c / 10_000),
        fc.double({ noNaN: true }),
        fc.constantFrom(...special),
      ),
      { numRuns: 5_000, seed: 12 },
    )
    for (const style of Object.keys(REFERENCE) as NumberStyle[]) {
      for (const column of [
        Float64Array.from(values),
        new Float64Array(0),
        Float64Array.of(NaN),
        Float64Array.of(3.5),
      ]) {
        const out = new JsonBytes<string>(true)
        out.ascii('x')
        out.column(column, style)
        const expected = `x[${Array.from(column, (x) => written(x, style)).join(',')}]`
        assert.equal(out.take().join(''), expected, style)
      }
    }
  })

  it("a ChunkPool's Buffers are written into again once given back, and each answer stays whole", () => {
    const pool = new ChunkPool(8)
    const text = (n: number) => {
      const out = new JsonBytes(false, pool)
      out.column(
        Float64Array.from({ length: n }, (_, i) => 1_700_000_000_000 + i * 60_000),
        'integer',
      )
      return out.take()
    }
    const first = text(5_000)
    const firstText = Buffer.concat(first).toString('latin1')
    assert.equal(firstText, JSON.stringify(Array.from({ length: 5_000 }, (_, i) => 1_700_000_000_000 + i * 60_000)))
    const memory = new Set(first.map((p) => p.buffer))
    pool.give(first)
    const second = text(5_000)
    assert.ok(
      second.filter((p) => memory.has(p.buffer)).length >= first.length - 1,
      'the given-back Buffers were written into again',
    )
    assert.equal(Buffer.concat(second).toString('latin1'), firstText)
    // Only whole 16 KB Buffers of its own are kept, at most `max` of them.
    const foreign = Buffer.from('{"data":1}')
    pool.give([foreign, Buffer.alloc(1 << 14).subarray(16)])
    const many = text(40_000)
    pool.give(many)
    const kept = new Set<ArrayBufferLike>()
    for (let i = 0; i < 20; i++) kept.add(pool.take().buffer)
    assert.ok(!kept.has(foreign.buffer))
    assert.equal([...kept].filter((b) => many.some((p) => p.buffer === b)).length, 8, 'the pool kept 8 of them')
  })
})
