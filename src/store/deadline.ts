/** @module Deadlines that a busy process does not miss-fire: checked only after pending I/O has been read. */

/**
 * An AbortSignal that aborts `ms` after the call, but only once the event loop has read pending I/O
 * (setImmediate after the timer): a reply that arrived while this process was busy (a burst of
 * requests, a long synchronous task) still wins, so only a peer that really did not answer counts as
 * down. (`AbortSignal.timeout` fires in the timers phase, before the waiting reply is read.)
 */
export function patientDeadline(ms: number, reason: () => Error): { readonly signal: AbortSignal; clear(): void } {
  const controller = new AbortController()
  let immediate: NodeJS.Immediate | undefined
  const timer = setTimeout(() => (immediate = setImmediate(() => controller.abort(reason()))), ms)
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer)
      if (immediate) clearImmediate(immediate)
    },
  }
}

/** `promise`, or a rejection when it has not settled `ms` after the call (a patientDeadline). */
export function answeredWithin<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  const deadline = patientDeadline(ms, () => new Error(`${what} was not answered within ${ms} ms`))
  return new Promise<T>((resolve, reject) => {
    deadline.signal.addEventListener('abort', () => reject(deadline.signal.reason as Error), { once: true })
    promise.then(resolve, (err: unknown) => reject(err instanceof Error ? err : new Error(String(err)))).finally(deadline.clear)
  })
}
