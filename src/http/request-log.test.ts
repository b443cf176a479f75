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
})
