/** @module A store seen without stored rollups (as a backend without them): readKlines aggregates 1m bars on read. */
import type { MarketStore } from '../../src/store/market-store.js'

export function aggregatingOnRead(store: MarketStore): MarketStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'capabilities') return { ...target.capabilities, storedRollups: false }
      const value: unknown = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}
