/** @module Query strings: repeated parameters are kept visible so they can be refused, never silently merged. */
import { badParam } from './errors.js'

/** Like URLSearchParams into an object, but a repeated name becomes an array (refused by rejectRepeated). */
export function parseQueryString(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null)
  for (const [name, value] of new URLSearchParams(text)) {
    const had = out[name]
    out[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value]
  }
  return out
}

/** 400 for a parameter given twice or given empty (contract "General"). */
export function rejectRepeatedOrEmpty(query: unknown, names: readonly string[]): void {
  const q = query as Record<string, unknown>
  for (const name of Object.keys(q)) {
    if (Array.isArray(q[name])) throw badParam(`Parameter '${name}' is given more than once.`)
    if (q[name] === '' && names.includes(name)) throw badParam(`Parameter '${name}' is empty.`)
  }
}
