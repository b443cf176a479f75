/** @module API key material: random keys shown once, stored only as SHA-256, compared in constant time. */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto'

/** A new plaintext key: `mdq_` + 32 random bytes, base64url. */
export function generateKey(): string {
  return `mdq_${randomBytes(32).toString('base64url')}`
}

export function hashKey(key: string): string {
  return hash('sha256', key, 'hex') // one-shot: a third of createHash's cost, paid on every request
}

/** Constant-time equality of two hex digests. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex')
  const y = Buffer.from(b, 'hex')
  return x.length === y.length && timingSafeEqual(x, y)
}
