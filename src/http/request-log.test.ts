import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { loggedUrl } from './request-log.js'

describe('loggedUrl', () => {
  it('logs a repeated URL the same way each time: a plain one as written, a secret one redacted every time (never served from the memo of plain URLs)', () => {
    const plain = '/v1/klines?symbol=600000.SH&period=1m&count=1000&adjust=forward&end_time=1700000040000'
    for (let round = 0; round < 3; round++) assert.equal(loggedUrl(plain), plain)
    const cases: [string, string][] = [
      ['/v1/klines?symbol=600000.SH&api_key=mdq_abcDEF123_-x', '/v1/klines?symbol=600000.SH&api_key=[REDACTED]'],
      ['/v1/klines?symbol=600000.SH&api%5Fkey=mdq_abc', '/v1/klines?symbol=600000.SH&api_key=[REDACTED]'],
      ['/v1/klines?symbol=mdq_abc', '/v1/klines?symbol=[REDACTED]'],
      ['/v1/klines?symbol=600000.SH&Token=abc', '/v1/klines?symbol=600000.SH&Token=[REDACTED]'],
      ['/v1/klines?symbol=600000.SH&x=%6Ddq_abc', '/v1/klines?symbol=600000.SH&x=[REDACTED]'],
    ]
    for (let round = 0; round < 3; round++) for (const [url, logged] of cases) assert.equal(loggedUrl(url), logged, url)
  })

  it('redacts a key encoded to any depth, in any parameter, name or the path', () => {
    /** `text` percent-encoded `depth` times (each `%` of the previous round becomes `%25`). */
    const encoded = (text: string, depth: number) => {
      for (let i = 0; i < depth; i++) text = text.replace(/%/g, '%25')
      return text
    }
    for (let depth = 1; depth <= 12; depth++) {
      const underscore = encoded('%5F', depth - 1)
      const key = `mdq${underscore}abcDEF123`
      for (const url of [
        `/v1/klines?symbol=600000.SH&foo=${key}`,
        `/v1/klines?symbol=600000.SH&${key}=1`,
        `/v1/klines?symbol=600000.SH&api${underscore}key=mdq_abcDEF123`,
        `/v1/${key}?symbol=600000.SH`,
      ]) {
        const line = loggedUrl(url)
        assert.doesNotMatch(line, /abcDEF123/, `${url} -> ${line}`)
        assert.match(line, /\[REDACTED\]/, url)
        assert.match(line, /symbol=600000\.SH/, url)
      }
    }
    // Encoded as clients and proxies encode (up to four times), a plain value is still logged decoded.
    assert.equal(loggedUrl(`/v1/klines?symbol=${encoded('600000%2ESH', 3)}`), '/v1/klines?symbol=600000.SH')
  })
})
