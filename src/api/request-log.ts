/**
 * @module The URL as written to the request log line: rebuilt from the parsed path and query, so
 * no encoding (`api%5Fkey=`, `;api_key=`, `&amp;api_key=`) carries an API key past the redaction.
 */

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

/** The path and query of `url` for logs: decoded, key-like text masked, secret-named parameters redacted. */
export function loggedUrl(url: string): string {
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
