/** @module Polling for a condition with a generous deadline: tests wait for what they need, never for a fixed time. */
import { setTimeout as sleep } from 'node:timers/promises'

/** Resolves with the first truthy value of `probe`, polling every `everyMs`; fails naming `what` after `deadlineMs`. */
export async function until<T>(
  probe: () => T | Promise<T>,
  what: string,
  { deadlineMs = 60_000, everyMs = 20 } = {},
): Promise<NonNullable<T>> {
  const t0 = Date.now()
  for (;;) {
    const value = await probe()
    if (value) return value as NonNullable<T>
    if (Date.now() - t0 > deadlineMs) throw new Error(`gave up after ${deadlineMs} ms waiting for ${what}`)
    await sleep(everyMs)
  }
}
