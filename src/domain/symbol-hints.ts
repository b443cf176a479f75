/**
 * @module The mdq symbol meant by another vendor's spelling of it (Yahoo's 600000.SS and 0700.HK,
 * Baostock's sh.600000, JoinQuant's 600000.XSHG, Wind's AAPL.O, a bare code), for a malformed
 * symbol's message. Forms are matched case-insensitively.
 */

/** CN exchanges by their other spellings (Yahoo, JoinQuant/RiceQuant, MIC codes). */
const CN_SUFFIXES: Readonly<Record<string, string>> = {
  SS: 'SH',
  SHH: 'SH',
  SHG: 'SH',
  XSHG: 'SH',
  SHE: 'SZ',
  XSHE: 'SZ',
  XBSE: 'BJ',
  BSE: 'BJ',
}
/**
 * US exchange suffixes of Wind, Reuters and others: mdq has one US exchange code. Not `.A` or `.B`:
 * those are share classes (BRK.A, BRK.B), meant as BRK.A.US.
 */
const US_SUFFIXES = new Set(['O', 'N', 'OQ', 'PK', 'NYSE', 'NASDAQ', 'NYS', 'NAS', 'AMEX', 'ARCA', 'BATS'])
const SHARE_CLASS = /^[A-Z]{1,5}\.[A-Z]$/
const CN_CODE = /^\d{6}$/
const HK_CODE = /^\d{1,5}$/
const US_CODE = /^[A-Z](?:[A-Z0-9.-]{0,10}[A-Z0-9])?$/

/** The exchange of a bare 6-digit CN code by its first digit (the exchanges' code ranges). */
function cnExchangeOf(code: string): string | undefined {
  return { '6': 'SH', '5': 'SH', '0': 'SZ', '1': 'SZ', '3': 'SZ', '4': 'BJ', '8': 'BJ' }[code[0]]
}

/** The canonical mdq symbol `input` most likely means, or undefined when it reads as no known form. */
export function symbolMeant(input: string): string | undefined {
  const s = input.trim().toUpperCase()
  // A prefix form: SH600000, sh.600000 (Baostock), HK.00700 / HK00700, US.AAPL (Futu).
  const prefixed = /^(SH|SZ|BJ|HK|US)\.?(.+)$/.exec(s)
  if (prefixed && (prefixed[1] === 'US' ? prefixed[2].length > 0 && s[2] === '.' : /^\d+$/.test(prefixed[2])))
    return canonical(prefixed[2], prefixed[1])
  const dot = s.lastIndexOf('.')
  if (dot < 0) {
    if (CN_CODE.test(s)) return canonical(s, cnExchangeOf(s))
    return US_CODE.test(s) && !/^\d/.test(s) ? `${s}.US` : undefined
  }
  const code = s.slice(0, dot)
  const suffix = s.slice(dot + 1)
  if (CN_SUFFIXES[suffix] !== undefined) return canonical(code, CN_SUFFIXES[suffix])
  if (US_SUFFIXES.has(suffix)) return canonical(code, 'US')
  if (suffix === 'HK') return canonical(code, 'HK')
  return SHARE_CLASS.test(s) ? `${s}.US` : undefined
}

function canonical(code: string, exchange: string | undefined): string | undefined {
  if (exchange === 'HK') return HK_CODE.test(code) ? `${code.padStart(5, '0')}.HK` : undefined
  if (exchange === 'US') return US_CODE.test(code) ? `${code}.US` : undefined
  return exchange !== undefined && CN_CODE.test(code) ? `${code}.${exchange}` : undefined
}
