/**
 * @module The URL as written to the request log line: rebuilt from the parsed path and query, so
 * no encoding (`api%5Fkey=`, `;api_key=`, `&amp;api_key=`) carries an API key past the redaction.
 */

import { LRUCache } from 'lru-cache'

/** Anything shaped like an mdq key (`mdq_` + base64url), wherever it is. */
const KEY_LIKE = /mdq_[A-Za-z0-9_-]*/gi
/** Parameter names that hold a secret, however spelled (`api_key`, `apiKey`, `amp;api_key`, `x-api-key`). */
const SECRET_NAME = /key|token|secret|auth/i

/** Percent-decoding that never throws (a malformed escape is kept as written), repeated so a double-encoded key shows too. */
function decode(text: string): string {
  for (let round = 0; round < 3 && text.includes('%'); round++) {
    let next: string
    try {
      next = decodeURIComponent(text)
    } catch {
      next = text.replace(/%([0-9a-f]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    }
    if (next === text) break
    text = next
  }
  return text
}

const mask = (text: string) => text.replace(KEY_LIKE, '[REDACTED]')

/** A URL in which nothing could be redacted: no escape (so nothing decodes), no key-like text, no secret-like name anywhere. */
const NOTHING_SECRET = /^(?!.*(%|mdq_|key|token|secret|auth))/is
/**
 * Logged forms of recent URLs that hold nothing secret (so none is kept here), bounded in characters:
 * clients repeat their requests, and the rebuild below is per-request work on the main thread.
 */
const plain = new LRUCache<string, string>({
  maxSize: 1 << 20,
  sizeCalculation: (logged, url) => url.length + logged.length,
})

/** The path and query of `url` for logs: decoded, key-like text masked, secret-named parameters redacted. */
export function loggedUrl(url: string): string {
  const known = plain.get(url)
  if (known !== undefined) return known
  const logged = redacted(url)
  if (NOTHING_SECRET.test(url)) plain.set(url, logged)
  return logged
}

function redacted(url: string): string {
  const q = url.indexOf('?')
  const path = mask(decode(q < 0 ? url : url.slice(0, q)))
  if (q < 0) return path
  const out = new URLSearchParams()
  for (const [name, value] of new URLSearchParams(url.slice(q + 1))) {
    const safeName = mask(decode(name))
    out.append(safeName, SECRET_NAME.test(safeName) ? '[REDACTED]' : mask(decode(value)))
  }
  // URLSearchParams encodes the brackets; the redaction marker stays readable.
  return `${path}?${out.toString().replace(/%5BREDACTED%5D/g, '[REDACTED]')}`
}
