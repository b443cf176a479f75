/** @module A value refreshed in the background: reads are free, at most one interval stale, and fail while the source does. */

export class Poller<T> {
  #value: T | undefined
  #error: unknown
  #inflight: Promise<T> | undefined
  #timer: NodeJS.Timeout | undefined

  constructor(
    private readonly load: (previous: T | undefined) => Promise<T>,
    private readonly intervalMs: number,
  ) {}

  /** Starts polling after a first successful load (which it returns). */
  async start(): Promise<T> {
    const v = await this.refresh()
    this.#timer = setInterval(() => void this.refresh().catch(() => undefined), this.intervalMs)
    this.#timer.unref()
    return v
  }

  /** Loads now (joining a load already under way). */
  refresh(): Promise<T> {
    this.#inflight ??= this.load(this.#value).then(
      (v) => {
        this.#inflight = undefined
        this.#value = v
        this.#error = undefined
        return v
      },
      (err: unknown) => {
        this.#inflight = undefined
        this.#error = err
        throw err
      },
    )
    return this.#inflight
  }

  /** Loads anew, after any load under way (which may have started before a change this caller just made). */
  async reload(): Promise<T> {
    await this.#inflight?.catch(() => undefined)
    return this.refresh()
  }

  /** The last value, or the last load's failure when the source is down. */
  async current(): Promise<T> {
    if (this.#error !== undefined) throw this.#error
    return this.#value ?? this.refresh()
  }

  /** The last value loaded, at once (undefined before the first load). */
  peek(): T | undefined {
    return this.#value
  }

  stop(): void {
    clearInterval(this.#timer)
  }
}
