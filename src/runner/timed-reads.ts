/** @module A store whose reads report their operation and seconds (the store-read histogram; workers send theirs to the main thread). */
import { performance } from 'node:perf_hooks'
import type { MarketStore } from '../store/market-store.js'

/** The store with each read's operation (as the histogram labels it) and seconds reported to `record`. */
export function withTimedReads(store: MarketStore, record: (operation: string, seconds: number) => void): MarketStore {
  const time =
    <A extends unknown[], R>(operation: string, fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const t0 = performance.now()
      try {
        return await fn(...args)
      } finally {
        record(operation, (performance.now() - t0) / 1000)
      }
    }
  const timed: Partial<MarketStore> = {
    readBars: time('bars', store.readBars.bind(store)),
    readInstruments: time('instruments', store.readInstruments.bind(store)),
    readExFactors: time('ex_factors', store.readExFactors.bind(store)),
    readFinancials: time('financials', store.readFinancials.bind(store)),
  }
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop in timed) return timed[prop as keyof MarketStore]
      const value: unknown = Reflect.get(target, prop, receiver)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}
