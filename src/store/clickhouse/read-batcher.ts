/**
 * @module Reads sent together: those issued in one turn of the event loop, and those that come while
 * the batcher's queries are all in flight, go out in as few queries as the caller's rule allows. A
 * query costs a round trip, a parse and a plan whatever its size: shared, they cost a read little
 * beyond the rows it returns, and under load the server answers a few large queries rather than many
 * small ones competing for its cores. Reads wait per key (a snapshot: a query filters by one visible
 * set) and keys go oldest first.
 */

/** A waiting read with its answer. */
interface Waiting<R, A> {
  readonly read: R
  readonly resolve: (answer: A) => void
  readonly reject: (err: unknown) => void
}

export interface ReadBatcherOptions<K, R, A> {
  /** The positions (ascending) of the waiting reads of one key that go in the next query; at least the first. */
  readonly take: (waiting: readonly R[]) => readonly number[]
  /** One query for `reads`: their answers, in their order. */
  readonly send: (key: K, reads: readonly R[]) => Promise<readonly A[]>
  /** Queries in flight at once (default 2); reads that come meanwhile wait for the next, together. */
  readonly maxInFlight?: number
}

export class ReadBatcher<K, R, A> {
  readonly #pending = new Map<K, Waiting<R, A>[]>()
  #scheduled = false
  #inFlight = 0
  readonly #maxInFlight: number

  constructor(private readonly options: ReadBatcherOptions<K, R, A>) {
    this.#maxInFlight = options.maxInFlight ?? 2
  }

  /** The answer to `read`, once the query it went in is answered (its failure, if that query fails). */
  read(key: K, read: R): Promise<A> {
    return new Promise((resolve, reject) => {
      const list = this.#pending.get(key) ?? []
      list.push({ read, resolve, reject })
      this.#pending.set(key, list)
      this.#schedule()
    })
  }

  /** A flush at the end of this turn, if a query may start. */
  #schedule(): void {
    if (this.#scheduled || this.#inFlight >= this.#maxInFlight || this.#pending.size === 0) return
    this.#scheduled = true
    setImmediate(() => this.#flush())
  }

  /** Sends waiting reads, oldest key first, while queries may start. */
  #flush(): void {
    this.#scheduled = false
    for (const [key, list] of this.#pending) {
      while (list.length > 0 && this.#inFlight < this.#maxInFlight) void this.#send(key, this.#take(list))
      if (list.length > 0) return
      this.#pending.delete(key)
    }
  }

  /** The reads of the next query, out of `list`. */
  #take(list: Waiting<R, A>[]): Waiting<R, A>[] {
    const at = new Set(this.options.take(list.map((w) => w.read)))
    if (!at.has(0)) at.add(0) // a rule that took nothing would leave the first waiting for good
    const taken: Waiting<R, A>[] = []
    let kept = 0
    for (let i = 0; i < list.length; i++) {
      if (at.has(i)) taken.push(list[i])
      else list[kept++] = list[i]
    }
    list.length = kept
    return taken
  }

  async #send(key: K, waiting: readonly Waiting<R, A>[]): Promise<void> {
    this.#inFlight++
    try {
      const answers = await this.options.send(
        key,
        waiting.map((w) => w.read),
      )
      waiting.forEach((w, i) => w.resolve(answers[i]))
    } catch (err) {
      for (const w of waiting) w.reject(err)
    } finally {
      this.#inFlight--
      this.#schedule()
    }
  }
}

/** A take rule: the first `n` waiting reads. */
export const firstOf =
  (n: number) =>
  (waiting: readonly unknown[]): number[] =>
    Array.from({ length: Math.min(n, waiting.length) }, (_, i) => i)
