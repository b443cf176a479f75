/**
 * @module The small tables as readers see them, held in memory: instruments, ex-factor events,
 * universes (with their dates) and tombstones (of bars, events, instruments and statements) of the visible imports, each key's newest row that no newer tombstone
 * hides. Built once, then changed by the rows of each import that becomes visible (copy on write:
 * a snapshot never changes under a reader).
 */
import type { ExFactorEvent } from '../../domain/ex-factors.js'
import type { Instrument } from '../../domain/instrument.js'
import type { StoredUniverse } from '../../domain/universe.js'

/** A row's version: its import and its operation in that import (newest wins). */
export interface Version {
  readonly importId: bigint
  readonly seq: number
}

export interface Tombstone extends Version {
  readonly fromTs: number
  readonly toTs: number
}

/** A statement tombstone: hides the rows of its statement and symbol with period_end in [from, to] and an older version. */
export interface FinancialTombstone extends Version {
  readonly statement: string
  readonly symbol: string
  readonly from: string
  readonly to: string
}

export const newer = (a: Version, b: Version): boolean =>
  a.importId > b.importId || (a.importId === b.importId && a.seq > b.seq)

/** Whether tombstone `t` hides a row of version `v` at `ts` (null: a key without time). */
export const hides = (t: Tombstone, v: Version, ts: number | null): boolean =>
  newer(t, v) && (ts === null || (ts >= t.fromTs && ts <= t.toTs))

export const tombstoneKey = (kind: 'bars' | 'ex_factors' | 'instruments', symbol: string, period = '') =>
  `${kind}|${symbol}|${period}`

export interface Rows {
  readonly instruments: readonly (Version & { row: Instrument })[]
  readonly events: readonly (Version & { symbol: string; ts: number; exFactor: number })[]
  readonly universes: readonly (Version & { row: StoredUniverse })[]
  readonly tombstones: readonly (Tombstone & { key: string })[]
  readonly financialTombstones: readonly FinancialTombstone[]
}

type Versions<T> = readonly (Version & T)[]

export class Metadata {
  private constructor(
    readonly instruments: ReadonlyMap<string, Instrument>,
    /** Symbols of `instruments`, ascending. */
    readonly symbols: readonly string[],
    readonly events: ReadonlyMap<string, readonly ExFactorEvent[]>,
    readonly universes: readonly StoredUniverse[],
    readonly tombstones: ReadonlyMap<string, readonly Tombstone[]>,
    readonly instrumentRows: ReadonlyMap<string, Versions<{ row: Instrument }>>,
    readonly eventRows: ReadonlyMap<string, Versions<{ ts: number; exFactor: number }>>,
    readonly universeRows: ReadonlyMap<string, Versions<{ row: StoredUniverse }>>,
    /** Per `${statement}|${symbol}`. */
    readonly financialTombstones: ReadonlyMap<string, readonly FinancialTombstone[]>,
  ) {}

  static empty(): Metadata {
    return new Metadata(new Map(), [], new Map(), [], new Map(), new Map(), new Map(), new Map(), new Map())
  }

  /** This state with the rows of more visible imports (`undefined` when they change nothing). */
  with(rows: Rows): Metadata {
    const tombstones = new Map(this.tombstones)
    for (const t of rows.tombstones) tombstones.set(t.key, [...(tombstones.get(t.key) ?? []), t])
    const hiddenBy = (key: string, v: Version, ts: number | null) =>
      (tombstones.get(key) ?? []).some((t) => hides(t, v, ts))
    const touched = (kind: 'instruments' | 'ex_factors') =>
      new Set(rows.tombstones.filter((t) => t.key.startsWith(`${kind}|`)).map((t) => t.key.split('|')[1]))

    let { instruments, symbols, instrumentRows } = this
    const instrumentKeys = touched('instruments')
    for (const r of rows.instruments) instrumentKeys.add(r.row.symbol)
    if (instrumentKeys.size) {
      const all = new Map(instrumentRows)
      for (const r of rows.instruments) all.set(r.row.symbol, [...(all.get(r.row.symbol) ?? []), r])
      const view = new Map(instruments)
      for (const symbol of instrumentKeys) {
        const best = newest(all.get(symbol) ?? [], (v) => !hiddenBy(tombstoneKey('instruments', symbol), v, null))
        if (best) view.set(symbol, best.row)
        else view.delete(symbol)
      }
      instruments = view
      instrumentRows = all
      symbols = [...view.keys()].sort()
    }

    let { events, eventRows } = this
    const eventKeys = touched('ex_factors')
    for (const r of rows.events) eventKeys.add(r.symbol)
    if (eventKeys.size) {
      const all = new Map(eventRows)
      for (const r of rows.events) all.set(r.symbol, [...(all.get(r.symbol) ?? []), r])
      const view = new Map(events)
      for (const symbol of eventKeys) {
        const key = tombstoneKey('ex_factors', symbol)
        const byTs = new Map<number, Version & { ts: number; exFactor: number }>()
        for (const r of all.get(symbol) ?? []) {
          if (hiddenBy(key, r, r.ts)) continue
          const held = byTs.get(r.ts)
          if (!held || newer(r, held)) byTs.set(r.ts, r)
        }
        view.set(
          symbol,
          [...byTs.values()]
            .sort((a, b) => a.ts - b.ts)
            .map((r) => Object.freeze({ timestamp: r.ts, exFactor: r.exFactor })),
        )
      }
      events = view
      eventRows = all
    }

    let { universes, universeRows } = this
    if (rows.universes.length) {
      const all = new Map(universeRows)
      for (const r of rows.universes) all.set(r.row.id, [...(all.get(r.row.id) ?? []), r])
      universeRows = all
      universes = [...all.keys()].sort().map((id) => newest(all.get(id)!, () => true)!.row)
    }
    let { financialTombstones } = this
    if (rows.financialTombstones.length) {
      const all = new Map(financialTombstones)
      for (const t of rows.financialTombstones) {
        const key = `${t.statement}|${t.symbol}`
        all.set(key, [...(all.get(key) ?? []), t])
      }
      financialTombstones = all
    }
    return new Metadata(
      instruments,
      symbols,
      events,
      universes,
      tombstones,
      instrumentRows,
      eventRows,
      universeRows,
      financialTombstones,
    )
  }
}

function newest<T extends Version>(rows: readonly T[], keep: (v: T) => boolean): T | undefined {
  let best: T | undefined
  for (const r of rows) if (keep(r) && (!best || newer(r, best))) best = r
  return best
}
