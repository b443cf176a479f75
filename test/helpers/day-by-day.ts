/**
 * @module The as_of proof's harness: a store that grows day by day (each step one real import) beside
 * a store holding the whole history, and at every step the same request answered by both: by the
 * growing store as it stands, by the whole one with `as_of` of that step. They must be the same bytes.
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { AsOf } from '../../src/domain/as-of.js'
import { importFile, type ImportKind, type ImportOptions } from '../../src/ingest/import-file.js'
import { SymbolContexts } from '../../src/query/symbol-context.js'
import { answerBytes, type AnswerTask } from '../../src/runner/query-runner.js'
import type { MarketStore } from '../../src/store/market-store.js'

/** One import: a CSV file's header and rows, its kind and options. */
export interface CsvImport {
  readonly kind: ImportKind
  readonly header: string
  readonly rows: readonly string[]
  readonly options?: Partial<ImportOptions>
}

export const DAILY: ImportOptions = {
  period: '1d',
  stamp: 'start',
  priceScale: 1,
  outsideSessions: 'abort',
  deriveExFactors: false,
}

let files = 0
/** Imports one file through the import path `mdq import` takes (all or nothing, in one write). */
export async function importRows(store: MarketStore, dir: string, i: CsvImport): Promise<void> {
  if (i.rows.length === 0) return
  const path = join(dir, `step-${files++}.csv`)
  writeFileSync(path, [i.header, ...i.rows].join('\n') + '\n')
  await importFile(store, i.kind, path, { ...DAILY, ...i.options })
}

/** A step of the history: what is imported that day, the as_of it stands for, and the requests asked then. */
export interface Step {
  readonly label: string
  readonly imports: readonly CsvImport[]
  readonly asOf: AsOf
  readonly tasks: readonly AnswerTask[]
}

/** The task asked of the whole store: the same request with `as_of`. */
function withAsOf(task: AnswerTask, asOf: AsOf): AnswerTask {
  return task.kind === 'klines' ? { ...task, range: { ...task.range, asOf } } : { ...task, asOf }
}

/**
 * Walks the steps: imports each into `growing`, then compares every task's answer bytes with the
 * whole store's answer as of that step. Returns how many answers were compared.
 */
export async function proveDayByDay(
  growing: MarketStore,
  whole: MarketStore,
  dir: string,
  steps: Iterable<Step>,
  check?: (step: Step, task: AnswerTask, answer: Buffer) => void,
): Promise<number> {
  const now = new SymbolContexts(growing)
  const then = new SymbolContexts(whole)
  let compared = 0
  for (const step of steps) {
    for (const i of step.imports) await importRows(growing, dir, i)
    for (const task of step.tasks) {
      const today = await answerBytes(growing, now, task)
      const asOf = await answerBytes(whole, then, withAsOf(task, step.asOf))
      if (!today.equals(asOf))
        assert.fail(
          `${step.label} ${JSON.stringify(task)}: the answer of that day differs from as_of on the whole history\n` +
            `that day: ${today.toString().slice(0, 600)}\nas_of:    ${asOf.toString().slice(0, 600)}`,
        )
      check?.(step, task, today)
      compared++
    }
  }
  return compared
}
