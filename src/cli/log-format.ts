/** @module The log formats of `mdq serve` (`--log-format`): `auto` is readable lines on a terminal, JSON otherwise. */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]
