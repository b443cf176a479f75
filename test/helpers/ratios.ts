/** @module Comparing series "up to one constant": the largest relative deviation of ratios from their median. */

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

export function maxDeviationFromConstant(ratios: readonly number[]): number {
  if (ratios.length === 0) throw new Error('no ratios to compare')
  const m = median(ratios)
  let worst = 0
  for (const r of ratios) worst = Math.max(worst, Math.abs(r / m - 1))
  return worst
}
