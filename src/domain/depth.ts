/** @module Order book depth as pushed (TickFlow's `MarketDepth`): kept per symbol, the latest only. */

export interface MarketDepth {
  /** Canonical. */
  readonly symbol: string
  readonly timestamp: number
  /** Best first; prices and volumes of a side have the same length. */
  readonly bidPrices: readonly number[]
  readonly bidVolumes: readonly number[]
  readonly askPrices: readonly number[]
  readonly askVolumes: readonly number[]
}
