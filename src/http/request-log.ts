/**
 * @module The URL as written to the request log line: rebuilt from the parsed path and query, so
 * no encoding (`api%5Fkey=`, `;api_key=`, `&amp;api_key=`, a key's `_` encoded to any depth) carries
 * an API key past the redaction.
 */

import { LRUCache } from 'lru-cache'

/** Anything shaped like an mdq key (`mdq_` + base64url), wherever it is. */
const KEY_LIKE = /mdq_[A-Za-z0-9_-]*/gi
/** Parameter names that hold a secret, however spelled (`api_key`, `apiKey`, `amp;api_key`, `x-api-key`). */
const SECRET_NAME = /key|token|secret|auth/i

/**
 * Rounds of percent-decoding a part of the URL is given (clients encode once, proxies sometimes twice).
 * A part that still decodes further after them is logged as `[REDACTED]` whole: decoding on to the
 * end costs a round per level of nesting, and any depth can hide a key (`mdq%2525...255F`).
 */
const DECODE_ROUNDS = 4

/** One round of percent-decoding that never throws (a malformed escape is kept as written). */
function decodeOnce(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text.replace(/%([0-9a-f]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)))
  }
}

/** `text` fully percent-decoded, or undefined when DECODE_ROUNDS rounds do not get to the end. */
function decode(text: string): string | undefined {
  for (let round = 0; text.includes('%'); round++) {
    const next = decodeOnce(text)
    if (next === text) break
    if (round === DECODE_ROUNDS) return undefined
    text = next
  }
  return text
}

const REDACTED = '[REDACTED]'

const mask = (text: string) => text.replace(KEY_LIKE, REDACTED)
/** A part of the URL as logged: decoded with key-like text masked, or redacted whole when encoded too deep to decode. */
const logged = (text: string) => {
  const decoded = decode(text)
  return decoded === undefined ? REDACTED : mask(decoded)
}

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
  const line = redacted(url)
  if (NOTHING_SECRET.test(url)) plain.set(url, line)
  return line
}

function redacted(url: string): string {
  const q = url.indexOf('?')
  const path = logged(q < 0 ? url : url.slice(0, q))
  if (q < 0) return path
  const out = new URLSearchParams()
  for (const [name, value] of new URLSearchParams(url.slice(q + 1))) {
    const safeName = logged(name)
    // A name redacted whole may be a secret's name: its value goes too.
    out.append(safeName, safeName === REDACTED || SECRET_NAME.test(safeName) ? REDACTED : logged(value))
  }
  // URLSearchParams encodes the brackets; the redaction marker stays readable.
  return `${path}?${out.toString().replace(/%5BREDACTED%5D/g, REDACTED)}`
}
