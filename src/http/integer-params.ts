/**
 * @module Integer parameters are plain decimal safe integers, on every route: Ajv's type coercion
 * turns 'Infinity', '+Infinity', ' Infinity' and '1e309' into Infinity, which passes `type: integer`
 * and slips past its bounds, so every integer field is checked here first, from the route's own schema.
 * Time bounds are epoch milliseconds by domain/epoch-ms.ts's rule, with a hint for seconds and dates.
 */
import type { FastifyRequest, RouteOptions, preValidationHookHandler } from 'fastify'
import { epochMsMistake, type Bound } from '../domain/epoch-ms.js'
import { MARKETS, parseSymbol } from '../domain/market.js'
import type { Zone } from '../domain/time-zone.js'
import { badParam } from './errors.js'

interface IntegerField {
  readonly name: string
  readonly minimum?: number
  readonly maximum?: number
}

type Part = 'querystring' | 'params' | 'body'
const WHERE: Record<Part, string> = { querystring: 'Parameter', params: 'Path parameter', body: 'Body field' }
const DIGITS = /^-?\d{1,16}$/

interface JsonSchemaLike {
  type?: unknown
  minimum?: unknown
  maximum?: unknown
  properties?: Record<string, JsonSchemaLike>
  anyOf?: JsonSchemaLike[]
}

const isInteger = (s: JsonSchemaLike): boolean =>
  s.type === 'integer' || (Array.isArray(s.type) && s.type.includes('integer')) || (s.anyOf?.some(isInteger) ?? false)
const bound = (v: unknown) => (typeof v === 'number' ? v : undefined)

/** The top-level integer fields of an object schema, with their bounds. */
export function integerFields(schema: unknown): IntegerField[] {
  const properties = (schema as JsonSchemaLike | undefined)?.properties
  if (!properties) return []
  return Object.entries(properties)
    .filter(([, s]) => isInteger(s))
    .map(([name, s]) => ({ name, minimum: bound(s.minimum), maximum: bound(s.maximum) }))
}

function rule(field: IntegerField): string {
  const { minimum, maximum } = field
  if (minimum !== undefined && maximum !== undefined) return `an integer from ${minimum} to ${maximum}`
  if (minimum !== undefined) return `an integer >= ${minimum}`
  if (maximum !== undefined) return `an integer <= ${maximum}`
  return 'a safe integer'
}

/** Whether a raw value (a string from the URL, or a JSON number) is a plain safe integer. */
function isSafeIntegerValue(value: unknown): boolean {
  if (typeof value === 'number') return Number.isSafeInteger(value)
  if (typeof value === 'string') return DIGITS.test(value) && Number.isSafeInteger(Number(value))
  return true // other types: the schema's own type check words the 400
}

/** TickFlow's time bounds, so named on every route that takes them. */
const TIME_BOUNDS: ReadonlyMap<string, Bound> = new Map([
  ['start_time', 'start'],
  ['end_time', 'end'],
])

/** The time zones of the exchanges of the symbols a query names (for a date hint); malformed ones are refused later. */
function zonesOf(values: Record<string, unknown>): Zone[] {
  const zones = new Set<Zone>()
  for (const list of [values.symbol, values.symbols].flat())
    for (const symbol of typeof list === 'string' ? list.split(',') : []) {
      try {
        zones.add(MARKETS[parseSymbol(symbol.trim()).exchange].zone)
      } catch {
        // not a symbol: no zone from it
      }
    }
  return [...zones]
}

function checker(part: Part, fields: readonly IntegerField[]): (req: FastifyRequest) => void {
  const key = part === 'querystring' ? 'query' : part
  return (req) => {
    const values = req[key] as Record<string, unknown> | undefined
    if (!values || typeof values !== 'object') return
    for (const field of fields) {
      const value = values[field.name]
      if (value === undefined) continue
      const all = Array.isArray(value) ? value : [value]
      const bound = part === 'querystring' ? TIME_BOUNDS.get(field.name) : undefined
      if (bound !== undefined) {
        for (const v of all) {
          const mistake = epochMsMistake(field.name, String(v), bound, zonesOf(values))
          if (mistake !== undefined) throw badParam(mistake)
        }
      } else if (!all.every(isSafeIntegerValue))
        throw badParam(`${WHERE[part]} '${field.name}' must be ${rule(field)}.`)
    }
  }
}

/** Adds the integer check to a route being registered (an onRoute hook): new routes get it by having a schema. */
export function guardIntegerParams(route: RouteOptions): void {
  const checks = (['querystring', 'params', 'body'] as const).flatMap((part) => {
    const fields = integerFields(route.schema?.[part])
    return fields.length ? [checker(part, fields)] : []
  })
  if (checks.length === 0) return
  const hook: preValidationHookHandler = (req, _reply, done) => {
    try {
      for (const check of checks) check(req)
      done()
    } catch (err) {
      done(err as Error)
    }
  }
  route.preValidation = [hook, ...[route.preValidation ?? []].flat()]
}
