// The as_of proof on real data: history imported day by day (and one day minute by minute) into a
// store that grows, asked the same requests at every step, byte for byte what the store holding the
// whole history answers with as_of that step, in every adjust mode; CN (Baostock, ex-factors derived
// from the exchange's prev_close; on SQLite, and a shorter window on ClickHouse) and US (LEAN daily
// and minutes around AAPL's 2014 7:1 split, events from LEAN's factor file).
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, describe } from 'node:test'
import { ADJUSTS } from '../../src/domain/adjust.js'
import type { AsOf } from '../../src/domain/as-of.js'
import { MARKETS } from '../../src/domain/market.js'
import type { Period } from '../../src/domain/period.js'
import { daysFromCivil, formatCivil, civilFromDays } from '../../src/domain/time-zone.js'
import type { AnswerTask } from '../../src/runner/query-runner.js'
import { openStores } from '../../src/store/backends.js'
import type { Stores } from '../../src/store/backend.js'
import { importRows, proveDayByDay, type CsvImport, type Step } from '../helpers/day-by-day.js'
import { clickhouseServer, data, requires } from '../helpers/requirements.js'
import { ClickHouseServer } from '../helpers/clickhouse.js'
import { ClickHouseStores, parseClickHouseUrl } from '../../src/store/clickhouse/clickhouse-stores.js'
import { tempDir } from '../helpers/store-files.js'
import { readBaostock } from '../reference/cn.js'
import { LEAN, dayOfYmd, factorFileEvents, readFactorFile, readLeanMinuteDay } from '../reference/lean.js'
import { readLines } from '../helpers/shared-data.js'

const CN = ['600000.SH', '600519.SH', '601318.SH'] as const
const BARS = 'symbol,time,open,high,low,close,volume,amount,prev_close'
const INSTRUMENTS: CsvImport = {
  kind: 'instruments',
  header: 'symbol,name,type',
  rows: [...CN.map((s) => `${s},,stock`), 'AAPL.US,Apple Inc.,stock'],
}

const { dir, cleanup } = tempDir('mdq-as-of-')
after(cleanup)
const need = requires(data('cn/baostock_raw_daily'), data(LEAN))
const clickhouse = requires(data('cn/baostock_raw_daily'), clickhouseServer())
const dayOf = (date: string) =>
  daysFromCivil(Number(date.slice(0, 4)), Number(date.slice(5, 7)), Number(date.slice(8, 10)))
const iso = (day: number) => formatCivil(civilFromDays(day))

const open = async (name: string): Promise<Stores> => {
  const stores = await openStores({ store: `sqlite:${join(dir, `${name}.db`)}`, create: true })
  await importRows(stores.market, dir, INSTRUMENTS)
  return stores
}
const klines = (symbol: string, period: Period, count: number): AnswerTask[] =>
  ADJUSTS.map((adjust) => ({ kind: 'klines', symbol, period, range: { count, adjust } }))

describe('as_of proof: day by day = as_of on the whole history', () => {
  need.it(
    'CN daily 2020-2021, three symbols, 1d/1w/1M in every adjust mode (Baostock, derived ex-factors)',
    async () => {
      const { days, compared, events } = await proveCn(open, '2020-01-01', '2021-12-31')
      assert.ok(events >= 8, `the window holds ${events} ex-factor events`)
      console.log(`CN: ${days} days, ${compared} answers compared, ${events} events`)
    },
  )

  clickhouse.it(
    'CN daily on a ClickHouse store, June-July 2020 (the dividends of 600519 and 600000), every adjust mode',
    async () => {
      const server = await ClickHouseServer.start()
      try {
        const { days, compared, events } = await proveCn(
          async (name) => {
            const stores = await ClickHouseStores.open(parseClickHouseUrl(server.storeUrl(name.replace('-', '_'))))
            await importRows(stores.market, dir, INSTRUMENTS)
            return stores
          },
          '2020-06-01',
          '2020-07-31',
        )
        assert.ok(events >= 2, `the window holds ${events} ex-factor events`)
        console.log(`CN on ClickHouse: ${days} days, ${compared} answers compared, ${events} events`)
      } finally {
        await server.destroy()
      }
    },
  )

  need.it(
    'US: AAPL daily 2014 with the 7:1 split and four dividends, and its minute days day by day, then 2014-06-09 minute by minute; every period and adjust mode, intraday',
    async () => {
      const NY = MARKETS.US.zone
      const first = dayOfYmd('20140101')
      const last = dayOfYmd('20141231')
      const all = readLines(`${LEAN}/daily/aapl.csv`).map((l) => l.split(','))
      const daily = all.filter(([stamp]) => dayOfYmd(stamp.slice(0, 8)) >= first && dayOfYmd(stamp.slice(0, 8)) <= last)
      const tradingDays = daily.map(([stamp]) => dayOfYmd(stamp.slice(0, 8)))
      const events = factorFileEvents(
        readFactorFile('aapl'),
        all.map(([stamp]) => dayOfYmd(stamp.slice(0, 8))),
      ).filter((e) => {
        const d = NY.localDay(e.timestamp)
        return d >= first && d <= last
      })
      assert.equal(events.length, 5, 'the split and four dividends of 2014')
      const minuteDays = new Set(['20140605', '20140606', '20140609'].map(dayOfYmd))
      const minuteRows = (ymd: string) =>
        readLeanMinuteDay('aapl', ymd)
          .filter((r) => r.minute >= 570 && r.minute < 960)
          .map((r) => `AAPL.US,${r.timestamp},${r.open},${r.high},${r.low},${r.close},${r.volume},,`)
      const dailyRow = ([stamp, o, h, l, c, v]: string[]) =>
        `AAPL.US,${iso(dayOfYmd(stamp.slice(0, 8)))},${+o / 1e4},${+h / 1e4},${+l / 1e4},${+c / 1e4},${v},,`
      const eventImport = (day: number): CsvImport => ({
        kind: 'ex-factors',
        header: 'symbol,ex_date,ex_factor',
        rows: events.filter((e) => NY.localDay(e.timestamp) === day).map((e) => `AAPL.US,${iso(day)},${e.exFactor}`),
      })
      const minuteImport = (rows: string[]): CsvImport => ({
        kind: 'bars',
        header: BARS,
        rows,
        options: { period: '1m' },
      })
      const whole = await open('us-whole')
      const growing = await open('us-growing')
      try {
        await importRows(whole.market, dir, { kind: 'bars', header: BARS, rows: daily.map(dailyRow) })
        await importRows(whole.market, dir, minuteImport([...minuteDays].flatMap((d) => minuteRows(ymdOf(d)))))
        await importRows(whole.market, dir, {
          kind: 'ex-factors',
          header: 'symbol,ex_date,ex_factor',
          rows: events.map((e) => `AAPL.US,${iso(NY.localDay(e.timestamp))},${e.exFactor}`),
        })
        const dailyTasks = [...klines('AAPL.US', '1d', 250), ...klines('AAPL.US', '1w', 60)]
        const minuteTasks: AnswerTask[] = [
          ...klines('AAPL.US', '1m', 1200),
          ...klines('AAPL.US', '5m', 300),
          ...klines('AAPL.US', '60m', 30),
          ...klines('AAPL.US', '1d', 10),
          { kind: 'intraday', symbol: 'AAPL.US', period: '1m' },
          { kind: 'intraday', symbol: 'AAPL.US', period: '15m' },
        ]
        let minutesSeen = false
        const splitDay = dayOfYmd('20140609')
        function* steps(): Generator<Step> {
          for (const [i, row] of daily.entries()) {
            const day = tradingDays[i]
            if (day === splitDay) {
              // The split day minute by minute: each bar counts a minute after its stamp; the daily bar at the close.
              yield {
                label: `${iso(day)} open`,
                imports: [eventImport(day)],
                asOf: { ms: NY.utcOf(2014, 6, 9, 9 * 60) },
                tasks: minuteTasks,
              }
              const minutes = minuteRows(ymdOf(day))
              for (const [k, minute] of minutes.entries()) {
                const t = Number(minute.split(',')[1])
                // The last minute completes at the close (16:00), and the daily bar with it.
                const closing = k === minutes.length - 1
                yield {
                  label: `${iso(day)} ${t}`,
                  imports: [
                    minuteImport([minute]),
                    ...(closing ? [{ kind: 'bars', header: BARS, rows: [dailyRow(row)] } as const] : []),
                  ],
                  asOf: { ms: t + 60_000 },
                  tasks: closing ? [...minuteTasks, ...dailyTasks] : minuteTasks,
                }
              }
              assert.equal(Number(minutes.at(-1)!.split(',')[1]) + 60_000, NY.utcOf(2014, 6, 9, 16 * 60))
              continue
            }
            minutesSeen ||= minuteDays.has(day)
            const asOf: AsOf = { day }
            yield {
              label: iso(day),
              imports: [
                { kind: 'bars', header: BARS, rows: [dailyRow(row)] },
                ...(minuteDays.has(day) ? [minuteImport(minuteRows(ymdOf(day)))] : []),
                eventImport(day),
              ],
              asOf,
              tasks: minutesSeen ? [...dailyTasks, ...minuteTasks] : dailyTasks,
            }
          }
        }
        const compared = await proveDayByDay(growing.market, whole.market, dir, steps())
        console.log(
          `US: ${daily.length} days (2014-06-09 minute by minute), ${compared} answers compared, ${events.length} events`,
        )
        assert.ok(compared > 390 * minuteTasks.length)
      } finally {
        await Promise.all([whole.market.close(), whole.keys.close(), growing.market.close(), growing.keys.close()])
      }
    },
  )
})

function ymdOf(day: number): string {
  return iso(day).replaceAll('-', '')
}

/**
 * The CN proof over [first, last]: the three symbols' Baostock days imported one at a time (ex-factors
 * derived as each day arrives) beside the whole window imported at once; besides the equivalence, as
 * of each day the forward close of that day is its raw close in the Baostock file.
 */
async function proveCn(
  open: (name: string) => Promise<Stores>,
  first: string,
  last: string,
): Promise<{ days: number; compared: number; events: number }> {
  const rows = new Map<string, string[]>()
  const closes = new Map<string, number>()
  for (const symbol of CN)
    for (const r of readBaostock(symbol.slice(0, 6))) {
      if (!r.traded || r.date < first || r.date > last) continue
      const list = rows.get(r.date) ?? []
      list.push(
        `${symbol},${r.date},${r.open},${r.high},${r.low},${r.close},${r.volumeShares},${r.amount},${r.preclose}`,
      )
      rows.set(r.date, list)
      closes.set(`${symbol} ${r.date}`, r.close)
    }
  const days = [...rows.keys()].sort()
  const derive = { deriveExFactors: true }
  const whole = await open('cn-whole')
  const growing = await open('cn-growing')
  try {
    await importRows(whole.market, dir, {
      kind: 'bars',
      header: BARS,
      rows: days.flatMap((d) => rows.get(d)!),
      options: derive,
    })
    const events = [...(await whole.market.readExFactors([...CN])).values()].reduce((n, l) => n + l.length, 0)
    const tasks = CN.flatMap((s) => [...klines(s, '1d', 250), ...klines(s, '1w', 60), ...klines(s, '1M', 24)])
    const steps = days.map((date): Step => ({
      label: date,
      imports: [{ kind: 'bars', header: BARS, rows: rows.get(date)!, options: derive }],
      asOf: { day: dayOf(date) },
      tasks,
    }))
    let anchored = 0
    const compared = await proveDayByDay(growing.market, whole.market, dir, steps, (step, task, answer) => {
      if (task.kind !== 'klines' || task.period !== '1d' || task.range.adjust !== 'forward') return
      const raw = closes.get(`${task.symbol} ${step.label}`)
      if (raw === undefined) return
      const close = (JSON.parse(answer.toString()) as { data: { close: number[] } }).data.close
      assert.equal(close.at(-1), raw, `${task.symbol} ${step.label}`)
      anchored++
    })
    assert.equal(compared, days.length * tasks.length)
    assert.equal(anchored, closes.size)
    return { days: days.length, compared, events }
  } finally {
    await Promise.all([whole.market.close(), whole.keys.close(), growing.market.close(), growing.keys.close()])
  }
}
