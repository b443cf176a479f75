/**
 * @module Time bounds of queries are epoch milliseconds (contract "General"); a value that is probably
 * something else (epoch seconds, a YYYYMMDD or YYYY-MM-DD date) is refused with the value meant.
 */
import { civilFromDays, daysFromCivil, zoneOf, type Zone } from './time-zone.js'

/**
 * The smallest time taken as epoch milliseconds apart from 0: 10^10 ms is 1970-04-26T17:46:40Z. No bar
 * is older (the importer refuses earlier bar times for the same reason), so a bound between 1 and
 * 10^10 - 1 never selects anything 0 would not, while such digits are far more likely something
 * else: 9 or 10 digits are epoch seconds of 1973-2286, 8 digits a YYYYMMDD date.
 */
export const MIN_EPOCH_MS = 1e10
/** Epoch seconds from here (1973-03-03) up to MIN_EPOCH_MS are suggested as milliseconds: 9 and 10 digits. */
const MIN_SECONDS_HINT = 1e8
/**
 * Epoch microseconds of 2001-09-09 to 2099 (16 digits) and nanoseconds (19 digits) are refused and
 * suggested as milliseconds: as milliseconds they would be the years 33658 to 132000, which a start
 * bound selects nothing from and an end bound everything before, answered without a word. A larger
 * bound (Number.MAX_SAFE_INTEGER as "no end") is still taken.
 */
const MICROS = { from: 1e15, to: Date.UTC(2100, 0, 1) * 1000 }
const NANOS = /^\d{19}$/
const UTC = zoneOf('UTC')

/** Which bound: a date given as start_time means its first millisecond, as end_time its last (both inclusive). */
export type Bound = 'start' | 'end'

const RULE = `an integer of epoch milliseconds: 0, or from ${MIN_EPOCH_MS} (1970-04-26T17:46:40Z) to ${Number.MAX_SAFE_INTEGER}, not epoch microseconds`
const DIGITS = /^\d{1,16}$/
const DASHED_DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const COMPACT_DATE = /^(\d{4})(\d{2})(\d{2})$/
const DECIMAL = /^\d{1,10}\.\d{1,9}$/

/**
 * The message of a 400 for the time bound `param` given as `raw` (the text of the URL), or undefined
 * when it is epoch milliseconds by the rule above. A date is read as local midnight in each of
 * `zones` (the exchanges of the symbols asked for; UTC when none), epoch seconds are multiplied out.
 */
export function epochMsMistake(param: string, raw: string, bound: Bound, zones: readonly Zone[]): string | undefined {
  if (DIGITS.test(raw)) {
    const n = Number(raw)
    const micros = n >= MICROS.from && n < MICROS.to
    if (n === 0 || (n >= MIN_EPOCH_MS && n <= Number.MAX_SAFE_INTEGER && !micros)) return undefined
  }
  const rule = `Parameter '${param}' must be ${RULE}.`
  const hint = dateHint(raw, bound, zones) ?? secondsHint(raw) ?? finerHint(raw)
  return hint === undefined ? rule : `${rule} ${hint}`
}

function dateHint(raw: string, bound: Bound, zones: readonly Zone[]): string | undefined {
  const m = DASHED_DATE.exec(raw) ?? COMPACT_DATE.exec(raw)
  if (!m) return undefined
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const day = daysFromCivil(y, mo, d)
  const back = civilFromDays(day)
  if (y < 1970 || y > 2099 || back.month !== mo || back.day !== d) return undefined
  const date = `${m[1]}-${m[2]}-${m[3]}`
  const at = (zone: Zone) => (bound === 'start' ? zone.midnightUtc(day) : zone.midnightUtc(day + 1) - 1)
  const values = (zones.length ? zones : [UTC]).map((zone) => `${at(zone)} in ${zone.name}`).join(', ')
  const which = bound === 'start' ? 'its first millisecond' : 'its last millisecond'
  return `'${raw}' reads as the date ${date}; ${which} is ${values}.`
}

/** Epoch microseconds or nanoseconds (see MICROS), as milliseconds (rounded down: a bound keeps its millisecond). */
function finerHint(raw: string): string | undefined {
  const n = Number(raw)
  const unit = DIGITS.test(raw) && n >= MICROS.from && n < MICROS.to ? 'micro' : NANOS.test(raw) ? 'nano' : undefined
  if (unit === undefined) return undefined
  const ms = Math.floor(unit === 'micro' ? n / 1e3 : n / 1e6)
  return `${raw} looks like epoch ${unit}seconds (${new Date(ms).toISOString()}); in milliseconds that is ${ms}.`
}

function secondsHint(raw: string): string | undefined {
  if (!DIGITS.test(raw) && !DECIMAL.test(raw)) return undefined
  const seconds = Number(raw)
  if (!(seconds >= MIN_SECONDS_HINT && seconds < MIN_EPOCH_MS)) return undefined
  const ms = Math.round(seconds * 1000)
  return `${raw} looks like epoch seconds (${new Date(ms).toISOString().replace('.000Z', 'Z')}); in milliseconds that is ${ms}.`
}
