/** @module A read shared by every request of one event-loop turn (a data or keys version: cheap, but read per request). */

/** This turn's read, and its value once read (the fast path then answers without awaiting). */
export interface PerTurn<T> {
  (): Promise<T>
  /** The value this turn's read gave, when it has finished; else undefined (call and await). */
  readonly settled: () => T | undefined
}

/**
 * `read` at most once per turn of the event loop: requests that arrive together (keep-alive clients
 * pipeline dozens) share one answer; the next turn reads again, so a change is seen at once after.
 */
export function perTurn<T>(read: () => Promise<T>): PerTurn<T> {
  let shared: Promise<T> | undefined
  let value: { readonly of: T } | undefined
  const get = () => {
    if (shared === undefined) {
      shared = read()
      const clear = () => void ((shared = undefined), (value = undefined))
      // A failure is never shared past its own turn.
      shared.then((of) => {
        value = { of }
        setImmediate(clear)
      }, clear)
    }
    return shared
  }
  return Object.assign(get, { settled: () => value?.of })
}
