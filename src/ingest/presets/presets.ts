/** @module `--format`: which vendor's file shape an import reads (mdq's own CSV by default). */
import type { Statement } from '../../domain/financials.js'
import type { MarketStore } from '../../store/market-store.js'
import type { ImportKind } from '../import-file.js'
import { openBaostock } from './baostock.js'
import type { PresetFile } from './converted-file.js'
import { openLean } from './lean.js'
import { openTushare } from './tushare.js'

export const FORMATS = ['mdq', 'tushare', 'baostock', 'lean'] as const
export type Format = (typeof FORMATS)[number]

export interface PresetContext {
  readonly store: MarketStore
  readonly statement?: Statement
  readonly period: '1m' | '1d'
  readonly periodGiven: boolean
  readonly symbol?: string
}

/** The vendor file as an mdq CSV of `kind`. */
export function openPreset(
  format: Exclude<Format, 'mdq'>,
  kind: ImportKind,
  path: string,
  ctx: PresetContext,
): Promise<PresetFile> {
  switch (format) {
    case 'tushare':
      return openTushare(kind, path, ctx.statement)
    case 'baostock':
      return openBaostock(kind, path, ctx.period)
    case 'lean':
      return openLean(kind, path, ctx)
  }
}
