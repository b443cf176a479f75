/** @module Deadlines that a busy process does not miss-fire: checked only after pending I/O has been read. */

/**
 * Calls `fire` `ms` after the call, but only once the event loop has read pending I/O (setImmediate
 * after the timer): a reply that arrived while this process was busy (a burst of requests, a long
 * synchronous task) still wins, so only a peer that really did not answer counts as down.
 * (A plain timer, like `AbortSignal.timeout`, fires in the timers phase, before the waiting reply is read.)
 * Returns what cancels it.
 */
function patientTimer(ms: number, fire: () => void): () => void {
  let immediate: NodeJS.Immediate | undefined
  const timer = setTimeout(() => (immediate = setImmediate(fire)), ms)
  return () => {
    clearTimeout(timer)
    if (immediate) clearImmediate(immediate)
  }
}

/**
 * An AbortSignal that aborts `ms` after the call, patiently (patientTimer), or when `also` aborts, for
 * APIs that take one; `clear` lets go of the timer and of `also`. (AbortSignal.timeout holds its timer
 * and signal for all of `ms`, and AbortSignal.any ties each signal to a long-lived one: per request
 * under load, that kept thousands of them alive, promoted, and swept by full collections.)
 */
export function patientDeadline(
  ms: number,
  reason: () => Error,
  also?: AbortSignal,
): { readonly signal: AbortSignal; clear(): void } {
  const controller = new AbortController()
  const onAlso = () => controller.abort(also!.reason)
  if (also?.aborted) onAlso()
  else also?.addEventListener('abort', onAlso, { once: true })
  const cancel = patientTimer(ms, () => controller.abort(reason()))
  return {
    signal: controller.signal,
    clear: () => {
      cancel()
      also?.removeEventListener('abort', onAlso)
    },
  }
}

/**
 * `promise`, or a rejection when it has not settled `ms` after the call (patiently). Without an
 * AbortSignal: a Redis rate-limit check runs this per request, and a signal and its listener cost
 * about 5% of a cached answer's main-thread CPU there.
 */
export function answeredWithin<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cancel = patientTimer(ms, () => reject(new Error(`${what} was not answered within ${ms} ms`)))
    promise.then(resolve, (err: unknown) => reject(err instanceof Error ? err : new Error(String(err)))).finally(cancel)
  })
}
