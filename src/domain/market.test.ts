import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MdqError } from './errors.js'
import { MARKETS, parseSymbol } from './market.js'

describe('parseSymbol', () => {
  it('canonicalizes exchange suffix and US codes to upper case, split at the last dot', () => {
    assert.deepEqual(parseSymbol('600000.sh'), { symbol: '600000.SH', code: '600000', exchange: 'SH' })
    assert.deepEqual(parseSymbol('brk.b.us'), { symbol: 'BRK.B.US', code: 'BRK.B', exchange: 'US' })
    assert.deepEqual(parseSymbol('00700.HK'), { symbol: '00700.HK', code: '00700', exchange: 'HK' })
    assert.deepEqual(parseSymbol('BF-B.US'), { symbol: 'BF-B.US', code: 'BF-B', exchange: 'US' })
  })

  for (const [input, fragment] of [
    ['600000', 'not of the form'],
    ['600000.', 'not of the form'],
    ['.SH', 'not of the form'],
    ['600000.XX', "unknown exchange 'XX'"],
    ['60000.SH', 'expected 6 digits'],
    ['700.HK', 'expected 5 digits'],
    ['AA PL.US', 'not valid for exchange US'],
    ['-AAPL.US', 'not valid for exchange US'],
    // Letters that String#toUpperCase folds into ASCII ones ('ſ' to 'S', 'ı' to 'I') are not letters of a code.
    ['\u017fPY.US', 'not valid for exchange US'],
    ['\u0131BM.US', 'not valid for exchange US'],
    ['600000.\u017fH', "unknown exchange '\u017fH'"],
  ] as const) {
    it(`rejects ${JSON.stringify(input)} with BAD_SYMBOL naming the rule`, () => {
      assert.throws(
        () => parseSymbol(input, 'symbols'),
        (e: unknown) =>
          e instanceof MdqError &&
          e.code === 'BAD_SYMBOL' &&
          e.message.includes(fragment) &&
          e.message.includes("'symbols'"),
      )
    })
  }

  it("places each exchange's session open at the contract's UTC instant (US with and without DST)", () => {
    // Contract "Market conventions": sessions open 09:30 local; CN UTC+8, HK UTC+8, New York -5/-4.
    const opens: [keyof typeof MARKETS, string, string][] = [
      ['SH', '2024-01-02', '2024-01-02T01:30:00.000Z'],
      ['SZ', '2024-07-01', '2024-07-01T01:30:00.000Z'],
      ['BJ', '2024-07-01', '2024-07-01T01:30:00.000Z'],
      ['HK', '2024-07-02', '2024-07-02T01:30:00.000Z'],
      ['US', '2024-01-02', '2024-01-02T14:30:00.000Z'],
      ['US', '2024-07-01', '2024-07-01T13:30:00.000Z'],
    ]
    for (const [exchange, date, utc] of opens) {
      const m = MARKETS[exchange]
      const [y, mo, d] = date.split('-').map(Number)
      assert.equal(new Date(m.zone.utcOf(y, mo, d, m.sessions[0].open)).toISOString(), utc, `${exchange} ${date}`)
    }
  })
  it('has the regular session lengths of the contract: CN 240, HK 330, US 390 minutes', () => {
    const minutes = (e: keyof typeof MARKETS) => MARKETS[e].sessions.reduce((sum, s) => sum + s.close - s.open, 0)
    assert.deepEqual(
      [minutes('SH'), minutes('SZ'), minutes('BJ'), minutes('HK'), minutes('US')],
      [240, 240, 240, 330, 390],
    )
  })
})
