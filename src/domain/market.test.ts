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
  ] as const) {
    it(`rejects ${JSON.stringify(input)} with BAD_SYMBOL naming the rule`, () => {
      assert.throws(() => parseSymbol(input, 'symbols'), (e: unknown) => e instanceof MdqError && e.code === 'BAD_SYMBOL' && e.message.includes(fragment) && e.message.includes("'symbols'"))
    })
  }

  it('knows each exchange region, zone and sessions', () => {
    assert.equal(MARKETS.SZ.zone.name, 'Asia/Shanghai')
    assert.equal(MARKETS.HK.region, 'HK')
    assert.deepEqual(MARKETS.US.sessions, [{ open: 570, close: 960 }])
    assert.equal(MARKETS.BJ.kind, 'cn_equity')
  })
})
