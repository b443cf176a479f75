import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { parseSymbol } from './market.js'
import { symbolMeant } from './symbol-hints.js'

describe('symbolMeant', () => {
  it("reads other vendors' spellings, in any case", () => {
    for (const [given, meant] of [
      ['600000.SS', '600000.SH'], // Yahoo
      ['600000.ss', '600000.SH'],
      ['600000.XSHG', '600000.SH'], // JoinQuant, RiceQuant
      ['000001.xshe', '000001.SZ'],
      ['830799.XBSE', '830799.BJ'],
      ['sh.600000', '600000.SH'], // Baostock
      ['sz000001', '000001.SZ'],
      ['HK.00700', '00700.HK'], // Futu
      ['0700.HK', '00700.HK'], // Yahoo: four digits
      ['700.hk', '00700.HK'],
      ['US.AAPL', 'AAPL.US'],
      ['AAPL.O', 'AAPL.US'], // Wind
      ['IBM.N', 'IBM.US'],
      ['BRK.B', 'BRK.B.US'], // a share class, not an exchange
      ['aapl', 'AAPL.US'],
      ['600519', '600519.SH'], // a bare code: its exchange by its first digit
      ['000858', '000858.SZ'],
      ['300750', '300750.SZ'],
      ['830799', '830799.BJ'],
    ])
      assert.equal(symbolMeant(given), meant, given)
  })

  it('guesses nothing it cannot read', () => {
    for (const given of ['600000.XX', '12345678', '2000', '', 'hello world', '600000.SS.SS', '123456789.HK', '.HK'])
      assert.equal(symbolMeant(given), undefined, given)
  })

  it('every guess is a symbol mdq accepts, in its canonical form', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9.]{1,14}$/), (given) => {
        const meant = symbolMeant(given)
        if (meant !== undefined) assert.equal(parseSymbol(meant).symbol, meant, given)
      }),
    )
  })
})
