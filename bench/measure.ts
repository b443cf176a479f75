/** @module Tiny timing helpers for the benches: best of N runs, rates, printed rows. */
import { performance } from 'node:perf_hooks'

/** Best wall time in ms of `runs` calls (after one warm-up), so noise from a shared machine counts less. */
export function bestMs(fn: () => unknown, runs = 5): number {
  fn()
  let best = Infinity
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now()
    fn()
    best = Math.min(best, performance.now() - t0)
  }
  return best
}

export function rate(items: number, ms: number): string {
  const perS = (items / ms) * 1000
  return perS >= 1e6 ? `${(perS / 1e6).toFixed(1)}M/s` : `${(perS / 1e3).toFixed(1)}k/s`
}

export function row(...cells: (string | number)[]): void {
  console.log(cells.map((c, i) => String(c).padEnd(i === 0 ? 40 : 12)).join(''))
}
