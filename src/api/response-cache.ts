/** @module Answers kept by ETag (data version + request) as UTF-8 bytes, least recently used first out, bounded in bytes. */

export class ResponseCache {
  readonly #entries = new Map<string, Buffer>()
  #bytes = 0
  hits = 0
  misses = 0

  /** @param maxBytes 0 disables the cache. */
  constructor(readonly maxBytes: number) {}

  get(tag: string): Buffer | undefined {
    const body = this.#entries.get(tag)
    if (body === undefined) {
      this.misses++
      return undefined
    }
    this.hits++
    this.#entries.delete(tag) // re-insert: Map order is the LRU order
    this.#entries.set(tag, body)
    return body
  }

  /** As get, without counting a hit or miss (a second form of an answer already counted). */
  peek(tag: string): Buffer | undefined {
    const body = this.#entries.get(tag)
    if (body !== undefined) {
      this.#entries.delete(tag)
      this.#entries.set(tag, body)
    }
    return body
  }

  set(tag: string, body: Buffer): void {
    const size = body.length
    if (size > this.maxBytes / 4) return // one answer never takes more than a quarter
    this.#entries.set(tag, body)
    this.#bytes += size
    for (const [oldest, old] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break
      this.#entries.delete(oldest)
      this.#bytes -= old.length
    }
  }

  get bytes(): number {
    return this.#bytes
  }
}
