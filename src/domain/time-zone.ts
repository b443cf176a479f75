/** @module Exchange-local calendar arithmetic on epoch milliseconds, DST-correct via Intl's zone data. */

export const MINUTE_MS = 60_000
export const HOUR_MS = 3_600_000
export const DAY_MS = 86_400_000

/** Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's days_from_civil). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const mp = (month + 9) % 12
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}

export interface CivilDate {
  readonly year: number
  readonly month: number
  readonly day: number
}

/** Inverse of daysFromCivil. */
export function civilFromDays(days: number): CivilDate {
  const z = days + 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day }
}

/** 0 = Monday .. 6 = Sunday (ISO order) of a day number. */
export function isoWeekday(days: number): number {
  return (((days + 3) % 7) + 7) % 7
}

// Day table bounds: 1900-01-01 .. 2100-01-01 (a 300 KB Int32Array per zone, filled lazily).
const TABLE_FIRST_DAY = -25567
const TABLE_DAYS = 73049
const UNKNOWN = -(2 ** 31)
const MIXED = UNKNOWN + 1

/**
 * UTC offset lookups for one IANA zone. A UTC day whose offset is the same at its first and last
 * millisecond is answered from a typed array (one index per bar in hot loops); the rare day with a
 * transition falls back to a per-hour cache, as the supported zones only change offset on whole hours.
 */
export class Zone {
  readonly #format: Intl.DateTimeFormat
  readonly #offsetByHour = new Map<number, number>()
  /** Offset per UTC day since TABLE_FIRST_DAY when constant over that whole day; UNKNOWN or MIXED else. */
  readonly #offsetByDay = new Int32Array(TABLE_DAYS).fill(UNKNOWN)

  constructor(readonly name: string) {
    this.#format = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
  }

  /** local wall-clock ms minus UTC ms at the instant utcMs. */
  offsetMs(utcMs: number): number {
    const d = Math.floor(utcMs / DAY_MS) - TABLE_FIRST_DAY
    if (d >= 0 && d < TABLE_DAYS) {
      let offset = this.#offsetByDay[d]
      if (offset === UNKNOWN) {
        const dayStart = (d + TABLE_FIRST_DAY) * DAY_MS
        const first = this.#hourOffset(dayStart)
        offset = this.#offsetByDay[d] = first === this.#hourOffset(dayStart + DAY_MS - 1) ? first : MIXED
      }
      if (offset !== MIXED) return offset
    }
    return this.#hourOffset(utcMs)
  }

  #hourOffset(utcMs: number): number {
    const hour = Math.floor(utcMs / HOUR_MS)
    let offset = this.#offsetByHour.get(hour)
    if (offset === undefined) {
      offset = this.#computeOffset(hour * HOUR_MS)
      if (this.#offsetByHour.size > 200_000) this.#offsetByHour.clear()
      this.#offsetByHour.set(hour, offset)
    }
    return offset
  }

  #computeOffset(utcMs: number): number {
    const p: Record<string, number> = {}
    for (const part of this.#format.formatToParts(utcMs)) if (part.type !== 'literal') p[part.type] = Number(part.value)
    const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second)
    return wall - utcMs
  }

  /** UTC ms of a local wall-clock time (for times inside a DST gap, the later reading). */
  utcOf(year: number, month: number, day: number, minuteOfDay = 0): number {
    const wall = daysFromCivil(year, month, day) * DAY_MS + minuteOfDay * MINUTE_MS
    const first = wall - this.offsetMs(wall)
    return wall - this.offsetMs(first)
  }

  /** UTC ms of local midnight starting local day number `days`. */
  midnightUtc(days: number): number {
    const wall = days * DAY_MS
    const first = wall - this.offsetMs(wall)
    return wall - this.offsetMs(first)
  }

  /** Local day number (days since 1970-01-01 in this zone's calendar) of an instant. */
  localDay(utcMs: number): number {
    return Math.floor((utcMs + this.offsetMs(utcMs)) / DAY_MS)
  }

  /** Minutes since local midnight of an instant. */
  localMinute(utcMs: number): number {
    const wall = utcMs + this.offsetMs(utcMs)
    return Math.floor((wall - Math.floor(wall / DAY_MS) * DAY_MS) / MINUTE_MS)
  }

  /** `YYYY-MM-DD` of the local day of an instant. */
  isoDate(utcMs: number): string {
    return formatCivil(civilFromDays(this.localDay(utcMs)))
  }
}

export function formatCivil(d: CivilDate): string {
  return `${String(d.year).padStart(4, '0')}-${String(d.month).padStart(2, '0')}-${String(d.day).padStart(2, '0')}`
}

const zones = new Map<string, Zone>()
/** One shared Zone per IANA name, so its offset cache is shared too. */
export function zoneOf(name: string): Zone {
  let zone = zones.get(name)
  if (!zone) zones.set(name, (zone = new Zone(name)))
  return zone
}
