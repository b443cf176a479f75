/** @module What a kline series is asked with (contract "GET /v1/klines"), in the domain's words. */
import type { Adjust } from '../domain/adjust.js'
import type { AsOf } from '../domain/as-of.js'
import type { Period } from '../domain/period.js'

/** Which bars of a series, and how adjusted: the latest `count` with startTime <= t <= endTime (ms, inclusive; absent = open). */
export interface KlinesRange {
  readonly count: number
  readonly startTime?: number
  readonly endTime?: number
  readonly adjust: Adjust
  /** The answer as known then: bars up to it, adjusted by the events with an ex-date on or before it. */
  readonly asOf?: AsOf
}

/** One symbol's kline series of one period. */
export interface KlinesQuery extends KlinesRange {
  readonly symbol: string
  readonly period: Period
}
