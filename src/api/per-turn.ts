/** @module A read shared by every request of one event-loop turn (a data or keys version: cheap, but read per request). */

/**
 * `read` at most once per turn of the event loop: requests that arrive together (keep-alive clients
 * pipeline dozens) share one answer; the next turn reads again, so a change is seen at once after.
 */
export function perTurn<T>(read: () => Promise<T>): () => Promise<T> {
  let shared: Promise<T> | undefined
  return () => {
    if (shared === undefined) {
      shared = read()
      const clear = () => void (shared = undefined)
      shared.then(() => setImmediate(clear), clear) // a failure is never shared past its own turn
    }
    return shared
  }
}
