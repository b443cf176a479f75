/**
 * @module Whether a reading connection maps the store file (mmap) or reads it page by page. Mapped,
 * a chunk's overflow pages cost no system call each (FORMAT.md "Connections"); but when a read
 * transaction finds that another connection has committed, SQLite resets its pager and drops the
 * whole mapping, and the next reads fault every page they touch in again. Under a live feed,
 * committing many times a second, that made a read of one symbol's daily bars several times slower
 * than reading its pages (docs/benchmarks.md, "read-mapping"). So a connection stops mapping while
 * other connections' commits come close together, and maps again once the store has rested.
 */
import { MAP_BYTES, type Db } from './sqlite-db.js'

/** Two commits seen closer together than this: the store is being fed, read page by page. */
export const FED_GAP_MS = 1_000
/** Page by page until no commit was seen for this long. */
export const REST_MS = 10_000

export class ReadMapping {
  #mapped = true
  #wanted = true
  #counter: number | undefined
  #lastChange = -Infinity

  /** `db`: a connection as openDb opens it (mapped); `now`: a monotonic clock in ms (injected by tests). */
  constructor(
    private readonly db: Db,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get mapped(): boolean {
    return this.#mapped
  }

  /** Each value of PRAGMA data_version the connection reads (it moves when another connection committed). */
  observe(counter: number): void {
    const t = this.now()
    if (this.#counter !== undefined && counter !== this.#counter) {
      if (t - this.#lastChange < FED_GAP_MS) this.#wanted = false
      this.#lastChange = t
    } else if (!this.#wanted && t - this.#lastChange >= REST_MS) this.#wanted = true
    this.#counter = counter
    this.apply()
  }

  /** Maps or unmaps as last decided, between read transactions (a change inside one waits for the next). */
  apply(): void {
    if (this.#wanted === this.#mapped || this.db.inTransaction) return
    this.db.pragma(`mmap_size = ${this.#wanted ? MAP_BYTES : 0}`)
    this.#mapped = this.#wanted
  }
}
