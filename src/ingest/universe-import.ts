/** @module `mdq import universes`: `universe_id,symbol[,name,region,category,description]`; a file replaces the universes it lists. */
import { UNIVERSE_CATEGORIES, UNIVERSE_ID, isBuiltInUniverse, type StoredUniverse } from '../domain/universe.js'
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
  const universes = new Map<string, { fields: Partial<Record<Described, string>>; symbols: Set<string> }>()
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
      if (!u) universes.set(id, (u = { fields: {}, symbols: new Set() }))
      u.symbols.add(symbol)
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
  const list: StoredUniverse[] = [...universes].map(([id, u]) => ({
    id,
    name: u.fields.name ?? id,
    region: u.fields.region ?? null,
    category: u.fields.category ?? null,
    description: u.fields.description ?? null,
    symbols: [...u.symbols],
  }))
  await writer.putUniverses(list)
  return { rows, skipped: 0, symbols: new Set(list.flatMap((u) => u.symbols)).size, events: 0 }
}
