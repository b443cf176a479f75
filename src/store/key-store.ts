/** @module The KeyStore interface: API keys and their quotas, apart from market data (never behind its write lock). */

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
}

export interface KeyStore {
  createKey(key: {
    name: string
    hash: string
    ratePerMin?: number | null
    burst?: number | null
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
