/**
 * @module `mdq import universes`: `universe_id,symbol[,name,region,category,description][,in_date,out_date]`;
 * a file replaces the universes it lists. With dates, each row is one membership spell.
 */
import { civilFromDays, formatCivil } from '../domain/time-zone.js'
import {
  UNIVERSE_CATEGORIES,
  UNIVERSE_ID,
  isBuiltInUniverse,
  universeOfRows,
  type StoredUniverse,
  type UniverseSpell,
} from '../domain/universe.js'
import type { StoreWriter } from '../store/market-store.js'
import type { ImportCounts } from './import-target.js'
import { columnsOf, LAYOUTS } from './columns.js'
import type { CsvFile } from './csv-reader.js'
import { FieldReader } from './fields.js'

const REGIONS = ['CN', 'HK', 'US']
type Described = 'name' | 'region' | 'category' | 'description'

export async function importUniverses(file: CsvFile, writer: StoreWriter): Promise<ImportCounts> {
  const cols = columnsOf(file, LAYOUTS.universes)
  const r = new FieldReader(file)
  const date = (col: number | undefined, name: string) =>
    r.text(col) === '' ? null : formatCivil(civilFromDays(r.date(col!, name)))
  const dated = cols.in_date !== undefined || cols.out_date !== undefined
  const universes = new Map<
    string,
    { fields: Partial<Record<Described, string>>; spells: UniverseSpell[]; seen: Set<string> }
  >()
  let rows = 0
  for await (const batch of file.batches) {
    for (let i = 0; i < batch.rows; i++) {
      r.at(batch, i)
      rows++
      const id = r.text(cols.universe_id)
      if (!UNIVERSE_ID.test(id))
        r.fail(
          cols.universe_id,
          `universe_id '${id.slice(0, 70)}' is not 1..64 letters, digits, '_', '-' or '.' (starting with a letter or digit)`,
        )
      if (isBuiltInUniverse(id))
        r.fail(
          cols.universe_id,
          `universe_id '${id}' is built in (derived from the instruments) and cannot be imported`,
        )
      const symbol = r.symbol(cols.symbol).symbol
      let u = universes.get(id)
      if (!u) universes.set(id, (u = { fields: {}, spells: [], seen: new Set() }))
      const spell = { symbol, inDate: date(cols.in_date, 'in_date'), outDate: date(cols.out_date, 'out_date') }
      // A plain list: a symbol listed twice is a member once.
      const repeated = !dated && u.seen.has(symbol)
      u.seen.add(symbol)
      if (spell.inDate !== null && spell.outDate !== null && spell.outDate <= spell.inDate)
        r.fail(cols.out_date!, `out_date ${spell.outDate} is not after in_date ${spell.inDate}`)
      const overlap = dated && u.spells.find((o) => o.symbol === symbol && overlaps(o, spell))
      if (overlap)
        r.fail(
          cols.in_date ?? cols.out_date!,
          `${symbol} is already a member of ${id} then (${overlap.inDate ?? 'open'} .. ${overlap.outDate ?? 'open'})`,
        )
      if (!repeated) u.spells.push(spell)
      for (const name of ['name', 'region', 'category', 'description'] as const) {
        const value = r.text(cols[name])
        if (value === '') continue
        if (name === 'region' && !REGIONS.includes(value))
          r.fail(cols[name]!, `region '${value.slice(0, 20)}' is not one of ${REGIONS.join(', ')}`)
        if (name === 'category' && !(UNIVERSE_CATEGORIES as readonly string[]).includes(value))
          r.fail(cols[name]!, `category '${value.slice(0, 20)}' is not one of ${UNIVERSE_CATEGORIES.join(', ')}`)
        const had = u.fields[name]
        if (had !== undefined && had !== value)
          r.fail(
            cols[name]!,
            `${name} '${value.slice(0, 40)}' differs from '${had.slice(0, 40)}' given earlier for universe ${id}`,
          )
        u.fields[name] = value
      }
    }
  }
  const list: StoredUniverse[] = [...universes].map(([id, u]) =>
    universeOfRows(
      {
        id,
        name: u.fields.name ?? id,
        region: u.fields.region ?? null,
        category: u.fields.category ?? null,
        description: u.fields.description ?? null,
      },
      u.spells,
    ),
  )
  await writer.putUniverses(list)
  return { rows, skipped: 0, symbols: new Set([...universes.values()].flatMap((u) => [...u.seen])).size, events: 0 }
}

/** Whether two spells share a day (null = open-ended; out dates exclusive). */
function overlaps(a: UniverseSpell, b: UniverseSpell): boolean {
  const startsBeforeEnd = (x: UniverseSpell, y: UniverseSpell) =>
    x.inDate === null || y.outDate === null || x.inDate < y.outDate
  return startsBeforeEnd(a, b) && startsBeforeEnd(b, a)
}
