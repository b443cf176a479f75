/** @module The KeyStore interface: API keys, their scopes and quotas, apart from market data (never behind its write lock). */

/**
 * What a key may do: `read` the data routes (every key made before scopes existed is one), also
 * push through the ingest listener (`ingest`), or everything (`admin`).
 */
export const KEY_SCOPES = ['read', 'ingest', 'admin'] as const
export type KeyScope = (typeof KEY_SCOPES)[number]

export function isKeyScope(value: string): value is KeyScope {
  return (KEY_SCOPES as readonly string[]).includes(value)
}

/** Whether a key of scope `has` may do what scope `needs` allows (admin > ingest > read). */
export function scopeAllows(has: KeyScope, needs: KeyScope): boolean {
  return KEY_SCOPES.indexOf(has) >= KEY_SCOPES.indexOf(needs)
}

export interface ApiKeyRecord {
  readonly id: number
  readonly name: string
  /** SHA-256 hex of the plaintext key; the plaintext is never stored. */
  readonly hash: string
  readonly createdMs: number
  readonly revokedMs: number | null
  /** Per-key quota (requests per minute and burst) or null for the service defaults. */
  readonly ratePerMin: number | null
  readonly burst: number | null
  readonly scope: KeyScope
}

export interface KeyStore {
  createKey(key: {
    name: string
    hash: string
    ratePerMin?: number | null
    burst?: number | null
    /** Default `read`. */
    scope?: KeyScope
  }): Promise<ApiKeyRecord>
  /** Every key, ids ascending. */
  listKeys(): Promise<ApiKeyRecord[]>
  findKey(hash: string): Promise<ApiKeyRecord | undefined>
  /** False when no such key (revoking a revoked key is true and keeps its first revocation time). */
  revokeKey(id: number): Promise<boolean>
  /** False when no such key. */
  setKeyRate(id: number, ratePerMin: number | null, burst: number | null): Promise<boolean>
  /** Changes whenever keys change (any process); cheap, for the auth cache (<= 1 s stale). */
  keysVersion(): Promise<string>
  /** Throws unless the keys can really be read now (for /readyz). */
  check(): Promise<void>
  close(): Promise<void>
}
