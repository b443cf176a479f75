/** @module /v1/financials/<statement>: stored statement versions, the latest of each period (or as known on `as_of`). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type TSchema } from '@sinclair/typebox'
import { parseAsOf, parseDateParam } from '../domain/as-of.js'
import { MdqError } from '../domain/errors.js'
import { STATEMENT_FIELDS, STATEMENTS, type PeriodRange } from '../domain/financials.js'
import { statementsJson } from '../encode/financials-wire.js'
import { readStatements } from '../query/financials.js'
import { docTag } from './doc-tags.js'
import { sendWithEtag } from './etag.js'
import { badParam } from './errors.js'
import { rejectRepeatedOrEmpty } from './query-string.js'
import { errors, QUERY_PARAMS, symbolList, type RouteOptions } from './routes.js'
import { asOfParam } from './schemas.js'

const date = (description: string) => Type.Optional(Type.String({ description: `${description}, YYYY-MM-DD` }))
export const FinancialsQuery = Type.Object({
  symbols: Type.String({ description: 'Comma-separated symbols, 1..100; unknown ones are left out of the answer' }),
  start_date: date('Periods with period_end on or after this'),
  end_date: date('Periods with period_end on or before this'),
  latest: Type.Optional(Type.Boolean({ description: 'Only the latest period (of the range)' })),
  as_of: asOfParam,
})

const nullableNumber = Type.Union([Type.Number(), Type.Null()])
/** The SDK model of a statement: period_end, announce_date and its fields, each a number or null. */
const recordSchema = (fields: readonly string[]): TSchema =>
  Type.Object({
    period_end: Type.String({ description: 'End of the reporting period, YYYY-MM-DD' }),
    announce_date: Type.String({ description: 'When this version was announced, YYYY-MM-DD' }),
    ...Object.fromEntries(fields.map((f) => [f, nullableNumber])),
  })

/** start_date / end_date as a checked period range. */
function periodRange(start?: string, end?: string): PeriodRange {
  const fromPeriod = start === undefined ? undefined : parseDateParam(start, 'start_date')
  const toPeriod = end === undefined ? undefined : parseDateParam(end, 'end_date')
  if (fromPeriod !== undefined && toPeriod !== undefined && fromPeriod > toPeriod)
    throw badParam(`Parameter 'start_date' (${fromPeriod}) must not be after 'end_date' (${toPeriod}).`)
  return { ...(fromPeriod && { fromPeriod }), ...(toPeriod && { toPeriod }) }
}

export const financialsRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store, cache }) => {
  app.addHook('preValidation', async (req) => rejectRepeatedOrEmpty(req.query, QUERY_PARAMS))
  for (const statement of STATEMENTS) {
    app.get(
      `/financials/${statement}`,
      {
        schema: {
          ...docTag('financials'),
          summary: `${statement} statements: the latest version of each period, or as announced by as_of`,
          querystring: FinancialsQuery,
          response: {
            200: Type.Object({
              data: Type.Record(Type.String(), Type.Array(recordSchema(STATEMENT_FIELDS[statement])), {
                description: 'Records per known symbol, ascending by period_end; [] when none',
              }),
            }),
            ...errors,
          },
        },
      },
      async (req, reply) => {
        const q = req.query
        const symbols = symbolList(q.symbols, 100)
        const range = periodRange(q.start_date, q.end_date)
        const asOf = q.as_of === undefined ? undefined : parseAsOf(q.as_of)
        return sendWithEtag(req, reply, store, cache, async () =>
          statementsJson(
            statement,
            await readStatements(store, {
              statement,
              symbols,
              range,
              latest: q.latest ?? false,
              ...(asOf && { asOf }),
            }),
          ),
        )
      },
    )
  }
  app.get(
    '/financials/*',
    {
      schema: {
        ...docTag('financials'),
        summary: 'Any other statement: 404 naming the statements served',
        response: { 404: errors[404] },
      },
    },
    async (req) => {
      const name = (req.params as { '*': string })['*'].slice(0, 40)
      throw new MdqError(
        'UNKNOWN_STATEMENT',
        `Unknown statement '${name}': /v1/financials/ serves ${STATEMENTS.join(', ')}.`,
      )
    },
  )
}
