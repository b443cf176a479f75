/** @module `mdq serve` (and `mdq start`): placeholder until the HTTP service lands. */
import type { Command } from 'commander'

export function registerServe(_program: Command): void {}
