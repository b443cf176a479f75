/** @module A builder state (domain/minute-bars.ts SymbolState) with a distinct value in every field, for tests of how a store keeps it. */
import type { SymbolState } from '../../src/domain/minute-bars.js'

export function builderState(symbol: string): Required<SymbolState> {
  return {
    last: {
      symbol,
      timestamp: 1_732_699_985_000,
      lastPrice: 10.52,
      open: 10.31,
      high: 10.6,
      low: 10.28,
      prevClose: 10.3,
      volume: 12_345_600,
      amount: 129_876_543.21,
    },
    bar: {
      start: 1_732_699_980_000,
      open: 10.5,
      high: 10.53,
      low: 10.49,
      close: 10.52,
      volume: 23_400,
      amount: 246_012.5,
      baseVolume: 12_322_200,
      baseAmount: 129_630_530.71,
      closed: false,
    },
  }
}
